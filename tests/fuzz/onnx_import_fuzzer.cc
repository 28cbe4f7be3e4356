// libFuzzer target: ImportOnnx on arbitrary bytes (truncated, garbage or
// mutated onnx.ModelProto), then the cheap compile stages on what imports.
#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/onnx/onnx_import.h"
#include "tests/fuzz/fuzz_graph_checks.h"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  ordo::fuzz::QuietProtobufLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::StatusOr<ordo::Graph> graph = ordo::ImportOnnx(
      absl::string_view(reinterpret_cast<const char*>(data), size), ordo::fuzz::FuzzGraphLimits());
  if (graph.ok()) ordo::fuzz::CheckImportedGraph(*graph);
  return 0;
}
