#ifndef ORDO_CORE_SCHEDULE_HIERARCHICAL_SCHEDULER_H_
#define ORDO_CORE_SCHEDULE_HIERARCHICAL_SCHEDULER_H_

#include <string>
#include <utility>
#include <vector>

#include "absl/strings/string_view.h"
#include "core/schedule/iterative_scheduling.h"
#include "core/schedule/schedule_window.h"
#include "core/schedule/scheduler.h"

namespace ordo {

struct HierarchicalOptions {
  // HMCOS's hierarchy, search and iterations; each part can be switched off
  // (the ablation of HMCOS Table 3). ordo disassembles at every peak step,
  // readers too.
  IterativeSchedulingOptions iterative = {.all_peak_steps = true, .disassemble_readers = true};
  // Start from the best cheap order (greedy, model, Kahn, RPO): the result is
  // never worse, and its peak is the first iteration's budget.
  bool heuristic_incumbent = true;
  // Then improve the schedule around its peak with exact windows.
  bool refine_windows = true;
  WindowRefinementOptions windows;
};

// HMCOS plus ordo's improvements ("hierarchical"): the scalable
// alternative to the exact search, for parts too wide to prove.
//
// 1. Incumbent: the lowest-peak cheap order; optimal at once if it meets
//    the lower bound (step 4).
// 2. HMCOS's iterative scheduling (ScheduleIteratively) on the
//    hierarchical graph, budgeted by the incumbent's peak from the first
//    iteration, disassembling the groups that define or read a value alive
//    at any step at the peak (the paper: define, at one step; with inferred
//    cells that stalls where a group holding a reader keeps a value alive,
//    e.g. DARTS ImageNet and PNAS CIFAR).
// 3. Window refinement around the peak (RefineAroundPeak): exact searches
//    over windows of steps with everything else fixed, while they lower the
//    peak.
// 4. Lower bound: the best of the spec's bound, the spec's bound of each
//    hourglass part (tensors passing a part count in all of its steps), and
//    what the searches proved (an exhaustive search with every group
//    disassembled is exact). Status kOptimal only when the peak meets it;
//    the peak is otherwise an upper bound.
//
// Cost: linear for steps 1 and 4; step 2 as HierarchicalSearch (polynomial
// under the level cap); step 3 at most max_windows searches of bounded state
// bytes. Honours the limits (returns the best order so far). Stateless; one
// instance may serve concurrent calls.
class HierarchicalScheduler final : public Scheduler {
 public:
  explicit HierarchicalScheduler(HierarchicalOptions options = {})
      : options_(std::move(options)) {}

  absl::string_view name() const override { return "hierarchical"; }
  absl::StatusOr<ScheduleResult> Schedule(const MemoryModel& model,
                                          const ScheduleLimits& limits) const override;

 private:
  HierarchicalOptions options_;
};

// HMCOS's own algorithm inside HierarchicalScheduler: ordo's additions
// (incumbent, windows, disassembling at every peak step and readers) off.
HierarchicalOptions HmcosPaperOptions();

// The configurations of HMCOS Table 3 on HmcosPaperOptions(), in the
// paper's order and numbering ("1 none", "2 sequences", "3 seq+cells",
// "4 complete", "5 w/o budget", "6 w/o selection", "7 w/o memo"), for the
// ablation bench and its tests.
std::vector<std::pair<std::string, HierarchicalOptions>> HmcosAblationConfigurations();

// The spec's lower bound of each hourglass part of `model`, at their
// largest: at least MemoryLowerBound(model). O(ops + tensors + edges).
int64_t PartwiseLowerBound(const MemoryModel& model);

}  // namespace ordo

#endif  // ORDO_CORE_SCHEDULE_HIERARCHICAL_SCHEDULER_H_
