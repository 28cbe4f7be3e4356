#ifndef ORDO_CORE_ONNX_TENSOR_SHAPES_H_
#define ORDO_CORE_ONNX_TENSOR_SHAPES_H_

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "core/onnx/model_view.h"
#include "core/onnx/node_graph.h"
#include "core/onnx/tensor_type.h"
#include "onnx/onnx_pb.h"

namespace ordo::onnx_import {

// By NodeGraph value id; a value nothing describes has elem_type 0 and no
// shape.
using TensorTypes = std::vector<TensorType>;

// The types of every value of `nodes` that `graph` describes: graph inputs
// and outputs, value_info, and initializers (whose dims and type are
// authoritative). Where a value is described twice, the more complete
// description wins; descriptions of names that are not values of `nodes` are
// ignored. `graph` is the graph `nodes` was built from or a working copy of
// it. O(entries), one hash lookup per entry.
TensorTypes CollectTensorTypes(const onnx::GraphProto& graph, const NodeGraph& nodes);
// The same from the view `nodes` was built from (AnalyzeNodeGraph(graph)),
// moving the descriptions out of it (its value infos' types and its
// initializers' dims are empty after): each is read once, and copying them
// was a tenth of an exported NAS network's import. The GraphProto form reads
// constant folding's working copy after shape inference.
TensorTypes TakeTensorTypes(ModelView& graph, const NodeGraph& nodes);

// Runs ONNX's C++ shape inference on `model` in place, with data
// propagation and without strict mode, so an op it cannot infer (for example
// a Reshape whose shape is not known yet) is left unknown rather than fatal.
// A value declared more than once (say a graph input that is also an
// output) is declared everywhere as its most complete declaration first, the
// rule of CollectTensorTypes.
// ONNX reports the remaining errors by throwing; they are caught here and
// returned as INVALID_ARGUMENT with `model` left unchanged. Never reads
// external data. O(nodes) schema lookups.
absl::Status InferShapesInPlace(onnx::ModelProto& model);

// libonnx's shape inference on `model` in place, in this process, with
// ordo's patched schemas (Einsum's dims, checked Shape propagation, checked
// convolution ranks): `strict` throws every node's error instead of
// skipping the node, `check_types` also checks each node's inputs against
// its schema's type constraints. INVALID_ARGUMENT with ONNX's reason when it
// throws (`model` is then half inferred). What every inference of the
// import runs, unless a ShapeInferenceRunner is installed.
// With ORDO_TEST_UNPATCHED_ONNX_SCHEMAS set in the environment (tests of
// what a crash of libonnx does to the server and the CLI only): libonnx's
// own schemas, without those checks.
absl::Status InferShapesHere(onnx::ModelProto& model, bool strict, bool check_types);

// True on a thread while it runs InferShapesHere: a fatal-signal handler
// reads it to tell libonnx crashing on a malformed model from a fault of
// ordo's own (the `ordo` CLI exits 2 for the first). Async-signal-safe.
bool InsideOnnxShapeInference();

// Runs InferShapesHere's work somewhere: libonnx 1.12 has crashed the
// process on malformed models (docs/testing.md, "Found and fixed"), so a
// program that must outlive any model (ordo-server) runs it in helper
// processes. Same contract as InferShapesHere.
using ShapeInferenceRunner =
    std::function<absl::Status(onnx::ModelProto& model, bool strict, bool check_types)>;
// Installs `runner` for every later inference of this process (empty: back
// to InferShapesHere). Call it before any import starts; not synchronized
// with imports running.
void SetShapeInferenceRunner(ShapeInferenceRunner runner);

// The opset the model imports for the standard domain ("" or "ai.onnx"),
// 0 when it imports none.
int64_t StandardOpset(const ModelView& view);

// Whether the linked ONNX library has a schema for the node's operator at
// the opset `view` imports for its domain (the one inference looks up):
// without one nothing infers its outputs. Not when the node uses a feature
// of a newer opset (FeatureNewerThanLibrary).
bool IsKnownToOnnx(const ModelView& view, const NodeView& node);

// The feature of an opset newer than the linked library's (17) that `node`
// uses where that library's older schema of the op would size its outputs
// wrongly ("dilations (AveragePool-19)"), or "". Such a node is treated as
// an op ONNX does not know: its declared shapes stand. Inference sees it in
// kNewerOpsetDomain, for which the library has no schema.
std::string FeatureNewerThanLibrary(const ModelView& view, const NodeView& node);
inline constexpr absl::string_view kNewerOpsetDomain = "ai.ordo.newer_opset";

// Known, and its schema at that opset infers output shapes (some of the
// oldest versions do not: Relu-1 of opset 1).
bool InfersShapesAtItsOpset(const ModelView& view, const NodeView& node);

// What makes `node` a training op, for a message, else "": a
// BatchNormalization's attribute `training_mode` set (versions 14 and 15),
// or its first output after Y (`output 1 "m" (the spec's "mean") exists
// only in training mode`). The spec defines those outputs in training mode
// only (mean, var, saved_mean, saved_var before version 14; running_mean,
// running_var from 14; test mode has Y alone), and runtimes read their
// presence, or the attribute, as training mode: Y normalized by the
// batch's statistics instead of the running ones (onnxruntime: is_train_
// when it has more than one output).
std::string TrainingModeFeature(const ModelView& view, const NodeView& node);

// Why ONNX's inference cannot infer some node of `model`, for messages
// only: `lenient_error`, the error InferShapesInPlace returned, or when it
// returned none (it skips such nodes silently) the first of the errors the
// strict mode collects (one line). An element type that disagrees with a
// declaration is traced back to the first op whose inputs break its
// schema's type constraints (a graph input of another type than the
// weights). OK when nothing fails.
absl::Status FirstInferenceError(const onnx::ModelProto& model,
                                 absl::string_view lenient_error = {});

}  // namespace ordo::onnx_import

#endif  // ORDO_CORE_ONNX_TENSOR_SHAPES_H_
