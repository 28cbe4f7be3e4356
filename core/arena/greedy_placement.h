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

// The shared core of the greedy planners: places the blocks in `order` one by
// one, each by `rule` against the placed blocks that overlap it in time, kept
// in a list by offset (ties in placement order, as TFLite's upper_bound
// insertion and TFLite Micro's linked list keep them). Blocks not in `order`
// and zero-size blocks get offset 0 and are not in the list (TFLite's
// Allocate returns early for them). Offsets are multiples of the alignment
// because sizes are. O(B^2) for B blocks.
std::vector<int64_t> PlaceInOrder(const ArenaProblem& problem, absl::Span<const int32_t> order,
                                  FitRule rule);

}  // namespace ordo

#endif  // ORDO_CORE_ARENA_GREEDY_PLACEMENT_H_
