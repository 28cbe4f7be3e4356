#include "core/arena/greedy_placement.h"

#include <algorithm>
#include <limits>

namespace ordo {
namespace {

constexpr int64_t kNotAssigned = std::numeric_limits<int64_t>::max();

int64_t AlignTo(int64_t alignment, int64_t offset) {
  return offset % alignment == 0 ? offset : offset + (alignment - offset % alignment);
}

// A placed block as the fit rules read it, kept contiguous in offset order:
// the scans below touch every placed block once per block placed, so they
// read these 24 bytes each instead of an ArenaBlock and a separate offset.
struct Placed {
  int64_t offset;
  int64_t size;
  int32_t first;
  int32_t last;
};

bool OverlapsInTime(const Placed& placed, const ArenaBlock& block) {
  return LiveStepsOverlap(placed.first, placed.last, block.first, block.last);
}

// TFLite simple_memory_arena.cc, SimpleMemoryArena::Allocate, step for step:
// the fit is measured from the unaligned running offset, as there; with
// aligned sizes the two coincide.
int64_t BestFitOffset(int64_t alignment, const std::vector<Placed>& by_offset,
                      const ArenaBlock& block) {
  int64_t best_offset = kNotAssigned;
  int64_t best_offset_fit = kNotAssigned;
  int64_t current_offset = 0;
  for (const Placed& alloc : by_offset) {
    if (!OverlapsInTime(alloc, block)) continue;
    const int64_t aligned_current_offset = AlignTo(alignment, current_offset);
    if (aligned_current_offset + block.size <= alloc.offset &&
        alloc.offset - aligned_current_offset < best_offset_fit) {
      best_offset = aligned_current_offset;
      best_offset_fit = alloc.offset - current_offset;
    }
    current_offset = std::max(current_offset, alloc.offset + alloc.size);
    if (best_offset_fit == 0) break;  // a gap of zero is as good as it gets
  }
  if (best_offset == kNotAssigned) best_offset = AlignTo(alignment, current_offset);
  return best_offset;
}

// TFLite Micro greedy_memory_planner.cc, CalculateOffsetsIfNeeded: walk the
// time-overlapping buffers by offset; take the first gap that holds the block.
int64_t FirstFitOffset(const std::vector<Placed>& by_offset, const ArenaBlock& block) {
  int64_t candidate_offset = 0;
  for (const Placed& next : by_offset) {
    if (!OverlapsInTime(next, block)) continue;
    if (next.offset - candidate_offset >= block.size) break;
    candidate_offset = std::max(candidate_offset, next.offset + next.size);
  }
  return candidate_offset;
}

}  // namespace

std::vector<int64_t> PlaceInOrder(const ArenaProblem& problem, absl::Span<const int32_t> order,
                                  FitRule rule) {
  std::vector<int64_t> offsets(problem.blocks.size(), 0);
  std::vector<Placed> by_offset;
  by_offset.reserve(order.size());
  for (int32_t b : order) {
    const ArenaBlock& block = problem.blocks[b];
    if (block.size == 0) continue;
    const int64_t offset = rule == FitRule::kBestFit
                               ? BestFitOffset(problem.alignment, by_offset, block)
                               : FirstFitOffset(by_offset, block);
    offsets[b] = offset;
    // After the blocks at the same offset: ties stay in placement order.
    auto it = std::upper_bound(
        by_offset.begin(), by_offset.end(), offset,
        [](int64_t value, const Placed& other) { return value < other.offset; });
    by_offset.insert(it, Placed{offset, block.size, block.first, block.last});
  }
  return offsets;
}

}  // namespace ordo
