#include "core/arena/tflite_planners.h"

#include <algorithm>
#include <numeric>

#include "core/arena/greedy_placement.h"

namespace ordo {

std::vector<int32_t> TfliteAllocationOrder(const ArenaProblem& problem) {
  std::vector<int32_t> order(problem.blocks.size());
  std::iota(order.begin(), order.end(), 0);
  // Blocks are indexed in owner tensor id order, so comparing indices is
  // comparing tensor ids.
  auto compare = [&problem](int32_t a, int32_t b) {
    const ArenaBlock& x = problem.blocks[a];
    const ArenaBlock& y = problem.blocks[b];
    if (x.whole_run != y.whole_run) return x.whole_run;
    if (x.whole_run) return a < b;
    if (x.raw_bytes != y.raw_bytes) return x.raw_bytes > y.raw_bytes;
    const int32_t x_alloc = std::max(x.first, 0);
    const int32_t y_alloc = std::max(y.first, 0);
    if (x_alloc != y_alloc) return x_alloc < y_alloc;
    return a < b;
  };
  std::sort(order.begin(), order.end(), compare);
  return order;
}

std::vector<int32_t> TflmAllocationOrder(const ArenaProblem& problem) {
  std::vector<int32_t> order(problem.blocks.size());
  std::iota(order.begin(), order.end(), 0);
  // ReverseSortInPlace is a stable bubble sort on size.
  std::stable_sort(order.begin(), order.end(), [&problem](int32_t a, int32_t b) {
    return problem.blocks[a].size > problem.blocks[b].size;
  });
  return order;
}

ArenaPlacement TfliteArenaPlanner::Place(const ArenaProblem& problem,
                                         const ArenaLimits& /*limits*/) const {
  return {PlaceInOrder(problem, TfliteAllocationOrder(problem), FitRule::kBestFit), "tflite",
          false};
}

ArenaPlacement TflmArenaPlanner::Place(const ArenaProblem& problem,
                                       const ArenaLimits& /*limits*/) const {
  return {PlaceInOrder(problem, TflmAllocationOrder(problem), FitRule::kFirstFit), "tflm", false};
}

}  // namespace ordo
