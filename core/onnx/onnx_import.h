#ifndef ORDO_CORE_ONNX_ONNX_IMPORT_H_
#define ORDO_CORE_ONNX_ONNX_IMPORT_H_

#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/graph/graph.h"

namespace ordo {

// Reads an ONNX model (serialized onnx::ModelProto) into a Graph.
//
// 1. Reads the bytes as a ModelView (core/onnx/model_view.h: the wire format
//    read in place, without building the generated ModelProto, which only
//    constant folding builds, and only when it has something to fold or
//    infer); rejects control flow (If/Loop/Scan, graph attributes) and
//    conv/pool window attributes that are not positive (ONNX's own shape
//    inference would divide by zero on them).
// 2. Checks the node-level structure: one producer per tensor, every input
//    defined, no cycle.
//    Every graph input must have static dims (CheckStaticInputs lists the
//    symbolic ones and the --batch / --input-shape flags that fix them;
//    PrepareOnnxModel applies such values to the bytes before import, and
//    inlines model-local functions, which the import refuses).
// 3. Runs ONNX shape inference when intermediate shapes are missing.
// 4. Folds compile-time values (spec: an op whose inputs are all weights, and
//    Shape/Size of statically shaped tensors), evaluating the small integer
//    shape computations PyTorch exports so that the shapes they determine
//    become static, then re-runs shape inference; repeats to a fixed point
//    (see core/onnx/constant_folding.h).
// 5. Builds the Graph: ops keep file order and Op::source_index is the node's
//    index in the file. (A file whose nodes are not topologically sorted, as
//    ONNX requires, gets the stable topological order runtimes load it in, so
//    OpId order is always a valid schedule.) Unnamed nodes are named "n<index in file>"; a name
//    used twice in the file keeps its first use, later ones become
//    "<name>_1", "<name>_2", ... (skipping names taken in the file).
//    Initializers and folded outputs are weights; only those read by an op
//    are declared (intermediate values of folded chains disappear, as in a
//    deployment converter). A weight whose size is unknown or zero is
//    declared as 1 byte, which only matters under count_weights.
//
// Initializers may carry dims without data (the benchmark set strips them);
// external data is never read. Errors are INVALID_ARGUMENT naming the node or
// tensor and the rule broken (e.g. `tensor "t" (output of op "foo"): dim 0 is
// "N" (symbolic); dims must be static and positive`); RESOURCE_EXHAUSTED when
// the node count is over limits.max_ops (checked before anything is built)
// or the attributes hold more than 2^31 values.
// Never throws; exceptions from libonnx are caught.
absl::StatusOr<Graph> ImportOnnx(absl::string_view model_bytes, const GraphLimits& limits = {});

// OK when protobuf's own parse accepts the bytes, as ReorderOnnxNodes needs;
// else INVALID_ARGUMENT "not a valid ONNX model: ...". ImportOnnx may accept
// bytes whose only damage is inside a field it skips (core/onnx/model_view.h),
// so a request whose answer includes the reordered model checks this
// before its search, not after.
absl::Status CheckOnnxParses(absl::string_view model_bytes);

// The original model with its nodes reordered so that runtimes executing
// nodes in file order run the graph's ops in `schedule` order. Compile-time
// (folded) nodes come first in file order, except those that read an
// activation (Shape of a conv output), which follow right after the op that
// produces it. Everything else is kept as it was.
//
// `graph` must be ImportOnnx(model_bytes). INVALID_ARGUMENT when the schedule
// is not a permutation of the ops or runs an op before the producer of one of
// its inputs. An op that reads a folded value derived from an activation the
// schedule produces later (no topologically sorted file runs Shape of a
// tensor before it exists) reads it as an initializer instead: the value at
// the size compiled, written into the file, the nodes that computed it left
// out (refused when the importer does not compute that value).
absl::StatusOr<std::string> ReorderOnnxNodes(absl::string_view model_bytes, const Graph& graph,
                                             absl::Span<const OpId> schedule);

}  // namespace ordo

#endif  // ORDO_CORE_ONNX_ONNX_IMPORT_H_
