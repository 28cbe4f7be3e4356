#ifndef ORDO_CORE_SCHEDULE_DIVIDE_AND_CONQUER_SCHEDULER_H_
#define ORDO_CORE_SCHEDULE_DIVIDE_AND_CONQUER_SCHEDULER_H_

#include <string>
#include <utility>

#include "absl/strings/string_view.h"
#include "core/partition/hourglass_partitioner.h"
#include "core/schedule/best_part_scheduler.h"
#include "core/schedule/scheduler.h"

namespace ordo {

struct DivideAndConquerOptions {
  HourglassPartitioner::Options partition;
  // What runs on each part that can lower the whole peak.
  BestPartOptions part;
  // Also search the parts whose peak cannot change the whole peak. Off by
  // default: it proves parts (worth caching) but does not lower the answer,
  // and can take seconds the caller is waiting for.
  bool prove_every_part = false;
  // PartScheduleOptions::search_peak_parts_again.
  bool search_peak_parts_again = true;
};

// ordo's default scheduler ("best"): ScheduleByParts (core/parts, the one
// divide-and-conquer, whose header states the algorithm) in this thread,
// with no cache, BestPartScheduler on each part: split at the cut ops,
// settle the parts whose cheap order cannot raise the whole peak, search
// the others one at a time (highest cheap peak first, each with its share
// of the time left; what the rounds leave goes back to the parts holding
// the peak), combine. The server runs the same function with its
// workers and its cache (Compile()).
//
// Per-part statistics come back in ScheduleResult::parts, in execution
// order. A cancelled call returns the best schedule so far. Stateless; one
// instance may serve concurrent calls.
class DivideAndConquerScheduler final : public Scheduler {
 public:
  explicit DivideAndConquerScheduler(std::string name, DivideAndConquerOptions options = {})
      : name_(std::move(name)), options_(std::move(options)) {}

  absl::string_view name() const override { return name_; }
  absl::StatusOr<ScheduleResult> Schedule(const MemoryModel& model,
                                          const ScheduleLimits& limits) const override;

 private:
  std::string name_;
  DivideAndConquerOptions options_;
};

}  // namespace ordo

#endif  // ORDO_CORE_SCHEDULE_DIVIDE_AND_CONQUER_SCHEDULER_H_
