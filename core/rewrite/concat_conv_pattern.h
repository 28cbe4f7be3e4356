#ifndef ORDO_CORE_REWRITE_CONCAT_CONV_PATTERN_H_
#define ORDO_CORE_REWRITE_CONCAT_CONV_PATTERN_H_

#include <cstdint>
#include <vector>

#include "absl/strings/string_view.h"
#include "core/graph/graph.h"

namespace ordo {

// How one Conv after a Concat is partitioned (SERENITY §3.3).
enum class ConvPartition : int8_t {
  // Group-1 Conv: one partial Conv per Concat input (the weight split along
  // its input channels, the bias on the first part only), summed by a chain
  // of Adds (Eq. 3-6).
  kChannelWise,
  // Depthwise Conv: one depthwise Conv per Concat input (weight and bias
  // split along the output channels, group = the part's channels), then a
  // Concat of the parts (Eq. 7-8).
  kKernelWise,
};

absl::string_view ConvPartitionName(ConvPartition partition);

// One place where SERENITY's identity rewrites apply: a Concat along the
// channel axis whose output reaches only Convs, through any tree of ops that
// treat channels independently (element-wise activations, pooling, spatial
// Pad and Slice). The NAS cells have both shapes: Concat -> Relu -> 1x1
// Convs, and Concat -> Relu -> {1x1 Conv, Slice -> Pad -> AveragePool ->
// 1x1 Conv} (DARTS' FactorizedReduce). Those ops commute with the Concat,
// so each runs once per Concat input instead, and every Conv reads the
// parts directly: the Concat and every full-width tensor after it disappear.
struct ConcatConvSite {
  OpId concat = kNoId;
  // The per-channel ops between the Concat and the Convs, in op-id order
  // (a topological order). Each reads one tensor of the site (the Concat's
  // output or another of these ops') as its first input, every other input
  // a weight, and keeps the batch and channel dims.
  std::vector<OpId> per_channel_ops;
  // Every Conv that reads a tensor of the site, ascending, each with how it
  // is partitioned.
  std::vector<OpId> convs;
  std::vector<ConvPartition> partitions;
  // Channels of each Concat input, in input order.
  std::vector<int64_t> part_channels;
};

// Every site of `graph`, in Concat op-id order. A Concat qualifies when it
// joins >= 2 activations (or graph inputs) along axis 1, no tensor of the
// site is a graph output, every reader of every tensor of the site is a
// per-channel op (above) or a Conv that reads it as its data input only,
// with weights of the graph, and is group 1 or depthwise, and the site has
// at most kMaxPerChannelOps per-channel ops. Anything else, or an op
// op_semantics does not understand, is left alone. Pad and Slice keep
// channels apart only when their pads / axes leave axis 1 alone; their
// operand values are not in the Graph, so dims are checked here and values
// when the rewrite is applied. O(ops + edges).
inline constexpr int32_t kMaxPerChannelOps = 32;
std::vector<ConcatConvSite> FindConcatConvSites(const Graph& graph);

}  // namespace ordo

#endif  // ORDO_CORE_REWRITE_CONCAT_CONV_PATTERN_H_
