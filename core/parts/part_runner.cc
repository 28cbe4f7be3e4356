#include "core/parts/part_runner.h"

#include <algorithm>
#include <atomic>
#include <thread>
#include <utility>

#include "core/schedule/part_schedulers.h"
#include "core/util/status_macros.h"

namespace ordo {

absl::StatusOr<ScheduleResult> RunPartTask(const SchedulerRegistry& schedulers,
                                           const PartTask& task, const ScheduleLimits& limits) {
  if (task.model == nullptr) return absl::InvalidArgumentError("part task without a model");
  ORDO_ASSIGN_OR_RETURN(std::unique_ptr<Scheduler> scheduler, schedulers.Create(task.scheduler));
  ScheduleLimits own = limits;
  own.deadline = std::min(limits.deadline, limits.Now() + task.time_limit);
  if (task.stop != nullptr) own.stop = task.stop;
  return scheduler->Schedule(*task.model, own);
}

absl::StatusOr<ScheduleResult> RunPartTask(const PartTask& task, const ScheduleLimits& limits) {
  return RunPartTask(PartSchedulers(), task, limits);
}

ThreadPartRunner::ThreadPartRunner(int32_t threads, SchedulerRegistry schedulers)
    : threads_(std::max(threads, 1)), schedulers_(std::move(schedulers)) {}

std::vector<PartOutcome> ThreadPartRunner::RunAll(absl::Span<const PartTask> tasks,
                                                  const ScheduleLimits& limits) {
  std::vector<PartOutcome> outcomes(tasks.size());
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t i = next++; i < tasks.size(); i = next++) {
      outcomes[i].runner = kInProcessRunner;
      if (limits.cancelled != nullptr && limits.cancelled->load()) {
        outcomes[i].result = absl::CancelledError("compile cancelled");
      } else if (tasks[i].stop != nullptr && tasks[i].stop->load()) {
        outcomes[i].result = absl::CancelledError("part no longer needed");
      } else {
        outcomes[i].result = RunPartTask(schedulers_, tasks[i], limits);
      }
      if (tasks[i].on_done) tasks[i].on_done(outcomes[i]);
    }
  };
  const size_t helpers = std::min<size_t>(threads_, tasks.size());
  std::vector<std::thread> threads;
  for (size_t t = 1; t < helpers; ++t) threads.emplace_back(work);
  work();
  for (std::thread& thread : threads) thread.join();
  return outcomes;
}

}  // namespace ordo
