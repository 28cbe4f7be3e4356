#include "core/schedule/op_dag.h"

#include <algorithm>

namespace ordo {

// Two flat passes, no list per op (this runs once per schedule request
// and per baseline): each op's distinct producers in a reused scratch list,
// then successors by counting, filled in ascending op order so that each
// list comes out ascending and distinct.
OpDag::OpDag(const MemoryModel& model) : OpDag(model, {}) {}

OpDag::OpDag(const MemoryModel& model, absl::Span<const OrderEdge> order) {
  const int32_t n = model.num_ops();
  size_t next_order = 0;
  pred_begin_.reserve(n + 1);
  pred_begin_.push_back(0);
  std::vector<int32_t> producers;
  for (int32_t op = 0; op < n; ++op) {
    producers.clear();
    for (int32_t t : model.ops[op].inputs) {
      const int32_t producer = model.tensors[t].producer;
      if (producer != kNoId) producers.push_back(producer);
    }
    for (; next_order < order.size() && order[next_order].after == op; ++next_order) {
      producers.push_back(order[next_order].before);
    }
    std::sort(producers.begin(), producers.end());
    producers.erase(std::unique(producers.begin(), producers.end()), producers.end());
    pred_.insert(pred_.end(), producers.begin(), producers.end());
    pred_begin_.push_back(static_cast<int32_t>(pred_.size()));
  }
  succ_begin_.assign(n + 1, 0);
  for (int32_t producer : pred_) ++succ_begin_[producer + 1];
  for (int32_t op = 0; op < n; ++op) succ_begin_[op + 1] += succ_begin_[op];
  succ_.resize(pred_.size());
  std::vector<int32_t> next(succ_begin_.begin(), succ_begin_.end() - 1);
  for (int32_t op = 0; op < n; ++op) {
    for (int32_t producer : predecessors(op)) succ_[next[producer]++] = op;
  }
}

}  // namespace ordo
