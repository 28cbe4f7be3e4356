#ifndef ORDO_CORE_REWRITE_CHANNEL_SPLIT_H_
#define ORDO_CORE_REWRITE_CHANNEL_SPLIT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/graph/graph.h"
#include "onnx/onnx_pb.h"

namespace ordo {

// MOTES channel-axis partitioning (§4, "channel partition") of the chain a
// Conv starts:
//
//   producer Conv (group 1) -> per-channel ops ... -> [consumer Conv (group 1)]
//
// The producer's output channels are split into `parts` near-equal slices
// (its weight and bias split along axis 0: no extra MACs). Every op of the
// chain after it treats channels independently, so it runs once per slice
// (weights split along axis 0; a depthwise Conv gets group = the slice's
// channels). The chain ends
//   - at a group-1 Conv reading its last tensor as data: that Conv is
//     partitioned over its input channels (partial Convs summed by a chain of
//     in-place Adds, channel_wise_partition.h), so no full-width tensor of the
//     chain ever exists; extra work: (parts - 1) Adds;
//   - else at a Concat (axis 1) of the slices, named as the chain's last
//     tensor, so readers outside are untouched.
// Per-channel ops: unary element-wise activations (op_semantics.h), Clip
// (min / max shared), BatchNormalization, depthwise Conv (any channel
// multiplier), MaxPool / AveragePool, and Resize / Upsample keeping N and C
// (any mode: each slice is resampled with the same shared scales; not with a
// `sizes` operand, which names the full C; ApplyChannelSplit refuses scales
// it can read that are not 1 on N and C). The chain follows a tensor only while
// it has exactly one reader and is not a graph output. For an inverted
// residual block (expand 1x1 -> depthwise -> project 1x1) this divides every
// expanded tensor by `parts` (MOTES Fig. 3).
struct ChannelSplit {
  std::string conv;  // node name of the producer Conv (Graph op name)
  int32_t parts = 2;
};

// The ops a split covers, in order, found in a Graph.
struct ChannelSplitPlan {
  OpId producer = kNoId;
  std::vector<OpId> chain;  // per-channel ops after the producer, in order
  OpId consumer = kNoId;    // the partitioned Conv, or kNoId: ends in a Concat
  int64_t channels = 0;     // the producer's output channels
};

// The plan of `split` in `graph`: INVALID_ARGUMENT for an unknown name or
// parts < 2 or > channels; UNIMPLEMENTED naming the op when the producer is
// not a group-1 Conv with weight inputs. O(chain).
absl::StatusOr<ChannelSplitPlan> PlanChannelSplit(const Graph& graph, const ChannelSplit& split);

// The rewritten model. `graph` is ImportOnnx(model) (nodes found by name,
// as NameNodesAsGraph names them, or at their source index). New nodes take
// the place of the last node of the chain, so a sorted file stays sorted;
// new tensors get value_info; weights nothing reads any more are dropped.
// Weight data is split when the model carries it (initializer_split.h).
// UNIMPLEMENTED when a weight to split is not an initializer. The result
// computes the same outputs up to summation order. O(model size).
absl::StatusOr<onnx::ModelProto> ApplyChannelSplit(const onnx::ModelProto& model,
                                                   const Graph& graph, const ChannelSplit& split);

// Near-equal slice sizes of `total` into `parts` (the first ones larger).
std::vector<int64_t> EvenSplit(int64_t total, int32_t parts);

}  // namespace ordo

#endif  // ORDO_CORE_REWRITE_CHANNEL_SPLIT_H_
