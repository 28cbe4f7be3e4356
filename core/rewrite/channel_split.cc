#include "core/rewrite/channel_split.h"

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/rewrite/channel_wise_partition.h"
#include "core/rewrite/initializer_split.h"
#include "core/rewrite/model_edit.h"
#include "core/rewrite/op_semantics.h"
#include "core/util/status_macros.h"

namespace ordo {
namespace {

bool OtherInputsAreWeights(const Graph& graph, const Op& op, TensorId data) {
  if (op.inputs.empty() || op.inputs[0] != data) return false;
  for (size_t i = 1; i < op.inputs.size(); ++i) {
    if (op.inputs[i] == data || graph.tensor(op.inputs[i]).kind != TensorKind::kWeight) {
      return false;
    }
  }
  return true;
}

// A group-1 Conv reading `data` as its data input, with weight operands.
bool IsGroupOneConv(const Graph& graph, const Op& op, TensorId data) {
  if (ClassifyOp(op) != OpKind::kConv || op.outputs.size() != 1) return false;
  if (!OtherInputsAreWeights(graph, op, data) || op.inputs.size() < 2) return false;
  absl::StatusOr<ConvInfo> info = AnalyzeConv(op, InputDims(graph, op));
  return info.ok() && info->group == 1;
}

// True when a Resize reads an int64 operand: `sizes`, which names the full
// C and would need a per-slice copy.
bool ReadsSizes(const Graph& graph, const Op& op) {
  for (size_t i = 1; i < op.inputs.size(); ++i) {
    if (graph.tensor(op.inputs[i]).dtype == DataType::kInt64) return true;
  }
  return false;
}

// True when `op` reads `data` as its first input, treats its channels
// independently (slices of channels map to slices of channels), and reads
// only weights otherwise.
bool IsPerChannelOp(const Graph& graph, const Op& op, TensorId data) {
  if (op.outputs.size() != 1 || !OtherInputsAreWeights(graph, op, data)) return false;
  const std::vector<int64_t>& in = graph.tensor(data).dims;
  const std::vector<int64_t>& out = graph.tensor(op.outputs[0]).dims;
  if (in.size() < 3 || in.size() != out.size() || in[0] != out[0]) return false;
  switch (ClassifyOp(op)) {
    case OpKind::kUnaryElementwise:
    case OpKind::kMaxPool:
    case OpKind::kAveragePool:
    case OpKind::kBatchNormalization:
      return in[1] == out[1];
    case OpKind::kConv: {
      absl::StatusOr<ConvInfo> info = AnalyzeConv(op, InputDims(graph, op));
      return info.ok() && info->group == info->in_channels && info->in_channels > 1 &&
             info->out_channels % info->in_channels == 0;
    }
    case OpKind::kResize:
      // Every slice is resampled with the same (shared) scales.
      return ChannelDependenceOf(graph, op) == ChannelDependence::kPerChannel &&
             !ReadsSizes(graph, op);
    default:
      // Clip's min and max are scalars shared by every channel.
      return op.type == "Clip" && op.domain.empty() && in[1] == out[1];
  }
}

// The float values of `name` when the model has them: an initializer with
// float_data or raw_data, or a Constant node's `value`.
std::optional<std::vector<float>> FloatValues(const onnx::GraphProto& g, const std::string& name) {
  const onnx::TensorProto* tensor = FindInitializer(g, name);
  for (int i = 0; tensor == nullptr && i < g.node_size(); ++i) {
    const onnx::NodeProto& node = g.node(i);
    if (node.op_type() != "Constant" || node.output_size() != 1 || node.output(0) != name) {
      continue;
    }
    for (const onnx::AttributeProto& a : node.attribute()) {
      if (a.name() == "value" && a.has_t()) tensor = &a.t();
    }
  }
  if (tensor == nullptr || tensor->data_type() != onnx::TensorProto::FLOAT) return std::nullopt;
  if (tensor->float_data_size() > 0) {
    return std::vector<float>(tensor->float_data().begin(), tensor->float_data().end());
  }
  if (tensor->raw_data().empty() || tensor->raw_data().size() % sizeof(float) != 0) {
    return std::nullopt;
  }
  std::vector<float> values(tensor->raw_data().size() / sizeof(float));
  std::memcpy(values.data(), tensor->raw_data().data(), tensor->raw_data().size());
  return values;
}

// A Resize keeps every channel to itself only with a scale of exactly 1 on N
// and C; equal dims (PlanChannelSplit's test) also allow a C scale in
// (1, 1 + 1/C), which interpolates between channels. Checked where the
// model carries the scales; a weightless model's are unknown and trusted.
// `rank`: of the Resize's input.
absl::Status CheckResizeScales(const onnx::GraphProto& g, const onnx::NodeProto& node,
                               int64_t rank) {
  std::optional<std::vector<float>> scales;
  std::vector<int64_t> axes;  // the axis of each scale: 0.. or Resize-18's `axes`
  for (const onnx::AttributeProto& a : node.attribute()) {
    // Upsample-7 carries its scales as an attribute.
    if (a.name() == "scales") scales.emplace(a.floats().begin(), a.floats().end());
    if (a.name() == "axes") axes.assign(a.ints().begin(), a.ints().end());
  }
  // Resize-11+: X, roi, scales[, sizes]; Resize-10 and Upsample-9: X, scales.
  const int scales_index = node.input_size() >= 3 ? 2 : 1;
  if (node.input_size() > scales_index && !node.input(scales_index).empty()) {
    scales = FloatValues(g, node.input(scales_index));
  }
  if (!scales) return absl::OkStatus();
  if (axes.empty()) {
    for (int64_t i = 0; i < rank; ++i) axes.push_back(i);
  }
  for (size_t i = 0; i < scales->size(); ++i) {
    const int64_t axis = i < axes.size() ? (axes[i] < 0 ? axes[i] + rank : axes[i]) : -1;
    if ((axis == 0 || axis == 1 || axis == -1) && (*scales)[i] != 1.0f) {
      return absl::UnimplementedError(
          absl::StrCat(node.op_type(), " \"", node.name(), "\": its scales resample N or C"));
    }
  }
  return absl::OkStatus();
}

absl::StatusOr<int32_t> NodeIndex(const onnx::GraphProto& g, const Op& op) {
  if (op.source_index >= 0 && op.source_index < g.node_size() &&
      g.node(op.source_index).op_type() == op.type &&
      (g.node(op.source_index).name() == op.name || g.node(op.source_index).name().empty())) {
    return op.source_index;
  }
  for (int32_t i = 0; i < g.node_size(); ++i) {
    if (g.node(i).name() == op.name && g.node(i).op_type() == op.type) return i;
  }
  return absl::InvalidArgumentError(
      absl::StrCat("op \"", op.name, "\" does not match a node of the model"));
}

// Splits initializer `name` along axis 0 into `sizes`; the parts' names.
absl::StatusOr<std::vector<std::string>> SplitWeight(const onnx::GraphProto& g,
                                                     const std::string& name, const Op& op,
                                                     const std::vector<int64_t>& sizes,
                                                     NameScope& names, ModelEdit& edit,
                                                     absl::flat_hash_set<std::string>& replaced) {
  const onnx::TensorProto* tensor = FindInitializer(g, name);
  if (tensor == nullptr) {
    return absl::UnimplementedError(
        absl::StrCat(op.type, " \"", op.name, "\": weight \"", name, "\" is not an initializer"));
  }
  std::vector<std::string> part_names;
  for (size_t i = 0; i < sizes.size(); ++i) {
    part_names.push_back(names.Fresh(absl::StrCat(name, "_ch", i)));
  }
  absl::StatusOr<std::vector<onnx::TensorProto>> parts =
      SplitInitializer(*tensor, /*axis=*/0, sizes, part_names);
  if (!parts.ok()) return parts.status();
  for (onnx::TensorProto& part : *parts) edit.initializers.push_back(std::move(part));
  replaced.insert(name);
  return part_names;
}

void SetGroup(onnx::NodeProto& node, int64_t group) {
  for (onnx::AttributeProto& a : *node.mutable_attribute()) {
    if (a.name() == "group") {
      a.set_i(group);
      return;
    }
  }
  onnx::AttributeProto* a = node.add_attribute();
  a->set_name("group");
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(group);
}

}  // namespace

std::vector<int64_t> EvenSplit(int64_t total, int32_t parts) {
  std::vector<int64_t> sizes;
  sizes.reserve(parts);
  for (int32_t i = 0; i < parts; ++i) {
    sizes.push_back(total / parts + (i < total % parts ? 1 : 0));
  }
  return sizes;
}

absl::StatusOr<ChannelSplitPlan> PlanChannelSplit(const Graph& graph, const ChannelSplit& split) {
  std::optional<OpId> id = graph.FindOp(split.conv);
  if (!id) return absl::InvalidArgumentError(absl::StrCat("no op named \"", split.conv, "\""));
  const Op& producer = graph.op(*id);
  if (producer.inputs.empty() || !IsGroupOneConv(graph, producer, producer.inputs[0])) {
    return absl::UnimplementedError(
        absl::StrCat("op \"", split.conv, "\" is not a group-1 Conv with weight operands"));
  }
  ChannelSplitPlan plan;
  plan.producer = *id;
  plan.channels = graph.tensor(producer.outputs[0]).dims[1];
  if (split.parts < 2 || split.parts > plan.channels) {
    return absl::InvalidArgumentError(absl::StrCat("Conv \"", split.conv, "\": cannot split ",
                                                   plan.channels, " channels into ", split.parts,
                                                   " parts"));
  }
  TensorId t = producer.outputs[0];
  while (true) {
    const Tensor& tensor = graph.tensor(t);
    if (tensor.is_graph_output || tensor.consumers.size() != 1) break;
    const Op& reader = graph.op(tensor.consumers[0]);
    if (IsPerChannelOp(graph, reader, t)) {
      plan.chain.push_back(tensor.consumers[0]);
      t = reader.outputs[0];
      continue;
    }
    if (IsGroupOneConv(graph, reader, t)) plan.consumer = tensor.consumers[0];
    break;
  }
  if (plan.chain.empty() && plan.consumer == kNoId) {
    return absl::UnimplementedError(
        absl::StrCat("Conv \"", split.conv,
                     "\": its output is not read by one per-channel op or Conv only; "
                     "a split would only add a Concat"));
  }
  return plan;
}

absl::StatusOr<onnx::ModelProto> ApplyChannelSplit(const onnx::ModelProto& model,
                                                   const Graph& graph, const ChannelSplit& split) {
  absl::StatusOr<ChannelSplitPlan> plan = PlanChannelSplit(graph, split);
  if (!plan.ok()) return plan.status();
  const onnx::GraphProto& in = model.graph();
  NameScope names(in);
  const int32_t n = split.parts;
  std::vector<int64_t> sizes = EvenSplit(plan->channels, n);

  std::vector<OpId> covered = {plan->producer};
  covered.insert(covered.end(), plan->chain.begin(), plan->chain.end());
  std::vector<int32_t> indices;
  for (OpId op : covered) {
    absl::StatusOr<int32_t> index = NodeIndex(in, graph.op(op));
    if (!index.ok()) return index.status();
    indices.push_back(*index);
  }
  int32_t consumer_index = -1;
  if (plan->consumer != kNoId) {
    absl::StatusOr<int32_t> index = NodeIndex(in, graph.op(plan->consumer));
    if (!index.ok()) return index.status();
    consumer_index = *index;
  }

  ModelEdit edit;
  absl::flat_hash_set<std::string> replaced_weights;
  absl::flat_hash_set<std::string> dropped_tensors;
  int32_t elem_type = onnx::TensorProto::FLOAT;
  if (const onnx::TensorProto* w = FindInitializer(in, in.node(indices[0]).input(1))) {
    elem_type = w->data_type();
  }
  // Nodes per part, emitted part-major so that a file-order schedule already
  // finishes one slice before starting the next.
  std::vector<std::vector<onnx::NodeProto>> part_nodes(n);
  std::vector<std::string> current(n);
  for (size_t k = 0; k < covered.size(); ++k) {
    const Op& op = graph.op(covered[k]);
    const onnx::NodeProto& node = in.node(indices[k]);
    const bool is_producer = k == 0;
    if (ClassifyOp(op) == OpKind::kResize) {
      ORDO_RETURN_IF_ERROR(CheckResizeScales(
          in, node, static_cast<int64_t>(graph.tensor(op.inputs[0]).dims.size())));
    }
    // Channel slices this op writes; a depthwise Conv with multiplier m
    // writes m channels per input channel.
    std::vector<int64_t> out_sizes = sizes;
    const std::vector<int64_t>& out_dims = graph.tensor(op.outputs[0]).dims;
    if (!is_producer && ClassifyOp(op) == OpKind::kConv) {
      const int64_t m = out_dims[1] / graph.tensor(op.inputs[0]).dims[1];
      for (int64_t& s : out_sizes) s *= m;
    }
    // Weights split along axis 0: the producer's W and B, a depthwise Conv's
    // W and B, BatchNormalization's four parameters. Clip's are shared.
    std::vector<std::vector<std::string>> split_inputs(node.input_size());
    const bool splits_weights = is_producer || ClassifyOp(op) == OpKind::kConv ||
                                ClassifyOp(op) == OpKind::kBatchNormalization;
    for (int i = 1; splits_weights && i < node.input_size(); ++i) {
      if (node.input(i).empty()) continue;
      absl::StatusOr<std::vector<std::string>> parts =
          SplitWeight(in, node.input(i), op, out_sizes, names, edit, replaced_weights);
      if (!parts.ok()) return parts.status();
      split_inputs[i] = *std::move(parts);
    }
    dropped_tensors.insert(node.output(0));
    for (int32_t p = 0; p < n; ++p) {
      onnx::NodeProto copy = node;
      copy.set_name(names.Fresh(absl::StrCat(node.name(), "_ch", p)));
      if (!is_producer) copy.set_input(0, current[p]);
      for (int i = 1; i < node.input_size(); ++i) {
        if (!split_inputs[i].empty()) copy.set_input(i, split_inputs[i][p]);
      }
      if (!is_producer && ClassifyOp(op) == OpKind::kConv) SetGroup(copy, sizes[p]);
      const std::string out = names.Fresh(absl::StrCat(node.output(0), "_ch", p));
      copy.set_output(0, out);
      std::vector<int64_t> dims = out_dims;
      dims[1] = out_sizes[p];
      edit.value_infos.push_back(DenseValueInfo(out, elem_type, dims));
      part_nodes[p].push_back(std::move(copy));
      current[p] = out;
    }
    sizes = out_sizes;
  }
  for (std::vector<onnx::NodeProto>& nodes : part_nodes) {
    for (onnx::NodeProto& node : nodes) edit.nodes.push_back(std::move(node));
  }

  int32_t last_index = *std::max_element(indices.begin(), indices.end());
  if (plan->consumer != kNoId) {
    const onnx::NodeProto& node = in.node(consumer_index);
    PartitionedConv conv;
    conv.conv = &node;
    conv.weight = FindInitializer(in, node.input(1));
    if (conv.weight == nullptr) {
      return absl::UnimplementedError(absl::StrCat("Conv \"", node.name(), "\": weight \"",
                                                   node.input(1), "\" is not an initializer"));
    }
    replaced_weights.insert(node.input(1));
    if (node.input_size() > 2 && !node.input(2).empty()) {
      conv.bias = FindInitializer(in, node.input(2));
      if (conv.bias == nullptr) {
        return absl::UnimplementedError(absl::StrCat("Conv \"", node.name(), "\": bias \"",
                                                     node.input(2), "\" is not an initializer"));
      }
    }
    conv.parts = current;
    conv.channels = sizes;
    conv.output_dims = graph.tensor(graph.op(plan->consumer).outputs[0]).dims;
    conv.elem_type = elem_type;
    absl::StatusOr<ModelEdit> partial = PartitionConvChannelWise(conv, names);
    if (!partial.ok()) return partial.status();
    edit.Append(*std::move(partial));
    last_index = std::max(last_index, consumer_index);
    indices.push_back(consumer_index);
  } else {
    // The last chain tensor is rebuilt under its own name.
    const std::string& last = in.node(indices.back()).output(0);
    dropped_tensors.erase(last);
    onnx::NodeProto concat;
    concat.set_op_type("Concat");
    concat.set_name(names.Fresh(absl::StrCat(in.node(indices.back()).name(), "_concat")));
    for (const std::string& part : current) concat.add_input(part);
    concat.add_output(last);
    onnx::AttributeProto* axis = concat.add_attribute();
    axis->set_name("axis");
    axis->set_type(onnx::AttributeProto::INT);
    axis->set_i(1);
    edit.nodes.push_back(std::move(concat));
  }

  // Splice: the new nodes where the last covered node was. Everything they
  // read (the producer's input, weights) is defined before the first covered
  // node; everything reading their outputs comes after the last.
  absl::flat_hash_set<int32_t> dropped(indices.begin(), indices.end());
  onnx::ModelProto out = model;
  onnx::GraphProto* g = out.mutable_graph();
  g->clear_node();
  for (int32_t i = 0; i < in.node_size(); ++i) {
    if (i == last_index) {
      for (onnx::NodeProto& node : edit.nodes) *g->add_node() = std::move(node);
      continue;
    }
    if (!dropped.contains(i)) *g->add_node() = in.node(i);
  }
  ReplaceUnreadWeights(in, replaced_weights, std::move(edit.initializers), *g);
  g->clear_value_info();
  for (const onnx::ValueInfoProto& v : in.value_info()) {
    if (!dropped_tensors.contains(v.name())) *g->add_value_info() = v;
  }
  for (onnx::ValueInfoProto& v : edit.value_infos) {
    v.mutable_type()->mutable_tensor_type()->set_elem_type(elem_type);
    *g->add_value_info() = std::move(v);
  }
  return out;
}

}  // namespace ordo
