#ifndef ORDO_CORE_PARTS_LOCAL_FIRST_PART_RUNNER_H_
#define ORDO_CORE_PARTS_LOCAL_FIRST_PART_RUNNER_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "absl/status/status.h"
#include "absl/time/time.h"
#include "absl/types/span.h"
#include "core/parts/part_runner.h"
#include "core/schedule/part_schedulers.h"

namespace ordo {

// PartSchedulers() for a short attempt: `best` is BestPartScheduler without
// its hierarchical step. Within a budget of milliseconds that step's shares
// (an eighth of the time for the first exact search, then HMCOS) would cut
// the search that proves a medium part in 5 ms at its first millisecond and
// spend the rest on HMCOS; the attempt wants only "proved quickly or not".
SchedulerRegistry AttemptSchedulers();

// A PartRunner that tries every small part in the calling thread first and
// hands the others to a wrapped runner (the server's workers).
//
// Why: a part whose search takes a few milliseconds (a DARTS candidate's
// cell stack, about 150 ops, 1-5 ms) costs more in the worker round trip
// (serialize the part, RPC, parse, check the answer: about 3 ms per cold
// candidate on 2 cores, docs/nas-log.md) than in the search itself.
//
// 1. Tasks of more than `max_ops` ops go to `remote` at once, on a thread
//    of their own, so big parts start without waiting for the attempts.
// 2. The other tasks are run here one after another (RunPartTask with
//    AttemptSchedulers()), each within `budget` (and the task's own limits,
//    state bytes capped at `max_state_bytes`), while the call's attempts
//    have used less than `total_budget`; the last attempt gets at most what
//    is left of it. An answer that is proved optimal is kept (runner
//    kInProcessRunner): no worker could do better. Anything else (a bound,
//    a heuristic, an error, a cancel) is dropped and the task goes to
//    `remote` with its whole budget. Tasks left when `total_budget` is
//    spent go to `remote` untried, and so do tasks stopped already (whose
//    `stop` the remote runner honours as at once).
// 3. One outcome per task, in task order; `on_done` is called here for the
//    kept answers, by `remote` for the others.
//
// So the small parts of one call wait at most `total_budget` (plus the
// overshoot of one attempt past its deadline) before the unproved ones
// leave, a part no attempt proves costs at most `budget` more than before,
// and a part an attempt proves is never seen by a worker. Both budgets are
// the calling thread's CPU time (the request's wall deadline still
// applies), so which parts stay here does not depend on the machine's load;
// the answers never do (every kept one is optimal and checked by
// CheckClaimedSchedule).
// Thread-safe if `remote` is; `remote` must outlive this runner.
class LocalFirstPartRunner final : public PartRunner {
 public:
  struct Options {
    // CPU time of the attempt in this process (the calling thread's);
    // zero: no attempt (every task goes to `remote`).
    absl::Duration budget = absl::Milliseconds(10);
    // CPU time of all attempts of one RunAll call; zero: no attempt.
    absl::Duration total_budget = absl::Milliseconds(40);
    // Larger parts are never tried here.
    int32_t max_ops = 1000;
    // Search memory of one attempt (at most the request's).
    int64_t max_state_bytes = int64_t{64} << 20;
    // Called once per attempt with whether it kept the part (for metrics).
    // May be empty; called from RunAll's calling thread.
    std::function<void(bool kept)> on_attempt;
    // Called when an attempt's optimal claim fails CheckClaimedSchedule (a
    // bug in a scheduler of this process), with the task and the check's
    // error, before the task goes to `remote`. May be empty; called from
    // RunAll's calling thread.
    std::function<void(const PartTask& task, const absl::Status& error)> on_refused_claim;
  };

  // `schedulers` runs the attempts (AttemptSchedulers() by default).
  LocalFirstPartRunner(PartRunner* remote, Options options,
                       SchedulerRegistry schedulers = AttemptSchedulers());
  LocalFirstPartRunner(const LocalFirstPartRunner&) = delete;
  LocalFirstPartRunner& operator=(const LocalFirstPartRunner&) = delete;

  std::vector<PartOutcome> RunAll(absl::Span<const PartTask> tasks,
                                  const ScheduleLimits& limits) override;
  int32_t max_parallel_tasks() const override { return remote_->max_parallel_tasks(); }

 private:
  // Step 2 for one task: the attempt's result, within `budget`, when it is
  // proved optimal.
  std::optional<ScheduleResult> Attempt(const PartTask& task, const ScheduleLimits& limits,
                                        absl::Duration budget) const;

  PartRunner* remote_;
  const Options options_;
  const SchedulerRegistry schedulers_;
};

}  // namespace ordo

#endif  // ORDO_CORE_PARTS_LOCAL_FIRST_PART_RUNNER_H_
