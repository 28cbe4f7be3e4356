#include "core/pools/pool_relaxation.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ordo {

PoolRelaxation::PoolRelaxation(const PoolProblem& problem)
    : problem_(problem), pools_(problem.num_pools()), slots_(problem.arena.num_steps + 1) {
  cost_.assign(static_cast<size_t>(problem.num_blocks()) * pools_,
               std::numeric_limits<double>::infinity());
  for (int32_t b = 0; b < problem.num_blocks(); ++b) {
    for (int32_t p = 0; p < pools_; ++p) {
      if (problem.allowed[b][p]) cost_[b * pools_ + p] = problem.seconds[b][p];
    }
  }
  price_.assign(static_cast<size_t>(pools_) * slots_, 0.0);
  prefix_.assign(static_cast<size_t>(pools_) * (slots_ + 1), 0.0);
  gradient_.assign(prefix_.size(), 0.0);
  priced_.assign(pools_, 0.0);
  // A pool that holds every block it may take at every step is never
  // congested: its prices stay 0 (g <= 0 clips them there), so the steps
  // skip it. An external PSRAM or SDRAM usually is such a pool.
  std::vector<std::vector<int64_t>> live(pools_, std::vector<int64_t>(slots_ + 1, 0));
  for (int32_t b = 0; b < problem.num_blocks(); ++b) {
    const ArenaBlock& block = problem.arena.blocks[b];
    for (int32_t p = 0; p < pools_; ++p) {
      if (!problem.allowed[b][p]) continue;
      live[p][block.first + 1] += block.size;
      live[p][block.last + 2] -= block.size;
    }
  }
  for (int32_t p = 0; p < pools_; ++p) {
    int64_t load = 0;
    bool congested = false;
    for (int32_t s = 0; s < slots_; ++s) {
      load += live[p][s];
      congested = congested || load > problem.pools[p].capacity_bytes;
    }
    if (congested) congested_pools_.push_back(p);
  }
  choice_.assign(problem.num_blocks(), kNoId);
  bound_ = best_bound_ = Choose();
}

double PoolRelaxation::ReducedSeconds(int32_t b, int32_t p) const {
  if (!problem_.allowed[b][p]) return std::numeric_limits<double>::infinity();
  const ArenaBlock& block = problem_.arena.blocks[b];
  const double* prefix = &prefix_[static_cast<size_t>(p) * (slots_ + 1)];
  const double held = prefix[block.last + 2] - prefix[block.first + 1];
  return cost_[b * pools_ + p] + static_cast<double>(block.size) * held;
}

double PoolRelaxation::Choose() {
  double value = 0;
  const int32_t stride = slots_ + 1;
  for (int32_t b = 0; b < problem_.num_blocks(); ++b) {
    const ArenaBlock& block = problem_.arena.blocks[b];
    const double size = static_cast<double>(block.size);
    const double* cost = &cost_[b * pools_];
    double best = std::numeric_limits<double>::infinity();
    for (int32_t p = 0; p < pools_; ++p) {
      // A pool the block may not use costs infinity, never below `best`.
      const double* prefix = &prefix_[p * stride];
      const double reduced = cost[p] + size * (prefix[block.last + 2] - prefix[block.first + 1]);
      if (reduced < best) best = reduced, choice_[b] = p;
    }
    value += best;
  }
  for (int32_t p = 0; p < pools_; ++p) {
    value -= priced_[p] * static_cast<double>(problem_.pools[p].capacity_bytes);
  }
  return value;
}

void PoolRelaxation::Step(double upper_bound) {
  const int32_t stride = slots_ + 1;
  // g(p, s) = load - capacity, by difference arrays over the lifetimes.
  std::fill(gradient_.begin(), gradient_.end(), 0.0);
  for (int32_t b = 0; b < problem_.num_blocks(); ++b) {
    const ArenaBlock& block = problem_.arena.blocks[b];
    // Uncongested pools' rows are filled too but never read.
    double* g = &gradient_[choice_[b] * stride];
    g[block.first + 1] += static_cast<double>(block.size);
    g[block.last + 2] -= static_cast<double>(block.size);
  }
  double norm = 0;
  for (int32_t p : congested_pools_) {
    double* g = &gradient_[p * stride];
    const double* price = &price_[p * slots_];
    const double capacity = static_cast<double>(problem_.pools[p].capacity_bytes);
    double load = 0;
    for (int32_t s = 0; s < slots_; ++s) {
      load += g[s];
      g[s] = load - capacity;
      // Components the projection keeps at 0 do not steer the step.
      if (price[s] > 0 || g[s] > 0) norm += g[s] * g[s];
    }
  }
  if (norm == 0) return;  // the choices fit every load: L is the optimum of the relaxation
  const double scale = std::max(std::abs(best_bound_), 1e-12);
  double target = best_bound_ + 0.05 * scale;
  if (upper_bound > best_bound_) target = std::min(target, upper_bound);
  const double t = theta_ * std::max(target - bound_, 1e-6 * scale) / norm;
  for (int32_t p : congested_pools_) {
    const double* g = &gradient_[p * stride];
    double* price = &price_[p * slots_];
    double* prefix = &prefix_[p * stride];
    double priced = 0;
    for (int32_t s = 0; s < slots_; ++s) {
      price[s] = std::max(0.0, price[s] + t * g[s]);
      prefix[s + 1] = prefix[s] + price[s];
      priced += price[s];
    }
    priced_[p] = priced;
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
