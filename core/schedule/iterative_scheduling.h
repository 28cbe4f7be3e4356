#ifndef ORDO_CORE_SCHEDULE_ITERATIVE_SCHEDULING_H_
#define ORDO_CORE_SCHEDULE_ITERATIVE_SCHEDULING_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/hierarchy/hierarchical_graph.h"
#include "core/memory/memory_model.h"
#include "core/schedule/hierarchical_search.h"
#include "core/schedule/scheduler.h"

namespace ordo {

struct IterativeSchedulingOptions {
  HierarchyOptions hierarchy;
  HierarchicalSearchOptions search;
  // Optimization 1 (adaptive soft budgeting): each iteration's budget is the
  // previous iteration's peak (the first: the incumbent's, or none).
  bool budget = true;
  // Disassemble the groups behind the values alive at every step at the
  // peak, not only the first (ordo; the paper takes one peak step).
  bool all_peak_steps = false;
  // Also disassemble the groups that read those values (ordo): a group run
  // as a block can keep a value alive as much as one that defines it.
  bool disassemble_readers = false;
};

// One iteration of Algorithm 1, for reports (HMCOS Figure 5).
struct IterationStats {
  int64_t peak_bytes = 0;           // 0 when the search found nothing
  int32_t groups_assembled = 0;     // when the search ran
  int32_t groups_disassembled = 0;  // after it
  int64_t states_expanded = 0;
  absl::Duration time = absl::ZeroDuration();
};

struct IterativeSchedulingResult {
  // The lowest-peak schedule found (the incumbent's when none was better),
  // checked by the simulator; empty when there was neither.
  std::vector<int32_t> order;
  int64_t peak_bytes = 0;
  // A proven lower bound on every schedule's peak from the searches (0 when
  // none): an exhaustive search with every group disassembled is exact over
  // sequences, hence over all schedules (FormSequences).
  int64_t proven_lower_bound = 0;
  bool improved = false;  // `order` is the search's, not the incumbent's
  bool limit_hit = false;
  int32_t sequences = 0;
  int32_t groups = 0;  // formed at the start
  std::vector<IterationStats> iterations;
  HierarchicalSearchStats search;
};

// The counts of `result` that HmcosScheduler and HierarchicalScheduler
// report in ScheduleResult::stats.iterative.
IterativeStats SummarizeIterations(const IterativeSchedulingResult& result);

// HMCOS Algorithm 1 (§3.2, iterative scheduling): build the hierarchical
// graph; repeat { schedule it (HierarchicalSearch, under the budget); find
// the values alive at the peak step (X_peak, by the simulator's live
// intervals); disassemble every assembled group holding a sequence that
// defines one } until no group is disassembled. Each iteration's schedule
// space contains the previous schedule (disassembly only frees orders), so
// under the budget the peak never rises; the loop ends after at most
// (groups + 1) iterations, or when a search finds nothing within the budget,
// or on a limit. Keeps the best schedule seen (the paper keeps the last,
// which under a budget is the same peak).
//
// `incumbent` (may be empty) is a valid order of `model` that the result is
// never worse than; with `options.budget` its peak is the first budget.
// Errors only when a search's order fails the simulator (a bug). Cost: the
// searches' (HierarchicalSearch), one simulation per iteration.
absl::StatusOr<IterativeSchedulingResult> ScheduleIteratively(
    const MemoryModel& model, const IterativeSchedulingOptions& options,
    std::vector<int32_t> incumbent, const ScheduleLimits& limits);

}  // namespace ordo

#endif  // ORDO_CORE_SCHEDULE_ITERATIVE_SCHEDULING_H_
