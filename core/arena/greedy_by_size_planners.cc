#include "core/arena/greedy_by_size_planners.h"

#include <algorithm>
#include <numeric>

#include "core/arena/greedy_placement.h"

namespace ordo {
namespace {

// Decreasing unaligned size (the GPU delegate's CompareBySize on tensor
// sizes), then lower block index (= owner tensor id).
bool LargerFirst(const ArenaProblem& problem, int32_t a, int32_t b) {
  const int64_t x = problem.blocks[a].raw_bytes;
  const int64_t y = problem.blocks[b].raw_bytes;
  return x != y ? x > y : a < b;
}

}  // namespace

std::vector<int32_t> SizeOrder(const ArenaProblem& problem) {
  std::vector<int32_t> order(problem.blocks.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&problem](int32_t a, int32_t b) { return LargerFirst(problem, a, b); });
  return order;
}

std::vector<int32_t> BreadthOrder(const ArenaProblem& problem) {
  // Task profiles (the GPU delegate's CalculateTaskProfiles): slot s + 1 holds
  // the blocks live at step s; slot 0 is "before step 0".
  const int32_t slots = problem.num_steps + 1;
  std::vector<std::vector<int32_t>> profile(slots);
  std::vector<int64_t> breadth(slots, 0);
  for (int32_t b = 0; b < static_cast<int32_t>(problem.blocks.size()); ++b) {
    const ArenaBlock& block = problem.blocks[b];
    for (int32_t s = block.first + 1; s <= block.last + 1; ++s) {
      profile[s].push_back(b);
      breadth[s] += block.raw_bytes;
    }
  }
  std::vector<int32_t> slot_order(slots);
  std::iota(slot_order.begin(), slot_order.end(), 0);
  std::stable_sort(slot_order.begin(), slot_order.end(),
                   [&breadth](int32_t a, int32_t b) { return breadth[a] > breadth[b]; });
  std::vector<int32_t> order;
  order.reserve(problem.blocks.size());
  std::vector<bool> taken(problem.blocks.size(), false);
  for (int32_t s : slot_order) {
    std::vector<int32_t>& blocks = profile[s];
    std::sort(blocks.begin(), blocks.end(),
              [&problem](int32_t a, int32_t b) { return LargerFirst(problem, a, b); });
    for (int32_t b : blocks) {
      if (taken[b]) continue;
      taken[b] = true;
      order.push_back(b);
    }
  }
  return order;
}

ArenaPlacement GreedyBySizePlanner::Place(const ArenaProblem& problem,
                                          const ArenaLimits& /*limits*/) const {
  return {PlaceInOrder(problem, SizeOrder(problem), FitRule::kBestFit), "greedy-by-size", false};
}

ArenaPlacement GreedyByBreadthPlanner::Place(const ArenaProblem& problem,
                                             const ArenaLimits& /*limits*/) const {
  return {PlaceInOrder(problem, BreadthOrder(problem), FitRule::kBestFit), "greedy-by-breadth",
          false};
}

}  // namespace ordo
