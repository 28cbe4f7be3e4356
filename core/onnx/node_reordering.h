#ifndef ORDO_CORE_ONNX_NODE_REORDERING_H_
#define ORDO_CORE_ONNX_NODE_REORDERING_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/onnx/node_graph.h"
#include "onnx/onnx_pb.h"

namespace ordo::onnx_import {

// The order in which to write the nodes of `graph` so that a runtime that
// executes nodes in file order runs the scheduled ones in `scheduled` order
// (node indices; every node not listed is a compile-time node).
//
// Compile-time nodes go first, in file order, except the few that read an
// activation (Shape of a conv output): those are written right after the
// scheduled node whose output they wait for, since an ONNX file must be
// topologically sorted. A min-heap on the file index keeps them in file order
// among themselves. O(edges + nodes log nodes), no recursion.
//
// INVALID_ARGUMENT when a scheduled node would run before the producer of one
// of its inputs: either `scheduled` is not a topological order, or the node
// reads a compile-time value derived from an activation that the schedule
// produces later (the schedule is valid for the Graph, which does not see
// that dependency, but no file order can express it).
//
// `frozen`: compile-time nodes whose outputs the caller writes as
// initializers instead (FrozenValuesReadTooEarly): they are left out, their
// readers do not wait for them, and compile-time nodes left with no reader
// (the Shape that fed a frozen value) are dropped.
absl::StatusOr<std::vector<int32_t>> InterleaveCompileTimeNodes(
    const onnx::GraphProto& graph, const NodeGraph& nodes, absl::Span<const int32_t> scheduled,
    absl::Span<const int32_t> frozen = {});

// The compile-time nodes whose outputs a scheduled node reads although they
// are computed from an activation (a Shape of it, through any chain of
// compile-time nodes): the nodes InterleaveCompileTimeNodes may have to
// leave out when the schedule runs the reader before that activation.
std::vector<int32_t> CompileTimeNodesOfActivationsReadByScheduled(
    const NodeGraph& nodes, absl::Span<const int32_t> scheduled);

}  // namespace ordo::onnx_import

#endif  // ORDO_CORE_ONNX_NODE_REORDERING_H_
