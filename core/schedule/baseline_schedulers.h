#ifndef ORDO_CORE_SCHEDULE_BASELINE_SCHEDULERS_H_
#define ORDO_CORE_SCHEDULE_BASELINE_SCHEDULERS_H_

#include <functional>
#include <string>
#include <vector>

#include "core/schedule/op_dag.h"
#include "core/schedule/scheduler.h"

namespace ordo {

// Adapts a one-shot order function (model order, Kahn, RPO, greedy) to the
// Scheduler interface. Linear time; ignores limits.
class OrderFunctionScheduler final : public Scheduler {
 public:
  using OrderFunction =
      std::function<std::vector<int32_t>(const MemoryModel&, const OpDag&)>;

  OrderFunctionScheduler(std::string name, OrderFunction order)
      : name_(std::move(name)), order_(std::move(order)) {}

  absl::string_view name() const override { return name_; }
  absl::StatusOr<ScheduleResult> Schedule(const MemoryModel& model,
                                          const ScheduleLimits& limits) const override;

 private:
  std::string name_;
  OrderFunction order_;
};

// The baselines reports show beside the chosen schedule ("model_order",
// "kahn", "rpo"), by report name and scheduler.
struct Baseline {
  std::string report_name;
  std::string scheduler_name;
};
const std::vector<Baseline>& ReportedBaselines();

}  // namespace ordo

#endif  // ORDO_CORE_SCHEDULE_BASELINE_SCHEDULERS_H_
