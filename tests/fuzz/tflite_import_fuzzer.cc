// libFuzzer target: ImportTflite on arbitrary bytes (truncated, garbage or
// mutated .tflite flatbuffers), the cheap compile stages on what imports,
// and the writer on it: the emitted file must pass the Verifier and import
// to the same number of ops.
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/tflite/tflite_export.h"
#include "core/tflite/tflite_import.h"
#include "core/tflite/tflite_model.h"
#include "core/util/check.h"
#include "tests/fuzz/fuzz_graph_checks.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  const absl::string_view bytes(reinterpret_cast<const char*>(data), size);
  absl::StatusOr<ordo::Graph> graph = ordo::ImportTflite(bytes, ordo::fuzz::FuzzGraphLimits());
  if (!graph.ok()) return 0;
  ordo::fuzz::CheckImportedGraph(*graph);
  std::vector<ordo::OpId> file_order;
  for (ordo::OpId op = 0; op < graph->num_ops(); ++op) file_order.push_back(op);
  ordo::ArenaPlan no_offsets;
  no_offsets.alignment = ordo::kTflmAlignment;
  absl::StatusOr<std::string> emitted =
      ordo::ReorderTfliteModel(bytes, *graph, file_order, no_offsets);
  if (!emitted.ok()) return 0;  // fields the writer refuses to move
  ORDO_CHECK(ordo::VerifiedTfliteModel(*emitted).ok());
  absl::StatusOr<ordo::Graph> again = ordo::ImportTflite(*emitted, ordo::fuzz::FuzzGraphLimits());
  ORDO_CHECK(again.ok() && again->num_ops() == graph->num_ops());
  return 0;
}
