#include "core/hierarchy/dominator_tree.h"

#include <utility>

#include "core/util/check.h"

namespace ordo {
namespace {

// Post-order of the nodes reachable from `root`, by an explicit-stack DFS.
std::vector<int32_t> PostOrder(const Digraph& graph, int32_t root) {
  std::vector<bool> visited(graph.num_nodes(), false);
  std::vector<int32_t> post;
  std::vector<std::pair<int32_t, int32_t>> stack = {{root, 0}};
  visited[root] = true;
  while (!stack.empty()) {
    auto& [v, next] = stack.back();
    const absl::Span<const int32_t> succs = graph.successors(v);
    if (next < static_cast<int32_t>(succs.size())) {
      const int32_t w = succs[next++];
      if (!visited[w]) {
        visited[w] = true;
        stack.push_back({w, 0});
      }
    } else {
      post.push_back(v);
      stack.pop_back();
    }
  }
  return post;
}

}  // namespace

DominatorTree::DominatorTree(const Digraph& graph, int32_t root) : root_(root) {
  ORDO_CHECK(root >= 0 && root < graph.num_nodes());
  ComputeIdoms(graph, PostOrder(graph, root));
  NumberTree(graph.num_nodes());
}

void DominatorTree::ComputeIdoms(const Digraph& graph, const std::vector<int32_t>& post_order) {
  const int32_t n = graph.num_nodes();
  std::vector<int32_t> post_number(n, kNoId);
  for (int32_t i = 0; i < static_cast<int32_t>(post_order.size()); ++i) {
    post_number[post_order[i]] = i;
  }
  idom_.assign(n, kNoId);
  idom_[root_] = root_;
  // The two-finger walk: the finger with the lower post-order number is
  // deeper in the tree, so it climbs until both meet at the common dominator.
  auto intersect = [&](int32_t a, int32_t b) {
    while (a != b) {
      while (post_number[a] < post_number[b]) a = idom_[a];
      while (post_number[b] < post_number[a]) b = idom_[b];
    }
    return a;
  };
  bool changed = true;
  while (changed) {
    changed = false;
    for (auto it = post_order.rbegin(); it != post_order.rend(); ++it) {
      const int32_t v = *it;
      if (v == root_) continue;
      int32_t candidate = kNoId;
      for (int32_t p : graph.predecessors(v)) {
        if (idom_[p] == kNoId) continue;  // unreachable, or not processed yet
        candidate = candidate == kNoId ? p : intersect(p, candidate);
      }
      if (candidate != idom_[v]) {
        idom_[v] = candidate;
        changed = true;
      }
    }
  }
}

void DominatorTree::NumberTree(int32_t num_nodes) {
  // Children lists of the tree, compressed.
  std::vector<int32_t> child_begin(num_nodes + 1, 0), children;
  for (int32_t v = 0; v < num_nodes; ++v) {
    if (v != root_ && idom_[v] != kNoId) ++child_begin[idom_[v] + 1];
  }
  for (int32_t v = 0; v < num_nodes; ++v) child_begin[v + 1] += child_begin[v];
  children.resize(child_begin[num_nodes]);
  std::vector<int32_t> next(child_begin.begin(), child_begin.end() - 1);
  for (int32_t v = 0; v < num_nodes; ++v) {
    if (v != root_ && idom_[v] != kNoId) children[next[idom_[v]]++] = v;
  }
  pre_.assign(num_nodes, kNoId);
  end_.assign(num_nodes, kNoId);
  std::vector<std::pair<int32_t, int32_t>> stack = {{root_, child_begin[root_]}};
  pre_[root_] = 0;
  preorder_.push_back(root_);
  while (!stack.empty()) {
    auto& [v, next_child] = stack.back();
    if (next_child < child_begin[v + 1]) {
      const int32_t c = children[next_child++];
      pre_[c] = static_cast<int32_t>(preorder_.size());
      preorder_.push_back(c);
      stack.push_back({c, child_begin[c]});
    } else {
      end_[v] = static_cast<int32_t>(preorder_.size());
      stack.pop_back();
    }
  }
}

absl::Span<const int32_t> DominatorTree::Dominated(int32_t v) const {
  if (!reachable(v)) return {};
  return {preorder_.data() + pre_[v], static_cast<size_t>(end_[v] - pre_[v])};
}

}  // namespace ordo
