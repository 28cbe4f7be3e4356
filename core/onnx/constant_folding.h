#ifndef ORDO_CORE_ONNX_CONSTANT_FOLDING_H_
#define ORDO_CORE_ONNX_CONSTANT_FOLDING_H_

#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/onnx/constant_tensor.h"
#include "core/onnx/model_view.h"
#include "core/onnx/node_graph.h"
#include "core/onnx/tensor_shapes.h"
#include "onnx/onnx_pb.h"

namespace ordo::onnx_import {

// How many rounds of fold-then-infer FoldConstants runs at most. Each round
// resolves at least one level of "the shape of a tensor whose shape was
// computed by a folded shape computation" (ONNX's data propagation resolves
// the plain Shape-Gather-Concat chains within a round); the dynamic-batch
// torchvision exports need up to 28 (MaxViT), and a round costs one shape
// inference of the graph.
inline constexpr int kMaxFoldingRounds = 256;

struct FoldingResult {
  // Per node in file order: computed at compile time, so not a scheduled op;
  // its outputs are weights.
  std::vector<bool> folded;
  // Types and shapes of all tensors after folding and shape inference.
  TensorTypes types;
  // The last ONNX shape-inference failure, or "": explains unknown shapes.
  std::string inference_error;
  // kMaxFoldingRounds ran out while rounds still resolved shapes: unknown
  // shapes are then the folder's limit, not the model's.
  bool rounds_exhausted = false;
  // By value id: the values computed at compile time (small ones only:
  // kMaxConstantElements).
  absl::flat_hash_map<int32_t, ConstantTensor> values;
};

// Constant folding as the spec defines it ("An op whose inputs are all
// weights (or that has no inputs) is evaluated at compile time ... Shape and
// Size of a tensor whose dims are static are compile-time constants too"),
// with just enough evaluation to make the shapes those constants determine
// static. Works on a copy of the model; a round is:
//   1. If some node output has no static shape, run ONNX shape inference.
//   2. Walk the nodes in `nodes.order`, marking compile-time nodes and
//      evaluating them with the constant evaluator where their input values
//      are known (initializers with data, Constant attributes, earlier
//      results; Shape/Size from static dims).
//   3. Replace every compile-time node whose outputs all have values by
//      initializers holding those values, so the next inference sees the
//      data (a Reshape's target, a Pad's pads, a Slice's bounds).
// Rounds repeat until step 3 replaces nothing (or kMaxFoldingRounds).
// Compile-time nodes whose values are unknown (no weight data, unsupported
// op) still fold; their outputs keep the shapes inference gives them.
// `types` is TakeTensorTypes(view, nodes), before folding. The ModelProto is
// parsed from `model_bytes` (which `view` and `nodes` were built from) only
// when a round evaluates, infers or replaces something; a model with every
// shape static and nothing to fold is read from `view` alone.
// INVALID_ARGUMENT "not a valid ONNX model" when that parse fails (damage
// inside a field the view's scan skips).
// Cost: O(rounds x (nodes + inference)); values are capped at
// kMaxConstantElements elements. Never throws and never reads external data.
absl::StatusOr<FoldingResult> FoldConstants(const ModelView& view, absl::string_view model_bytes,
                                            const NodeGraph& nodes, TensorTypes types);

}  // namespace ordo::onnx_import

#endif  // ORDO_CORE_ONNX_CONSTANT_FOLDING_H_
