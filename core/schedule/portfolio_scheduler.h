#ifndef ORDO_CORE_SCHEDULE_PORTFOLIO_SCHEDULER_H_
#define ORDO_CORE_SCHEDULE_PORTFOLIO_SCHEDULER_H_

#include <memory>
#include <vector>

#include "core/schedule/scheduler.h"

namespace ordo {

// Runs several schedulers and keeps the lowest peak (XLA's
// DefaultMemoryScheduler idea); the result names the winner in `algorithm`
// and carries the best lower bound any member proved. Members run in order,
// each within the shared limits; ties keep the earlier member.
class PortfolioScheduler final : public Scheduler {
 public:
  PortfolioScheduler(std::string name,
                     std::vector<std::unique_ptr<Scheduler>> members)
      : name_(std::move(name)), members_(std::move(members)) {}

  absl::string_view name() const override { return name_; }
  absl::StatusOr<ScheduleResult> Schedule(const MemoryModel& model,
                                          const ScheduleLimits& limits) const override;

 private:
  std::string name_;
  std::vector<std::unique_ptr<Scheduler>> members_;
};

}  // namespace ordo

#endif  // ORDO_CORE_SCHEDULE_PORTFOLIO_SCHEDULER_H_
