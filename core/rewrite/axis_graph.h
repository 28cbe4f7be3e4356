#ifndef ORDO_CORE_REWRITE_AXIS_GRAPH_H_
#define ORDO_CORE_REWRITE_AXIS_GRAPH_H_

#include <cstdint>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "core/graph/graph.h"

namespace ordo {

// MOTES' Axis Connecting Graph (§4.1) over a region of a graph: one node per
// (tensor, axis) of the region's activation tensors; an edge joins two axes
// when an op maps positions along one to positions along the other:
//   element-wise ops, BatchNormalization, Clip: every axis to the same axis
//     (not an axis the other operand broadcasts: dim 1 against > 1);
//   Conv / pools: N-N, and H-H, W-W through the window (a "halo" edge when
//     the kernel or stride exceeds 1); depthwise Conv and pools also C-C; a
//     grouped or group-1 Conv's input C is reduced, its output C is free;
//   Concat on axis a: every axis but a; GlobalAveragePool / GlobalMaxPool,
//     and a Resize that keeps N and C (per-channel, op_semantics.h): N-N and
//     C-C, H and W end there (a Resize resamples them);
//   anything else (Flatten, Gemm, Reshape, unknown ops): no edge, and the op
//     is a "breaker" of every axis.
// Connected components then say how a region can be cut: if the spatial
// axes (2, 3) of all its 4-D tensors form one component each and no op
// breaks them, it can be tiled over H / W (halo edges cost recomputation);
// if their channel axes form one component, a channel split of the first
// tensor carries through to the last without a Concat (MOTES' "partition
// scheme"). Built once, queried in O(alpha(n)); O(edges) to build.
// Immutable after Build; thread-compatible.
class AxisGraph {
 public:
  // `ops`: the region, any order; tensors outside it are ignored.
  static AxisGraph Build(const Graph& graph, absl::Span<const OpId> ops);

  // Component of (tensor, axis), or -1 when not a node of the graph.
  int32_t Component(TensorId tensor, int32_t axis) const;
  bool Connected(TensorId a, int32_t axis_a, TensorId b, int32_t axis_b) const;
  // Ops of the region that end (reduce or reshape away) axis `axis` of
  // their input.
  const std::vector<OpId>& Breakers(int32_t axis) const;
  int32_t halo_edges() const { return halo_edges_; }
  // True when axes 2 and 3 of every 4-D activation of the region are each
  // one component and no op of the region breaks them.
  bool SpatiallyTileable() const;
  // True when axis 1 of every 4-D activation of the region is one component.
  bool ChannelConnected() const;

 private:
  int32_t Node(TensorId tensor, int32_t axis);
  int32_t Find(int32_t node) const;
  void Union(int32_t a, int32_t b);
  void ConnectAll(TensorId a, TensorId b, const Graph& graph, int32_t skip_axis = -1);
  // `op` keeps N and C of `in` in `out` and ends H and W (global pooling, a
  // Resize that keeps channels).
  void KeepBatchAndChannelsEndSpatial(TensorId in, TensorId out, OpId op);

  absl::flat_hash_map<int64_t, int32_t> node_of_;  // tensor * 8 + axis
  mutable std::vector<int32_t> parent_;
  std::vector<TensorId> tensors_;  // 4-D activations of the region
  std::vector<std::vector<OpId>> breakers_ = std::vector<std::vector<OpId>>(4);
  int32_t halo_edges_ = 0;
};

}  // namespace ordo

#endif  // ORDO_CORE_REWRITE_AXIS_GRAPH_H_
