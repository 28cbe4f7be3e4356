#include "core/pools/pool_relaxation.h"

#include <algorithm>
#include <limits>

namespace ordo {

PoolRelaxation::PoolRelaxation(const PoolProblem& problem)
    : problem_(problem), slots_(problem.arena.num_steps + 1) {
  price_.assign(problem.num_pools(), std::vector<double>(slots_, 0.0));
  prefix_.assign(problem.num_pools(), std::vector<double>(slots_ + 1, 0.0));
  choice_.assign(problem.num_blocks(), kNoId);
  bound_ = best_bound_ = Choose();
}

double PoolRelaxation::ReducedSeconds(int32_t b, int32_t p) const {
  if (!problem_.allowed[b][p]) return std::numeric_limits<double>::infinity();
  const ArenaBlock& block = problem_.arena.blocks[b];
  const double held = prefix_[p][block.last + 2] - prefix_[p][block.first + 1];
  return problem_.seconds[b][p] + static_cast<double>(block.size) * held;
}

double PoolRelaxation::Choose() {
  double value = 0;
  for (int32_t b = 0; b < problem_.num_blocks(); ++b) {
    double best = std::numeric_limits<double>::infinity();
    for (int32_t p = 0; p < problem_.num_pools(); ++p) {
      const double reduced = ReducedSeconds(b, p);
      if (reduced < best) best = reduced, choice_[b] = p;
    }
    value += best;
  }
  for (int32_t p = 0; p < problem_.num_pools(); ++p) {
    double priced = 0;
    for (double price : price_[p]) priced += price;
    value -= priced * static_cast<double>(problem_.pools[p].capacity_bytes);
  }
  return value;
}

void PoolRelaxation::Step(double upper_bound) {
  const int32_t num_pools = problem_.num_pools();
  // g(p, s) = load - capacity, by difference arrays over the lifetimes.
  std::vector<std::vector<double>> g(num_pools, std::vector<double>(slots_ + 1, 0.0));
  for (int32_t b = 0; b < problem_.num_blocks(); ++b) {
    const ArenaBlock& block = problem_.arena.blocks[b];
    g[choice_[b]][block.first + 1] += static_cast<double>(block.size);
    g[choice_[b]][block.last + 2] -= static_cast<double>(block.size);
  }
  double norm = 0;
  for (int32_t p = 0; p < num_pools; ++p) {
    double load = 0;
    for (int32_t s = 0; s < slots_; ++s) {
      load += g[p][s];
      g[p][s] = load - static_cast<double>(problem_.pools[p].capacity_bytes);
      // Components the projection keeps at 0 do not steer the step.
      if (price_[p][s] > 0 || g[p][s] > 0) norm += g[p][s] * g[p][s];
    }
  }
  if (norm == 0) return;  // the choices fit every load: L is the optimum of the relaxation
  const double scale = std::max(std::abs(best_bound_), 1e-12);
  double target = best_bound_ + 0.05 * scale;
  if (upper_bound > best_bound_) target = std::min(target, upper_bound);
  const double t = theta_ * std::max(target - bound_, 1e-6 * scale) / norm;
  for (int32_t p = 0; p < num_pools; ++p) {
    for (int32_t s = 0; s < slots_; ++s) {
      price_[p][s] = std::max(0.0, price_[p][s] + t * g[p][s]);
      prefix_[p][s + 1] = prefix_[p][s] + price_[p][s];
    }
  }
  bound_ = Choose();
  if (bound_ > best_bound_ * (1 + 1e-9)) {
    best_bound_ = bound_;
    stalled_ = 0;
  } else if (++stalled_ >= 20) {
    theta_ /= 2;
    stalled_ = 0;
  }
}

double PoolRelaxationBound(const PoolProblem& problem, int steps) {
  PoolRelaxation relaxation(problem);
  for (int i = 0; i < steps; ++i) relaxation.Step(0);
  return relaxation.best_bound();
}

}  // namespace ordo
