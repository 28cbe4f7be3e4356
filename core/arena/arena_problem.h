#ifndef ORDO_CORE_ARENA_ARENA_PROBLEM_H_
#define ORDO_CORE_ARENA_ARENA_PROBLEM_H_

#include <algorithm>
#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "core/memory/memory_model.h"
#include "core/memory/simulator.h"

namespace ordo {

// `bytes` rounded up to a multiple of `alignment` (> 0); nullopt on overflow.
std::optional<int64_t> AlignUp(int64_t bytes, int64_t alignment);

// One allocation in the arena. An in-place chain (spec: In-place: "in the
// arena the two share one block") is a single block: each tensor of the chain
// overwrites the one before it, so the block lives from the first tensor's
// allocation to the last tensor's free, and every tensor of the chain gets
// the block's offset.
struct ArenaBlock {
  // Aligned size (all tensors of a chain have the same byte size).
  int64_t size = 0;
  // Size before alignment: TFLite orders tensors by it.
  int64_t raw_bytes = 0;
  // Live steps, inclusive, of the union of the chain's intervals;
  // first == -1: live before step 0.
  int32_t first = 0;
  int32_t last = 0;
  // Allocated before or at step 0 and never freed (a graph output produced
  // at step 0, or a graph input that is also a graph output): TFLite's
  // "lifespan through the whole model inference", which it places first.
  bool whole_run = false;
  // The tensors sharing the block in the order they were written:
  // tensors[0] owns the block; tensors[k] overwrote tensors[k - 1] in place.
  std::vector<int32_t> tensors;
};

// True when the live steps [a_first, a_last] and [b_first, b_last] share a
// step (the arena conflict).
inline bool LiveStepsOverlap(int32_t a_first, int32_t a_last, int32_t b_first, int32_t b_last) {
  return a_first <= b_last && b_first <= a_last;
}

inline bool BlocksOverlapInTime(const ArenaBlock& a, const ArenaBlock& b) {
  return LiveStepsOverlap(a.first, a.last, b.first, b.last);
}

// `ids` (indexes into `blocks`) in the order their blocks start (stable).
// A counting sort over the steps when they are few against the ids (a
// schedule has about as many steps as blocks): the pool placer sorts so
// several times per placement, and the comparison sort's mispredicted
// branches were a tenth of a fast placement (docs/pools-log.md).
void SortByFirstStep(const std::vector<ArenaBlock>& blocks, std::vector<int32_t>& ids);

// visit(a, b) once for every pair of `sorted_ids` (SortByFirstStep) whose
// blocks are live at a common step, a the earlier in `sorted_ids`: sorted by
// first step, a later block overlaps an earlier one iff it starts before the
// earlier one ends. O(n + pairs).
template <typename Visit>
void ForEachCoLivePair(const std::vector<ArenaBlock>& blocks,
                       const std::vector<int32_t>& sorted_ids, Visit&& visit) {
  for (size_t i = 0; i < sorted_ids.size(); ++i) {
    const int32_t a = sorted_ids[i];
    for (size_t j = i + 1; j < sorted_ids.size() && blocks[sorted_ids[j]].first <= blocks[a].last;
         ++j) {
      visit(a, sorted_ids[j]);
    }
  }
}

// The instance every arena planner solves: blocks with sizes and lifetimes
// (spec: Arena layout). A plain value, built from one schedule's simulation.
struct ArenaProblem {
  // Steps of the schedule; block lifetimes lie in [-1, num_steps - 1].
  int32_t num_steps = 0;
  int64_t alignment = 64;
  // Ordered by owner tensor id (tensors[0]), ascending.
  std::vector<ArenaBlock> blocks;
  // Per model tensor: index of its block, or kNoId for tensors that are not
  // in the arena (weights: no live interval).
  std::vector<int32_t> block_of_tensor;
  // Spec: "The arena lower bound is the peak computed with aligned sizes":
  // the largest sum of aligned block sizes live at one step (before step 0
  // included). Each in-place chain counts once, as in the simulator.
  // Weights (MemoryModel::constant_bytes) are not in the arena and not
  // counted. No placement of this problem can be smaller.
  int64_t lower_bound_bytes = 0;
};

// Builds the arena instance of the schedule that `simulation` describes.
// Every tensor with a live interval becomes part of exactly one block.
// Errors (INVALID_ARGUMENT): alignment < 1; a simulation that does not match
// `model` (array sizes, intervals out of range, an in-place pair of different
// sizes or a tensor overwritten twice); an aligned size that overflows int64
// (naming the tensor by id). O(tensors + steps).
absl::StatusOr<ArenaProblem> BuildArenaProblem(const MemoryModel& model,
                                               const SimulationResult& simulation,
                                               int64_t alignment);

// Arena size of a placement: max over blocks of offset + size (0 if none).
int64_t ArenaBytes(const ArenaProblem& problem, const std::vector<int64_t>& offsets);

}  // namespace ordo

#endif  // ORDO_CORE_ARENA_ARENA_PROBLEM_H_
