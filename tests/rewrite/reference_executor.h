#ifndef ORDO_TESTS_REWRITE_REFERENCE_EXECUTOR_H_
#define ORDO_TESTS_REWRITE_REFERENCE_EXECUTOR_H_

#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"

namespace ordo {

// A dense float32 tensor, row-major.
struct FloatTensor {
  std::vector<int64_t> dims;
  std::vector<float> values;
};

using TensorMap = std::map<std::string, FloatTensor>;

// A naive float32 interpreter for the ops ordo's rewrites touch, to prove
// rewrites by execution: Conv (2-D; group, strides, pads, dilations,
// auto_pad), MaxPool / AveragePool (2-D; pads, strides, ceil_mode,
// count_include_pad, MaxPool dilations), Relu, Sigmoid, HardSigmoid,
// HardSwish, LeakyRelu, Clip, Add / Sub / Mul / Div / Max / Min (numpy
// broadcasting), Sum, Concat, Split, Slice, Pad (constant mode), BatchNormalization
// (inference), Identity, Constant, Resize (opset 11+: modes nearest and
// linear, coordinate_transformation_mode half_pixel, pytorch_half_pixel,
// asymmetric, align_corners; scales or sizes as constants), and the classifier heads of the
// benchmark models (GlobalAveragePool, Flatten, Gemm). Loops written out as the ONNX operator docs
// define them, deliberately sharing no code with core/rewrite, so that a rewrite and its check
// cannot share a bug.
//
// A node that calls a model-local function (ModelProto.functions, ONNX IR
// 8; ordo's fused stages) runs the function's body in a scope of its own;
// ConstantOfShape is supported for the bodies' workspace.
//
// Runs the nodes in file order (INVALID_ARGUMENT when a node reads a value
// not computed yet, so the file must be topologically sorted). Values come
// from `feeds` (graph inputs, and weights the model carries no data for),
// else from initializers with data (float_data or raw_data; int64 for Slice,
// Split, Pad and Resize's sizes operands). Returns every graph output. UNIMPLEMENTED for other
// ops or attributes. Accumulates in double; O(MACs), tests only.
absl::StatusOr<TensorMap> RunReference(const onnx::ModelProto& model, const TensorMap& feeds);

}  // namespace ordo

#endif  // ORDO_TESTS_REWRITE_REFERENCE_EXECUTOR_H_
