#ifndef ORDO_CORE_ARENA_ARENA_PLAN_H_
#define ORDO_CORE_ARENA_ARENA_PLAN_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "core/arena/arena_planner.h"
#include "core/arena/arena_problem.h"
#include "core/memory/memory_model.h"
#include "core/memory/simulator.h"

namespace ordo {

// Where one activation tensor lives in the arena, and when.
struct TensorPlacement {
  int32_t tensor = kNoId;
  int64_t offset = 0;
  // Aligned size in bytes.
  int64_t size = 0;
  // The tensor's own live interval (spec: Lifetimes); first == -1 means live
  // before step 0. Tensors of one in-place chain share offset and size.
  int32_t first_step = 0;
  int32_t last_step = 0;
  // With memory pools (core/pools): index of the pool holding the tensor,
  // `offset` being within that pool; kNoId for the one flat arena.
  int32_t pool = kNoId;
};

// An arena layout of one schedule (spec: Arena layout). A plain value.
struct ArenaPlan {
  // The planner that was asked ("best", "tflite", ...).
  std::string planner;
  // The strategy that produced the placement (for `best`: the winner).
  std::string algorithm;
  int64_t alignment = 64;
  // One entry per activation tensor, ascending tensor id.
  std::vector<TensorPlacement> tensors;
  // max over tensors of offset + size.
  int64_t arena_bytes = 0;
  // The peak with aligned sizes: no layout of this schedule is smaller.
  int64_t lower_bound_bytes = 0;
  // arena_bytes - lower_bound_bytes.
  int64_t gap_bytes = 0;
  // The planner proved no layout of this schedule is smaller than
  // arena_bytes (always true when the gap is 0).
  bool optimal = false;
  // Every planner that laid out this schedule and the arena it produced:
  // `planner` itself and, for the `best` portfolio, each member it ran. A
  // caller that needs one of these figures for the same schedule and
  // alignment (the compile's tflite/tflm comparison) reads it here instead
  // of planning again. Only `algorithm`'s placement is kept and verified.
  std::vector<PlannerArena> arenas_by_planner;
};

// arenas_by_planner's figure for `planner`, if it ran.
std::optional<int64_t> PlannedArenaBytes(const ArenaPlan& plan, absl::string_view planner);

// The plan for block offsets `offsets` (one per block of `problem`, which was
// built from `simulation`): every tensor gets its block's offset and its own
// live interval. `planner`, `algorithm` and `optimal` are left to the caller.
ArenaPlan MakeArenaPlan(const ArenaProblem& problem, const SimulationResult& simulation,
                        const std::vector<int64_t>& offsets);

// Checks `plan` against the schedule `simulation` describes, independently of
// any planner (TFLite Micro's DoAnyBuffersOverlap): every activation tensor
// placed exactly once with its live interval and its aligned size; offsets
// aligned and non-negative; no two tensors live at a common step overlap in
// memory, except an in-place pair (inplace_source), which must coincide;
// arena_bytes = max(offset + size); lower_bound_bytes = the aligned peak;
// arena_bytes >= lower_bound_bytes. INTERNAL naming the first broken rule
// and tensor, since a failed check is a planner bug; INVALID_ARGUMENT when
// `simulation` does not match `model` (BuildArenaProblem). O(T log T).
absl::Status VerifyArena(const MemoryModel& model, const SimulationResult& simulation,
                         const ArenaPlan& plan);

// A text picture for test failures and debugging (TFLite Micro's
// PrintMemoryPlan): one row per step, `width` columns spanning the arena; a
// column shows the tensor covering it ('0'-'9', 'a'-'z', 'A'-'Z' by position
// in plan.tensors, '*' beyond) or '.' when free, and '!' on overlap.
std::string DrawArenaAscii(const ArenaPlan& plan, int32_t width = 64);

}  // namespace ordo

#endif  // ORDO_CORE_ARENA_ARENA_PLAN_H_
