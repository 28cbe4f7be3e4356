#include "core/arena/greedy_placement.h"

#include <algorithm>
#include <limits>

namespace ordo {
namespace {

constexpr int64_t kNotAssigned = std::numeric_limits<int64_t>::max();

int64_t AlignTo(int64_t alignment, int64_t offset) {
  return offset % alignment == 0 ? offset : offset + (alignment - offset % alignment);
}

// TFLite simple_memory_arena.cc, SimpleMemoryArena::Allocate, step for step:
// the fit is measured from the unaligned running offset, as there; with
// aligned sizes the two coincide.
int64_t BestFitOffset(const ArenaProblem& problem, const std::vector<int32_t>& by_offset,
                      const std::vector<int64_t>& offsets, const ArenaBlock& block) {
  int64_t best_offset = kNotAssigned;
  int64_t best_offset_fit = kNotAssigned;
  int64_t current_offset = 0;
  for (int32_t other : by_offset) {
    const ArenaBlock& alloc = problem.blocks[other];
    if (!BlocksOverlapInTime(alloc, block)) continue;
    const int64_t alloc_offset = offsets[other];
    const int64_t aligned_current_offset = AlignTo(problem.alignment, current_offset);
    if (aligned_current_offset + block.size <= alloc_offset &&
        alloc_offset - aligned_current_offset < best_offset_fit) {
      best_offset = aligned_current_offset;
      best_offset_fit = alloc_offset - current_offset;
    }
    current_offset = std::max(current_offset, alloc_offset + alloc.size);
    if (best_offset_fit == 0) break;  // a gap of zero is as good as it gets
  }
  if (best_offset == kNotAssigned) best_offset = AlignTo(problem.alignment, current_offset);
  return best_offset;
}

// TFLite Micro greedy_memory_planner.cc, CalculateOffsetsIfNeeded: walk the
// time-overlapping buffers by offset; take the first gap that holds the block.
int64_t FirstFitOffset(const ArenaProblem& problem, const std::vector<int32_t>& by_offset,
                       const std::vector<int64_t>& offsets, const ArenaBlock& block) {
  int64_t candidate_offset = 0;
  for (int32_t other : by_offset) {
    const ArenaBlock& next = problem.blocks[other];
    if (!BlocksOverlapInTime(next, block)) continue;
    if (offsets[other] - candidate_offset >= block.size) break;
    candidate_offset = std::max(candidate_offset, offsets[other] + next.size);
  }
  return candidate_offset;
}

}  // namespace

std::vector<int64_t> PlaceInOrder(const ArenaProblem& problem, absl::Span<const int32_t> order,
                                  FitRule rule) {
  std::vector<int64_t> offsets(problem.blocks.size(), 0);
  std::vector<int32_t> by_offset;
  by_offset.reserve(order.size());
  for (int32_t b : order) {
    const ArenaBlock& block = problem.blocks[b];
    if (block.size == 0) continue;
    const int64_t offset = rule == FitRule::kBestFit
                               ? BestFitOffset(problem, by_offset, offsets, block)
                               : FirstFitOffset(problem, by_offset, offsets, block);
    offsets[b] = offset;
    auto it = std::upper_bound(
        by_offset.begin(), by_offset.end(), offset,
        [&offsets](int64_t value, int32_t other) { return value < offsets[other]; });
    by_offset.insert(it, b);
  }
  return offsets;
}

}  // namespace ordo
