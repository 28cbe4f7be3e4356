#ifndef ORDO_CORE_HIERARCHY_DIGRAPH_H_
#define ORDO_CORE_HIERARCHY_DIGRAPH_H_

#include <cstdint>
#include <utility>
#include <vector>

#include "absl/types/span.h"
#include "core/memory/memory_model.h"

namespace ordo {

// A directed graph on dense ids 0..n-1 as compressed adjacency arrays:
// each node's successors and predecessors distinct and ascending. The
// hierarchy (ops, sequences, the flow graphs of the dominator trees) is
// built on it without depending on the scheduling layer. Immutable;
// O(nodes + edges) to build; thread-compatible.
class Digraph {
 public:
  Digraph() = default;
  // Duplicate edges are merged.
  Digraph(int32_t num_nodes, absl::Span<const std::pair<int32_t, int32_t>> edges);

  // Producer -> consumer dependencies between the ops of `model`.
  static Digraph OfOps(const MemoryModel& model);

  int32_t num_nodes() const { return static_cast<int32_t>(succ_begin_.size()) - 1; }
  absl::Span<const int32_t> successors(int32_t v) const {
    return {succ_.data() + succ_begin_[v],
            static_cast<size_t>(succ_begin_[v + 1] - succ_begin_[v])};
  }
  absl::Span<const int32_t> predecessors(int32_t v) const {
    return {pred_.data() + pred_begin_[v],
            static_cast<size_t>(pred_begin_[v + 1] - pred_begin_[v])};
  }

  // Kahn's order, the lowest ready id first. Holds every node exactly when
  // the graph is acyclic.
  std::vector<int32_t> TopologicalOrder() const;

 private:
  std::vector<int32_t> succ_begin_ = {0}, succ_;
  std::vector<int32_t> pred_begin_ = {0}, pred_;
};

}  // namespace ordo

#endif  // ORDO_CORE_HIERARCHY_DIGRAPH_H_
