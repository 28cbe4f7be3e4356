#ifndef ORDO_CORE_ARENA_GREEDY_BY_SIZE_PLANNERS_H_
#define ORDO_CORE_ARENA_GREEDY_BY_SIZE_PLANNERS_H_

#include <cstdint>
#include <vector>

#include "core/arena/arena_planner.h"

namespace ordo {

// Greedy by Size for offset calculation (Pisarchyk & Lee, "Efficient Memory
// Management for Deep Neural Net Inference", 2020, §5; the TFLite GPU
// delegate's GreedyBySizeAssignment): blocks by decreasing size, each into the
// smallest gap between already placed lifetime-overlapping blocks that holds
// it (lowest on ties), else above the highest of them. Ties in size are
// left to std::sort there; here the lower tensor id goes first. O(B^2).
// Not optimal.
class GreedyBySizePlanner final : public ArenaPlanner {
 public:
  absl::string_view name() const override { return "greedy-by-size"; }
  ArenaPlacement Place(const ArenaProblem& problem, const ArenaLimits& limits) const override;
};

// Greedy by Breadth for offset calculation (Pisarchyk & Lee 2020, the
// breadth-first counterpart of Greedy by Size): the "breadth" of a step is the
// total size of the blocks live at it (its task profile). Steps are visited by
// decreasing breadth (ties: earlier step), and at each step its not yet placed
// blocks by decreasing size (ties: lower tensor id) are placed with the same
// best-fit rule. The widest step is laid out first, as a unit, which keeps
// the arena near the peak there. O(B^2 + sum of lifetimes). Not optimal.
class GreedyByBreadthPlanner final : public ArenaPlanner {
 public:
  absl::string_view name() const override { return "greedy-by-breadth"; }
  ArenaPlacement Place(const ArenaProblem& problem, const ArenaLimits& limits) const override;
};

// The block orders of the two planners, for tests and for `best`.
std::vector<int32_t> SizeOrder(const ArenaProblem& problem);
std::vector<int32_t> BreadthOrder(const ArenaProblem& problem);

}  // namespace ordo

#endif  // ORDO_CORE_ARENA_GREEDY_BY_SIZE_PLANNERS_H_
