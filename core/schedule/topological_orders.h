#ifndef ORDO_CORE_SCHEDULE_TOPOLOGICAL_ORDERS_H_
#define ORDO_CORE_SCHEDULE_TOPOLOGICAL_ORDERS_H_

// Memory-oblivious orders: the baselines every report compares against.

#include <cstdint>
#include <vector>

#include "core/schedule/op_dag.h"

namespace ordo {

// The order of the model file (op ids ascending; the importer keeps file
// order, so this is valid for any model that imported).
std::vector<int32_t> ModelOrder(const OpDag& dag);

// Kahn's algorithm with a FIFO queue seeded in id order: what most frameworks
// run (and SERENITY's hard budget, Algorithm 2 line 3).
std::vector<int32_t> KahnOrder(const OpDag& dag);

// Reverse post-order of an iterative depth-first search from the source ops
// in id order, successors in id order: the baseline of HMCOS (§5).
std::vector<int32_t> ReversePostOrder(const OpDag& dag);

}  // namespace ordo

#endif  // ORDO_CORE_SCHEDULE_TOPOLOGICAL_ORDERS_H_
