#include "core/compile/compile.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "core/schedule/baseline_schedulers.h"
#include "core/schedule/scheduler_registry.h"
#include "core/util/status_macros.h"

namespace ordo {
namespace {

absl::StatusOr<std::vector<BaselinePeak>> RunBaselines(const SchedulerRegistry& registry,
                                                       const MemoryModel& model,
                                                       const ScheduleLimits& limits) {
  std::vector<BaselinePeak> baselines;
  for (const Baseline& baseline : ReportedBaselines()) {
    ORDO_ASSIGN_OR_RETURN(auto scheduler, registry.Create(baseline.scheduler_name));
    ORDO_ASSIGN_OR_RETURN(ScheduleResult result, scheduler->Schedule(model, limits));
    baselines.push_back({baseline.report_name, result.peak_bytes});
  }
  return baselines;
}

}  // namespace

absl::StatusOr<CompileResult> Compile(const Graph& graph, const CompileOptions& options,
                                      const Clock& clock) {
  const absl::Time start = clock.Now();
  if (options.time_limit < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("time limit is negative");
  }
  if (options.alignment <= 0 || options.memory_limit_bytes < 0) {
    return absl::InvalidArgumentError(
        "alignment must be positive and the memory limit non-negative");
  }
  SchedulerRegistry registry = BuiltinSchedulers();
  ORDO_ASSIGN_OR_RETURN(std::unique_ptr<Scheduler> scheduler,
                        registry.Create(options.scheduler));
  ORDO_ASSIGN_OR_RETURN(MemoryModel model, BuildMemoryModel(graph, options.memory));

  ScheduleLimits limits;
  limits.clock = &clock;
  limits.deadline = start + options.time_limit;
  limits.max_state_bytes = options.max_state_bytes;

  CompileResult result;
  ORDO_ASSIGN_OR_RETURN(result.baselines, RunBaselines(registry, model, limits));
  ORDO_ASSIGN_OR_RETURN(ScheduleResult scheduled, scheduler->Schedule(model, limits));

  // Verify before anything leaves: the simulator is the only authority.
  absl::StatusOr<SimulationResult> simulation = Simulate(model, scheduled.order);
  if (!simulation.ok() || simulation->peak_bytes != scheduled.peak_bytes) {
    return absl::InternalError(absl::StrCat(
        "scheduler ", scheduled.algorithm, " returned a schedule the simulator rejects",
        simulation.ok() ? " (peak differs)" : absl::StrCat(": ", simulation.status().message())));
  }
  result.schedule = std::move(scheduled.order);
  result.simulation = *std::move(simulation);
  result.peak_bytes = scheduled.peak_bytes;
  result.lower_bound_bytes = std::max(scheduled.lower_bound_bytes, MemoryLowerBound(model));
  result.status = scheduled.status;
  result.scheduler = options.scheduler;
  result.algorithm = std::move(scheduled.algorithm);
  result.stats = scheduled.stats;
  result.parts = std::move(scheduled.parts);
  result.time = clock.Now() - start;
  return result;
}

}  // namespace ordo
