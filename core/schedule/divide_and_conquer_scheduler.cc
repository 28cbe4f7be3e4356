#include "core/schedule/divide_and_conquer_scheduler.h"

#include <memory>
#include <utility>

#include "core/parts/part_runner.h"
#include "core/parts/schedule_by_parts.h"
#include "core/util/status_macros.h"

namespace ordo {

absl::StatusOr<ScheduleResult> DivideAndConquerScheduler::Schedule(
    const MemoryModel& model, const ScheduleLimits& limits) const {
  SchedulerRegistry schedulers = PartSchedulers();
  const BestPartOptions part = options_.part;
  schedulers.Register({"best", "", true, [part] { return std::make_unique<BestPartScheduler>(part); }});
  // One thread: a scheduler runs in its caller's thread, and one search at
  // a time keeps within limits.max_state_bytes.
  ThreadPartRunner runner(1, std::move(schedulers));
  PartScheduleOptions options;
  options.scheduler = "best";
  options.time_limit = absl::InfiniteDuration();  // limits.deadline bounds every part
  options.partition = options_.partition;
  options.search_only_peak_parts = !options_.prove_every_part;
  options.keep_best_when_cancelled = true;
  options.search_peak_parts_again = options_.search_peak_parts_again;
  ORDO_ASSIGN_OR_RETURN(PartScheduleResult result,
                        ScheduleByParts(model, options, limits, runner, /*cache=*/nullptr));
  return std::move(result.schedule);
}

}  // namespace ordo
