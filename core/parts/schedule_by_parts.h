#ifndef ORDO_CORE_PARTS_SCHEDULE_BY_PARTS_H_
#define ORDO_CORE_PARTS_SCHEDULE_BY_PARTS_H_

#include <cstdint>
#include <functional>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/parts/part_runner.h"
#include "core/cache/schedule_cache.h"
#include "core/memory/memory_model.h"
#include "core/partition/hourglass_partitioner.h"
#include "core/schedule/scheduler.h"

namespace ordo {

struct PartScheduleOptions {
  // A name from PartSchedulers(), run on every part.
  std::string scheduler = "best";
  // Budget of each part's search (parts run concurrently).
  absl::Duration time_limit = absl::Seconds(10);
  HourglassPartitioner::Options partition;
  // Search only the parts that can lower the whole peak (step 3); the
  // others keep a cheap order. For schedulers whose promise is the whole
  // model's peak ("best"); off, every part gets `scheduler`'s own order.
  bool search_only_peak_parts = false;
  // When limits.cancelled is set: false, the call fails with CANCELLED
  // (the service: nobody waits for the answer); true, the parts not run get
  // their cheap or greedy order and a schedule comes back (a Scheduler's
  // promise: the best schedule so far).
  bool keep_best_when_cancelled = false;
  // Step 4's SearchPeakPartsAgain: the time the rounds left goes to the
  // parts holding the peak. Off for a caller that schedules many models
  // within one budget (the rewrite search's candidates), whose time buys
  // more candidates instead.
  bool search_peak_parts_again = true;
  // Passed to the runner's tasks, for logs.
  std::string request_id;
  // Called from the calling thread after the cache lookups and after the
  // runs, with (parts, parts with a schedule). May be empty.
  std::function<void(int32_t, int32_t)> on_progress;
};

// What the cache and the runner did, for responses and metrics.
struct PartScheduleStats {
  int32_t parts = 0;
  int32_t cache_hits = 0;
  int32_t cache_misses = 0;
  // Lookups that failed (cache unreachable, timed out), and entries that
  // were rejected: undecodable (a DATA_LOSS lookup) or failing the re-check
  // against the part. Both also count as misses; a rejected entry is then
  // overwritten by the part's new schedule.
  int32_t cache_errors = 0;
  int32_t cache_rejected = 0;
  int32_t cache_insert_errors = 0;
  // Parts computed once for several identical parts of the request.
  int32_t deduplicated_parts = 0;
  int32_t task_retries = 0;
  // Runner answers refused as wrong (PartOutcome::rejected_answers).
  int32_t rejected_answers = 0;
  // Parts the runner could not schedule (even with its own fallback), given
  // a greedy order here instead.
  int32_t fallback_parts = 0;
  // Tasks stopped in flight: other tasks of their round finished meanwhile
  // and settled their parts (step 4).
  int32_t stopped_tasks = 0;
  // Distinct workers (runners other than kInProcessRunner) that returned
  // a part.
  int32_t runners_used = 0;
  // Tasks answered in this process, not by a worker and not as a fallback
  // after worker failures (PartOutcome::fallback): in the server, small
  // parts proved before any worker was asked (LocalFirstPartRunner); with
  // ThreadPartRunner, every task.
  int32_t in_process_tasks = 0;
  absl::Duration time = absl::ZeroDuration();
};

struct PartScheduleResult {
  // The whole model's order, re-simulated; `parts` has one entry per part.
  ScheduleResult schedule;
  // Per part: came from the cache.
  std::vector<bool> part_cached;
  PartScheduleStats stats;
};

// Divide-and-conquer scheduling (SERENITY §3.2): the one divide-and-
// conquer of ordo. The CLI runs it through `best` (DivideAndConquerScheduler:
// a ThreadPartRunner of one thread, no cache); the server through Compile()
// with its workers and its cache. The steps, each a function of the .cc:
//
// 1. Split: HourglassPartitioner cuts `model` into parts (the peak of a
//    concatenation is the max of the part peaks, so parts are independent);
//    each part is keyed with CanonicalPartKey.
// 2. LookUp: every part in `cache` (may be null). An entry is used only if
//    its order is a valid order of the part whose re-simulated peak equals
//    the entry's peak times the part's scale, and it is optimal or was
//    computed with at least this budget.
// 3. SettleCheapParts (search_only_peak_parts): each missed part gets the
//    lowest peak among its cheap orders and the whole model's cheap orders
//    cut to it; a part whose stored entry or cheap order peaks at most the
//    floor (every part's spec bound, every settled part's peak) cannot raise
//    the whole peak and keeps that order; no task.
// 4. RunRound: the unsettled parts go to `runner`, one task per distinct
//    key, at most runner.max_parallel_tasks() keys per round, highest cheap
//    peak first, each round with its share of the time left; after each
//    round step 3 runs again (the solved parts raise the floor), and within
//    a round too: a task still running whose parts a finished task's
//    proved optimum settles is stopped (PartTask::stop), not waited for.
//    Results are
//    re-checked on each part they serve and kept only if below the part's
//    cheap order; a part whose task failed or returned an invalid order
//    gets its cheap (or greedy) order, so a schedule exists whatever the
//    workers do.
//    Then SearchPeakPartsAgain: the time the rounds left (a solved peak
//    part often settles the others without their share) goes to the parts
//    holding the whole peak, searched again with all of it when each used
//    at least half its share and gets at least 1.5 times that (or was never
//    searched); the better result is kept, repeated while the peak drops.
// 5. Store: valid new results go into the cache.
// 6. Combine: concatenate and re-simulate; the whole peak must equal the
//    max of the part peaks (the partition theorem). Lower bound: max of the
//    part bounds and the spec's bound; status from it (kOptimal exactly
//    when the peak reaches it). Statistics: states_expanded summed over
//    parts, states_stored the largest single search, time the call's wall
//    time, one PartStats per part in execution order; the algorithm names
//    the parts' algorithms, the one covering most ops first, joined by '+'.
//
// Cost: linear in the model for steps 1-3 and 6; step 4 is the part
// schedulers' within the limits. Errors: INVALID_ARGUMENT for an unknown
// scheduler; CANCELLED when limits.cancelled was set (unless
// keep_best_when_cancelled); INTERNAL if the whole schedule fails the
// re-check (a bug). Cache and runner failures are never errors, only
// stats. Thread-safe if the cache and the runner are.
absl::StatusOr<PartScheduleResult> ScheduleByParts(const MemoryModel& model,
                                                   const PartScheduleOptions& options,
                                                   const ScheduleLimits& limits,
                                                   PartRunner& runner, ScheduleCache* cache);

// The peak of the cached schedule of `model` when every part has a usable
// entry (same rules as step 2), for fast estimates. Counts come back even
// when some part is missing.
struct CachedPeak {
  int32_t parts = 0;
  int32_t cached_parts = 0;
  std::optional<int64_t> peak_bytes;
};
CachedPeak LookupCachedPeak(const MemoryModel& model, const PartScheduleOptions& options,
                            ScheduleCache& cache);

}  // namespace ordo

#endif  // ORDO_CORE_PARTS_SCHEDULE_BY_PARTS_H_
