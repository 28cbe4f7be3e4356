#include "core/onnx/newer_standard_ops.h"

#include <memory>
#include <iterator>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/graph/onnx_domain.h"
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
// biases, caches), the last `optional_inputs` of them optional.
OpSchema LikeFirstInput(const char* name, int since_version, int extra_inputs = 0,
                        int optional_inputs = 0) {
  OpSchema schema = Named(name, since_version);
  schema.Input(0, "X", "", "T");
  for (int i = 1; i <= extra_inputs; ++i) {
    const bool optional = i > extra_inputs - optional_inputs;
    schema.Input(i, "input" + std::to_string(i), "", "T1",
                 optional ? OpSchema::Optional : OpSchema::Single);
  }
  if (extra_inputs > 0) {
    schema.TypeConstraint(
        "T1", std::vector<std::string>(std::begin(kAnyTensor), std::end(kAnyTensor)), "");
  }
  schema.Output(0, "Y", "", "T");
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
  schema.TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 0, 0);
    if (onnx::hasInputShape(ctx, 0) && onnx::hasInputShape(ctx, 1)) {
      onnx::bidirectionalBroadcastShapeInference(
          onnx::getInputShape(ctx, 0), onnx::getInputShape(ctx, 1),
          *ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape());
    }
  });
  return schema;
}

// RMSNormalization-23: Y of X's shape and of the scale's type (V).
OpSchema RmsNormalization() {
  OpSchema schema = LikeFirstInput("RMSNormalization", 23, /*extra_inputs=*/1);
  schema.TypeAndShapeInferenceFunction([](InferenceContext& ctx) {
    onnx::propagateElemTypeFromInputToOutput(ctx, 1, 0);
    if (onnx::hasInputShape(ctx, 0)) onnx::propagateShapeFromInputToOutput(ctx, 0, 0);
  });
  return schema;
}

using SchemaMap = absl::flat_hash_map<std::string, std::unique_ptr<OpSchema>>;

const SchemaMap& Schemas() {
  static const SchemaMap* const schemas = [] {
    auto* map = new SchemaMap;
    auto add = [&](OpSchema schema) {
      schema.Finalize();
      const std::string name = schema.Name();
      (*map)[name] = std::make_unique<OpSchema>(std::move(schema));
    };
    add(LikeFirstInput("Mish", 18));
    add(LikeFirstInput("BitwiseNot", 18));
    add(Broadcasting("BitwiseAnd", 18));
    add(Broadcasting("BitwiseOr", 18));
    add(Broadcasting("BitwiseXor", 18));
    add(LikeFirstInput("GroupNormalization", 18, /*extra_inputs=*/2));  // scale, bias
    add(LikeFirstInput("Gelu", 20));
    add(RmsNormalization());
    // cos_cache, sin_cache, position_ids (optional)
    add(LikeFirstInput("RotaryEmbedding", 23, /*extra_inputs=*/3, /*optional_inputs=*/1));
    add(LikeFirstInput("Swish", 24));
    return map;
  }();
  return *schemas;
}

}  // namespace

const onnx::OpSchema* NewerStandardSchema(absl::string_view op_type, int max_inclusive_version,
                                          absl::string_view domain) {
  if (!IsStandardOnnxDomain(domain)) return nullptr;
  const SchemaMap& schemas = Schemas();
  const auto it = schemas.find(op_type);
  if (it == schemas.end() || it->second->since_version() > max_inclusive_version) return nullptr;
  return it->second.get();
}

}  // namespace ordo::onnx_import
