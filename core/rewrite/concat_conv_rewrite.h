#ifndef ORDO_CORE_REWRITE_CONCAT_CONV_REWRITE_H_
#define ORDO_CORE_REWRITE_CONCAT_CONV_REWRITE_H_

#include "absl/status/statusor.h"
#include "core/graph/graph.h"
#include "core/rewrite/concat_conv_pattern.h"
#include "onnx/onnx_pb.h"

namespace ordo {

// Applies SERENITY's identity rewrite (§3.3) at one site, on the ONNX model:
//
// 1. The site's per-channel ops (Relu, pools, spatial Pad / Slice) run once
//    per Concat input, on fresh names, since f([x_1..x_n]) = [f(x_1)..f(x_n)]
//    for an op that treats channels independently. Pad and Slice are
//    checked here, from their constant operands, to leave axes 0 and 1
//    alone (UNIMPLEMENTED otherwise).
// 2. Each Conv reading a tensor of the site is partitioned over its parts:
//    channel-wise (group 1) or kernel-wise (depthwise); see
//    channel_wise_partition.h and kernel_wise_partition.h.
// 3. The Concat and the original per-channel ops are dropped; weights no
//    node reads any more are dropped; new tensors get value_info.
//
// New nodes take the place of the nodes they replace, so a topologically
// sorted file stays sorted; names of tensors other nodes read never change.
// `site` is one of FindConcatConvSites(graph), where `graph` is
// ImportOnnx(model), or ImportOnnx of an earlier version of it that other
// sites were rewritten from (sites are disjoint and keep the names of
// everything outside them; nodes are then found by name, which must be
// unique). UNIMPLEMENTED when a Conv's weight or bias is
// not an initializer (e.g. a folded Constant) or its data cannot be split;
// INVALID_ARGUMENT when graph and model disagree. The result is a new model;
// `model` is not changed. O(model size).
absl::StatusOr<onnx::ModelProto> ApplyConcatConvRewrite(const onnx::ModelProto& model,
                                                        const Graph& graph,
                                                        const ConcatConvSite& site);

}  // namespace ordo

#endif  // ORDO_CORE_REWRITE_CONCAT_CONV_REWRITE_H_
