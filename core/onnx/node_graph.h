#ifndef ORDO_CORE_ONNX_NODE_GRAPH_H_
#define ORDO_CORE_ONNX_NODE_GRAPH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/statusor.h"
#include "onnx/onnx_pb.h"

namespace ordo::onnx_import {

// Unique, deterministic names for the nodes of `graph`, indexed like its
// nodes. A node keeps its own name the first time that name appears; an
// unnamed node is "n<index in the file>"; a later duplicate of a name, or a
// generated name that some node already has, gets the first free "_1", "_2",
// ... suffix. Names only depend on the file, never on folding. O(nodes).
std::vector<std::string> UniqueNodeNames(const onnx::GraphProto& graph);

// The dataflow between the nodes of an ONNX graph, by tensor name, checked
// for the structural errors that would make folding or building meaningless.
struct NodeGraph {
  // UniqueNodeNames(graph).
  std::vector<std::string> names;
  // Tensor name -> index of the node that writes it.
  absl::flat_hash_map<std::string, int32_t> producer;
  absl::flat_hash_set<std::string> initializers;
  // graph.input entries that are not initializers.
  absl::flat_hash_set<std::string> graph_inputs;
  // Every node, dependencies first; ties go to the earlier node in the file,
  // so a sorted file keeps its order.
  std::vector<int32_t> order;
};

// Builds the NodeGraph of `graph` (Kahn's algorithm with a min-heap,
// O(edges + nodes log nodes), no recursion). INVALID_ARGUMENT naming the node
// and tensor when a tensor has two producers, a node writes an initializer or
// graph input, a node reads a tensor nothing defines, or the nodes form a
// cycle.
absl::StatusOr<NodeGraph> AnalyzeNodeGraph(const onnx::GraphProto& graph,
                                           std::vector<std::string> names);

}  // namespace ordo::onnx_import

#endif  // ORDO_CORE_ONNX_NODE_GRAPH_H_
