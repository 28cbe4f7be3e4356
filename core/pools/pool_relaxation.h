#ifndef ORDO_CORE_POOLS_POOL_RELAXATION_H_
#define ORDO_CORE_POOLS_POOL_RELAXATION_H_

#include <cstdint>
#include <vector>

#include "core/pools/memory_pools.h"

namespace ordo {

// Lagrangian relaxation of the pools' capacities, step by step (spec: Memory
// pools, "raised by any capacity argument that holds"). A valid placement
// keeps, at every step s and in every pool p, the bytes of the blocks live
// at s within capacity(p). Pricing each such constraint at lambda(p, s) >= 0
// splits the problem per block:
//   L(lambda) = sum_b min_p [seconds(b, p) + size(b) x sum_{s in life(b)}
//               lambda(p, s)] - sum_{p, s} lambda(p, s) x capacity(p),
// and every L(lambda) is a lower bound on every valid placement's modelled
// time (each placement's own terms only grow when priced, and its loads
// stay within capacity). Steps:
//  1. lambda = 0: L is every block in its cheapest allowed pool (the plain
//     bound).
//  2. Subgradient steps: g(p, s) = load(p, s) - capacity(p) of the blocks'
//     current choices; lambda += t x g, clipped at 0, with Polyak's step
//     t = theta x (target - L) / |g|^2 toward a target a little above the
//     best L (or the best known placement's time, when given); theta halves
//     after 20 steps without progress.
//  3. The best L is kept; the reduced costs of the current prices guide the
//     placer (pool_placer.cc), which is what the prices are for: they charge
//     a block for the congested steps it lives through, not for its bytes
//     alone.
// Cost per step O(B x P + S x P') (prefix sums of prices) for the P' pools
// that can be congested (a pool that holds every block it may take at every
// step keeps its prices at 0 and is skipped). Not exact: it is
// the LP bound of the load formulation, blind to fragmentation. Not
// thread-safe; holds a reference to `problem`, which must outlive it.
class PoolRelaxation {
 public:
  explicit PoolRelaxation(const PoolProblem& problem);

  // One subgradient step. `upper_bound`: the best valid placement's time
  // known, or 0 when none is known.
  void Step(double upper_bound);

  // The best lower bound found so far.
  double best_bound() const { return best_bound_; }
  // Block b in pool p at the current prices: its time plus the price of the
  // bytes it holds over its life. Infinite when p is not allowed.
  double ReducedSeconds(int32_t b, int32_t p) const;

 private:
  // Picks each block's cheapest pool at the current prices and returns L.
  double Choose();

  const PoolProblem& problem_;
  int32_t pools_ = 0;
  int32_t slots_ = 0;  // steps + 1 (a block may be live before step 0)
  // Flat arrays: the step runs hundreds of times per placement, so no
  // allocation and no per-pool indirection in it. [block * pools_ + pool]:
  // seconds, or infinity where the block may not live.
  std::vector<double> cost_;
  // [pool * slots_ + slot] prices; [pool * (slots_ + 1) + slot + 1] their
  // prefix sums; the subgradient buffer is laid out like the prefix sums.
  std::vector<double> price_, prefix_, gradient_;
  // Sum of each pool's prices (L subtracts it times the capacity).
  std::vector<double> priced_;
  // The pools whose allowed blocks exceed the capacity at some step; the
  // others' prices stay 0.
  std::vector<int32_t> congested_pools_;
  std::vector<int32_t> choice_;
  double bound_ = 0, best_bound_ = 0, theta_ = 1;
  int stalled_ = 0;
};

// Runs `steps` subgradient steps without a known placement and returns the
// best bound (at least the plain bound of step 1).
double PoolRelaxationBound(const PoolProblem& problem, int steps);

}  // namespace ordo

#endif  // ORDO_CORE_POOLS_POOL_RELAXATION_H_
