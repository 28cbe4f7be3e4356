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
  // A name from BuiltinSchedulers(), run on every part.
  std::string scheduler = "best";
  // Budget of each part's search (parts run concurrently).
  absl::Duration time_limit = absl::Seconds(10);
  HourglassPartitioner::Options partition;
  // Search only the parts that can lower the whole peak (see step 2b); the
  // others keep a greedy order. For schedulers whose promise is the whole
  // model's peak ("best"); off, every part gets `scheduler`'s own order.
  bool search_only_peak_parts = false;
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
  // Distinct runners ("local" or worker addresses) that returned a part.
  int32_t runners_used = 0;
  absl::Duration time = absl::ZeroDuration();
};

struct PartScheduleResult {
  // The whole model's order, re-simulated; `parts` has one entry per part.
  ScheduleResult schedule;
  // Per part: came from the cache.
  std::vector<bool> part_cached;
  PartScheduleStats stats;
};

// Divide-and-conquer scheduling through a cache and a runner: the
// distributed form of DivideAndConquerScheduler (SERENITY §3.2).
//
// 1. Split `model` with HourglassPartitioner; key each part with
//    CanonicalPartKey.
// 2. Look every part up in `cache` (may be null). An entry is used only if
//    its order is a valid order of the part whose re-simulated peak equals
//    the entry's peak times the part's scale, and it is optimal or was
//    computed with at least this budget.
// 2b. With search_only_peak_parts: a missed part that cannot raise the whole
//    peak (its stored entry or its greedy order peaks at most the largest
//    part bound or cached peak) keeps that order; no task.
// 3. Send the misses to `runner`, one task per distinct key. Results are
//    re-simulated on each part they serve; a part whose task failed or
//    returned an invalid order gets the greedy order (linear time), so a
//    schedule exists whatever the workers do. Valid new results are
//    inserted into the cache.
// 4. Concatenate, re-simulate the whole; its peak must equal the max of
//    the part peaks (the partition theorem). Lower bound: max of the part
//    bounds and the spec's bound; status from it (ApplyLowerBound).
//
// Errors: INVALID_ARGUMENT for an unknown scheduler; CANCELLED when
// limits.cancelled was set; INTERNAL if the whole schedule fails the
// re-check (a bug). Cache and runner failures are never errors, only stats.
// Thread-safe if the cache and the runner are.
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
