#ifndef ORDO_CORE_ARENA_TFLITE_PLANNERS_H_
#define ORDO_CORE_ARENA_TFLITE_PLANNERS_H_

#include <cstdint>
#include <vector>

#include "core/arena/arena_planner.h"

namespace ordo {

// TFLite's arena planner (tensorflow/lite/arena_planner.cc with
// simple_memory_arena.cc), re-implemented on ordo's lifetimes so that its
// arena can be compared with ordo's for the same schedule:
//  1. Order (ArenaPlanner::CreateTensorAllocationVector): blocks that live
//     the whole run (allocated at step <= 0, never freed) first, by tensor
//     id; then the rest by decreasing unaligned size, ties by earlier
//     allocation step (graph inputs count as step 0, as TFLite allocates them
//     at node 0). TFLite leaves remaining ties to std::sort; we take the
//     lower tensor id, so the result is deterministic.
//  2. Place (SimpleMemoryArena::Allocate): each into the smallest gap between
//     already placed, lifetime-overlapping blocks that holds it (lowest on
//     ties), else above them all.
// In-place chains are one block, as TFLite's shared tensors
// (IdentifySharedTensors) take their root's allocation.
// Differences from TFLite, on purpose: lifetimes are ordo's (graph inputs die
// after their last reader instead of being preserved), sizes are aligned as
// the spec says (TFLite aligns only offsets), and conflicts use the live
// steps including "before step 0" (TFLite maps that to node 0).
// O(B^2) for B blocks. Not optimal: it is the baseline ordo is measured against.
class TfliteArenaPlanner final : public ArenaPlanner {
 public:
  absl::string_view name() const override { return "tflite"; }
  ArenaPlacement Place(const ArenaProblem& problem, const ArenaLimits& limits) const override;
};

// TFLite Micro's GreedyMemoryPlanner (tensorflow/lite/micro/memory_planner/
// greedy_memory_planner.cc): blocks by decreasing aligned size (a stable sort
// in the order they were added, i.e. tensor id), each into the lowest gap
// among already placed lifetime-overlapping blocks that holds it (first fit),
// else above them. O(B^2). The source's own comment: not guaranteed to
// produce the best placement.
class TflmArenaPlanner final : public ArenaPlanner {
 public:
  absl::string_view name() const override { return "tflm"; }
  ArenaPlacement Place(const ArenaProblem& problem, const ArenaLimits& limits) const override;
};

// The block orders of the two planners, for tests and for `best`.
std::vector<int32_t> TfliteAllocationOrder(const ArenaProblem& problem);
std::vector<int32_t> TflmAllocationOrder(const ArenaProblem& problem);

}  // namespace ordo

#endif  // ORDO_CORE_ARENA_TFLITE_PLANNERS_H_
