#ifndef ORDO_CORE_ONNX_OWNED_SCHEMAS_H_
#define ORDO_CORE_ONNX_OWNED_SCHEMAS_H_

#include <memory>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "onnx/defs/schema.h"
#include "onnx/defs/shape_inference.h"

namespace ordo::onnx_import {

// Operator schemas ordo writes itself for ops libonnx 1.12 does not know
// (microsoft_quantized_ops.h, newer_standard_ops.h): finalized when added,
// found by op type. Built once into a function-local static and never
// changed after, so lookups are thread-safe.
class OwnedSchemas {
 public:
  void Add(onnx::OpSchema schema) {
    schema.Finalize();
    std::string name = schema.Name();
    schemas_[std::move(name)] = std::make_unique<onnx::OpSchema>(std::move(schema));
  }
  const onnx::OpSchema* Find(absl::string_view op_type) const {
    const auto it = schemas_.find(op_type);
    return it == schemas_.end() ? nullptr : it->second.get();
  }

 private:
  absl::flat_hash_map<std::string, std::unique_ptr<onnx::OpSchema>> schemas_;
};

// Output 0 gets input `a`'s element type and the numpy broadcast of inputs
// `a` and `b`'s shapes, when both are known.
inline void InferBroadcastOf(onnx::InferenceContext& ctx, size_t a, size_t b) {
  onnx::propagateElemTypeFromInputToOutput(ctx, a, 0);
  if (onnx::hasInputShape(ctx, a) && onnx::hasInputShape(ctx, b)) {
    onnx::bidirectionalBroadcastShapeInference(
        onnx::getInputShape(ctx, a), onnx::getInputShape(ctx, b),
        *ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape());
  }
}

}  // namespace ordo::onnx_import

#endif  // ORDO_CORE_ONNX_OWNED_SCHEMAS_H_
