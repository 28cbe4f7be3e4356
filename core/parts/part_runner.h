#ifndef ORDO_CORE_PARTS_PART_RUNNER_H_
#define ORDO_CORE_PARTS_PART_RUNNER_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "core/memory/memory_model.h"
#include "core/schedule/part_schedulers.h"
#include "core/schedule/scheduler.h"

namespace ordo {

struct PartOutcome;

// One part to schedule.
struct PartTask {
  // The part's problem. Not owned; must outlive RunAll.
  const MemoryModel* model = nullptr;
  // A name from PartSchedulers() (`best` on a part is BestPartScheduler).
  std::string scheduler = "best";
  // Search budget of this task; the runner also stops at limits.deadline.
  absl::Duration time_limit = absl::Seconds(10);
  // Request id, for the runner's logs.
  std::string request_id;
  // Set by the caller once the part's result is no longer wanted: the
  // runner ends the task as soon as it can, with whatever the search had or
  // CANCELLED. May be null; must outlive RunAll.
  const std::atomic<bool>* stop = nullptr;
  // Called once the task's outcome is final, from any thread, before RunAll
  // returns, so that the caller may stop other tasks. May be empty; a
  // runner that never calls it only loses that chance.
  std::function<void(const PartOutcome&)> on_done;
};

// PartOutcome::runner of a task run in this process, not by a worker.
inline constexpr char kInProcessRunner[] = "local";

// What became of one task.
struct PartOutcome {
  // The schedule; callers re-check it on every part it serves
  // (CheckClaimedSchedule), whatever the runner checked.
  absl::StatusOr<ScheduleResult> result = absl::UnknownError("not run");
  // Who ran it: kInProcessRunner or a worker address.
  std::string runner;
  // Attempts after the first one.
  int32_t retries = 0;
  // Ran in-process because no worker answered.
  bool fallback = false;
  // Answers the runner refused before this outcome (a worker's schedule
  // that failed CheckClaimedSchedule), each followed by another attempt.
  int32_t rejected_answers = 0;
};

// Where part schedules are computed (STYLE: the small interfaces of the one
// compile path): threads of this process (ThreadPartRunner) or remote
// workers (server/grpc_part_runner). Implementations are thread-safe and run
// the tasks of one call concurrently.
class PartRunner {
 public:
  virtual ~PartRunner() = default;
  // One outcome per task, in task order. Stops early when
  // limits.cancelled is set, and a task when its `stop` is; calls each
  // task's `on_done`. `limits.clock` may be null (real clock).
  virtual std::vector<PartOutcome> RunAll(absl::Span<const PartTask> tasks,
                                          const ScheduleLimits& limits) = 0;
  // How many tasks it runs at once; ScheduleByParts sends rounds of at
  // most this many, so later rounds can skip parts earlier ones made
  // irrelevant. Remote runners: no limit (one round; workers queue).
  virtual int32_t max_parallel_tasks() const { return std::numeric_limits<int32_t>::max(); }
};

// Runs tasks on up to `threads` threads of this process, started per call
// (a call's parts are few and long compared to a thread start). Each task
// runs its scheduler, found by name in `schedulers`, until
// min(limits.deadline, its start + time_limit). Thread-safe.
class ThreadPartRunner final : public PartRunner {
 public:
  explicit ThreadPartRunner(int32_t threads, SchedulerRegistry schedulers = PartSchedulers());
  std::vector<PartOutcome> RunAll(absl::Span<const PartTask> tasks,
                                  const ScheduleLimits& limits) override;
  int32_t max_parallel_tasks() const override { return threads_; }

 private:
  const int32_t threads_;
  const SchedulerRegistry schedulers_;
};

// Runs one task in the calling thread with a scheduler of `schedulers`: the
// body of ThreadPartRunner, and of workers and remote runners' in-process
// fallback (with PartSchedulers()).
absl::StatusOr<ScheduleResult> RunPartTask(const SchedulerRegistry& schedulers,
                                           const PartTask& task, const ScheduleLimits& limits);
absl::StatusOr<ScheduleResult> RunPartTask(const PartTask& task, const ScheduleLimits& limits);

}  // namespace ordo

#endif  // ORDO_CORE_PARTS_PART_RUNNER_H_
