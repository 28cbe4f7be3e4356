#include "core/onnx/microsoft_quantized_ops.h"

#include <cstdint>
#include <string>
#include <vector>

#include "core/onnx/owned_schemas.h"
#include "onnx/defs/shape_inference.h"

namespace ordo::onnx_import {
namespace {

using onnx::InferenceContext;
using onnx::OpSchema;

constexpr const char* kEightBit[] = {"tensor(uint8)", "tensor(int8)"};

// The quantized data operand `name` at input `n` (type T), then its scale
// and zero point.
void DataScaleZeroPoint(OpSchema& schema, int n, const std::string& name) {
  schema.Input(n, name, "", "T");
  schema.Input(n + 1, name + "_scale", "", "tensor(float)");
  schema.Input(n + 2, name + "_zero_point", "", "T", OpSchema::Optional);
}

OpSchema Named(const char* name) {
  OpSchema schema;
  schema.SetName(name).SetDomain(std::string(kMicrosoftDomain)).SinceVersion(1);
  schema.TypeConstraint("T", {kEightBit[0], kEightBit[1]}, "");
  return schema;
}

// QLinearAdd, QLinearMul: C = A op B with numpy broadcasting.
OpSchema Binary(const char* name) {
  OpSchema schema = Named(name);
  DataScaleZeroPoint(schema, 0, "A");
  DataScaleZeroPoint(schema, 3, "B");
  schema.Input(6, "C_scale", "", "tensor(float)");
  schema.Input(7, "C_zero_point", "", "T", OpSchema::Optional);
  schema.Output(0, "C", "", "T");
  schema.TypeAndShapeInferenceFunction([](InferenceContext& ctx) { InferBroadcastOf(ctx, 0, 3); });
  return schema;
}

// X (with scale and zero point) to Y (scale, zero point) of X's shape.
OpSchema Unary(const char* name) {
  OpSchema schema = Named(name);
  DataScaleZeroPoint(schema, 0, "X");
  schema.Input(3, "Y_scale", "", "tensor(float)");
  schema.Input(4, "Y_zero_point", "", "T", OpSchema::Optional);
  schema.Output(0, "Y", "", "T");
  return schema;
}

OpSchema ElementWise(const char* name) {
  OpSchema schema = Unary(name);
  schema.TypeAndShapeInferenceFunction(onnx::propagateShapeAndTypeFromFirstInput);
  return schema;
}

// QLinearGlobalAveragePool: N x C x D1 x ... to N x C x 1 x ...
// (channels_last: N x D1 x ... x C to N x 1 x ... x C).
OpSchema GlobalAveragePool() {
  OpSchema schema = Unary("QLinearGlobalAveragePool");
  schema.TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
    if (!onnx::hasInputShape(ctx, 0)) return;
    const onnx::TensorShapeProto& input = onnx::getInputShape(ctx, 0);
    if (input.dim_size() < 2) fail_shape_inference("input must have rank 2 or more");
    const bool channels_last = onnx::getAttribute(ctx, "channels_last", int64_t{0}) != 0;
    const int channel = channels_last ? input.dim_size() - 1 : 1;
    onnx::TensorShapeProto& output =
        *ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape();
    for (int d = 0; d < input.dim_size(); ++d) {
      if (d == 0 || d == channel) {
        *output.add_dim() = input.dim(d);
      } else {
        output.add_dim()->set_dim_value(1);
      }
    }
  });
  return schema;
}

// Attribute values beyond this are refused: every sum below stays far from
// overflowing int64, and no real window or pad is near it.
constexpr int64_t kMaxWindowValue = int64_t{1} << 31;
// Dims beyond this are refused (a tensor that large fits no memory).
constexpr int64_t kMaxDim = int64_t{1} << 62;

// One spatial dim of a pooling window's output, as onnxruntime allocates
// it (pool_attributes.h ComputeOutputSize): floor or, with ceil_mode, ceil
// of (in + pads - kernel) / stride, plus one; with ceil_mode a last window
// that would start in the tail padding is dropped (onnx/onnx#5741). SAME
// pads to ceil(in / stride); VALID pads nothing. The caller bounds `in` by
// kMaxDim and the window values by kMaxWindowValue, so nothing overflows.
int64_t PooledDim(int64_t in, int64_t kernel, int64_t stride, int64_t pad_head, int64_t pad_tail,
                  const std::string& auto_pad, bool ceil_mode) {
  if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") return (in + stride - 1) / stride;
  if (auto_pad == "VALID") pad_head = pad_tail = 0;
  const int64_t span = in + pad_head + pad_tail - kernel;
  if (span < 0) fail_shape_inference("the pooling window (", kernel, ") exceeds its padded input");
  int64_t out = (ceil_mode ? (span + stride - 1) / stride : span / stride) + 1;
  if (ceil_mode && (out - 1) * stride >= in + pad_head) --out;
  return out;
}

// QLinearAveragePool, NCHW: AveragePool's output shape. channels_last
// (NHWC) leaves the shape to a declaration.
OpSchema AveragePool() {
  OpSchema schema = Unary("QLinearAveragePool");
  schema.TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
    if (!onnx::hasInputShape(ctx, 0) || onnx::getAttribute(ctx, "channels_last", int64_t{0}) != 0) {
      return;
    }
    const onnx::TensorShapeProto& input = onnx::getInputShape(ctx, 0);
    std::vector<int64_t> kernel, strides, pads;
    onnx::getRepeatedAttribute(ctx, "kernel_shape", kernel);
    onnx::getRepeatedAttribute(ctx, "strides", strides);
    onnx::getRepeatedAttribute(ctx, "pads", pads);
    if (input.dim_size() < 3) fail_shape_inference("the input must have rank 3 or more");
    const size_t spatial = static_cast<size_t>(input.dim_size() - 2);
    if (kernel.size() != spatial || (!strides.empty() && strides.size() != spatial) ||
        (!pads.empty() && pads.size() != 2 * spatial)) {
      fail_shape_inference(
          "kernel_shape (required), strides and pads must match the input's spatial rank");
    }
    for (const std::vector<int64_t>* values : {&kernel, &strides}) {
      for (int64_t v : *values) {
        if (v < 1 || v > kMaxWindowValue)
          fail_shape_inference("kernel_shape and strides must be from 1 to 2^31");
      }
    }
    for (int64_t v : pads) {
      if (v < 0 || v > kMaxWindowValue) fail_shape_inference("pads must be from 0 to 2^31");
    }
    const std::string auto_pad = onnx::getAttribute(ctx, "auto_pad", std::string("NOTSET"));
    const bool ceil_mode = onnx::getAttribute(ctx, "ceil_mode", int64_t{0}) != 0;
    onnx::TensorShapeProto& output =
        *ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape();
    *output.add_dim() = input.dim(0);
    *output.add_dim() = input.dim(1);
    for (size_t i = 0; i < spatial; ++i) {
      const onnx::TensorShapeProto::Dimension& in = input.dim(static_cast<int>(i + 2));
      onnx::TensorShapeProto::Dimension& out = *output.add_dim();
      if (!in.has_dim_value()) continue;
      if (in.dim_value() < 0 || in.dim_value() > kMaxDim) {
        fail_shape_inference("spatial dim ", i, " is negative or over 2^62");
      }
      out.set_dim_value(PooledDim(in.dim_value(), kernel[i], strides.empty() ? 1 : strides[i],
                                  pads.empty() ? 0 : pads[i], pads.empty() ? 0 : pads[i + spatial],
                                  auto_pad, ceil_mode));
    }
  });
  return schema;
}

// QLinearConcat: Y_scale, Y_zero_point, then (tensor, scale, zero point)
// for each operand, concatenated along `axis`.
OpSchema Concat() {
  OpSchema schema;
  schema.SetName("QLinearConcat").SetDomain(std::string(kMicrosoftDomain)).SinceVersion(1);
  schema.Input(0, "Y_scale", "", "TF");
  schema.Input(1, "Y_zero_point", "", "T8");
  schema.Input(2, "inputs", "", "TV", OpSchema::Variadic, /*is_homogeneous=*/false);
  schema.Output(0, "Y", "", "T8");
  schema.TypeConstraint("T8", {kEightBit[0], kEightBit[1]}, "");
  schema.TypeConstraint("TF", {"tensor(float)"}, "");
  schema.TypeConstraint("TV", {kEightBit[0], kEightBit[1], "tensor(float)"}, "");
  schema.TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 1, 0);
    const size_t inputs = ctx.getNumInputs();
    if (inputs < 5 || (inputs - 2) % 3 != 0) {
      fail_shape_inference("expects Y_scale, Y_zero_point and (tensor, scale, zero point) triples");
    }
    for (size_t i = 2; i < inputs; i += 3) {
      if (!onnx::hasInputShape(ctx, i)) return;
    }
    const int rank = onnx::getInputShape(ctx, 2).dim_size();
    int64_t axis = onnx::getAttribute(ctx, "axis", int64_t{0});
    if (axis < -rank || axis >= rank) fail_shape_inference("axis ", axis, " is outside the rank");
    if (axis < 0) axis += rank;
    onnx::TensorShapeProto& output =
        *ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape();
    for (int d = 0; d < rank; ++d) output.add_dim();
    int64_t total = 0;
    bool known = true;
    for (size_t i = 2; i < inputs; i += 3) {
      const onnx::TensorShapeProto& shape = onnx::getInputShape(ctx, i);
      if (shape.dim_size() != rank) fail_shape_inference("every operand must have one rank");
      for (int d = 0; d < rank; ++d) {
        if (d == axis) {
          const int64_t length = shape.dim(d).dim_value();
          if (length < 0 || length > kMaxDim - total) {
            fail_shape_inference("the concatenated dim ", d, " is negative or over 2^62");
          }
          known = known && shape.dim(d).has_dim_value();
          total += length;
        } else if (shape.dim(d).has_dim_value()) {
          onnx::TensorShapeProto::Dimension& out = *output.mutable_dim(d);
          if (out.has_dim_value() && out.dim_value() != shape.dim(d).dim_value()) {
            fail_shape_inference("operands differ in dim ", d, " off the axis");
          }
          out.set_dim_value(shape.dim(d).dim_value());
        }
      }
    }
    if (known) output.mutable_dim(static_cast<int>(axis))->set_dim_value(total);
  });
  return schema;
}

const OwnedSchemas& Schemas() {
  static const OwnedSchemas* const schemas = [] {
    auto* owned = new OwnedSchemas;
    owned->Add(Binary("QLinearAdd"));
    owned->Add(Binary("QLinearMul"));
    owned->Add(ElementWise("QLinearLeakyRelu"));
    owned->Add(ElementWise("QLinearSigmoid"));
    owned->Add(ElementWise("QLinearSoftmax"));
    owned->Add(GlobalAveragePool());
    owned->Add(AveragePool());
    owned->Add(Concat());
    return owned;
  }();
  return *schemas;
}

}  // namespace

const onnx::OpSchema* MicrosoftQuantizedSchema(absl::string_view op_type,
                                               absl::string_view domain) {
  if (domain != kMicrosoftDomain) return nullptr;
  return Schemas().Find(op_type);
}

}  // namespace ordo::onnx_import
