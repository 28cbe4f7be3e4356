#include "core/hierarchy/hierarchical_graph.h"

#include <algorithm>
#include <utility>

#include "core/hierarchy/sequences.h"

namespace ordo {

HierarchicalGraph HierarchicalGraph::Build(const MemoryModel& model,
                                           const HierarchyOptions& options) {
  const Digraph ops = Digraph::OfOps(model);
  HierarchicalGraph graph;
  graph.sequences_ = options.sequences ? FormSequences(model, ops) : SingletonSequences(ops);
  graph.sequence_of_op_.assign(model.num_ops(), kNoId);
  for (int32_t s = 0; s < graph.num_sequences(); ++s) {
    for (int32_t op : graph.sequences_[s]) graph.sequence_of_op_[op] = s;
  }
  std::vector<std::pair<int32_t, int32_t>> edges;
  for (int32_t op = 0; op < model.num_ops(); ++op) {
    for (int32_t succ : ops.successors(op)) {
      const int32_t from = graph.sequence_of_op_[op], to = graph.sequence_of_op_[succ];
      if (from != to) edges.push_back({from, to});
    }
  }
  graph.sequence_graph_ = Digraph(graph.num_sequences(), edges);
  if (options.groups.cell_groups || options.groups.dominator_groups) {
    graph.groups_ = FormGroups(model, graph.sequences_, graph.sequence_graph_, options.groups);
  }
  graph.group_of_.assign(graph.num_sequences(), kNoId);
  for (int32_t g = 0; g < graph.num_groups(); ++g) {
    for (int32_t s : graph.groups_[g].sequences) graph.group_of_[s] = g;
  }
  graph.assembled_.assign(graph.num_groups(), true);
  return graph;
}

int32_t HierarchicalGraph::num_assembled_groups() const {
  return static_cast<int32_t>(std::count(assembled_.begin(), assembled_.end(), true));
}

}  // namespace ordo
