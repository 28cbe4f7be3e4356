#ifndef ORDO_CORE_ONNX_CONSTANT_EVALUATOR_H_
#define ORDO_CORE_ONNX_CONSTANT_EVALUATOR_H_

#include <optional>
#include <vector>

#include "absl/types/span.h"
#include "core/onnx/constant_tensor.h"
#include "onnx/onnx_pb.h"

namespace ordo::onnx_import {

// A small interpreter for the integer shape computations that exporters
// (PyTorch above all) write into ONNX graphs: Shape -> Gather -> Div -> Slice
// bounds, ConstantOfShape -> Concat -> Reshape -> Slice -> Transpose -> Cast
// -> Pad pads, Shape -> Gather -> Unsqueeze -> Concat -> Reshape targets.
//
// Supported (default domain, any opset; attribute and input forms of Slice,
// Squeeze, Unsqueeze and Reduce* are both accepted): Constant, Identity,
// Dropout (the identity at inference; its mask all true), Cast, CastLike,
// Neg, Abs, Floor, Ceil, Sqrt, Not, Add, Sub, Mul, Div, Mod, Min, Max, Sum,
// Equal, Less, Greater, LessOrEqual, GreaterOrEqual, And, Or, Where, Gather,
// Concat, Slice, Squeeze, Unsqueeze, Reshape, Flatten, Transpose, Expand,
// Tile, ScatterND (reduction "none"), ConstantOfShape, Range, ReduceProd,
// ReduceSum, ReduceMin, ReduceMax; Shape and Size through EvaluateShapeOf.
// Integer/float mixes are the exporters' Cast chains; each op checks its
// operands have one element type, as ONNX requires. Checked against the ONNX
// operator documentation's examples (constant_evaluator_onnx_examples_test).
//
// Anything else, and any case it cannot evaluate exactly (mixed element
// types, integer overflow, division by zero, indices out of range, results
// over kMaxConstantElements), yields nullopt: the caller treats the result as
// unknown rather than guessing. Integer Div truncates toward zero like the
// runtimes. Each op costs O(output elements x rank). Stateless and
// thread-safe; no recursion.

// Evaluates `node` on constant inputs. `inputs[i]` is nullptr for an omitted
// optional input (empty name). Returns one tensor per node output.
std::optional<std::vector<ConstantTensor>> EvaluateConstantNode(
    const onnx::NodeProto& node, absl::Span<const ConstantTensor* const> inputs);

// The output of a Shape or Size node whose input has the static `dims`
// (Shape's start/end attributes honored); nullopt for other op types.
std::optional<ConstantTensor> EvaluateShapeOf(const onnx::NodeProto& node,
                                              absl::Span<const int64_t> dims);

}  // namespace ordo::onnx_import

#endif  // ORDO_CORE_ONNX_CONSTANT_EVALUATOR_H_
