#include "core/parts/schedule_by_parts.h"

#include <algorithm>
#include <map>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/parts/part_key.h"
#include "core/memory/simulator.h"
#include "core/schedule/scheduler_registry.h"
#include "core/util/checked_math.h"
#include "core/util/status_macros.h"

namespace ordo {
namespace {

int StatusRank(ScheduleStatus status) {
  switch (status) {
    case ScheduleStatus::kHeuristic:
      return 0;
    case ScheduleStatus::kBounded:
      return 1;
    case ScheduleStatus::kOptimal:
      return 2;
  }
  return 0;
}

// A cached entry, checked against the part it would serve. nullopt when the
// entry is not valid for the part (wrong length, not an order, peak differs:
// a corrupt entry or a hash collision).
std::optional<ScheduleResult> CheckEntry(const MemoryModel& part, const PartKey& key,
                                         const CachedSchedule& entry) {
  // Units come from untrusted bytes (a corrupt or hostile cache value), so
  // scaling is overflow-checked: a wrapped product could even match the
  // real peak (found by tests/fuzz/cache_entry_fuzzer).
  const std::optional<int64_t> claimed_peak = CheckedMul(entry.peak_units, key.scale);
  if (entry.peak_units < 0 || !claimed_peak) return std::nullopt;
  ScheduleResult claimed;
  claimed.order = entry.order;
  claimed.peak_bytes = *claimed_peak;
  // A bound that overflows claims nothing; one above the peak is capped.
  claimed.lower_bound_bytes = CheckedMul(entry.lower_bound_units, key.scale).value_or(0);
  claimed.status = entry.status;
  claimed.algorithm = entry.algorithm;
  absl::StatusOr<ScheduleResult> checked = CheckClaimedSchedule(part, std::move(claimed));
  if (!checked.ok()) return std::nullopt;
  return *std::move(checked);
}

bool Usable(const CachedSchedule& entry, absl::Duration time_limit) {
  return entry.status == ScheduleStatus::kOptimal || entry.time_limit >= time_limit;
}

// A task's result as a claim about another part with the same key: its
// bytes, and so its peak and bound, are in proportion (`to` / `from`). An
// overflowing product claims nothing the check would accept.
ScheduleResult ScaledClaim(ScheduleResult result, int64_t from_scale, int64_t to_scale) {
  if (from_scale == to_scale) return result;
  result.peak_bytes = CheckedMul(result.peak_bytes / from_scale, to_scale).value_or(-1);
  result.lower_bound_bytes = CheckedMul(result.lower_bound_bytes / from_scale, to_scale).value_or(0);
  return result;
}

// The greedy order of a part: the schedule that always exists.
absl::StatusOr<ScheduleResult> Fallback(const MemoryModel& part, const ScheduleLimits& limits) {
  ORDO_ASSIGN_OR_RETURN(std::unique_ptr<Scheduler> greedy, BuiltinSchedulers().Create("greedy"));
  ScheduleLimits own = limits;
  own.deadline = absl::InfiniteFuture();  // linear time; must not fail
  own.cancelled = nullptr;
  return greedy->Schedule(part, own);
}

// As DivideAndConquerScheduler does locally, only parts that can lower the
// whole peak are searched. The whole peak is at least `floor`: every part's
// spec bound and every cached part's peak (its order is used as is). A
// missed part whose stored entry (even an unsearched one) or greedy order
// peaks at most `floor` cannot raise the whole peak, so it is settled here
// without a task; a greedy order is stored as heuristic with no budget, to
// be reused only under this same rule (Usable() refuses it otherwise).
// Counts as a hit when an entry served it, else as a miss.
absl::Status SettlePartsBelowFloor(const Partition& partition, const std::vector<PartKey>& keys,
                                   const std::vector<std::optional<CachedSchedule>>& existing,
                                   const ScheduleLimits& limits, ScheduleCache* cache,
                                   std::vector<std::optional<ScheduleResult>>& results,
                                   PartScheduleResult& out) {
  const size_t num_parts = partition.parts.size();
  int64_t floor = 0;
  for (size_t p = 0; p < num_parts; ++p) {
    floor = std::max(floor, MemoryLowerBound(partition.parts[p].model));
    if (results[p]) floor = std::max(floor, results[p]->peak_bytes);
  }
  for (size_t p = 0; p < num_parts; ++p) {
    if (results[p]) continue;
    const MemoryModel& part = partition.parts[p].model;
    if (existing[p]) {
      std::optional<ScheduleResult> checked = CheckEntry(part, keys[p], *existing[p]);
      if (checked && checked->peak_bytes <= floor) {
        ++out.stats.cache_hits;
        --out.stats.cache_misses;
        out.part_cached[p] = true;
        checked->stats = ScheduleStats{};
        results[p] = std::move(*checked);
        continue;
      }
    }
    ORDO_ASSIGN_OR_RETURN(ScheduleResult greedy, Fallback(part, limits));
    if (greedy.peak_bytes > floor) continue;
    if (cache != nullptr && !existing[p]) {
      CachedSchedule entry{greedy.order, greedy.peak_bytes / keys[p].scale,
                           greedy.lower_bound_bytes / keys[p].scale, greedy.status,
                           greedy.algorithm, absl::ZeroDuration()};
      if (!cache->Insert(keys[p].key, entry).ok()) ++out.stats.cache_insert_errors;
    }
    results[p] = std::move(greedy);
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<PartScheduleResult> ScheduleByParts(const MemoryModel& model,
                                                   const PartScheduleOptions& options,
                                                   const ScheduleLimits& limits,
                                                   PartRunner& runner, ScheduleCache* cache) {
  const absl::Time start = limits.Now();
  {  // Unknown names are the caller's error, not a worker failure.
    ORDO_ASSIGN_OR_RETURN(auto unused, BuiltinSchedulers().Create(options.scheduler));
    (void)unused;
  }
  const Partition partition = HourglassPartitioner(options.partition).Split(model);
  const size_t num_parts = partition.parts.size();
  PartScheduleResult out;
  PartScheduleStats& stats = out.stats;
  stats.parts = static_cast<int32_t>(num_parts);
  out.part_cached.assign(num_parts, false);

  std::vector<PartKey> keys(num_parts);
  std::vector<std::optional<ScheduleResult>> results(num_parts);
  // Whether a valid entry exists (usable or not): decides re-insertion.
  std::vector<std::optional<CachedSchedule>> existing(num_parts);
  for (size_t p = 0; p < num_parts; ++p) {
    const MemoryModel& part = partition.parts[p].model;
    keys[p] = CanonicalPartKey(part, options.scheduler);
    if (cache == nullptr) continue;
    absl::StatusOr<std::optional<CachedSchedule>> entry = cache->Lookup(keys[p].key);
    if (!entry.ok()) {
      // DATA_LOSS: the cache answered with bytes that are no entry of this
      // key (corrupt, truncated, planted): rejected like a failed re-check.
      // Anything else: the cache could not answer.
      ++(absl::IsDataLoss(entry.status()) ? stats.cache_rejected : stats.cache_errors);
      ++stats.cache_misses;
      continue;
    }
    if (!entry->has_value()) {
      ++stats.cache_misses;
      continue;
    }
    std::optional<ScheduleResult> checked = CheckEntry(part, keys[p], **entry);
    if (!checked) {
      ++stats.cache_rejected;
      ++stats.cache_misses;
      continue;
    }
    existing[p] = **entry;
    if (!Usable(**entry, options.time_limit)) {
      ++stats.cache_misses;
      continue;
    }
    ++stats.cache_hits;
    out.part_cached[p] = true;
    checked->stats = ScheduleStats{};
    results[p] = std::move(*checked);
  }
  if (options.search_only_peak_parts) {
    ORDO_RETURN_IF_ERROR(
        SettlePartsBelowFloor(partition, keys, existing, limits, cache, results, out));
  }
  if (options.on_progress) options.on_progress(stats.parts, stats.cache_hits);

  // One task per distinct key among the misses.
  std::vector<PartTask> tasks;
  std::vector<size_t> task_part;                   // task -> representative part
  absl::flat_hash_map<std::string, size_t> task_of;  // key -> task
  std::vector<std::optional<size_t>> part_task(num_parts);
  for (size_t p = 0; p < num_parts; ++p) {
    if (results[p]) continue;
    auto [it, inserted] = task_of.try_emplace(keys[p].key, tasks.size());
    if (inserted) {
      tasks.push_back(PartTask{&partition.parts[p].model, options.scheduler, options.time_limit,
                               options.request_id});
      task_part.push_back(p);
    } else {
      ++stats.deduplicated_parts;
    }
    part_task[p] = it->second;
  }
  std::vector<PartOutcome> outcomes;
  if (!tasks.empty()) outcomes = runner.RunAll(tasks, limits);
  if (limits.cancelled != nullptr && limits.cancelled->load()) {
    return absl::CancelledError("compile cancelled");
  }

  absl::flat_hash_set<std::string> runners;
  std::vector<bool> task_valid(tasks.size(), false);
  for (size_t i = 0; i < outcomes.size() && i < tasks.size(); ++i) {
    stats.task_retries += outcomes[i].retries;
    stats.rejected_answers += outcomes[i].rejected_answers;
    if (outcomes[i].result.ok()) runners.insert(outcomes[i].runner);
  }
  for (size_t p = 0; p < num_parts; ++p) {
    if (results[p]) continue;
    const MemoryModel& part = partition.parts[p].model;
    const size_t t = *part_task[p];
    std::optional<ScheduleResult> checked;
    if (t < outcomes.size() && outcomes[t].result.ok()) {
      // Runners check what they return (GrpcPartRunner: before accepting a
      // worker's answer); checked again here, on every part the task serves.
      absl::StatusOr<ScheduleResult> claimed = CheckClaimedSchedule(
          part, ScaledClaim(*outcomes[t].result, keys[task_part[t]].scale, keys[p].scale));
      if (claimed.ok()) checked = *std::move(claimed);
    }
    if (!checked) {
      ++stats.fallback_parts;
      ORDO_ASSIGN_OR_RETURN(ScheduleResult fallback, Fallback(part, limits));
      results[p] = std::move(fallback);
      continue;
    }
    if (task_part[t] == p) task_valid[t] = true;
    results[p] = std::move(*checked);
  }
  stats.runners_used = static_cast<int32_t>(runners.size());

  if (cache != nullptr) {
    for (size_t t = 0; t < tasks.size(); ++t) {
      if (!task_valid[t]) continue;
      const size_t p = task_part[t];
      const ScheduleResult& r = *results[p];
      CachedSchedule entry{r.order, r.peak_bytes / keys[p].scale,
                           r.lower_bound_bytes / keys[p].scale, r.status, r.algorithm,
                           options.time_limit};
      if (const auto& old = existing[p]; old.has_value()) {
        // Keep the better of the two; equal ones refresh the budget.
        const bool better = StatusRank(entry.status) > StatusRank(old->status) ||
                            (StatusRank(entry.status) == StatusRank(old->status) &&
                             entry.peak_units <= old->peak_units);
        if (!better) continue;
        entry.time_limit = std::max(entry.time_limit, old->time_limit);
      }
      if (!cache->Insert(keys[p].key, entry).ok()) ++stats.cache_insert_errors;
    }
  }
  if (options.on_progress) options.on_progress(stats.parts, stats.parts);

  // Combine and verify.
  std::vector<std::vector<int32_t>> part_orders(num_parts);
  int64_t max_part_peak = 0, max_part_bound = 0;
  std::map<std::string, int32_t> ops_by_algorithm;
  ScheduleResult& whole = out.schedule;
  for (size_t p = 0; p < num_parts; ++p) {
    ScheduleResult& r = *results[p];
    max_part_peak = std::max(max_part_peak, r.peak_bytes);
    max_part_bound = std::max(max_part_bound, r.lower_bound_bytes);
    ops_by_algorithm[r.algorithm] += partition.parts[p].model.num_ops();
    whole.stats.states_expanded += r.stats.states_expanded;
    whole.stats.states_stored += r.stats.states_stored;
    whole.parts.push_back(PartStats{partition.parts[p].model.num_ops(), r.peak_bytes,
                                    r.lower_bound_bytes, r.status, r.algorithm,
                                    r.stats.states_expanded, r.stats.time});
    part_orders[p] = std::move(r.order);
  }
  whole.order = ConcatenatePartOrders(partition, part_orders);
  absl::StatusOr<int64_t> peak = SimulatePeak(model, whole.order);
  if (!peak.ok() || *peak != max_part_peak) {
    return absl::InternalError(absl::StrCat(
        "concatenated part orders fail the re-check: ",
        peak.ok() ? absl::StrCat("peak ", *peak, " != max part peak ", max_part_peak)
                  : std::string(peak.status().message())));
  }
  whole.peak_bytes = *peak;
  const int64_t spec_bound = MemoryLowerBound(model);
  whole.lower_bound_bytes = std::min(spec_bound, whole.peak_bytes);
  whole.status = ScheduleStatus::kHeuristic;
  ApplyLowerBound(std::max(max_part_bound, spec_bound), spec_bound, whole);

  // Algorithms by ops covered, most first (as DivideAndConquerScheduler).
  std::vector<std::pair<int32_t, std::string>> by_ops;
  by_ops.reserve(ops_by_algorithm.size());
  for (const auto& [name, ops] : ops_by_algorithm) by_ops.emplace_back(-ops, name);
  std::sort(by_ops.begin(), by_ops.end());
  whole.algorithm = absl::StrJoin(by_ops, "+", [](std::string* s, const auto& entry) {
    s->append(entry.second);
  });
  stats.time = limits.Now() - start;
  whole.stats.time = stats.time;
  return out;
}

CachedPeak LookupCachedPeak(const MemoryModel& model, const PartScheduleOptions& options,
                            ScheduleCache& cache) {
  const Partition partition = HourglassPartitioner(options.partition).Split(model);
  CachedPeak out;
  out.parts = static_cast<int32_t>(partition.parts.size());
  int64_t peak = 0;
  for (const Part& part : partition.parts) {
    const PartKey key = CanonicalPartKey(part.model, options.scheduler);
    absl::StatusOr<std::optional<CachedSchedule>> entry = cache.Lookup(key.key);
    if (!entry.ok() || !entry->has_value() || !Usable(**entry, options.time_limit)) continue;
    std::optional<ScheduleResult> checked = CheckEntry(part.model, key, **entry);
    if (!checked) continue;
    ++out.cached_parts;
    peak = std::max(peak, checked->peak_bytes);
  }
  if (out.cached_parts == out.parts) out.peak_bytes = peak;
  return out;
}

}  // namespace ordo
