#ifndef ORDO_CORE_SCHEDULE_OP_DAG_H_
#define ORDO_CORE_SCHEDULE_OP_DAG_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "core/memory/memory_model.h"

namespace ordo {

// An extra scheduling constraint: `before` runs before `after`. It carries
// no tensor and costs no memory (chain_symmetry.h makes them).
struct OrderEdge {
  int32_t before = 0;
  int32_t after = 0;
};

// The dependency graph between the ops of a MemoryModel, as compressed
// adjacency arrays (distinct, ascending neighbours). Built once per call;
// immutable; O(ops + edges).
class OpDag {
 public:
  explicit OpDag(const MemoryModel& model);
  // The model's dependencies plus `order` (sorted by `after`, each edge
  // from a lower op id to a higher one): constraints on top of the data.
  OpDag(const MemoryModel& model, absl::Span<const OrderEdge> order);

  int32_t num_ops() const { return static_cast<int32_t>(pred_begin_.size()) - 1; }
  absl::Span<const int32_t> successors(int32_t op) const {
    return {succ_.data() + succ_begin_[op],
            static_cast<size_t>(succ_begin_[op + 1] - succ_begin_[op])};
  }
  absl::Span<const int32_t> predecessors(int32_t op) const {
    return {pred_.data() + pred_begin_[op],
            static_cast<size_t>(pred_begin_[op + 1] - pred_begin_[op])};
  }
  int32_t in_degree(int32_t op) const { return pred_begin_[op + 1] - pred_begin_[op]; }

 private:
  std::vector<int32_t> succ_begin_, succ_;
  std::vector<int32_t> pred_begin_, pred_;
};

}  // namespace ordo

#endif  // ORDO_CORE_SCHEDULE_OP_DAG_H_
