#ifndef ORDO_CORE_ONNX_NODE_GRAPH_H_
#define ORDO_CORE_ONNX_NODE_GRAPH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/onnx/model_view.h"

namespace ordo::onnx_import {

// Id of an omitted optional input or output (""), or of no producer.
inline constexpr int32_t kNoValue = -1;

// Unique, deterministic names for the nodes of `graph`, indexed like its
// nodes. A node keeps its own name the first time that name appears; an
// unnamed node is "n<index in the file>"; a later duplicate of a name, or a
// generated name that some node already has, gets the first free "_1", "_2",
// ... suffix. Names only depend on the file, never on folding. O(nodes).
std::vector<std::string> UniqueNodeNames(const ModelView& graph);

// The dataflow between the nodes of an ONNX graph with a dense id per value
// (tensor name), checked for the structural errors that would make folding
// or building meaningless. Every later import stage indexes vectors by these
// ids; names are hashed once, here.
//
// Ids are numbered in first-seen order: graph inputs, initializers, node
// outputs and inputs in file order, graph outputs. The value names are views
// of the model's bytes (ModelView's strings), which must outlive this.
struct NodeGraph {
  // UniqueNodeNames(graph).
  std::vector<std::string> names;
  // Value name -> id (views of the graph's strings; one map, one hash per
  // name in the file).
  absl::flat_hash_map<absl::string_view, int32_t> value_ids;
  // By value id.
  std::vector<absl::string_view> value_names;
  std::vector<int32_t> producer;     // node index, or kNoValue
  std::vector<bool> is_initializer;  // graph.initializer
  std::vector<bool> is_graph_input;  // graph.input entries that are not initializers
  // The ids of ModelView::inputs and ::initializers, by their index there
  // (kNoValue for an empty name).
  std::vector<int32_t> input_ids;
  std::vector<int32_t> initializer_ids;
  // Every node, dependencies first; ties go to the earlier node in the file,
  // so a sorted file keeps its order.
  std::vector<int32_t> order;
  // Per node, the ids of its inputs and outputs in positional order
  // (kNoValue for ""): node i's inputs are edges[edge_begin[2i],
  // edge_begin[2i+1]), its outputs edges[edge_begin[2i+1], edge_begin[2i+2]).
  std::vector<int32_t> edges;
  std::vector<int32_t> edge_begin;

  int32_t num_values() const { return static_cast<int32_t>(value_names.size()); }
  absl::Span<const int32_t> inputs(int32_t node) const { return Edges(2 * node); }
  absl::Span<const int32_t> outputs(int32_t node) const { return Edges(2 * node + 1); }
  // The id of `name`, or kNoValue when no value of the graph has it.
  int32_t FindValue(absl::string_view name) const;
  // Value `id` is a weight: an initializer, or written by a node that
  // `folded` (per node) marks as computed at compile time.
  bool IsWeight(int32_t id, const std::vector<bool>& folded) const {
    return is_initializer[id] || (producer[id] != kNoValue && folded[producer[id]]);
  }

 private:
  absl::Span<const int32_t> Edges(int32_t slot) const {
    return absl::MakeConstSpan(edges).subspan(edge_begin[slot],
                                              edge_begin[slot + 1] - edge_begin[slot]);
  }
};

// Builds the NodeGraph of `graph` (one pass numbering the values, then
// Kahn's algorithm with a min-heap, O(edges + nodes log nodes), no
// recursion). INVALID_ARGUMENT naming the node and tensor when a tensor has
// two producers, a node writes an initializer or graph input, a node reads a
// tensor nothing defines, or the nodes form a cycle.
absl::StatusOr<NodeGraph> AnalyzeNodeGraph(const ModelView& graph,
                                           std::vector<std::string> names);

}  // namespace ordo::onnx_import

#endif  // ORDO_CORE_ONNX_NODE_GRAPH_H_
