#include "core/rewrite/channel_wise_partition.h"

#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/rewrite/initializer_split.h"

namespace ordo {

absl::StatusOr<ModelEdit> PartitionConvChannelWise(const PartitionedConv& conv, NameScope& names) {
  const onnx::NodeProto& node = *conv.conv;
  const size_t n = conv.parts.size();
  if (n < 2 || conv.channels.size() != n || node.output_size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("Conv \"", node.name(), "\": needs >= 2 parts and one output"));
  }
  std::vector<std::string> weight_names;
  for (size_t i = 0; i < n; ++i) {
    weight_names.push_back(names.Fresh(absl::StrCat(conv.weight->name(), "_part", i)));
  }
  absl::StatusOr<std::vector<onnx::TensorProto>> weights =
      SplitInitializer(*conv.weight, /*axis=*/1, conv.channels, weight_names);
  if (!weights.ok()) return weights.status();

  ModelEdit edit;
  for (auto& w : *weights) edit.initializers.push_back(std::move(w));
  std::string sum;
  for (size_t i = 0; i < n; ++i) {
    onnx::NodeProto partial = node;
    partial.set_name(names.Fresh(absl::StrCat(node.name(), "_part", i)));
    partial.clear_input();
    partial.add_input(conv.parts[i]);
    partial.add_input(weight_names[i]);
    if (i == 0 && conv.bias != nullptr) partial.add_input(conv.bias->name());
    partial.clear_output();
    const std::string out = names.Fresh(absl::StrCat(node.output(0), "_part", i));
    partial.add_output(out);
    edit.value_infos.push_back(DenseValueInfo(out, conv.elem_type, conv.output_dims));
    edit.nodes.push_back(std::move(partial));
    if (i == 0) {
      sum = out;
      continue;
    }
    onnx::NodeProto add;
    add.set_op_type("Add");
    add.set_name(names.Fresh(absl::StrCat(node.name(), "_sum", i)));
    add.add_input(sum);
    add.add_input(out);
    sum = i + 1 == n ? node.output(0) : names.Fresh(absl::StrCat(node.output(0), "_sum", i));
    add.add_output(sum);
    if (i + 1 != n) {
      edit.value_infos.push_back(DenseValueInfo(sum, conv.elem_type, conv.output_dims));
    }
    edit.nodes.push_back(std::move(add));
  }
  return edit;
}

}  // namespace ordo
