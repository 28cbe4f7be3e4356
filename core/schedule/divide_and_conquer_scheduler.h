#ifndef ORDO_CORE_SCHEDULE_DIVIDE_AND_CONQUER_SCHEDULER_H_
#define ORDO_CORE_SCHEDULE_DIVIDE_AND_CONQUER_SCHEDULER_H_

#include <string>

#include "absl/strings/string_view.h"
#include "core/partition/hourglass_partitioner.h"
#include "core/schedule/dp_scheduler.h"
#include "core/schedule/hierarchical_scheduler.h"
#include "core/schedule/scheduler.h"

namespace ordo {

struct DivideAndConquerOptions {
  HourglassPartitioner::Options partition;
  DpOptions dp;
  // Run the exact search on parts the heuristics do not solve.
  bool exact = true;
  // Also search the parts whose peak cannot change the whole peak, with the
  // time left. Off by default: it proves parts (worth caching) but does not
  // lower the answer, and can take seconds the caller is waiting for.
  bool prove_every_part = false;
  // A part the exact search does not prove in a quick first attempt gets
  // the hierarchical scheduler's order (HMCOS plus windows) as the incumbent
  // to beat, and the search runs again with what is left: a near-optimal
  // incumbent prunes more, and is what comes back if the search cannot
  // finish (parts too wide for the exact search).
  bool hierarchical = true;
  HierarchicalOptions hierarchical_options;
  // The quick attempt's share of the part's time (when there is a deadline)
  // and of max_state_bytes, and a cap on its state bytes.
  double quick_search_share = 0.125;
  int64_t quick_search_max_state_bytes = int64_t{64} << 20;
};

// ordo's default scheduler ("best"): SERENITY's divide-and-conquer (§3.2)
// around a portfolio of heuristics and the exact DpScheduler.
//
// 1. Split the model at its cut ops (HourglassPartitioner): the peak of a
//    concatenation is the max of the part peaks, so parts are independent.
// 2. Per part, the lowest peak among the greedy, model, Kahn and RPO orders
//    of the part and the same four orders of the whole model restricted to
//    the part (so the result is never worse than any of those whole orders).
//    A part whose peak meets its spec bound is optimal already.
// 3. The exact search (DpScheduler::Improve, seeded with that schedule) on
//    the remaining parts, smallest first, each given an equal share of the
//    time left: the parts that can still lower the whole peak (peak above
//    the best lower bound proved for any part); with prove_every_part,
//    then the others with the time that remains. With `hierarchical`, a
//    part not proved by a quick attempt (quick_search_share of its share,
//    at most quick_search_max_state_bytes) is scheduled by
//    HierarchicalScheduler with half of what is left, and the search
//    resumes from the better order with the rest; the part keeps the best
//    bound any of them proved.
// 4. Concatenate. Lower bound = max over parts of their proven bounds (and
//    the spec's bound of the whole); kOptimal exactly when the peak reaches
//    it (always when every part is optimal; also when the part holding the
//    peak is optimal and no other part is above it).
//
// Cost: linear in the model for steps 1, 2 and 4; step 3 is the search's
// (exponential in a part's width) within the limits. Per-part statistics
// come back in ScheduleResult::parts, in execution order. The result names
// the algorithms that produced the parts' orders, the one covering the
// most ops first, joined by '+'. Stateless; one instance may serve
// concurrent calls.
class DivideAndConquerScheduler final : public Scheduler {
 public:
  explicit DivideAndConquerScheduler(std::string name, DivideAndConquerOptions options = {})
      : name_(std::move(name)), options_(options) {}

  absl::string_view name() const override { return name_; }
  absl::StatusOr<ScheduleResult> Schedule(const MemoryModel& model,
                                          const ScheduleLimits& limits) const override;

 private:
  std::string name_;
  DivideAndConquerOptions options_;
};

}  // namespace ordo

#endif  // ORDO_CORE_SCHEDULE_DIVIDE_AND_CONQUER_SCHEDULER_H_
