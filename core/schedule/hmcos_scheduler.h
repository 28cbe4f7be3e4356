#ifndef ORDO_CORE_SCHEDULE_HMCOS_SCHEDULER_H_
#define ORDO_CORE_SCHEDULE_HMCOS_SCHEDULER_H_

#include "absl/strings/string_view.h"
#include "core/schedule/iterative_scheduling.h"
#include "core/schedule/scheduler.h"

namespace ordo {

// HMCOS (Wang et al., "Hierarchical Memory-Constrained Operator Scheduling
// of Neural Architecture Search Networks", DAC 2022) as written:
// hierarchization (§3.1: sequences, cells, dominator groups), then the
// iterative scheduling of Algorithm 1 with the three optimizations of
// §3.2, the first iteration unbudgeted (ScheduleIteratively).
//
// Differences forced by ordo: memory follows the spec (in-place, graph
// outputs, unused outputs), cells are inferred (FormGroups), levels are
// capped (HierarchicalSearch: max_level_states) so that RandWire does not
// run out of memory, and the limits are honoured: on a limit it returns the
// best schedule so far, else the reverse post-order (the paper's baseline).
// The lower bound is the spec's, or the search's when it proved one.
// No optimality guarantee. Stateless; one instance may serve concurrent
// calls.
class HmcosScheduler final : public Scheduler {
 public:
  explicit HmcosScheduler(IterativeSchedulingOptions options = {}) : options_(options) {}

  absl::string_view name() const override { return "hmcos"; }
  absl::StatusOr<ScheduleResult> Schedule(const MemoryModel& model,
                                          const ScheduleLimits& limits) const override;

 private:
  IterativeSchedulingOptions options_;
};

}  // namespace ordo

#endif  // ORDO_CORE_SCHEDULE_HMCOS_SCHEDULER_H_
