#ifndef ORDO_CORE_SCHEDULE_GREEDY_SCHEDULER_H_
#define ORDO_CORE_SCHEDULE_GREEDY_SCHEDULER_H_

#include <cstdint>
#include <vector>

#include "core/memory/memory_model.h"
#include "core/schedule/op_dag.h"

namespace ordo {

// Memory-aware list scheduling: at each step run the ready op that keeps the
// peak lowest, i.e. the least max(peak so far, its step footprint); ties go
// to the op that leaves the least memory live afterwards (frees the most),
// then to the smaller step footprint, then to the lower id (model order).
//
// O(steps x ready ops x op degree). A strong cheap upper bound for the exact
// schedulers; no optimality guarantee (a wide branch started early can block
// memory that a deeper branch needed).
std::vector<int32_t> GreedyOrder(const MemoryModel& model, const OpDag& dag);

}  // namespace ordo

#endif  // ORDO_CORE_SCHEDULE_GREEDY_SCHEDULER_H_
