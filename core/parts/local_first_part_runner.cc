#include "core/parts/local_first_part_runner.h"

#include <time.h>

#include <algorithm>
#include <memory>
#include <thread>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "core/schedule/best_part_scheduler.h"
#include "core/util/clock.h"

namespace ordo {

SchedulerRegistry AttemptSchedulers() {
  SchedulerRegistry registry = PartSchedulers();
  registry.Register({"best", "the best cheap order, then dp (a short attempt)", true, [] {
                       BestPartOptions options;
                       options.hierarchical = false;
                       return std::make_unique<BestPartScheduler>(options);
                     }});
  return registry;
}

LocalFirstPartRunner::LocalFirstPartRunner(PartRunner* remote, Options options,
                                           SchedulerRegistry schedulers)
    : remote_(remote), options_(std::move(options)), schedulers_(std::move(schedulers)) {}

namespace {

absl::Duration ThreadCpuTime() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return absl::DurationFromTimespec(now);
}

// An attempt's time: the calling thread's CPU time since the attempt began,
// laid on the wall-time axis from `origin`, so a budget is CPU time and a
// part stays or leaves whatever else runs on the machine (with a wall
// budget, four concurrent compiles on two cores made attempts miss that
// alone would prove). Once the request's own deadline passes (its clock),
// it reads infinitely late, so that deadline still stops the search.
// Read on the attempt's thread only.
class AttemptClock final : public Clock {
 public:
  explicit AttemptClock(const ScheduleLimits& request)
      : request_(request), origin_(request.Now()), cpu_origin_(ThreadCpuTime()) {}
  absl::Time Now() const override {
    if (request_.Expired()) return absl::InfiniteFuture();
    return origin_ + (ThreadCpuTime() - cpu_origin_);
  }
  absl::Time origin() const { return origin_; }

 private:
  const ScheduleLimits& request_;
  const absl::Time origin_;
  const absl::Duration cpu_origin_;
};

}  // namespace

std::optional<ScheduleResult> LocalFirstPartRunner::Attempt(const PartTask& task,
                                                            const ScheduleLimits& limits,
                                                            absl::Duration budget) const {
  const AttemptClock clock(limits);
  ScheduleLimits attempt = limits;
  attempt.clock = &clock;
  attempt.deadline = clock.origin() + budget;
  attempt.max_state_bytes = std::min(limits.max_state_bytes, options_.max_state_bytes);
  absl::StatusOr<ScheduleResult> result = RunPartTask(schedulers_, task, attempt);
  if (!result.ok() || result->status != ScheduleStatus::kOptimal) return std::nullopt;
  result->stats.time = limits.Now() - clock.origin();  // wall time, as a worker's
  // The same check a worker's answer gets (GrpcPartRunner): an optimal claim
  // the simulator does not confirm is a bug, reported, and then the worker
  // decides.
  absl::StatusOr<ScheduleResult> checked = CheckClaimedSchedule(*task.model, *result);
  if (checked.ok() && checked->status == ScheduleStatus::kOptimal) return *std::move(checked);
  if (options_.on_refused_claim) {
    options_.on_refused_claim(
        task, checked.ok() ? absl::InternalError(absl::StrCat(
                                 "claims optimal at ", result->peak_bytes,
                                 " B with a lower bound of ", result->lower_bound_bytes,
                                 " B the check does not accept"))
                           : checked.status());
  }
  return std::nullopt;
}

std::vector<PartOutcome> LocalFirstPartRunner::RunAll(absl::Span<const PartTask> tasks,
                                                      const ScheduleLimits& limits) {
  std::vector<PartOutcome> outcomes(tasks.size());
  const bool attempts =
      options_.budget > absl::ZeroDuration() && options_.total_budget > absl::ZeroDuration();
  // Step 1: big parts leave at once.
  std::vector<size_t> big, small;
  for (size_t i = 0; i < tasks.size(); ++i) {
    const bool tried_here = attempts && tasks[i].model != nullptr &&
                            tasks[i].model->num_ops() <= options_.max_ops;
    (tried_here ? small : big).push_back(i);
  }
  auto run_remote = [&](const std::vector<size_t>& which) {
    if (which.empty()) return;
    std::vector<PartTask> sent;
    sent.reserve(which.size());
    for (size_t i : which) sent.push_back(tasks[i]);
    std::vector<PartOutcome> done = remote_->RunAll(sent, limits);
    for (size_t k = 0; k < which.size() && k < done.size(); ++k) {
      outcomes[which[k]] = std::move(done[k]);
    }
  };
  std::thread big_parts;
  if (!big.empty() && !small.empty()) {
    big_parts = std::thread(run_remote, std::cref(big));
  } else {
    run_remote(big);
  }
  // Step 2: the small parts here while the call's attempt time lasts; the
  // unproved and the untried ones to the remote runner.
  std::vector<size_t> unproved;
  const absl::Duration cpu_start = ThreadCpuTime();
  for (size_t i : small) {
    const absl::Duration left = options_.total_budget - (ThreadCpuTime() - cpu_start);
    if (left <= absl::ZeroDuration()) {
      unproved.push_back(i);
      continue;
    }
    std::optional<ScheduleResult> kept;
    if (tasks[i].stop == nullptr || !tasks[i].stop->load()) {
      kept = Attempt(tasks[i], limits, std::min(options_.budget, left));
      if (options_.on_attempt) options_.on_attempt(kept.has_value());
    }
    if (!kept) {
      unproved.push_back(i);
      continue;
    }
    outcomes[i].result = *std::move(kept);
    outcomes[i].runner = kInProcessRunner;
    if (tasks[i].on_done) tasks[i].on_done(outcomes[i]);
  }
  run_remote(unproved);
  if (big_parts.joinable()) big_parts.join();
  return outcomes;
}

}  // namespace ordo
