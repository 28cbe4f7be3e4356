#include "core/rewrite/concat_conv_rewrite.h"

#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/rewrite/channel_wise_partition.h"
#include "core/rewrite/kernel_wise_partition.h"
#include "core/rewrite/model_edit.h"
#include "core/util/status_macros.h"

namespace ordo {
namespace {

// Pad and Slice keep channels apart only when they leave the batch and
// channel axes alone, which their operand values tell (the pattern checked
// only that the dims are kept: a Slice reversing all channels keeps them
// too). Values that are not constants of the model: UNIMPLEMENTED.
absl::Status CheckKeepsChannelsApart(const onnx::GraphProto& model_graph,
                                     const onnx::NodeProto& node, const Op& op,
                                     const Graph& graph) {
  const int64_t rank = static_cast<int64_t>(graph.tensor(op.inputs[0]).dims.size());
  auto values = [&](int input, absl::string_view attribute) -> std::optional<std::vector<int64_t>> {
    if (input < node.input_size() && !node.input(input).empty()) {
      return ConstantInts(model_graph, node.input(input));
    }
    for (const onnx::AttributeProto& a : node.attribute()) {
      if (a.name() == attribute) return std::vector<int64_t>(a.ints().begin(), a.ints().end());
    }
    return std::nullopt;
  };
  auto refuse = [&](absl::string_view why) {
    return absl::UnimplementedError(absl::StrCat(node.op_type(), " \"", node.name(), "\": ", why));
  };
  if (node.op_type() == "Pad") {
    std::optional<std::vector<int64_t>> pads = values(1, "pads");
    if (!pads || static_cast<int64_t>(pads->size()) != 2 * rank) {
      return refuse("pads are not a constant of the model");
    }
    if ((*pads)[0] != 0 || (*pads)[1] != 0 || (*pads)[rank] != 0 || (*pads)[rank + 1] != 0) {
      return refuse("pads the batch or channel axis");
    }
  } else if (node.op_type() == "Slice") {
    std::optional<std::vector<int64_t>> starts = values(1, "starts");
    std::optional<std::vector<int64_t>> axes = values(3, "axes");
    if (!starts) return refuse("starts are not a constant of the model");
    if (!axes || axes->empty()) {
      axes = std::vector<int64_t>();
      for (size_t i = 0; i < starts->size(); ++i) axes->push_back(static_cast<int64_t>(i));
    }
    for (int64_t axis : *axes) {
      const int64_t normalized = axis < 0 ? axis + rank : axis;
      if (normalized == 0 || normalized == 1) return refuse("slices the batch or channel axis");
    }
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<onnx::ModelProto> ApplyConcatConvRewrite(const onnx::ModelProto& model,
                                                        const Graph& graph,
                                                        const ConcatConvSite& site) {
  const onnx::GraphProto& in = model.graph();
  NameScope names(in);
  absl::StatusOr<int32_t> concat_index = NodeOf(in, graph.op(site.concat));
  if (!concat_index.ok()) return concat_index.status();
  const onnx::NodeProto& concat = in.node(*concat_index);

  // Nodes that disappear, and what replaces each (by node index).
  absl::flat_hash_set<int32_t> dropped;
  absl::flat_hash_map<int32_t, ModelEdit> replacements;
  absl::flat_hash_set<std::string> dropped_tensors = {concat.output(0)};

  // 1. The per-channel ops, once per Concat input, each copy in the place of
  // its original (where the constants it reads are defined). part_of[i]
  // maps a full-width tensor of the site to its i-th part.
  const size_t n = static_cast<size_t>(concat.input_size());
  std::vector<absl::flat_hash_map<std::string, std::string>> part_of(n);
  for (size_t i = 0; i < n; ++i) part_of[i][concat.output(0)] = concat.input(i);
  std::vector<int32_t> per_channel_nodes;
  for (OpId per_channel : site.per_channel_ops) {
    const Op& op = graph.op(per_channel);
    absl::StatusOr<int32_t> index = NodeOf(in, op);
    if (!index.ok()) return index.status();
    const onnx::NodeProto& node = in.node(*index);
    ORDO_RETURN_IF_ERROR(CheckKeepsChannelsApart(in, node, op, graph));
    dropped.insert(*index);
    per_channel_nodes.push_back(*index);
    dropped_tensors.insert(node.output(0));
    ModelEdit& copies = replacements[*index];
    for (size_t i = 0; i < n; ++i) {
      auto part = part_of[i].find(node.input(0));
      if (part == part_of[i].end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("op \"", op.name, "\" reads no tensor of the site"));
      }
      onnx::NodeProto copy = node;
      copy.set_name(names.Fresh(absl::StrCat(node.name(), "_part", i)));
      copy.set_input(0, part->second);
      const std::string out = names.Fresh(absl::StrCat(node.output(0), "_part", i));
      copy.set_output(0, out);
      part_of[i][node.output(0)] = out;
      // The op keeps batch and channels apart, so the part has the full
      // output's dims with the part's channels.
      std::vector<int64_t> dims = graph.tensor(op.outputs[0]).dims;
      dims[1] = site.part_channels[i];
      copies.value_infos.push_back(DenseValueInfo(out, 0, dims));
      copies.nodes.push_back(std::move(copy));
    }
  }
  const std::vector<int64_t>& channels = site.part_channels;

  // 2. Each Conv.
  absl::flat_hash_set<std::string> replaced_weights;
  int32_t elem_type = 0;
  for (size_t c = 0; c < site.convs.size(); ++c) {
    const Op& conv_op = graph.op(site.convs[c]);
    absl::StatusOr<int32_t> index = NodeOf(in, conv_op);
    if (!index.ok()) return index.status();
    const onnx::NodeProto& node = in.node(*index);
    PartitionedConv conv;
    conv.conv = &node;
    conv.weight = FindInitializer(in, node.input(1));
    if (conv.weight == nullptr) {
      return absl::UnimplementedError(absl::StrCat("Conv \"", node.name(), "\": weight \"",
                                                   node.input(1), "\" is not an initializer"));
    }
    if (node.input_size() > 2 && !node.input(2).empty()) {
      conv.bias = FindInitializer(in, node.input(2));
      if (conv.bias == nullptr) {
        return absl::UnimplementedError(absl::StrCat("Conv \"", node.name(), "\": bias \"",
                                                     node.input(2), "\" is not an initializer"));
      }
      replaced_weights.insert(conv.bias->name());
    }
    replaced_weights.insert(conv.weight->name());
    for (size_t i = 0; i < n; ++i) {
      auto part = part_of[i].find(node.input(0));
      if (part == part_of[i].end()) {
        return absl::InvalidArgumentError(
            absl::StrCat("Conv \"", node.name(), "\" reads no tensor of the site"));
      }
      conv.parts.push_back(part->second);
    }
    conv.channels = channels;
    conv.output_dims = graph.tensor(conv_op.outputs[0]).dims;
    conv.elem_type = conv.weight->data_type();
    elem_type = conv.elem_type;
    absl::StatusOr<ModelEdit> edit = site.partitions[c] == ConvPartition::kChannelWise
                                         ? PartitionConvChannelWise(conv, names)
                                         : PartitionConvKernelWise(conv, names);
    if (!edit.ok()) return edit.status();
    dropped.insert(*index);
    replacements[*index] = *std::move(edit);
  }
  // Activations have the Convs' element type (ONNX Conv: X, W and Y share T).
  for (int32_t index : per_channel_nodes) {
    for (onnx::ValueInfoProto& info : replacements[index].value_infos) {
      info.mutable_type()->mutable_tensor_type()->set_elem_type(elem_type);
    }
  }
  dropped.insert(*concat_index);

  // 3. Splice, in file order.
  onnx::ModelProto out = model;
  onnx::GraphProto* graph_out = out.mutable_graph();
  graph_out->clear_node();
  std::vector<onnx::ValueInfoProto> new_infos;
  std::vector<onnx::TensorProto> new_initializers;
  for (int32_t i = 0; i < in.node_size(); ++i) {
    auto it = replacements.find(i);
    if (it != replacements.end()) {
      for (onnx::NodeProto& node : it->second.nodes) *graph_out->add_node() = std::move(node);
      for (auto& t : it->second.initializers) new_initializers.push_back(std::move(t));
      for (auto& v : it->second.value_infos) new_infos.push_back(std::move(v));
      continue;
    }
    if (dropped.contains(i)) continue;
    *graph_out->add_node() = in.node(i);
  }

  // Weights of the partitioned Convs that nothing reads any more go; others
  // (a weight shared with another node) stay.
  ReplaceUnreadWeights(in, replaced_weights, std::move(new_initializers), *graph_out);

  graph_out->clear_value_info();
  for (const onnx::ValueInfoProto& v : in.value_info()) {
    if (!dropped_tensors.contains(v.name())) *graph_out->add_value_info() = v;
  }
  for (onnx::ValueInfoProto& v : new_infos) *graph_out->add_value_info() = std::move(v);
  return out;
}

}  // namespace ordo
