#include "core/schedule/baseline_schedulers.h"

namespace ordo {

absl::StatusOr<ScheduleResult> OrderFunctionScheduler::Schedule(
    const MemoryModel& model, const ScheduleLimits& limits) const {
  const absl::Time start = limits.Now();
  OpDag dag(model);
  return FinishSchedule(model, order_(model, dag), name_, start, limits);
}

const std::vector<Baseline>& ReportedBaselines() {
  static const std::vector<Baseline> kBaselines = {
      {"model_order", "model"}, {"kahn", "kahn"}, {"rpo", "rpo"}};
  return kBaselines;
}

}  // namespace ordo
