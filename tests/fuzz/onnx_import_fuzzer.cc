// libFuzzer target: PrepareOnnxModel (model-local functions inlined) and
// ImportOnnx on arbitrary bytes (truncated, garbage or mutated
// onnx.ModelProto), as the CLI and the service run them, then the cheap
// compile stages on what imports.
// Every input is also checked against ScanModel's contract with protobuf's
// parse (model_view_reference.h): the mutations that reach the importer are
// the ones that exercise the scan's wire-format edge cases, and a separate
// target would cost CI a second run over the same inputs.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/onnx/model_view_reference.h"
#include "core/onnx/onnx_import.h"
#include "core/onnx/prepare_model.h"
#include "tests/fuzz/fuzz_graph_checks.h"

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  ordo::fuzz::QuietProtobufLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  const ordo::GraphLimits limits = ordo::fuzz::FuzzGraphLimits();
  absl::StatusOr<std::optional<std::string>> prepared =
      ordo::PrepareOnnxModel(bytes, {}, limits.max_ops);
  if (prepared.ok()) {
    absl::StatusOr<ordo::Graph> graph =
        ordo::ImportOnnx(prepared->has_value() ? **prepared : bytes, limits);
    if (graph.ok()) ordo::fuzz::CheckImportedGraph(*graph);
  }
  const std::string violation = ordo::onnx_import::ScanContractViolation(bytes);
  if (!violation.empty()) {
    std::fprintf(stderr, "ScanModel contract violated: %s\n", violation.c_str());
    __builtin_trap();
  }
  return 0;
}
