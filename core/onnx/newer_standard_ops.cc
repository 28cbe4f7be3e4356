#include "core/onnx/newer_standard_ops.h"

#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "core/graph/onnx_domain.h"
#include "core/onnx/owned_schemas.h"
#include "onnx/defs/shape_inference.h"

namespace ordo::onnx_import {
namespace {

using onnx::InferenceContext;
using onnx::OpSchema;

// Not ONNX's own constraint lists: inference only reads the element type
// through the first input, and a file with a type the real operator
// refuses is refused by the runtime, not sized wrongly here.
constexpr const char* kAnyTensor[] = {
    "tensor(float)",  "tensor(float16)", "tensor(bfloat16)", "tensor(double)",
    "tensor(int8)",   "tensor(uint8)",   "tensor(int16)",    "tensor(uint16)",
    "tensor(int32)",  "tensor(uint32)",  "tensor(int64)",    "tensor(uint64)",
};

OpSchema Named(const char* name, int since_version) {
  OpSchema schema;
  schema.SetName(name).SetDomain("").SinceVersion(since_version);
  schema.TypeConstraint("T", std::vector<std::string>(std::begin(kAnyTensor), std::end(kAnyTensor)),
                        "");
  return schema;
}

// Y of X's shape and type; `extra_inputs` more inputs after X (scales,
// biases, caches), the last `optional_inputs` of them optional. Each has a
// type parameter of its own (T1, T2, ...): one shared would bind inputs
// the real operator types apart (RotaryEmbedding's int64 position_ids
// beside float caches), and a type-checking inference would then refuse a
// valid node.
OpSchema LikeFirstInput(const char* name, int since_version, int extra_inputs = 0,
                        int optional_inputs = 0, const char* output_type = "T") {
  OpSchema schema = Named(name, since_version);
  schema.Input(0, "X", "", "T");
  for (int i = 1; i <= extra_inputs; ++i) {
    const bool optional = i > extra_inputs - optional_inputs;
    const std::string type = "T" + std::to_string(i);
    schema.Input(i, "input" + std::to_string(i), "", type,
                 optional ? OpSchema::Optional : OpSchema::Single);
    schema.TypeConstraint(
        type, std::vector<std::string>(std::begin(kAnyTensor), std::end(kAnyTensor)), "");
  }
  schema.Output(0, "Y", "", output_type);
  schema.AllowUncheckedAttributes();
  schema.TypeAndShapeInferenceFunction(onnx::propagateShapeAndTypeFromFirstInput);
  return schema;
}

// C = A op B, numpy broadcasting.
OpSchema Broadcasting(const char* name, int since_version) {
  OpSchema schema = Named(name, since_version);
  schema.Input(0, "A", "", "T");
  schema.Input(1, "B", "", "T");
  schema.Output(0, "C", "", "T");
  schema.TypeAndShapeInferenceFunction([](InferenceContext& ctx) { InferBroadcastOf(ctx, 0, 1); });
  return schema;
}

// RMSNormalization-23: Y of X's shape and of the scale's type (V).
OpSchema RmsNormalization() {
  OpSchema schema =
      LikeFirstInput("RMSNormalization", 23, /*extra_inputs=*/1, /*optional_inputs=*/0, "T1");
  schema.TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 1, 0);
    if (onnx::hasInputShape(ctx, 0)) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
  });
  return schema;
}

const OwnedSchemas& Schemas() {
  static const OwnedSchemas* const schemas = [] {
    auto* owned = new OwnedSchemas;
    owned->Add(LikeFirstInput("Mish", 18));
    owned->Add(LikeFirstInput("BitwiseNot", 18));
    owned->Add(Broadcasting("BitwiseAnd", 18));
    owned->Add(Broadcasting("BitwiseOr", 18));
    owned->Add(Broadcasting("BitwiseXor", 18));
    owned->Add(LikeFirstInput("GroupNormalization", 18, /*extra_inputs=*/2));  // scale, bias
    owned->Add(LikeFirstInput("Gelu", 20));
    owned->Add(RmsNormalization());
    // cos_cache, sin_cache, position_ids (optional)
    owned->Add(LikeFirstInput("RotaryEmbedding", 23, /*extra_inputs=*/3, /*optional_inputs=*/1));
    owned->Add(LikeFirstInput("Swish", 24));
    return owned;
  }();
  return *schemas;
}

}  // namespace

const onnx::OpSchema* NewerStandardSchema(absl::string_view op_type, int max_inclusive_version,
                                          absl::string_view domain) {
  if (!IsStandardOnnxDomain(domain)) return nullptr;
  const onnx::OpSchema* schema = Schemas().Find(op_type);
  return schema != nullptr && schema->since_version() <= max_inclusive_version ? schema : nullptr;
}

}  // namespace ordo::onnx_import
