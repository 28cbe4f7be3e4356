#include "core/arena/greedy_by_size_planners.h"

#include <algorithm>
#include <bit>
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

// Minimum of values[lo..hi] in O(1) after O(n log n) set-up (a sparse table).
class RangeMinimum {
 public:
  explicit RangeMinimum(std::vector<int32_t> values) {
    levels_.push_back(std::move(values));
    const size_t n = levels_[0].size();
    for (size_t width = 2; width <= n; width *= 2) {
      const std::vector<int32_t>& below = levels_.back();
      std::vector<int32_t> level(n - width + 1);
      for (size_t i = 0; i < level.size(); ++i) {
        level[i] = std::min(below[i], below[i + width / 2]);
      }
      levels_.push_back(std::move(level));
    }
  }

  // lo <= hi, both in range.
  int32_t Min(int32_t lo, int32_t hi) const {
    const int level = std::bit_width(static_cast<uint32_t>(hi - lo + 1)) - 1;
    return std::min(levels_[level][lo], levels_[level][hi - (1 << level) + 1]);
  }

 private:
  std::vector<std::vector<int32_t>> levels_;
};

}  // namespace

std::vector<int32_t> SizeOrder(const ArenaProblem& problem) {
  std::vector<int32_t> order(problem.blocks.size());
  std::iota(order.begin(), order.end(), 0);
  std::sort(order.begin(), order.end(),
            [&problem](int32_t a, int32_t b) { return LargerFirst(problem, a, b); });
  return order;
}

std::vector<int32_t> BreadthOrder(const ArenaProblem& problem) {
  // The GPU delegate (CalculateTaskProfiles) lists every step's live blocks,
  // takes the steps widest first and each step's blocks largest first,
  // skipping blocks already taken. Those lists hold O(blocks x steps)
  // entries (400 MB for a 10,000-wide fan-out), so this computes the same
  // order directly: a block is taken at the widest step of its lifetime.
  // Slot s + 1 is step s; slot 0 is "before step 0".
  const int32_t slots = problem.num_steps + 1;
  std::vector<int64_t> breadth(slots + 1, 0);  // a difference array first
  for (const ArenaBlock& block : problem.blocks) {
    if (block.first > block.last) continue;
    breadth[block.first + 1] += block.raw_bytes;
    breadth[block.last + 2] -= block.raw_bytes;
  }
  for (int32_t s = 1; s < slots; ++s) breadth[s] += breadth[s - 1];
  std::vector<int32_t> slot_order(slots);
  std::iota(slot_order.begin(), slot_order.end(), 0);
  std::stable_sort(slot_order.begin(), slot_order.end(),
                   [&breadth](int32_t a, int32_t b) { return breadth[a] > breadth[b]; });
  std::vector<int32_t> rank(slots);
  for (int32_t r = 0; r < slots; ++r) rank[slot_order[r]] = r;
  const RangeMinimum first_taken(std::move(rank));
  std::vector<std::pair<int32_t, int32_t>> taken_at;  // (rank of the step, block)
  taken_at.reserve(problem.blocks.size());
  for (int32_t b = 0; b < static_cast<int32_t>(problem.blocks.size()); ++b) {
    const ArenaBlock& block = problem.blocks[b];
    if (block.first > block.last) continue;  // never live: in no step's list
    taken_at.emplace_back(first_taken.Min(block.first + 1, block.last + 1), b);
  }
  std::sort(taken_at.begin(), taken_at.end(),
            [&problem](const auto& x, const auto& y) {
              return x.first != y.first ? x.first < y.first
                                        : LargerFirst(problem, x.second, y.second);
            });
  std::vector<int32_t> order;
  order.reserve(taken_at.size());
  for (const auto& [unused, b] : taken_at) order.push_back(b);
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
