#include "core/onnx/tensor_shapes.h"

#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "core/onnx/einsum_shape.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"

namespace ordo::onnx_import {
namespace {

TensorType FromTypeProto(const onnx::TypeProto& type) {
  TensorType out;
  if (!type.has_tensor_type()) return out;
  const onnx::TypeProto::Tensor& tensor = type.tensor_type();
  out.elem_type = tensor.elem_type();
  out.has_shape = tensor.has_shape();
  for (const onnx::TensorShapeProto::Dimension& dim : tensor.shape().dim()) {
    const bool known = dim.has_dim_value();
    out.dims.push_back(known ? dim.dim_value() : kUnknownDim);
    out.symbols.push_back(!known && dim.has_dim_param() ? dim.dim_param() : "");
  }
  return out;
}

// How much a description tells: nothing, a type, a rank, every dim.
int Completeness(const TensorType& type) {
  return (type.elem_type != 0) + type.has_shape + type.IsStatic();
}

void Merge(TensorTypes& types, const std::string& name, TensorType type) {
  auto [it, inserted] = types.try_emplace(name, type);
  if (!inserted && Completeness(type) > Completeness(it->second)) {
    it->second = std::move(type);
  }
}

// ONNX's Einsum inference (before 1.14) gives the rank only; this one also
// computes the dims when every input dim is known (EinsumOutputDims).
void InferEinsum(onnx::InferenceContext& ctx, const onnx::InferenceFunction& rank_only) {
  rank_only(ctx);
  const onnx::AttributeProto* equation = ctx.getAttribute("equation");
  if (equation == nullptr || ctx.getNumOutputs() != 1) return;
  std::vector<std::vector<int64_t>> inputs;
  for (size_t i = 0; i < ctx.getNumInputs(); ++i) {
    const onnx::TypeProto* type = ctx.getInputType(i);
    if (type == nullptr || !type->tensor_type().has_shape()) return;
    std::vector<int64_t>& dims = inputs.emplace_back();
    for (const onnx::TensorShapeProto::Dimension& dim : type->tensor_type().shape().dim()) {
      if (!dim.has_dim_value()) return;
      dims.push_back(dim.dim_value());
    }
  }
  std::optional<std::vector<int64_t>> out = EinsumOutputDims(equation->s(), inputs);
  if (!out) return;
  onnx::TensorShapeProto* shape = ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape();
  shape->clear_dim();
  for (int64_t dim : *out) shape->add_dim()->set_dim_value(dim);
}

// ONNX's schemas, with InferEinsum in place of Einsum's inference. Patched
// copies are made once per schema version and live for the process.
class SchemaRegistry final : public onnx::ISchemaRegistry {
 public:
  const onnx::OpSchema* GetSchema(const std::string& key, const int max_inclusive_version,
                                  const std::string& domain) const override {
    const onnx::OpSchema* schema =
        onnx::OpSchemaRegistry::Schema(key, max_inclusive_version, domain);
    if (schema == nullptr || key != "Einsum" || !(domain.empty() || domain == "ai.onnx")) {
      return schema;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    std::unique_ptr<onnx::OpSchema>& patched = patched_[schema];
    if (patched == nullptr) {
      patched = std::make_unique<onnx::OpSchema>(*schema);
      patched->TypeAndShapeInferenceFunction(
          [rank_only = schema->GetTypeAndShapeInferenceFunction()](
              onnx::InferenceContext& ctx) { InferEinsum(ctx, rank_only); });
    }
    return patched.get();
  }

 private:
  mutable std::mutex mutex_;
  mutable absl::flat_hash_map<const onnx::OpSchema*, std::unique_ptr<onnx::OpSchema>> patched_;
};

}  // namespace

bool TensorType::IsStatic() const {
  if (!has_shape) return false;
  for (int64_t dim : dims) {
    if (dim < 0) return false;
  }
  return true;
}

TensorTypes CollectTensorTypes(const onnx::GraphProto& graph) {
  TensorTypes types;
  for (const onnx::ValueInfoProto& info : graph.input()) {
    Merge(types, info.name(), FromTypeProto(info.type()));
  }
  for (const onnx::ValueInfoProto& info : graph.output()) {
    Merge(types, info.name(), FromTypeProto(info.type()));
  }
  for (const onnx::ValueInfoProto& info : graph.value_info()) {
    Merge(types, info.name(), FromTypeProto(info.type()));
  }
  for (const onnx::TensorProto& initializer : graph.initializer()) {
    TensorType type;
    type.elem_type = initializer.data_type();
    type.has_shape = true;
    type.dims.assign(initializer.dims().begin(), initializer.dims().end());
    type.symbols.assign(type.dims.size(), "");
    types[initializer.name()] = std::move(type);
  }
  return types;
}

absl::Status InferShapesInPlace(onnx::ModelProto& model) {
  // Inference edits the model as it goes; on a throw the half-inferred copy
  // is dropped so callers only ever see a consistent model.
  static SchemaRegistry* const registry = new SchemaRegistry();
  // Data propagation lets one inference pass carry shape values through
  // Shape -> Gather -> Mul -> Concat -> Reshape chains, so a dynamic-batch
  // export folds in a few rounds instead of one round per chain link.
  onnx::ModelProto copy = model;
  try {
    onnx::shape_inference::InferShapes(copy, registry,
                                       onnx::ShapeInferenceOptions(
                                           /*check_type_val=*/false,
                                           /*strict_mode_val=*/0,
                                           /*data_prop_val=*/true));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("ONNX shape inference failed: ", e.what()));
  } catch (...) {
    return absl::InvalidArgumentError("ONNX shape inference failed");
  }
  model = std::move(copy);
  return absl::OkStatus();
}

}  // namespace ordo::onnx_import
