#ifndef ORDO_CORE_ONNX_PREPARE_MODEL_H_
#define ORDO_CORE_ONNX_PREPARE_MODEL_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/onnx/input_shapes.h"

namespace ordo {

// The ONNX model as every stage reads it (import, rewriting, node
// reordering, and so the emitted and rewritten models): sparse initializers
// made dense (DensifySparseInitializers), model-local functions inlined
// (InlineLocalFunctions, at most `max_nodes` nodes) and the input shape
// overrides written into the graph inputs (ApplyInputShapes), before shape
// inference and constant folding see it. nullopt when there is nothing to
// do (no sparse initializer, no local function, no override):
// the bytes as given serve, uncopied. INVALID_ARGUMENT when the bytes do
// not parse as an ONNX model, and the errors of the two steps. O(bytes)
// when it changes the model; O(top-level fields) when not.
absl::StatusOr<std::optional<std::string>> PrepareOnnxModel(
    absl::string_view model_bytes, const InputShapes& shapes,
    int64_t max_nodes = std::numeric_limits<int64_t>::max());

// PrepareOnnxModel's bytes, or a copy of `model_bytes` when it has nothing
// to do: for callers that always want a string (tests, benchmarks).
absl::StatusOr<std::string> PreparedOnnxBytes(
    absl::string_view model_bytes, const InputShapes& shapes,
    int64_t max_nodes = std::numeric_limits<int64_t>::max());

}  // namespace ordo

#endif  // ORDO_CORE_ONNX_PREPARE_MODEL_H_
