#ifndef ORDO_CORE_ARENA_GREEDY_PLACEMENT_H_
#define ORDO_CORE_ARENA_GREEDY_PLACEMENT_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "core/arena/arena_problem.h"

namespace ordo {

// How a block is put among the already placed blocks it overlaps in time.
enum class FitRule : int8_t {
  // The smallest gap that holds it, lowest offset on ties; else above the
  // highest overlapping block. TFLite SimpleMemoryArena::Allocate; the GPU
  // delegate's GreedyBySizeAssignment (Pisarchyk & Lee 2020, §5) is the same
  // rule.
  kBestFit,
  // The lowest gap that holds it. TFLite Micro GreedyMemoryPlanner.
  kFirstFit,
};

// How PlaceInOrder finds the placed blocks a block overlaps in time. Both
// give the same offsets; only the time differs.
enum class PlacementScan : int8_t {
  // Every placed block, checked (TFLite's loops): O(B^2), a few
  // instructions per pair.
  kAll,
  // An index of the placed blocks by live steps: O(B (log S + k log k) +
  // the blocks' total lifetime) for B blocks over S steps, k co-live.
  kByTime,
  // The one estimated cheaper from the blocks' lifetimes
  // (IndexByTimePays).
  kCheaper,
};

// Whether kByTime's work is estimated below kAll's for the blocks of
// `order`: the full scan checks about B^2 / 2 pairs; the index collects and
// sorts, for each block, the co-live blocks placed before it (about half
// of its co-live ones, counted from prefix sums of first and last steps)
// and walks its lifetime. O(B + S).
bool IndexByTimePays(const ArenaProblem& problem, absl::Span<const int32_t> order);

// The shared core of the greedy planners: places the blocks in `order` one by
// one, each by `rule` against the placed blocks that overlap it in time, in
// offset order (as TFLite's and TFLite Micro's lists keep them; co-live
// blocks never share an offset, so their tie order cannot matter). Blocks
// not in `order`, zero-size blocks and blocks never live get offset 0 and
// take no room (TFLite's Allocate returns early for them). Offsets are
// multiples of the alignment because sizes are.
std::vector<int64_t> PlaceInOrder(const ArenaProblem& problem, absl::Span<const int32_t> order,
                                  FitRule rule, PlacementScan scan = PlacementScan::kCheaper);

}  // namespace ordo

#endif  // ORDO_CORE_ARENA_GREEDY_PLACEMENT_H_
