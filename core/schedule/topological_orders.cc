#include "core/schedule/topological_orders.h"

#include <algorithm>
#include <deque>
#include <numeric>
#include <utility>

namespace ordo {

std::vector<int32_t> ModelOrder(const OpDag& dag) {
  std::vector<int32_t> order(dag.num_ops());
  std::iota(order.begin(), order.end(), 0);
  return order;
}

std::vector<int32_t> KahnOrder(const OpDag& dag) {
  const int32_t n = dag.num_ops();
  std::vector<int32_t> missing(n);
  std::deque<int32_t> ready;
  for (int32_t op = 0; op < n; ++op) {
    missing[op] = dag.in_degree(op);
    if (missing[op] == 0) ready.push_back(op);
  }
  std::vector<int32_t> order;
  order.reserve(n);
  while (!ready.empty()) {
    int32_t op = ready.front();
    ready.pop_front();
    order.push_back(op);
    for (int32_t next : dag.successors(op)) {
      if (--missing[next] == 0) ready.push_back(next);
    }
  }
  return order;
}

std::vector<int32_t> ReversePostOrder(const OpDag& dag) {
  const int32_t n = dag.num_ops();
  std::vector<bool> visited(n, false);
  std::vector<int32_t> post;
  post.reserve(n);
  // Explicit stack of (op, next successor index): deep chains must not
  // overflow the call stack.
  std::vector<std::pair<int32_t, int32_t>> stack;
  for (int32_t root = 0; root < n; ++root) {
    if (visited[root] || dag.in_degree(root) != 0) continue;
    visited[root] = true;
    stack.push_back({root, 0});
    while (!stack.empty()) {
      auto& [op, next] = stack.back();
      auto successors = dag.successors(op);
      if (next < static_cast<int32_t>(successors.size())) {
        int32_t succ = successors[next++];
        if (!visited[succ]) {
          visited[succ] = true;
          stack.push_back({succ, 0});
        }
      } else {
        post.push_back(op);
        stack.pop_back();
      }
    }
  }
  std::reverse(post.begin(), post.end());
  return post;
}

}  // namespace ordo
