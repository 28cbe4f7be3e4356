#include "core/arena/greedy_placement.h"

#include <algorithm>
#include <bit>
#include <limits>
#include <vector>

namespace ordo {
namespace {

constexpr int64_t kNotAssigned = std::numeric_limits<int64_t>::max();

int64_t AlignTo(int64_t alignment, int64_t offset) {
  return offset % alignment == 0 ? offset : offset + (alignment - offset % alignment);
}

// TFLite simple_memory_arena.cc, SimpleMemoryArena::Allocate, step for step,
// fed the time-overlapping placed blocks in offset order: the fit is
// measured from the unaligned running offset, as there; with aligned sizes
// the two coincide.
class BestFit {
 public:
  BestFit(int64_t alignment, int64_t size) : alignment_(alignment), size_(size) {}

  // False once no later block can change the answer.
  bool Next(int64_t offset, int64_t size) {
    const int64_t aligned_current = AlignTo(alignment_, current_);
    if (aligned_current + size_ <= offset && offset - aligned_current < best_fit_) {
      best_ = aligned_current;
      best_fit_ = offset - current_;
    }
    current_ = std::max(current_, offset + size);
    return best_fit_ != 0;  // a gap of zero is as good as it gets
  }
  int64_t Offset() const { return best_ != kNotAssigned ? best_ : AlignTo(alignment_, current_); }

 private:
  int64_t alignment_, size_;
  int64_t best_ = kNotAssigned, best_fit_ = kNotAssigned, current_ = 0;
};

// TFLite Micro greedy_memory_planner.cc, CalculateOffsetsIfNeeded: walk the
// time-overlapping buffers by offset; take the first gap that holds the block.
class FirstFit {
 public:
  FirstFit(int64_t /*alignment*/, int64_t size) : size_(size) {}

  bool Next(int64_t offset, int64_t size) {
    if (offset - candidate_ >= size_) return false;
    candidate_ = std::max(candidate_, offset + size);
    return true;
  }
  int64_t Offset() const { return candidate_; }

 private:
  int64_t size_;
  int64_t candidate_ = 0;
};

// Whether PlaceInOrder places `block`: zero-size blocks and blocks never live
// take no room (TFLite's Allocate returns early for them).
bool TakesRoom(const ArenaBlock& block) { return block.size > 0 && block.first <= block.last; }

// Every placed block in one list by offset, each scanned and skipped unless
// it overlaps in time: TFLite's and TFLite Micro's own loops. O(B^2), but
// a few instructions per pair: the faster way when most blocks are co-live.
template <typename Fit>
std::vector<int64_t> PlaceScanningAll(const ArenaProblem& problem,
                                      absl::Span<const int32_t> order) {
  // 24 bytes each, contiguous: the scan touches every one per block placed.
  struct Placed {
    int64_t offset;
    int64_t size;
    int32_t first;
    int32_t last;
  };
  std::vector<int64_t> offsets(problem.blocks.size(), 0);
  std::vector<Placed> by_offset;
  by_offset.reserve(order.size());
  for (int32_t b : order) {
    const ArenaBlock& block = problem.blocks[b];
    if (!TakesRoom(block)) continue;
    Fit fit(problem.alignment, block.size);
    for (const Placed& placed : by_offset) {
      if (!LiveStepsOverlap(placed.first, placed.last, block.first, block.last)) continue;
      if (!fit.Next(placed.offset, placed.size)) break;
    }
    offsets[b] = fit.Offset();
    // Co-live blocks never share an offset, so where a block goes among
    // equal offsets cannot matter.
    auto it =
        std::upper_bound(by_offset.begin(), by_offset.end(), offsets[b],
                         [](int64_t value, const Placed& other) { return value < other.offset; });
    by_offset.insert(it, Placed{offsets[b], block.size, block.first, block.last});
  }
  return offsets;
}

// The placed blocks by their live steps, so that a block meets only the
// blocks live at a step of its own: those live at its first step (a
// stabbing query on a segment tree over the steps, each block stored at
// the O(log steps) nodes that cover its lifetime) and those that start
// later within it (a list per step). Lists are singly linked through one
// array, so the index costs three allocations, not one per step.
class PlacedByTime {
 public:
  // Blocks live within steps [-1, last_step].
  PlacedByTime(int32_t last_step, size_t num_blocks) {
    // Slot s + 1 holds step s; slot 0 is "before step 0".
    while (leaves_ < last_step + 2) leaves_ *= 2;
    covering_head_.assign(2 * static_cast<size_t>(leaves_), kEnd);
    starting_head_.assign(static_cast<size_t>(leaves_), kEnd);
    links_.reserve(num_blocks * 4);
  }

  void Add(int32_t placed, int32_t first, int32_t last) {
    Push(starting_head_[first + 1], placed);
    // The canonical cover of slots [first + 1, last + 1] (bottom-up).
    for (int32_t lo = first + 1 + leaves_, hi = last + 2 + leaves_; lo < hi; lo /= 2, hi /= 2) {
      if (lo & 1) Push(covering_head_[lo++], placed);
      if (hi & 1) Push(covering_head_[--hi], placed);
    }
  }

  // Appends every added block live at a step of [first, last], once each.
  void CollectOverlapping(int32_t first, int32_t last, std::vector<int32_t>& out) const {
    for (int32_t node = first + 1 + leaves_; node >= 1; node /= 2) {
      Append(covering_head_[node], out);
    }
    for (int32_t slot = first + 2; slot <= last + 1; ++slot) Append(starting_head_[slot], out);
  }

 private:
  static constexpr int32_t kEnd = -1;
  struct Link {
    int32_t placed;
    int32_t next;
  };

  void Push(int32_t& head, int32_t placed) {
    links_.push_back({placed, head});
    head = static_cast<int32_t>(links_.size() - 1);
  }
  void Append(int32_t link, std::vector<int32_t>& out) const {
    for (; link != kEnd; link = links_[link].next) out.push_back(links_[link].placed);
  }

  int32_t leaves_ = 1;
  std::vector<int32_t> covering_head_;
  std::vector<int32_t> starting_head_;
  std::vector<Link> links_;
};

// Each block meets only the placed blocks co-live with it (PlacedByTime),
// sorted by offset: O(B (log S + k log k) + the blocks' total lifetime) for
// k co-live blocks. The faster way when few blocks are co-live with each
// (bench/arena_bench BM_PlaceInOrder/ladder: seconds against milliseconds).
template <typename Fit>
std::vector<int64_t> PlaceByTime(const ArenaProblem& problem, absl::Span<const int32_t> order) {
  struct Placed {
    int64_t offset;
    int64_t size;
  };
  std::vector<int64_t> offsets(problem.blocks.size(), 0);
  std::vector<Placed> placed;
  placed.reserve(order.size());
  int32_t last_step = -1;
  for (int32_t b : order) last_step = std::max(last_step, problem.blocks[b].last);
  PlacedByTime by_time(last_step, order.size());
  std::vector<int32_t> overlapping;
  for (int32_t b : order) {
    const ArenaBlock& block = problem.blocks[b];
    if (!TakesRoom(block)) continue;
    overlapping.clear();
    by_time.CollectOverlapping(block.first, block.last, overlapping);
    std::sort(overlapping.begin(), overlapping.end(),
              [&placed](int32_t x, int32_t y) { return placed[x].offset < placed[y].offset; });
    Fit fit(problem.alignment, block.size);
    for (int32_t p : overlapping) {
      if (!fit.Next(placed[p].offset, placed[p].size)) break;
    }
    offsets[b] = fit.Offset();
    by_time.Add(static_cast<int32_t>(placed.size()), block.first, block.last);
    placed.push_back(Placed{offsets[b], block.size});
  }
  return offsets;
}

}  // namespace

bool IndexByTimePays(const ArenaProblem& problem, absl::Span<const int32_t> order) {
  // Per element and level of the sort, in pair checks of the full scan
  // (bench/arena_bench BM_PlaceInOrder: the random DAG, the ladder and the
  // shared models).
  constexpr int64_t kSortCost = 4;
  // Below this either takes about a microsecond, less than the estimate.
  constexpr size_t kFewBlocks = 32;
  if (order.size() < kFewBlocks) return false;
  int32_t last_step = -1;
  int64_t blocks = 0;
  for (int32_t b : order) {
    if (!TakesRoom(problem.blocks[b])) continue;
    last_step = std::max(last_step, problem.blocks[b].last);
    ++blocks;
  }
  // Slot s + 1 is step s: started[s] blocks start at or before slot s,
  // ended[s] end before slot s.
  std::vector<int64_t> started(static_cast<size_t>(last_step) + 3, 0);
  std::vector<int64_t> ended(static_cast<size_t>(last_step) + 3, 0);
  for (int32_t b : order) {
    const ArenaBlock& block = problem.blocks[b];
    if (!TakesRoom(block)) continue;
    ++started[block.first + 1];
    ++ended[block.last + 2];
  }
  for (size_t s = 1; s < started.size(); ++s) {
    started[s] += started[s - 1];
    ended[s] += ended[s - 1];
  }
  const int64_t scan = blocks * blocks / 2;
  int64_t index = 0;
  for (int32_t b : order) {
    const ArenaBlock& block = problem.blocks[b];
    if (!TakesRoom(block)) continue;
    const int64_t co_live = started[block.last + 1] - ended[block.first + 1] - 1;
    const int64_t placed_before = co_live / 2;  // on average
    index += placed_before * kSortCost * std::bit_width(static_cast<uint64_t>(placed_before) + 1) +
             (block.last - block.first + 1);
    if (index >= scan) return false;
  }
  return true;
}

std::vector<int64_t> PlaceInOrder(const ArenaProblem& problem, absl::Span<const int32_t> order,
                                  FitRule rule, PlacementScan scan) {
  if (scan == PlacementScan::kCheaper) {
    scan = IndexByTimePays(problem, order) ? PlacementScan::kByTime : PlacementScan::kAll;
  }
  if (scan == PlacementScan::kByTime) {
    return rule == FitRule::kBestFit ? PlaceByTime<BestFit>(problem, order)
                                     : PlaceByTime<FirstFit>(problem, order);
  }
  return rule == FitRule::kBestFit ? PlaceScanningAll<BestFit>(problem, order)
                                   : PlaceScanningAll<FirstFit>(problem, order);
}

}  // namespace ordo
