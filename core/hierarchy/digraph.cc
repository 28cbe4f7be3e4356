#include "core/hierarchy/digraph.h"

#include <algorithm>
#include <functional>
#include <queue>

namespace ordo {
namespace {

// Counting sort of `edges` by `key` into compressed arrays; `value` gives
// the neighbour stored.
template <typename Key, typename Value>
void Compress(int32_t n, absl::Span<const std::pair<int32_t, int32_t>> edges, Key key, Value value,
              std::vector<int32_t>& begin, std::vector<int32_t>& flat) {
  begin.assign(n + 1, 0);
  for (const auto& edge : edges) ++begin[key(edge) + 1];
  for (int32_t v = 0; v < n; ++v) begin[v + 1] += begin[v];
  flat.resize(edges.size());
  std::vector<int32_t> next(begin.begin(), begin.end() - 1);
  for (const auto& edge : edges) flat[next[key(edge)]++] = value(edge);
  for (int32_t v = 0; v < n; ++v) std::sort(flat.begin() + begin[v], flat.begin() + begin[v + 1]);
}

}  // namespace

Digraph::Digraph(int32_t num_nodes, absl::Span<const std::pair<int32_t, int32_t>> edges) {
  std::vector<std::pair<int32_t, int32_t>> unique(edges.begin(), edges.end());
  std::sort(unique.begin(), unique.end());
  unique.erase(std::unique(unique.begin(), unique.end()), unique.end());
  Compress(
      num_nodes, unique, [](const auto& e) { return e.first; },
      [](const auto& e) { return e.second; }, succ_begin_, succ_);
  Compress(
      num_nodes, unique, [](const auto& e) { return e.second; },
      [](const auto& e) { return e.first; }, pred_begin_, pred_);
}

Digraph Digraph::OfOps(const MemoryModel& model) {
  std::vector<std::pair<int32_t, int32_t>> edges;
  for (int32_t op = 0; op < model.num_ops(); ++op) {
    for (int32_t t : model.ops[op].inputs) {
      const int32_t producer = model.tensors[t].producer;
      if (producer != kNoId) edges.push_back({producer, op});
    }
  }
  return Digraph(model.num_ops(), edges);
}

std::vector<int32_t> Digraph::TopologicalOrder() const {
  const int32_t n = num_nodes();
  std::vector<int32_t> missing(n);
  std::priority_queue<int32_t, std::vector<int32_t>, std::greater<int32_t>> ready;
  for (int32_t v = 0; v < n; ++v) {
    missing[v] = static_cast<int32_t>(predecessors(v).size());
    if (missing[v] == 0) ready.push(v);
  }
  std::vector<int32_t> order;
  order.reserve(n);
  while (!ready.empty()) {
    const int32_t v = ready.top();
    ready.pop();
    order.push_back(v);
    for (int32_t w : successors(v)) {
      if (--missing[w] == 0) ready.push(w);
    }
  }
  return order;
}

}  // namespace ordo
