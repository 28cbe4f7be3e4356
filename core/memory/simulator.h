#ifndef ORDO_CORE_MEMORY_SIMULATOR_H_
#define ORDO_CORE_MEMORY_SIMULATOR_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/memory/memory_model.h"

namespace ordo {

// Live interval of one tensor, in steps. first == -1: live before step 0.
struct LiveInterval {
  int32_t first = 0;
  int32_t last = 0;
};

struct SimulationResult {
  // Footprint before step 0 (the graph inputs, plus constant bytes).
  int64_t initial_bytes = 0;
  // Footprint at each step, indexed by step.
  std::vector<int64_t> step_bytes;
  int64_t peak_bytes = 0;
  // Step of the first maximum; -1 when the peak is before step 0.
  int32_t peak_step = -1;
  // Per tensor of the model; `has_interval[t]` is false for weights and for
  // 0-byte tensors (nothing to place; e.g. graph inputs and outputs under
  // MemoryOptions::io_outside_arena).
  std::vector<LiveInterval> intervals;
  std::vector<bool> has_interval;
  // For each tensor written in place: the input it overwrote, else kNoId.
  std::vector<int32_t> inplace_source;
};

// The one memory simulator (spec: Lifetimes and the footprint). Checks that
// `schedule` is a permutation of the model's ops that respects every
// dependency (INVALID_ARGUMENT naming the first op that breaks it), then
// returns the footprint at every step, the peak, live intervals and in-place
// pairs. O(ops + tensors + edges).
absl::StatusOr<SimulationResult> Simulate(const MemoryModel& model,
                                          absl::Span<const int32_t> schedule);

// Peak only; same checks. For callers that only compare schedules.
absl::StatusOr<int64_t> SimulatePeak(const MemoryModel& model,
                                     absl::Span<const int32_t> schedule);

// The spec's lower bound on the peak of every schedule: the largest footprint
// any op needs at its own step (its activation inputs + outputs, in place
// applied where it may apply) and the footprint before step 0. O(edges).
int64_t MemoryLowerBound(const MemoryModel& model);

// Bytes one op needs at its own step with in-place applied when allowed:
// inputs + outputs + constant bytes (StepTable::OpRule with every input
// live and read last). The per-op term of MemoryLowerBound.
int64_t OpStepBytes(const MemoryModel& model, int32_t op);

// Footprint before step 0: inputs (tensors with no producer) + constant bytes.
int64_t InitialBytes(const MemoryModel& model);

}  // namespace ordo

#endif  // ORDO_CORE_MEMORY_SIMULATOR_H_
