#ifndef ORDO_CORE_ARENA_BEST_ARENA_PLANNER_H_
#define ORDO_CORE_ARENA_BEST_ARENA_PLANNER_H_

#include <cstdint>

#include "core/arena/arena_planner.h"

namespace ordo {

// The search nodes one BestArenaPlanner::Place may spend on `problem`:
// 64 per block, at least 4096, at most limits.max_search_nodes. A budget
// proportional to the problem lets a small graph whose bound is hard give up
// in milliseconds (reported as not optimal) instead of spending the whole
// ArenaLimits budget, which made the service's cold tail.
int64_t BestArenaSearchBudget(const ArenaProblem& problem, const ArenaLimits& limits);

// The default arena planner: a portfolio of the greedy planners plus a search
// for a smaller arena (TVM's table of strategies; XLA's heap simulator keeps
// the best of several). Steps:
//  1. Runs tflite, tflm, greedy-by-size and greedy-by-breadth and keeps the
//     smallest arena (ties: the earlier in that list), so `best` is never
//     worse than tflite for the same schedule. Each member's arena is
//     reported (ArenaPlacement::member_arenas), so a caller comparing with
//     tflite or tflm on this schedule need not plan again.
//  2. Stops when the arena equals the problem's lower bound (the aligned
//     peak): it is optimal.
//  3. Otherwise asks the exact search (SearchArenaRoundRobin, MiniMalloc
//     style) for a placement within the lower bound; if the search proves
//     there is none or gives up, probes capacities between the lower bound
//     and the incumbent by bisection, keeping every placement found.
// `algorithm` names the winner ("tflite", ..., or "search"); `optimal` is set
// when the arena equals the lower bound or the search proved that one
// alignment step less is infeasible. Budget: ArenaLimits (deadline and search
// nodes) and BestArenaSearchBudget; the greedy phase always completes, so
// a placement is always returned. PlanArena verifies its plan like every
// planner's. O(B^2) plus the search budget. Stateless; thread-safe.
class BestArenaPlanner final : public ArenaPlanner {
 public:
  absl::string_view name() const override { return "best"; }
  ArenaPlacement Place(const ArenaProblem& problem, const ArenaLimits& limits) const override;
};

}  // namespace ordo

#endif  // ORDO_CORE_ARENA_BEST_ARENA_PLANNER_H_
