#ifndef ORDO_CORE_POOLS_POOL_PLACER_H_
#define ORDO_CORE_POOLS_POOL_PLACER_H_

#include <cstdint>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "core/arena/arena_planner.h"
#include "core/pools/memory_pools.h"

namespace ordo {

// A placement with its evaluation. When it does not fit (overflow_bytes >
// 0) it is the least-overflowing attempt: blocks are still disjoint within a
// pool, but some end beyond their pool's capacity.
struct PoolPlacement {
  std::string algorithm;
  PoolAssignment assignment;
  PoolEvaluation evaluation;

  bool fits() const { return evaluation.overflow_bytes == 0; }
};

// The one order of placements, used wherever placements are ranked (the
// placer's starts, the place stage's candidate schedules and layouts): one
// that fits first, then less overflow (when neither fits), then the lower
// modelled time. A key to compare with <, to which callers append their own
// tie-breaks (e.g. the lower peak).
inline std::tuple<int64_t, double> PlacementRank(const PoolPlacement& placement) {
  return {placement.evaluation.overflow_bytes, placement.evaluation.modelled_seconds};
}

// PlacementRank(a) < PlacementRank(b).
bool BetterPlacement(const PoolPlacement& a, const PoolPlacement& b);

// ESP-DL's rule: blocks in execution order (first live step), each first-fit
// into the fastest pool with room (pools ranked by the time of a byte
// written once and read once), else the next. O(B^2 P).
PoolPlacement PlaceInternalFirst(const PoolProblem& problem);

// TVM USMP greedy_by_size with every pool as every block's candidate, in the
// order the pools were given: largest block first (ties: earlier first
// step), lowest offset that conflicts with nothing placed, first pool with
// room. Ignores bandwidths, as USMP does. O(B^2 P).
PoolPlacement PlaceUsmpGreedy(const PoolProblem& problem);

// Step 1 of PlacePoolsHeuristic alone: its greedy starts, in a fixed order,
// both baselines among them (named "internal_first" and "usmp_greedy"), and
// the density order its promotion reruns. What the place stage scores
// candidate schedules by; PlacePoolsHeuristic on the same problem starts
// from them instead of computing them again. O(passes x (B k r + B P)).
// With PlacementEffort::kFast only the starts by time saved and by size and
// both baselines, and no density order (what PlacePoolsFast needs); there a
// start by time saved or by size is left out when it was given up, as it
// could not rank before another start (so best() is the best of the four).
struct PoolGreedyStarts {
  std::vector<PoolPlacement> starts;
  std::vector<int32_t> density_order;
  PlacementEffort effort = PlacementEffort::kThorough;

  // The first of the best starts by BetterPlacement.
  const PoolPlacement& best() const;
  // The start named `algorithm` (a baseline's name); a bug if none is.
  const PoolPlacement& named(const std::string& algorithm) const;
};
PoolGreedyStarts PlacePoolsGreedyStarts(const PoolProblem& problem,
                                        PlacementEffort effort = PlacementEffort::kThorough);

// The best of the greedy starts, without the relaxation and the improvement.
// For a model PoolInfeasibility proved impossible, where only the least
// overflow is left to report.
PoolPlacement PlacePoolsGreedy(const PoolProblem& problem);

// ordo's placer, for graphs of any size. Steps:
//  1. Greedy passes, each a block order and a per-block pool preference
//     (the block's own cost order): by time saved per byte in its cheapest
//     pool over its dearest (hot small tensors first), by time saved, and by
//     size; both baselines; and, for fitting, largest (by size, by lifetime)
//     first into the largest pool, and in start order into the smallest bank
//     with room (interval colouring's rule); and starts from the capacity
//     prices of PoolRelaxation (each block's pools by reduced cost, blocks
//     by regret, regret per byte and size); the same relaxation run gives
//     the lower bound. Each block goes first-fit into the first preferred
//     pool with room; the first fit looks only at the block's co-live
//     blocks (O(k r) for k of them and r rounds of raising the offset,
//     a few).
//  2. Improvement on each: blocks not in their cheapest pool, most time to
//     gain first, move first-fit to a cheaper pool with room; then each pool's
//     offsets are re-planned by the greedy arena planners (smaller pools
//     leave room for more moves) and the moves are tried again. The two
//     best are then improved again with the `best` arena planner's search
//     (16 nodes per block of the pool).
//     Starts that yield the same placement are improved once; a placement
//     at the lower bound ends the search (nothing can beat it).
//  3. Keeps the best by BetterPlacement, so it is never worse than either
//     baseline; then ruin and recreate: a block left out of its cheapest
//     pool is placed first and the density pass reruns (at most 48 reruns),
//     kept when better; on at most 64 blocks, every relaxation start is
//     kept and swaps (a block takes a co-live block's place in a cheaper
//     full pool, which goes first-fit to its cheapest pool with room) are
//     tried on every improved start and on the final best, kept when
//     better. Improvement and
//     promotion stop at the deadline of
//     `limits` (the greedy passes always complete). Not optimal: see
//     PlacePoolsExact. O(passes x (B k r + B P)) for k co-live blocks,
//     plus O(kPoolBoundSteps x (B P + S P)) for the relaxation and the
//     arena planner's budget.
// The relaxation of the starts also gives the lower bound (the same
// arguments and steps as PoolLowerBoundSeconds, its subgradient steps aimed
// at the best greedy start): a placement that reaches it ends the search,
// as nothing can beat it.
struct HeuristicPoolResult {
  PoolPlacement placement;
  // A lower bound on every valid placement's modelled time.
  double lower_bound_seconds = 0;
  // The bound passed `give_up_above`: `placement` is the best greedy start,
  // not improved (no valid placement is as fast as `give_up_above`).
  bool given_up = false;
};
// `given`: PlacePoolsGreedyStarts(problem) (thorough) when the caller has it
// already (nullptr: computed here); the result is the same either way.
// `give_up_above`: a time the caller only cares to beat or tie (another
// placement's). The bound is checked at every relaxation step; once it
// proves every valid placement slower, the search stops (given_up): the
// relaxation's starts found so far are dropped and the improvement is
// skipped.
HeuristicPoolResult PlacePoolsHeuristic(
    const PoolProblem& problem, const ArenaLimits& limits,
    const PoolGreedyStarts* given = nullptr,
    double give_up_above = std::numeric_limits<double>::infinity());

// The fast effort's placer (PlacementEffort::kFast): its greedy starts (by
// time saved, by size, and both baselines), then on the best one pass of
// moves to cheaper pools where first fit finds room, kept when better (it
// never adds overflow). The bound is PoolPeakStepBoundSeconds, without the
// relaxation, for a placement that fits; for one that does not,
// CheapestPoolsSeconds, the bound a report puts beside it (the step bound
// was a tenth of the place stage on nasnet_imagenet on the STM32H743, where
// no order fits, and was never reported). O(4 x (B k r + B P)) for k co-live blocks.
// `prove_no_order_fits` (optional): when the best start does not fit, a
// proof that no order of the model has a valid placement ("": none), asked
// before the moves, which matter then only if they reach a fit: with a
// proof they are skipped (a tenth of the stage where no order fits). Its
// answer is kept in `no_order_fits`.
struct FastPoolPlacement {
  PoolGreedyStarts starts;
  HeuristicPoolResult result;
  std::optional<std::string> no_order_fits;
};
using NoOrderFitsProof = std::function<std::string(const PoolProblem&)>;
FastPoolPlacement PlacePoolsFast(const PoolProblem& problem,
                                 const NoOrderFitsProof& prove_no_order_fits = {});

// The exact reference for small problems: depth-first branch and bound over
// each block's pool (largest block first, cheapest pool first), pruned by the
// time so far plus every remaining block's cheapest time, and by the bytes
// live at each step of each pool; a complete assignment is accepted when the
// exact arena search (SearchArenaRoundRobin) fits every pool's blocks in its
// capacity. Exponential; bounded by `max_nodes` and `limits`.
struct ExactPoolResult {
  // The best valid placement found (none when none was found).
  std::optional<PoolPlacement> placement;
  // The search finished: no valid placement has a lower modelled time (and
  // when `placement` is empty, none exists).
  bool optimal = false;
  int64_t nodes = 0;
};
ExactPoolResult PlacePoolsExact(const PoolProblem& problem, int64_t max_nodes,
                                const ArenaLimits& limits);

}  // namespace ordo

#endif  // ORDO_CORE_POOLS_POOL_PLACER_H_
