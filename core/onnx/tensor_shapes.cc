#include "core/onnx/tensor_shapes.h"

#include <exception>
#include <utility>

#include "absl/strings/str_cat.h"
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
  onnx::ModelProto copy = model;
  try {
    onnx::shape_inference::InferShapes(copy, onnx::OpSchemaRegistry::Instance(),
                                       onnx::ShapeInferenceOptions(
                                           /*check_type_val=*/false,
                                           /*strict_mode_val=*/0,
                                           /*data_prop_val=*/false));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("ONNX shape inference failed: ", e.what()));
  } catch (...) {
    return absl::InvalidArgumentError("ONNX shape inference failed");
  }
  model = std::move(copy);
  return absl::OkStatus();
}

}  // namespace ordo::onnx_import
