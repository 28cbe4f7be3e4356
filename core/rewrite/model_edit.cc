#include "core/rewrite/model_edit.h"

#include <cstring>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/graph/onnx_domain.h"

namespace ordo {

NameScope::NameScope(const onnx::GraphProto& graph) {
  for (const onnx::NodeProto& node : graph.node()) {
    taken_.insert(node.name());
    for (const std::string& name : node.input()) taken_.insert(name);
    for (const std::string& name : node.output()) taken_.insert(name);
  }
  for (const onnx::TensorProto& t : graph.initializer()) taken_.insert(t.name());
  for (const onnx::ValueInfoProto& v : graph.input()) taken_.insert(v.name());
  for (const onnx::ValueInfoProto& v : graph.output()) taken_.insert(v.name());
  for (const onnx::ValueInfoProto& v : graph.value_info()) taken_.insert(v.name());
}

std::string NameScope::Fresh(absl::string_view base) {
  std::string name(base);
  for (int i = 1; !taken_.insert(name).second; ++i) name = absl::StrCat(base, "_", i);
  return name;
}

void ModelEdit::Append(ModelEdit other) {
  for (auto& n : other.nodes) nodes.push_back(std::move(n));
  for (auto& t : other.initializers) initializers.push_back(std::move(t));
  for (auto& v : other.value_infos) value_infos.push_back(std::move(v));
}

onnx::ValueInfoProto DenseValueInfo(const std::string& name, int32_t elem_type,
                                    const std::vector<int64_t>& dims) {
  onnx::ValueInfoProto info;
  info.set_name(name);
  onnx::TypeProto_Tensor* tensor = info.mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(elem_type);
  onnx::TensorShapeProto* shape = tensor->mutable_shape();
  for (int64_t d : dims) shape->add_dim()->set_dim_value(d);
  return info;
}

int32_t OnnxElemType(DataType dtype) {
  switch (dtype) {
    case DataType::kFloat32:
      return onnx::TensorProto::FLOAT;
    case DataType::kFloat16:
      return onnx::TensorProto::FLOAT16;
    case DataType::kBFloat16:
      return onnx::TensorProto::BFLOAT16;
    case DataType::kInt8:
      return onnx::TensorProto::INT8;
    case DataType::kUInt8:
      return onnx::TensorProto::UINT8;
    case DataType::kBool:
      return onnx::TensorProto::BOOL;
    case DataType::kInt16:
      return onnx::TensorProto::INT16;
    case DataType::kUInt16:
      return onnx::TensorProto::UINT16;
    case DataType::kInt32:
      return onnx::TensorProto::INT32;
    case DataType::kUInt32:
      return onnx::TensorProto::UINT32;
    case DataType::kInt64:
      return onnx::TensorProto::INT64;
    case DataType::kUInt64:
      return onnx::TensorProto::UINT64;
    case DataType::kFloat64:
      return onnx::TensorProto::DOUBLE;
    case DataType::kUnknown:
      break;
  }
  return onnx::TensorProto::UNDEFINED;
}

absl::StatusOr<int32_t> NodeOf(const onnx::GraphProto& graph, const Op& op) {
  auto matches = [&](int32_t i) {
    return graph.node(i).op_type() == op.type && graph.node(i).name() == op.name;
  };
  if (op.source_index >= 0 && op.source_index < graph.node_size() &&
      graph.node(op.source_index).op_type() == op.type &&
      (graph.node(op.source_index).name().empty() || matches(op.source_index))) {
    return op.source_index;
  }
  for (int32_t i = 0; i < graph.node_size(); ++i) {
    if (matches(i)) return i;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("op \"", op.name, "\" does not match a node of the model"));
}

const onnx::TensorProto* FindInitializer(const onnx::GraphProto& graph, absl::string_view name) {
  for (const onnx::TensorProto& t : graph.initializer()) {
    if (t.name() == name) return &t;
  }
  return nullptr;
}

int64_t StandardOpset(const onnx::ModelProto& model) {
  for (const onnx::OperatorSetIdProto& opset : model.opset_import()) {
    if (IsStandardOnnxDomain(opset.domain())) return opset.version();
  }
  return 1;
}

namespace {

std::optional<std::vector<int64_t>> IntsOfTensor(const onnx::TensorProto& t) {
  int64_t count = 1;
  for (int64_t d : t.dims()) count *= d;
  if (t.data_type() == onnx::TensorProto::INT64) {
    if (t.int64_data_size() == count) {
      return std::vector<int64_t>(t.int64_data().begin(), t.int64_data().end());
    }
    if (static_cast<int64_t>(t.raw_data().size()) == count * 8) {
      std::vector<int64_t> values(count);
      std::memcpy(values.data(), t.raw_data().data(), count * 8);
      return values;
    }
  }
  if (t.data_type() == onnx::TensorProto::INT32) {
    if (t.int32_data_size() == count) {
      return std::vector<int64_t>(t.int32_data().begin(), t.int32_data().end());
    }
    if (static_cast<int64_t>(t.raw_data().size()) == count * 4) {
      std::vector<int32_t> values(count);
      std::memcpy(values.data(), t.raw_data().data(), count * 4);
      return std::vector<int64_t>(values.begin(), values.end());
    }
  }
  return std::nullopt;
}

bool IsGraphInput(const onnx::GraphProto& graph, absl::string_view name) {
  for (const onnx::ValueInfoProto& v : graph.input()) {
    if (v.name() == name) return true;
  }
  return false;
}

// The tensor of a Constant node's "value", or null.
const onnx::TensorProto* ConstantValue(const onnx::NodeProto& node) {
  if (node.op_type() != "Constant" || node.output_size() != 1) return nullptr;
  for (const onnx::AttributeProto& attribute : node.attribute()) {
    if (attribute.name() == "value" && attribute.has_t()) return &attribute.t();
  }
  return nullptr;
}

}  // namespace

std::optional<std::vector<int64_t>> ConstantInts(const onnx::GraphProto& graph,
                                                 absl::string_view name) {
  if (const onnx::TensorProto* t = FindInitializer(graph, name)) {
    // An initializer that is also an input is only a default: a caller may
    // feed another value.
    if (IsGraphInput(graph, name)) return std::nullopt;
    return IntsOfTensor(*t);
  }
  for (const onnx::NodeProto& node : graph.node()) {
    if (node.op_type() != "Constant" || node.output_size() != 1 || node.output(0) != name) {
      continue;
    }
    for (const onnx::AttributeProto& attribute : node.attribute()) {
      if (attribute.name() == "value" && attribute.has_t()) return IntsOfTensor(attribute.t());
    }
  }
  return std::nullopt;
}

ConstantIndex::ConstantIndex(const onnx::GraphProto& graph) {
  absl::flat_hash_set<absl::string_view> inputs;
  for (const onnx::ValueInfoProto& v : graph.input()) inputs.insert(v.name());
  // The first initializer of a name wins over Constant nodes, as in
  // ConstantInts; an overridable one (also an input) is no constant.
  for (const onnx::TensorProto& t : graph.initializer()) {
    tensors_.try_emplace(t.name(), inputs.contains(t.name()) ? nullptr : &t);
  }
  for (const onnx::NodeProto& node : graph.node()) {
    if (const onnx::TensorProto* t = ConstantValue(node)) tensors_.try_emplace(node.output(0), t);
  }
}

std::optional<std::vector<int64_t>> ConstantIndex::Ints(absl::string_view name) const {
  auto it = tensors_.find(name);
  if (it == tensors_.end() || it->second == nullptr) return std::nullopt;
  return IntsOfTensor(*it->second);
}

void ReplaceUnreadWeights(const onnx::GraphProto& original,
                          const absl::flat_hash_set<std::string>& replaced_weights,
                          std::vector<onnx::TensorProto> added, onnx::GraphProto& graph) {
  absl::flat_hash_set<std::string> still_read;
  for (const onnx::NodeProto& node : graph.node()) {
    for (const std::string& name : node.input()) still_read.insert(name);
  }
  for (const onnx::ValueInfoProto& v : graph.output()) still_read.insert(v.name());
  auto dropped = [&](const std::string& name) {
    return replaced_weights.contains(name) && !still_read.contains(name);
  };
  graph.clear_initializer();
  for (const onnx::TensorProto& t : original.initializer()) {
    if (!dropped(t.name())) *graph.add_initializer() = t;
  }
  for (onnx::TensorProto& t : added) *graph.add_initializer() = std::move(t);
  auto* inputs = graph.mutable_input();
  for (int i = inputs->size() - 1; i >= 0; --i) {
    if (dropped(inputs->Get(i).name())) inputs->DeleteSubrange(i, 1);
  }
}

}  // namespace ordo
