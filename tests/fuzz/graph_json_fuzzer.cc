// libFuzzer target: the native importer on ordo.v1.Graph in protobuf's JSON
// mapping (protobuf's JSON parser, then the same graph builder).
#include <cstddef>
#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/compile/import_model.h"
#include "tests/fuzz/fuzz_graph_checks.h"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  ordo::fuzz::QuietProtobufLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  absl::StatusOr<ordo::Graph> graph =
      ordo::ImportModel(absl::string_view(reinterpret_cast<const char*>(data), size),
                        ordo::ModelFormat::kGraphJson, ordo::fuzz::FuzzGraphLimits());
  if (graph.ok()) ordo::fuzz::CheckImportedGraph(*graph);
  return 0;
}
