#include "core/rewrite/kernel_wise_partition.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/rewrite/initializer_split.h"

namespace ordo {

absl::StatusOr<ModelEdit> PartitionConvKernelWise(const PartitionedConv& conv, NameScope& names) {
  const onnx::NodeProto& node = *conv.conv;
  const size_t n = conv.parts.size();
  int64_t in_channels = 0;
  for (int64_t c : conv.channels) in_channels += c;
  const int64_t out_channels = conv.weight->dims_size() > 0 ? conv.weight->dims(0) : 0;
  if (n < 2 || conv.channels.size() != n || node.output_size() != 1 || in_channels == 0 ||
      out_channels % in_channels != 0 || conv.output_dims.size() < 2) {
    return absl::InvalidArgumentError(
        absl::StrCat("Conv \"", node.name(), "\": not a depthwise Conv over ", n, " parts"));
  }
  const int64_t multiplier = out_channels / in_channels;
  std::vector<int64_t> out_sizes;
  std::vector<std::string> weight_names;
  std::vector<std::string> bias_names;
  for (size_t i = 0; i < n; ++i) {
    out_sizes.push_back(conv.channels[i] * multiplier);
    weight_names.push_back(names.Fresh(absl::StrCat(conv.weight->name(), "_part", i)));
    if (conv.bias != nullptr) {
      bias_names.push_back(names.Fresh(absl::StrCat(conv.bias->name(), "_part", i)));
    }
  }
  ModelEdit edit;
  absl::StatusOr<std::vector<onnx::TensorProto>> weights =
      SplitInitializer(*conv.weight, /*axis=*/0, out_sizes, weight_names);
  if (!weights.ok()) return weights.status();
  for (auto& w : *weights) edit.initializers.push_back(std::move(w));
  if (conv.bias != nullptr) {
    absl::StatusOr<std::vector<onnx::TensorProto>> biases =
        SplitInitializer(*conv.bias, /*axis=*/0, out_sizes, bias_names);
    if (!biases.ok()) return biases.status();
    for (auto& b : *biases) edit.initializers.push_back(std::move(b));
  }

  onnx::NodeProto concat;
  concat.set_op_type("Concat");
  concat.set_name(names.Fresh(absl::StrCat(node.name(), "_concat")));
  onnx::AttributeProto* axis = concat.add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(1);
  for (size_t i = 0; i < n; ++i) {
    onnx::NodeProto partial = node;
    partial.set_name(names.Fresh(absl::StrCat(node.name(), "_part", i)));
    partial.clear_input();
    partial.add_input(conv.parts[i]);
    partial.add_input(weight_names[i]);
    if (conv.bias != nullptr) partial.add_input(bias_names[i]);
    bool has_group = false;
    for (onnx::AttributeProto& attribute : *partial.mutable_attribute()) {
      if (attribute.name() != "group") continue;
      attribute.set_i(conv.channels[i]);
      has_group = true;
    }
    if (!has_group) {
      return absl::InvalidArgumentError(
          absl::StrCat("Conv \"", node.name(), "\": depthwise without a group attribute"));
    }
    partial.clear_output();
    const std::string out = names.Fresh(absl::StrCat(node.output(0), "_part", i));
    partial.add_output(out);
    std::vector<int64_t> dims = conv.output_dims;
    dims[1] = out_sizes[i];
    edit.value_infos.push_back(DenseValueInfo(out, conv.elem_type, dims));
    concat.add_input(out);
    edit.nodes.push_back(std::move(partial));
  }
  concat.add_output(node.output(0));
  edit.nodes.push_back(std::move(concat));
  return edit;
}

}  // namespace ordo
