#include "core/rewrite/concat_conv_pattern.h"

#include <algorithm>
#include <optional>

#include "core/rewrite/op_semantics.h"

namespace ordo {
namespace {

bool IsActivationLike(const Tensor& tensor) {
  return tensor.kind == TensorKind::kInput || tensor.kind == TensorKind::kActivation;
}

// How `conv` may be partitioned when it reads `data` (a tensor of
// `part_channels` concatenated along axis 1), or nullopt.
std::optional<ConvPartition> PartitionOf(const Graph& graph, OpId conv, TensorId data,
                                         int64_t parts) {
  const Op& op = graph.op(conv);
  if (ClassifyOp(op) != OpKind::kConv || op.inputs.empty() || op.inputs[0] != data) {
    return std::nullopt;
  }
  // The tensor must be the data input only: a Conv that also used it as its
  // weight would need the whole tensor.
  for (size_t i = 1; i < op.inputs.size(); ++i) {
    if (op.inputs[i] == data || graph.tensor(op.inputs[i]).kind != TensorKind::kWeight) {
      return std::nullopt;
    }
  }
  // The Conv's output may be a graph output: the last Add (or Concat) of the
  // rewrite writes the same name.
  if (op.outputs.size() != 1) return std::nullopt;
  absl::StatusOr<ConvInfo> info = AnalyzeConv(op, InputDims(graph, op));
  if (!info.ok()) return std::nullopt;
  if (info->group == 1) return ConvPartition::kChannelWise;
  // Each part keeps whole groups: with one channel per group that is any
  // split, so depthwise convs always qualify.
  if (info->depthwise() && parts >= 2) return ConvPartition::kKernelWise;
  return std::nullopt;
}

// True when `reader` treats the channels of `data` independently and keeps
// them: an element-wise activation, a pool, or a Pad / Slice that keeps the
// batch and channel dims, reading `data` as its first input and only weights
// otherwise.
bool IsPerChannelReader(const Graph& graph, OpId reader, TensorId data) {
  const Op& op = graph.op(reader);
  const OpKind kind = ClassifyOp(op);
  if (kind != OpKind::kUnaryElementwise && kind != OpKind::kMaxPool &&
      kind != OpKind::kAveragePool && kind != OpKind::kPad && kind != OpKind::kSlice) {
    return false;
  }
  if (op.inputs.empty() || op.inputs[0] != data || op.outputs.size() != 1) return false;
  for (size_t i = 1; i < op.inputs.size(); ++i) {
    if (op.inputs[i] == data || graph.tensor(op.inputs[i]).kind != TensorKind::kWeight) {
      return false;
    }
  }
  const std::vector<int64_t>& in = graph.tensor(data).dims;
  const std::vector<int64_t>& out = graph.tensor(op.outputs[0]).dims;
  return in.size() == out.size() && in.size() >= 3 && in[0] == out[0] && in[1] == out[1];
}

}  // namespace

absl::string_view ConvPartitionName(ConvPartition partition) {
  switch (partition) {
    case ConvPartition::kChannelWise:
      return "channel-wise";
    case ConvPartition::kKernelWise:
      return "kernel-wise";
  }
  return "?";
}

std::vector<ConcatConvSite> FindConcatConvSites(const Graph& graph) {
  std::vector<ConcatConvSite> sites;
  for (OpId id = 0; id < graph.num_ops(); ++id) {
    const Op& concat = graph.op(id);
    if (ClassifyOp(concat) != OpKind::kConcat || concat.inputs.size() < 2 ||
        concat.outputs.size() != 1) {
      continue;
    }
    const Tensor& joined = graph.tensor(concat.outputs[0]);
    if (joined.dims.size() < 3 || joined.is_graph_output) continue;
    absl::StatusOr<int64_t> axis = ConcatAxis(concat, static_cast<int64_t>(joined.dims.size()));
    if (!axis.ok() || *axis != 1) continue;
    ConcatConvSite site;
    site.concat = id;
    bool ok = true;
    for (TensorId input : concat.inputs) {
      const Tensor& part = graph.tensor(input);
      if (!IsActivationLike(part) || part.dims.size() != joined.dims.size()) ok = false;
      if (ok) site.part_channels.push_back(part.dims[1]);
    }
    if (!ok) continue;

    // Walk the readers of the Concat's output, breadth first: per-channel
    // ops extend the site, Convs end it, anything else spoils it.
    std::vector<TensorId> frontier = {concat.outputs[0]};
    for (size_t next = 0; next < frontier.size() && ok; ++next) {
      const Tensor& tensor = graph.tensor(frontier[next]);
      if (tensor.consumers.empty() || tensor.is_graph_output) ok = false;
      for (OpId reader : tensor.consumers) {
        if (!ok) break;
        if (IsPerChannelReader(graph, reader, frontier[next])) {
          site.per_channel_ops.push_back(reader);
          frontier.push_back(graph.op(reader).outputs[0]);
          if (static_cast<int32_t>(site.per_channel_ops.size()) > kMaxPerChannelOps) ok = false;
          continue;
        }
        std::optional<ConvPartition> partition =
            PartitionOf(graph, reader, frontier[next], static_cast<int64_t>(concat.inputs.size()));
        if (!partition) {
          ok = false;
          break;
        }
        site.convs.push_back(reader);
        site.partitions.push_back(*partition);
      }
    }
    if (!ok) continue;
    // Op-id order is a topological order; the Convs pair with partitions.
    std::sort(site.per_channel_ops.begin(), site.per_channel_ops.end());
    std::vector<size_t> order(site.convs.size());
    for (size_t i = 0; i < order.size(); ++i) order[i] = i;
    std::sort(order.begin(), order.end(),
              [&site](size_t a, size_t b) { return site.convs[a] < site.convs[b]; });
    std::vector<OpId> convs;
    std::vector<ConvPartition> partitions;
    for (size_t i : order) {
      convs.push_back(site.convs[i]);
      partitions.push_back(site.partitions[i]);
    }
    site.convs = std::move(convs);
    site.partitions = std::move(partitions);
    if (ok) sites.push_back(std::move(site));
  }
  return sites;
}

}  // namespace ordo
