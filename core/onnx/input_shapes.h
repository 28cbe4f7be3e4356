#ifndef ORDO_CORE_ONNX_INPUT_SHAPES_H_
#define ORDO_CORE_ONNX_INPUT_SHAPES_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/onnx/model_view.h"
#include "core/onnx/node_graph.h"
#include "onnx/onnx_pb.h"

namespace ordo {

// Values for the symbolic dims of an ONNX model's graph inputs, given by the
// user (CLI --input-shape NAME=DIMS and --batch N; API
// CompileOptions.input_shapes and .batch). Exporters leave dims symbolic
// ("batch", "height") so that one file runs at many shapes; ordo compiles
// one shape, so every symbolic input dim needs a value. A plain value.
struct InputShapes {
  // Every dim of the named graph inputs, static ones repeated as the model
  // has them.
  std::map<std::string, std::vector<int64_t>> shapes;
  // When positive: the value of the symbolic batch dim of every graph input
  // not in `shapes`: the one symbolic dim whose name contains "batch", else
  // a symbolic dim 0.
  int64_t batch = 0;
  // By name: the value of every symbolic input dim with that dim_param, in
  // the inputs `shapes` does not name ("sequence" -> 128 sets it in
  // input_ids and attention_mask alike; onnxruntime's
  // make_dynamic_shape_fixed --dim_param). Before `batch`, so a dim named
  // here is not the batch any more.
  std::map<std::string, int64_t> dim_params;

  bool empty() const { return shapes.empty() && batch == 0 && dim_params.empty(); }
};

// `graph` with the overrides written into its graph inputs' types (dim_value
// replaces dim_param), before shape inference and constant folding see it,
// so every dim that follows from them becomes static. INVALID_ARGUMENT,
// naming the input, the dim and the flag, when an override names no graph
// input (or a weight), has a non-positive dim, has another rank than the
// input, or contradicts a static dim or a --dim-param; when a --dim-param
// names no symbolic input dim or is not positive; and when --batch sets
// nothing because no input has a symbolic batch dim while some input's
// static dim 0 differs from it. Symbolic dims left over are
// CheckStaticInputs's to report. O(inputs).
absl::Status ApplyInputShapes(const InputShapes& shapes, onnx::GraphProto& graph);

// OK when every dim of every graph input of `nodes` (graph.input entries
// that are not initializers; `nodes` is AnalyzeNodeGraph(graph)) is static.
// Otherwise INVALID_ARGUMENT whose message starts with the first offending
// dim (`graph input "x": dim 0 is "batch" (symbolic); dims must be static
// and positive`), then lists every symbolic input dim and the exact flags
// that would fix it (`--batch 1`, or `--input-shape x=1x3x224x224`; a
// non-leading symbolic dim appears as `<name>` to be replaced by the size to
// compile for). O(inputs).
absl::Status CheckStaticInputs(const onnx_import::ModelView& graph,
                               const onnx_import::NodeGraph& nodes);

// "1x3x224x224" (also "1,3,224,224") as dims; INVALID_ARGUMENT naming
// `what` (e.g. `--input-shape input=...`) on anything but positive integers.
absl::StatusOr<std::vector<int64_t>> ParseDims(absl::string_view text, absl::string_view what);

// The dims as "1x3x224x224".
std::string FormatDims(const std::vector<int64_t>& dims);

}  // namespace ordo

#endif  // ORDO_CORE_ONNX_INPUT_SHAPES_H_
