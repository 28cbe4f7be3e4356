#include "core/graph/graph_proto.h"

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/util/wire_field_count.h"
#include "google/protobuf/util/json_util.h"

namespace ordo {

DataType DataTypeFromProto(v1::DataType dtype) {
  switch (dtype) {
    case v1::DATA_TYPE_FLOAT32: return DataType::kFloat32;
    case v1::DATA_TYPE_FLOAT16: return DataType::kFloat16;
    case v1::DATA_TYPE_BFLOAT16: return DataType::kBFloat16;
    case v1::DATA_TYPE_INT8: return DataType::kInt8;
    case v1::DATA_TYPE_UINT8: return DataType::kUInt8;
    case v1::DATA_TYPE_BOOL: return DataType::kBool;
    case v1::DATA_TYPE_INT16: return DataType::kInt16;
    case v1::DATA_TYPE_UINT16: return DataType::kUInt16;
    case v1::DATA_TYPE_INT32: return DataType::kInt32;
    case v1::DATA_TYPE_UINT32: return DataType::kUInt32;
    case v1::DATA_TYPE_INT64: return DataType::kInt64;
    case v1::DATA_TYPE_UINT64: return DataType::kUInt64;
    case v1::DATA_TYPE_FLOAT64: return DataType::kFloat64;
    default: return DataType::kUnknown;
  }
}

v1::DataType DataTypeToProto(DataType dtype) {
  for (int value = v1::DataType_MIN; value <= v1::DataType_MAX; ++value) {
    if (v1::DataType_IsValid(value) &&
        DataTypeFromProto(static_cast<v1::DataType>(value)) == dtype) {
      return static_cast<v1::DataType>(value);
    }
  }
  return v1::DATA_TYPE_UNSPECIFIED;
}

namespace {

absl::StatusOr<Attribute> AttributeFromProto(const std::string& name,
                                             const v1::AttributeValue& value) {
  switch (value.value_case()) {
    case v1::AttributeValue::kI: return Attribute{name, value.i()};
    case v1::AttributeValue::kF: return Attribute{name, value.f()};
    case v1::AttributeValue::kS: return Attribute{name, value.s()};
    case v1::AttributeValue::kInts:
      return Attribute{name, std::vector<int64_t>(value.ints().values().begin(),
                                                  value.ints().values().end())};
    case v1::AttributeValue::kFloats:
      return Attribute{name, std::vector<double>(value.floats().values().begin(),
                                                 value.floats().values().end())};
    case v1::AttributeValue::VALUE_NOT_SET: break;
  }
  return absl::InvalidArgumentError(absl::StrCat("attribute \"", name, "\" has no value"));
}

TensorKind DeriveKind(const v1::Tensor& tensor,
                      const absl::flat_hash_set<absl::string_view>& inputs,
                      const absl::flat_hash_set<absl::string_view>& produced) {
  switch (tensor.kind()) {
    case v1::TENSOR_KIND_INPUT: return TensorKind::kInput;
    case v1::TENSOR_KIND_WEIGHT: return TensorKind::kWeight;
    case v1::TENSOR_KIND_ACTIVATION:
    case v1::TENSOR_KIND_OUTPUT: return TensorKind::kActivation;
    default: break;
  }
  if (inputs.contains(tensor.name())) return TensorKind::kInput;
  if (produced.contains(tensor.name())) return TensorKind::kActivation;
  return TensorKind::kWeight;
}

struct OpTensorIds {
  std::vector<TensorId> inputs;
  std::vector<TensorId> outputs;
};

// `op`'s tensors as ids (an empty input name is an omitted optional input
// and dropped, as GraphBuilder::AddOp does); nullopt when a name is not
// declared.
std::optional<OpTensorIds> TensorIdsOf(
    const v1::Op& op, const absl::flat_hash_map<absl::string_view, TensorId>& tensor_ids) {
  OpTensorIds ids;
  ids.inputs.reserve(op.inputs_size());
  ids.outputs.reserve(op.outputs_size());
  for (const std::string& name : op.inputs()) {
    if (name.empty()) continue;
    auto it = tensor_ids.find(name);
    if (it == tensor_ids.end()) return std::nullopt;
    ids.inputs.push_back(it->second);
  }
  for (const std::string& name : op.outputs()) {
    auto it = tensor_ids.find(name);
    if (it == tensor_ids.end()) return std::nullopt;
    ids.outputs.push_back(it->second);
  }
  return ids;
}

}  // namespace

absl::StatusOr<Graph> GraphFromProto(const v1::Graph& proto, const GraphLimits& limits) {
  if (proto.ops_size() > limits.max_ops) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "graph has ", proto.ops_size(), " ops; the limit is ", limits.max_ops));
  }
  // Names are views of the message's own strings (it outlives this call):
  // nothing is copied but the one copy each name needs in the Graph.
  absl::flat_hash_set<absl::string_view> inputs(proto.inputs().begin(), proto.inputs().end());
  absl::flat_hash_set<absl::string_view> produced;
  for (const v1::Op& op : proto.ops()) produced.insert(op.outputs().begin(), op.outputs().end());

  GraphBuilder builder(proto.name(), limits);
  // The first declaration of each name; a second one is Build()'s error.
  absl::flat_hash_map<absl::string_view, TensorId> tensor_ids;
  tensor_ids.reserve(proto.tensors_size());
  for (const v1::Tensor& tensor : proto.tensors()) {
    TensorKind kind = DeriveKind(tensor, inputs, produced);
    if (tensor.dtype() == v1::DATA_TYPE_UNSPECIFIED) {
      if (tensor.size_bytes() <= 0) {
        return absl::InvalidArgumentError(absl::StrCat(
            "tensor \"", tensor.name(), "\": needs a dtype with dims, or size_bytes > 0"));
      }
      tensor_ids.emplace(tensor.name(),
                         builder.AddTensorBytes(tensor.name(), tensor.size_bytes(), kind));
      continue;
    }
    DataType dtype = DataTypeFromProto(tensor.dtype());
    if (dtype == DataType::kUnknown) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor \"", tensor.name(), "\": unknown dtype ", static_cast<int>(tensor.dtype())));
    }
    tensor_ids.emplace(tensor.name(),
                       builder.AddTensor(tensor.name(), dtype,
                                         std::vector<int64_t>(tensor.dims().begin(),
                                                              tensor.dims().end()),
                                         kind));
  }
  for (const v1::Op& op : proto.ops()) {
    std::vector<Attribute> attributes;
    for (const auto& [name, value] : op.attributes()) {
      absl::StatusOr<Attribute> attribute = AttributeFromProto(name, value);
      if (!attribute.ok()) {
        return absl::InvalidArgumentError(
            absl::StrCat("op \"", op.name(), "\": ", attribute.status().message()));
      }
      attributes.push_back(*std::move(attribute));
    }
    // Map order is unspecified; sort so graphs compare equal after a round trip.
    std::sort(attributes.begin(), attributes.end(),
              [](const Attribute& a, const Attribute& b) { return a.name < b.name; });
    std::optional<OpTensorIds> ids = TensorIdsOf(op, tensor_ids);
    if (ids) {
      builder.AddOpWithTensorIds(op.name(), op.type(), std::move(ids->inputs),
                                 std::move(ids->outputs), std::move(attributes), kNoId, "");
    } else {
      // An undeclared name: by name, so that Build() names it in its error.
      builder.AddOp(op.name(), op.type(), {op.inputs().begin(), op.inputs().end()},
                    {op.outputs().begin(), op.outputs().end()}, std::move(attributes));
    }
  }
  for (const std::string& name : proto.inputs()) builder.AddGraphInput(name);
  for (const std::string& name : proto.outputs()) builder.AddGraphOutput(name);
  return std::move(builder).Build();
}

absl::StatusOr<Graph> ParseGraphBinary(absl::string_view bytes, const GraphLimits& limits) {
  // Graph.ops (3) counted on the wire, before protobuf allocates an Op each.
  if (std::optional<int64_t> ops = CountWireField(bytes, 3);
      ops.has_value() && *ops > limits.max_ops) {
    return absl::ResourceExhaustedError(
        absl::StrCat("graph has ", *ops, " ops; the limit is ", limits.max_ops));
  }
  v1::Graph proto;
  if (bytes.size() > static_cast<size_t>(INT32_MAX) ||
      !proto.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError("not a valid ordo.v1.Graph protobuf message");
  }
  return GraphFromProto(proto, limits);
}

absl::StatusOr<Graph> ParseGraphJson(absl::string_view json, const GraphLimits& limits) {
  v1::Graph proto;
  google::protobuf::util::JsonParseOptions options;
  options.ignore_unknown_fields = false;
  auto status = google::protobuf::util::JsonStringToMessage(
      google::protobuf::StringPiece(json.data(), json.size()), &proto, options);
  if (!status.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a valid ordo.v1.Graph JSON document: ", status.message().ToString()));
  }
  return GraphFromProto(proto, limits);
}

v1::Graph GraphToProto(const Graph& graph) {
  v1::Graph proto;
  proto.set_name(graph.name());
  for (const Tensor& tensor : graph.tensors()) {
    v1::Tensor* out = proto.add_tensors();
    out->set_name(tensor.name);
    if (tensor.dtype == DataType::kUnknown) {
      out->set_size_bytes(tensor.bytes);
    } else {
      out->set_dtype(DataTypeToProto(tensor.dtype));
      for (int64_t dim : tensor.dims) out->add_dims(dim);
    }
    out->set_kind(tensor.kind == TensorKind::kInput    ? v1::TENSOR_KIND_INPUT
                  : tensor.kind == TensorKind::kWeight ? v1::TENSOR_KIND_WEIGHT
                  : tensor.kind == TensorKind::kOutput ? v1::TENSOR_KIND_OUTPUT
                                                       : v1::TENSOR_KIND_ACTIVATION);
  }
  for (const Op& op : graph.ops()) {
    v1::Op* out = proto.add_ops();
    out->set_name(op.name);
    out->set_type(op.type);
    for (TensorId t : op.inputs) out->add_inputs(graph.tensor(t).name);
    for (TensorId t : op.outputs) out->add_outputs(graph.tensor(t).name);
    for (const Attribute& attribute : op.attributes) {
      v1::AttributeValue& value = (*out->mutable_attributes())[attribute.name];
      std::visit(
          [&value](const auto& v) {
            using T = std::decay_t<decltype(v)>;
            if constexpr (std::is_same_v<T, int64_t>) value.set_i(v);
            else if constexpr (std::is_same_v<T, double>) value.set_f(v);
            else if constexpr (std::is_same_v<T, std::string>) value.set_s(v);
            else if constexpr (std::is_same_v<T, std::vector<int64_t>>)
              value.mutable_ints()->mutable_values()->Add(v.begin(), v.end());
            else value.mutable_floats()->mutable_values()->Add(v.begin(), v.end());
          },
          attribute.value);
    }
  }
  for (TensorId t : graph.inputs()) proto.add_inputs(graph.tensor(t).name);
  for (TensorId t : graph.outputs()) proto.add_outputs(graph.tensor(t).name);
  return proto;
}

}  // namespace ordo
