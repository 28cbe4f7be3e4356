#ifndef ORDO_CORE_SCHEDULE_BEST_PART_SCHEDULER_H_
#define ORDO_CORE_SCHEDULE_BEST_PART_SCHEDULER_H_

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/memory/memory_model.h"
#include "core/schedule/dp_scheduler.h"
#include "core/schedule/hierarchical_scheduler.h"
#include "core/schedule/scheduler.h"

namespace ordo {

// An order of a model with the name of the algorithm that produced it.
struct NamedOrder {
  std::string algorithm;
  std::vector<int32_t> order;
};

// The cheap orders of `model`: greedy, model, Kahn, RPO (linear time each).
std::vector<NamedOrder> CheapOrders(const MemoryModel& model);

// The lowest peak among `candidates` (orders of `model`, at least one); on
// equal peaks the earlier one is kept. stats.time covers all of them.
absl::StatusOr<ScheduleResult> LowestPeakOf(const MemoryModel& model,
                                            std::vector<NamedOrder> candidates,
                                            const ScheduleLimits& limits);

struct BestPartOptions {
  DpOptions dp;
  // Run the exact search when the cheap orders do not meet the spec's bound.
  bool exact = true;
  // A part the exact search does not prove in a quick first attempt gets
  // the hierarchical scheduler's order (HMCOS plus windows) as the incumbent
  // to beat, and the search runs again with what is left: a near-optimal
  // incumbent prunes more, and is what comes back if the search cannot
  // finish (parts too wide for the exact search).
  bool hierarchical = true;
  HierarchicalOptions hierarchical_options;
  // The quick attempt's share of the time (when there is a deadline) and of
  // max_state_bytes, and a cap on its state bytes.
  double quick_search_share = 0.125;
  int64_t quick_search_max_state_bytes = int64_t{64} << 20;
  // The hierarchical scheduler's share of the time and state bytes left
  // after the quick attempt; the search resumes with everything left after
  // it (all of it when it ends early). On parts that wide the resumed search
  // seldom proves what the quick attempt could not and often stops at
  // max_state_bytes before its deadline, while the hierarchical order keeps
  // improving with time: at 0.8 instead of 0.5, 6 of 90 random-graph NAS
  // candidates got a 2-21% lower peak at 10 s, one a 2.6% higher one, and
  // the same ones were proved optimal (docs/testing.md, "The hierarchical
  // scheduler's share").
  double hierarchical_share = 0.8;
};

// What `best` runs on one part of a divided model (core/parts
// ScheduleByParts; a PartTask "best" on a thread or a worker): a portfolio
// of the cheap orders and the exact search, SERENITY §3.2's per-part step.
//
// 1. The lowest peak among CheapOrders(part). A part whose peak meets the
//    spec's bound is optimal already.
// 2. With `exact`: DpScheduler::Improve seeded with that order. With
//    `hierarchical`, a part not proved by a quick attempt
//    (quick_search_share of the time, at most quick_search_max_state_bytes)
//    is scheduled by HierarchicalScheduler with hierarchical_share of what
//    is left, and
//    the search resumes from the better order with the rest; the result
//    keeps the best bound any of them proved.
//
// Cost: linear for step 1; step 2 is the search's (exponential in the
// part's width) within the limits. It does not split the model: on a model
// with cut ops, use `best` (DivideAndConquerScheduler), which splits first
// and runs this on each part. Stateless; one instance may serve
// concurrent calls.
class BestPartScheduler final : public Scheduler {
 public:
  explicit BestPartScheduler(BestPartOptions options = {}) : options_(std::move(options)) {}

  absl::string_view name() const override { return "best"; }
  absl::StatusOr<ScheduleResult> Schedule(const MemoryModel& model,
                                          const ScheduleLimits& limits) const override;

 private:
  BestPartOptions options_;
};

}  // namespace ordo

#endif  // ORDO_CORE_SCHEDULE_BEST_PART_SCHEDULER_H_
