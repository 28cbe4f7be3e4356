#ifndef ORDO_CORE_HIERARCHY_DOMINATOR_TREE_H_
#define ORDO_CORE_HIERARCHY_DOMINATOR_TREE_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "core/hierarchy/digraph.h"

namespace ordo {

// The dominator tree of a flow graph: node a dominates node b when every
// path from the root to b passes through a (every node dominates itself).
// Post-dominators are the dominators of the reversed graph rooted at the
// exit.
//
// Algorithm: Cooper, Harvey & Kennedy, "A Simple, Fast Dominance
// Algorithm" (2001), the iterative data-flow formulation HMCOS §3.1.2
// relies on for its groups (it cites Lengauer-Tarjan; the trees are the
// same). 1. Number the nodes reachable from the root in post-order by an
// explicit-stack depth-first search. 2. In reverse post-order, set each
// node's immediate dominator to the intersection of its processed
// predecessors' dominator chains (two fingers climbing towards the root by
// post-order number), repeating until nothing changes: on a DAG the first
// pass is final, since every predecessor comes earlier in reverse post-order.
// 3. Number the tree in pre-order (explicit stack again) so that
// Dominates() is an interval test.
//
// O((nodes + edges) x passes x tree depth) in the worst case, in practice
// near linear. No recursion: deep chains cannot overflow the stack. Nodes
// not reachable from the root have no dominator and dominate nothing.
// Immutable; thread-compatible.
class DominatorTree {
 public:
  DominatorTree(const Digraph& graph, int32_t root);

  int32_t root() const { return root_; }
  bool reachable(int32_t v) const { return pre_[v] != kNoId; }
  // The immediate dominator; kNoId for the root and for unreachable nodes.
  int32_t idom(int32_t v) const { return v == root_ ? kNoId : idom_[v]; }
  // a dominates b (reflexive). O(1).
  bool Dominates(int32_t a, int32_t b) const {
    return reachable(a) && reachable(b) && pre_[a] <= pre_[b] && pre_[b] < end_[a];
  }
  // v and every node it dominates (v's subtree), v first, in pre-order.
  absl::Span<const int32_t> Dominated(int32_t v) const;

 private:
  void ComputeIdoms(const Digraph& graph, const std::vector<int32_t>& post_order);
  void NumberTree(int32_t num_nodes);

  int32_t root_;
  std::vector<int32_t> idom_;
  // Pre-order index in the dominator tree (kNoId: unreachable), the index
  // one past the node's subtree, and the nodes in pre-order.
  std::vector<int32_t> pre_, end_, preorder_;
};

}  // namespace ordo

#endif  // ORDO_CORE_HIERARCHY_DOMINATOR_TREE_H_
