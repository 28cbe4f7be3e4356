// libFuzzer target: what a worker does with a task's model: parse the
// ordo.v1.MemoryModel bytes, MemoryModelFromProto (which promises that
// nothing it accepts reaches a CHECK or an out-of-range index), then
// schedule and simulate the result.
#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "ordo/v1/memory_model.pb.h"
#include "rpc/memory_model_proto.h"
#include "tests/fuzz/fuzz_graph_checks.h"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  ordo::fuzz::QuietProtobufLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ordo::v1::MemoryModel proto;
  if (!proto.ParseFromArray(data, static_cast<int>(size))) return 0;
  ordo::rpc::MemoryModelLimits limits;
  limits.max_ops = 2000;
  limits.max_tensors = 8000;
  limits.max_edges = 32000;
  absl::StatusOr<ordo::MemoryModel> model = ordo::rpc::MemoryModelFromProto(proto, limits);
  if (model.ok()) ordo::fuzz::CheckMemoryModel(*model);
  return 0;
}
