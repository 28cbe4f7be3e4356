#ifndef ORDO_CORE_POOLS_POOL_ORDER_REPAIR_H_
#define ORDO_CORE_POOLS_POOL_ORDER_REPAIR_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/types/span.h"
#include "core/graph/graph.h"
#include "core/memory/memory_model.h"
#include "core/pools/memory_pools.h"

namespace ordo {

// Repair local search over orders for the memory pools: looks for an order
// in which the live blocks of every step have a split over the banks (a
// placement needs one at every step; FirstUnsplittableStep), for a model
// whose candidate orders all have a step without one although their peak
// is within the summed capacity (randwire3 on STM32H743: one block of
// 244,608 B beside twelve of 61,184 B at one step, when the banks hold at
// most eleven of the small ones beside the big one).
//
// Algorithm, from each start order in turn:
//  1. Simulate the order, build its pool problem and find its first
//     unsplittable step s (none: the order is returned).
//  2. Moves that change the live set at s, for each block live at s (largest
//     first): delay the op that writes it to just after s, or pull its last
//     reader to just before s (so it dies before s); and delay the op at s
//     itself past the next step. A move that breaks a dependency is refused
//     by the simulator.
//  3. Accept the first move whose order has its first unsplittable step
//     later, or at the same step with fewer live bytes (a strict
//     lexicographic gain, so the search never cycles); go to 2. No move
//     gains: the next start.
// Every simulated order counts against `max_orders` (a work cap, not a
// time limit: the same answer on every machine).
//
// Cost: O(max_orders x (ops + tensors + kRepairSplitTries)). Not complete: an order reachable only through moves that first
// make things worse is not found, and a per-step split is necessary, not
// sufficient, for a placement (offsets must persist across steps): the
// placer decides the fit of the order returned.
struct PoolOrderRepair {
  // An order whose every step has a split, when one was found.
  std::optional<std::vector<int32_t>> order;
  // The index in `starts` it was repaired from.
  int32_t start = -1;
  // Orders simulated.
  int64_t orders_tried = 0;
};

// Orders tried per op of the model by the place stage (kRepairOrdersPerOp x
// ops, at least kMinRepairOrders).
inline constexpr int64_t kRepairOrdersPerOp = 4;
inline constexpr int64_t kMinRepairOrders = 200;
// Split tries (FirstUnsplittableStep's nodes) per order: bounds an order's
// check, so the search costs at most max_orders x (a simulation + this).
// A step whose tries run out counts as split; the placer still decides.
inline constexpr int64_t kRepairSplitTries = 20'000;

PoolOrderRepair RepairOrderForPools(const Graph& graph, const MemoryModel& model,
                                    int64_t alignment, const PoolOptions& options,
                                    absl::Span<const std::vector<int32_t>> starts,
                                    int64_t max_orders);

}  // namespace ordo

#endif  // ORDO_CORE_POOLS_POOL_ORDER_REPAIR_H_
