#include "core/parts/schedule_by_parts.h"

#include <algorithm>
#include <atomic>
#include <limits>
#include <map>
#include <optional>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "core/memory/simulator.h"
#include "core/parts/part_key.h"
#include "core/schedule/best_part_scheduler.h"
#include "core/schedule/greedy_scheduler.h"
#include "core/schedule/op_dag.h"
#include "core/schedule/part_schedulers.h"
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
  checked->stats = ScheduleStats{};  // served, not computed: it cost nothing now
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

CachedSchedule EntryOf(const ScheduleResult& result, const PartKey& key, absl::Duration budget) {
  return CachedSchedule{result.order, result.peak_bytes / key.scale,
                        result.lower_bound_bytes / key.scale, result.status, result.algorithm,
                        budget};
}

// One ScheduleByParts call: the model split into parts and what is known
// about each. The steps below fill it in; data moves forward only.
struct DividedModel {
  Partition partition;
  std::vector<PartKey> keys;
  // Valid stored entries (usable or not): decides re-insertion.
  std::vector<std::optional<CachedSchedule>> existing;
  // With search_only_peak_parts: the lowest peak among the cheap orders of
  // each unsettled part (its own, and the whole model's cut to the part).
  std::vector<std::optional<ScheduleResult>> cheap;
  // The settled parts' schedules.
  std::vector<std::optional<ScheduleResult>> results;
  // The time each part's task was given (zero: never searched here).
  std::vector<absl::Duration> given;
  PartScheduleResult out;

  size_t size() const { return partition.parts.size(); }
  const MemoryModel& part(size_t p) const { return partition.parts[p].model; }
};

// Step 1: split and key the parts.
DividedModel Split(const MemoryModel& model, const PartScheduleOptions& options) {
  DividedModel divided;
  divided.partition = HourglassPartitioner(options.partition).Split(model);
  const size_t num_parts = divided.size();
  divided.keys.resize(num_parts);
  divided.existing.resize(num_parts);
  divided.cheap.resize(num_parts);
  divided.results.resize(num_parts);
  divided.given.assign(num_parts, absl::ZeroDuration());
  divided.out.part_cached.assign(num_parts, false);
  divided.out.stats.parts = static_cast<int32_t>(num_parts);
  for (size_t p = 0; p < num_parts; ++p) {
    divided.keys[p] = CanonicalPartKey(divided.part(p), options.scheduler);
  }
  return divided;
}

// Step 2: every part looked up in `cache`; usable entries settle their part.
void LookUp(const PartScheduleOptions& options, ScheduleCache& cache, DividedModel& divided) {
  PartScheduleStats& stats = divided.out.stats;
  for (size_t p = 0; p < divided.size(); ++p) {
    absl::StatusOr<std::optional<CachedSchedule>> entry = cache.Lookup(divided.keys[p].key);
    ++stats.cache_misses;  // until a hit says otherwise
    if (!entry.ok()) {
      // DATA_LOSS: the cache answered with bytes that are no entry of this
      // key (corrupt, truncated, planted): rejected like a failed re-check.
      // Anything else: the cache could not answer.
      ++(absl::IsDataLoss(entry.status()) ? stats.cache_rejected : stats.cache_errors);
      continue;
    }
    if (!entry->has_value()) continue;
    std::optional<ScheduleResult> checked = CheckEntry(divided.part(p), divided.keys[p], **entry);
    if (!checked) {
      ++stats.cache_rejected;
      continue;
    }
    divided.existing[p] = **entry;
    if (!Usable(**entry, options.time_limit)) continue;
    --stats.cache_misses;
    ++stats.cache_hits;
    divided.out.part_cached[p] = true;
    divided.results[p] = std::move(*checked);
  }
}

// Each whole-model order cut into the parts' blocks, in part op ids (every
// order of the whole runs the parts as blocks, so each piece is an order
// of its part).
std::vector<std::vector<NamedOrder>> RestrictToParts(const Partition& partition,
                                                     const std::vector<NamedOrder>& whole,
                                                     int32_t num_ops) {
  std::vector<int32_t> part_of(num_ops), local_of(num_ops);
  for (int32_t p = 0; p < static_cast<int32_t>(partition.parts.size()); ++p) {
    const std::vector<int32_t>& ops = partition.parts[p].ops;
    for (int32_t i = 0; i < static_cast<int32_t>(ops.size()); ++i) {
      part_of[ops[i]] = p;
      local_of[ops[i]] = i;
    }
  }
  std::vector<std::vector<NamedOrder>> restricted(partition.parts.size());
  for (const NamedOrder& named : whole) {
    for (std::vector<NamedOrder>& orders : restricted) orders.push_back({named.algorithm, {}});
    for (int32_t op : named.order) restricted[part_of[op]].back().order.push_back(local_of[op]);
  }
  return restricted;
}

// Step 3a (search_only_peak_parts): the cheap schedule of every unsettled
// part, the lowest peak among its own cheap orders and the whole model's
// cut to it, so the result is never worse than any cheap order of the
// whole.
absl::Status ScheduleCheaply(const MemoryModel& model, const ScheduleLimits& limits,
                             DividedModel& divided) {
  std::vector<std::vector<NamedOrder>> whole =
      RestrictToParts(divided.partition, CheapOrders(model), model.num_ops());
  for (size_t p = 0; p < divided.size(); ++p) {
    if (divided.results[p]) continue;
    std::vector<NamedOrder> own = CheapOrders(divided.part(p));
    own.insert(own.end(), std::make_move_iterator(whole[p].begin()),
               std::make_move_iterator(whole[p].end()));
    ORDO_ASSIGN_OR_RETURN(divided.cheap[p], LowestPeakOf(divided.part(p), std::move(own), limits));
  }
  return absl::OkStatus();
}

// The whole peak is at least every part's spec bound and every settled
// part's peak (its order is used as is).
int64_t PeakFloor(const DividedModel& divided) {
  int64_t floor = 0;
  for (size_t p = 0; p < divided.size(); ++p) {
    floor = std::max(floor, MemoryLowerBound(divided.part(p)));
    if (divided.results[p]) floor = std::max(floor, divided.results[p]->peak_bytes);
  }
  return floor;
}

// Step 3b (search_only_peak_parts): only parts that can lower the whole peak
// are searched. An unsettled part whose stored entry (even an unsearched
// one) or cheap schedule peaks at most PeakFloor cannot raise the whole
// peak, so it is settled here without a task; a cheap schedule is stored
// as heuristic with no budget, to be reused only under this same rule
// (Usable() refuses it otherwise). Counts as a hit when an entry served
// it, else as a miss. Runs again after each round of tasks, as solved
// parts raise the floor.
void SettleCheapParts(ScheduleCache* cache, DividedModel& divided) {
  const int64_t floor = PeakFloor(divided);
  PartScheduleStats& stats = divided.out.stats;
  for (size_t p = 0; p < divided.size(); ++p) {
    if (divided.results[p]) continue;
    if (divided.existing[p]) {
      std::optional<ScheduleResult> checked =
          CheckEntry(divided.part(p), divided.keys[p], *divided.existing[p]);
      if (checked && checked->peak_bytes <= floor) {
        ++stats.cache_hits;
        --stats.cache_misses;
        divided.out.part_cached[p] = true;
        divided.results[p] = std::move(*checked);
        continue;
      }
    }
    if (divided.cheap[p]->peak_bytes > floor) continue;
    if (cache != nullptr && !divided.existing[p]) {
      const CachedSchedule entry = EntryOf(*divided.cheap[p], divided.keys[p], absl::ZeroDuration());
      if (!cache->Insert(divided.keys[p].key, entry).ok()) ++stats.cache_insert_errors;
    }
    divided.results[p] = divided.cheap[p];
  }
}

// The parts of the next round of tasks: every unsettled part whose key is
// among the first `max_keys` distinct keys, highest cheap peak first (the
// parts most likely to hold the whole peak; solving them first raises the
// floor that settles the others).
std::vector<size_t> NextRound(const DividedModel& divided, int32_t max_keys) {
  std::vector<size_t> unsettled;
  for (size_t p = 0; p < divided.size(); ++p) {
    if (!divided.results[p]) unsettled.push_back(p);
  }
  auto cheap_peak = [&](size_t p) {
    return divided.cheap[p] ? divided.cheap[p]->peak_bytes : std::numeric_limits<int64_t>::max();
  };
  std::stable_sort(unsettled.begin(), unsettled.end(),
                   [&](size_t a, size_t b) { return cheap_peak(a) > cheap_peak(b); });
  absl::flat_hash_set<std::string> keys;
  for (size_t p : unsettled) {
    if (static_cast<int32_t>(keys.size()) >= max_keys) break;
    keys.insert(divided.keys[p].key);
  }
  std::vector<size_t> round;
  for (size_t p = 0; p < divided.size(); ++p) {
    if (!divided.results[p] && keys.contains(divided.keys[p].key)) round.push_back(p);
  }
  return round;
}

// The schedule that always exists for part `p`: its cheap schedule, else
// the greedy order (linear time; must not fail, so no limits).
absl::StatusOr<ScheduleResult> Fallback(const DividedModel& divided, size_t p) {
  if (divided.cheap[p]) return *divided.cheap[p];
  const MemoryModel& part = divided.part(p);
  return FinishSchedule(part, GreedyOrder(part, OpDag(part)), "greedy", absl::Now(),
                        ScheduleLimits{});
}

// Of a task's checked result and the part's cheap schedule, the lower peak,
// with the better bound of the two.
ScheduleResult BetterOf(ScheduleResult searched, const std::optional<ScheduleResult>& cheap,
                        const MemoryModel& part) {
  if (!cheap || cheap->peak_bytes >= searched.peak_bytes) return searched;
  ScheduleResult result = *cheap;
  result.stats = searched.stats;  // the search's work was done all the same
  ApplyLowerBound(std::max(searched.lower_bound_bytes, cheap->lower_bound_bytes),
                  MemoryLowerBound(part), result);
  return result;
}

// CANCELLED once limits.cancelled is set, unless the caller wants the best
// schedule so far (a Scheduler's promise).
absl::Status CheckCancelled(const PartScheduleOptions& options, const ScheduleLimits& limits) {
  if (options.keep_best_when_cancelled || limits.cancelled == nullptr ||
      !limits.cancelled->load()) {
    return absl::OkStatus();
  }
  return absl::CancelledError("compile cancelled");
}

// Step 3b while a round runs: SettleCheapParts' rule applied as each task
// ends. A finished task whose part is proved optimal raises the floor to
// that part's peak, which no later search lowers; a task still running
// whose parts' cheap schedules all peak at most the floor can no longer
// change the whole peak, and is stopped rather than waited for (with
// several tasks in flight, a part proved in a millisecond used to wait
// seconds for a part its result had settled). Thread-safe: Done() runs on
// the runner's threads, reading only what no one writes during the round.
class RoundStops {
 public:
  RoundStops(const DividedModel& divided, const std::vector<size_t>& task_part,
             const std::vector<std::vector<size_t>>& parts_of_task)
      : divided_(divided),
        task_part_(task_part),
        stop_(task_part.size()),
        done_(task_part.size(), false),
        highest_cheap_(task_part.size(), 0),
        floor_(PeakFloor(divided)) {
    for (size_t t = 0; t < task_part.size(); ++t) {
      for (size_t p : parts_of_task[t]) {
        highest_cheap_[t] = std::max(highest_cheap_[t], divided.cheap[p]->peak_bytes);
      }
    }
  }

  const std::atomic<bool>* stop(size_t t) const { return &stop_[t]; }
  bool stopped(size_t t) const { return stop_[t].load(); }

  void Done(size_t t, const PartOutcome& outcome) {
    std::optional<int64_t> kept_peak;
    if (outcome.result.ok() && !stopped(t)) {
      const size_t p = task_part_[t];
      absl::StatusOr<ScheduleResult> checked =
          CheckClaimedSchedule(divided_.part(p), *outcome.result);
      // Only a proved optimum: a part's peak that is not may still fall
      // (SearchPeakPartsAgain), and a part stopped below it would then hold
      // the whole peak unsearched.
      if (checked.ok() && checked->status == ScheduleStatus::kOptimal) {
        kept_peak = checked->peak_bytes;
      }
    }
    absl::MutexLock lock(&mu_);
    done_[t] = true;
    if (!kept_peak || *kept_peak <= floor_) return;
    floor_ = *kept_peak;
    for (size_t u = 0; u < stop_.size(); ++u) {
      if (!done_[u] && highest_cheap_[u] <= floor_) stop_[u].store(true);
    }
  }

 private:
  const DividedModel& divided_;
  const std::vector<size_t>& task_part_;
  std::vector<std::atomic<bool>> stop_;
  absl::Mutex mu_;
  std::vector<bool> done_ ABSL_GUARDED_BY(mu_);
  std::vector<int64_t> highest_cheap_;
  int64_t floor_ ABSL_GUARDED_BY(mu_);
};

// Step 4: one round of tasks, one per distinct key, on `runner`; then step
// 5, its valid results stored in `cache`. Results are re-checked on each
// part they serve; a part whose task failed or returned an invalid order
// gets Fallback(), so a schedule exists whatever the runner does. With
// `stop_settled` (search_only_peak_parts, not step 4b) a task that
// RoundStops stops leaves its parts unsettled and never searched here, for
// SettleCheapParts (or the next round).
absl::Status RunRound(const std::vector<size_t>& round, size_t remaining_keys,
                      const PartScheduleOptions& options, const ScheduleLimits& limits,
                      bool stop_settled, PartRunner& runner, ScheduleCache* cache,
                      DividedModel& divided, absl::flat_hash_set<std::string>& runners) {
  PartScheduleStats& stats = divided.out.stats;
  std::vector<PartTask> tasks;
  std::vector<size_t> task_part;                   // task -> representative part
  std::vector<std::vector<size_t>> parts_of_task;
  absl::flat_hash_map<std::string, size_t> task_of;  // key -> task
  absl::flat_hash_map<size_t, size_t> part_task;
  for (size_t p : round) {
    auto [it, inserted] = task_of.try_emplace(divided.keys[p].key, tasks.size());
    if (inserted) {
      tasks.push_back(
          PartTask{&divided.part(p), options.scheduler, options.time_limit, options.request_id});
      task_part.push_back(p);
      parts_of_task.emplace_back();
    } else {
      ++stats.deduplicated_parts;
    }
    part_task[p] = it->second;
    parts_of_task[it->second].push_back(p);
  }
  std::optional<RoundStops> stops;
  if (stop_settled && tasks.size() > 1) {
    stops.emplace(divided, task_part, parts_of_task);
    for (size_t t = 0; t < tasks.size(); ++t) {
      tasks[t].stop = stops->stop(t);
      tasks[t].on_done = [&stops, t](const PartOutcome& outcome) { stops->Done(t, outcome); };
    }
  }
  // A round gets its share of the time left: rounds run one after another.
  ScheduleLimits round_limits = limits;
  const absl::Time now = limits.Now();
  if (limits.deadline != absl::InfiniteFuture() && remaining_keys > tasks.size()) {
    round_limits.deadline = now + (limits.deadline - now) * static_cast<double>(tasks.size()) /
                                      static_cast<double>(remaining_keys);
  }
  // What a non-optimal stored result was computed with (Usable()).
  const absl::Duration budget = round_limits.deadline == limits.deadline
                                    ? options.time_limit
                                    : std::min(options.time_limit, round_limits.deadline - now);
  for (size_t p : round) divided.given[p] = round_limits.deadline - now;
  std::vector<PartOutcome> outcomes = runner.RunAll(tasks, round_limits);
  ORDO_RETURN_IF_ERROR(CheckCancelled(options, limits));
  for (size_t t = 0; t < outcomes.size() && t < tasks.size(); ++t) {
    stats.task_retries += outcomes[t].retries;
    stats.rejected_answers += outcomes[t].rejected_answers;
    if (!outcomes[t].result.ok()) continue;
    if (outcomes[t].runner != kInProcessRunner) {
      runners.insert(outcomes[t].runner);
    } else if (!outcomes[t].fallback) {
      ++stats.in_process_tasks;
    }
  }
  std::vector<bool> task_valid(tasks.size(), false);
  for (size_t t = 0; stops && t < tasks.size(); ++t) {
    if (stops->stopped(t)) ++stats.stopped_tasks;
  }
  for (size_t p : round) {
    const size_t t = part_task[p];
    if (stops && stops->stopped(t)) {
      // Whatever a stopped search returned had less than the budget a
      // stored entry would claim; SettleCheapParts settles the part.
      divided.given[p] = absl::ZeroDuration();
      continue;
    }
    std::optional<ScheduleResult> checked;
    if (t < outcomes.size() && outcomes[t].result.ok()) {
      // Runners check what they return (GrpcPartRunner: before accepting a
      // worker's answer); checked again here, on every part the task serves.
      absl::StatusOr<ScheduleResult> claimed = CheckClaimedSchedule(
          divided.part(p), ScaledClaim(*outcomes[t].result, divided.keys[task_part[t]].scale,
                                       divided.keys[p].scale));
      if (claimed.ok()) checked = *std::move(claimed);
    }
    if (!checked) {
      ++stats.fallback_parts;
      ORDO_ASSIGN_OR_RETURN(divided.results[p], Fallback(divided, p));
      continue;
    }
    if (task_part[t] == p) task_valid[t] = true;
    divided.results[p] = BetterOf(*std::move(checked), divided.cheap[p], divided.part(p));
  }
  if (cache == nullptr) return absl::OkStatus();
  for (size_t t = 0; t < tasks.size(); ++t) {
    if (!task_valid[t]) continue;
    const size_t p = task_part[t];
    CachedSchedule entry = EntryOf(*divided.results[p], divided.keys[p], budget);
    if (const auto& old = divided.existing[p]; old.has_value()) {
      // Keep the better of the two; equal ones refresh the budget.
      const bool better = StatusRank(entry.status) > StatusRank(old->status) ||
                          (StatusRank(entry.status) == StatusRank(old->status) &&
                           entry.peak_units <= old->peak_units);
      if (!better) continue;
      entry.time_limit = std::max(entry.time_limit, old->time_limit);
    }
    if (!cache->Insert(divided.keys[p].key, entry).ok()) ++stats.cache_insert_errors;
  }
  return absl::OkStatus();
}

// Step 4b's rule for a part that holds the whole peak: a search with the
// time left could beat its result. Not when it is optimal or came from the
// cache (a usable entry had at least this call's budget); yes when it was
// never searched here; else when its search used at least half its share
// and the time left is at least half as much again. A search that ended
// well before its share (at its state bytes) would end the same way again;
// one that ran out of time may have stopped short of its deadline, before a
// doubling of its state buffers that would have overrun it (the exact
// search, DoublingForecast: a second or two at millions of states).
bool WorthSearchingAgain(const DividedModel& divided, size_t p, absl::Duration left) {
  const ScheduleResult& result = *divided.results[p];
  if (result.status == ScheduleStatus::kOptimal || divided.out.part_cached[p]) return false;
  // Less than this is no search at all.
  if (left < absl::Milliseconds(10)) return false;
  const absl::Duration given = divided.given[p];
  if (given == absl::ZeroDuration()) return true;
  return result.stats.time >= given * 0.5 && left >= given * 1.5;
}

// The better of a part's two searches (the lower peak; the earlier on
// ties), with the better bound and the work of both.
ScheduleResult Merged(ScheduleResult first, ScheduleResult second, const MemoryModel& part) {
  ScheduleResult& kept = second.peak_bytes < first.peak_bytes ? second : first;
  const ScheduleResult& other = &kept == &first ? second : first;
  kept.stats.states_expanded += other.stats.states_expanded;
  kept.stats.states_stored = std::max(kept.stats.states_stored, other.stats.states_stored);
  kept.stats.time += other.stats.time;
  kept.stats.iterative.Add(other.stats.iterative);
  ApplyLowerBound(std::max(first.lower_bound_bytes, second.lower_bound_bytes),
                  MemoryLowerBound(part), kept);
  return std::move(kept);
}

int64_t WholePeak(const DividedModel& divided) {
  int64_t peak = 0;
  for (const std::optional<ScheduleResult>& result : divided.results) {
    peak = std::max(peak, result->peak_bytes);
  }
  return peak;
}

// Step 4b: the time the rounds left goes to the parts that hold the whole
// peak. Rounds share the time evenly among the unsettled parts, but the
// round that solves the peak part often settles the others without a
// search (step 3), and its third of the time was then all the search got
// (a RandWire-like model of 1,593 ops: 3.4 s of a 10 s limit used, and a
// peak 33% above what the next 3 s found). When every part at the whole
// peak is WorthSearchingAgain, they are searched again with all the time
// left, each keeping the better of its two results; repeated while the
// whole peak drops (another part may hold it then).
absl::Status SearchPeakPartsAgain(const PartScheduleOptions& options,
                                  const ScheduleLimits& limits, PartRunner& runner,
                                  ScheduleCache* cache, DividedModel& divided,
                                  absl::flat_hash_set<std::string>& runners) {
  if (!options.search_peak_parts_again || limits.deadline == absl::InfiniteFuture()) {
    return absl::OkStatus();
  }
  for (;;) {
    if (limits.cancelled != nullptr && limits.cancelled->load()) return absl::OkStatus();
    const int64_t peak = WholePeak(divided);
    const absl::Duration left = limits.deadline - limits.Now();
    std::vector<size_t> holders;
    for (size_t p = 0; p < divided.size(); ++p) {
      if (divided.results[p]->peak_bytes != peak) continue;
      if (!WorthSearchingAgain(divided, p, left)) return absl::OkStatus();
      holders.push_back(p);
    }
    std::vector<ScheduleResult> first;
    for (size_t p : holders) {
      first.push_back(*std::move(divided.results[p]));
      divided.results[p].reset();
      // So that the round stores the second result only if it is better.
      divided.existing[p] = EntryOf(first.back(), divided.keys[p], divided.given[p]);
    }
    ORDO_RETURN_IF_ERROR(RunRound(holders, holders.size(), options, limits, /*stop_settled=*/false,
                                  runner, cache, divided, runners));
    for (size_t i = 0; i < holders.size(); ++i) {
      const size_t p = holders[i];
      divided.results[p] =
          Merged(std::move(first[i]), *std::move(divided.results[p]), divided.part(p));
    }
    if (WholePeak(divided) >= peak) return absl::OkStatus();
  }
}

size_t UnsettledKeys(const DividedModel& divided) {
  absl::flat_hash_set<std::string> keys;
  for (size_t p = 0; p < divided.size(); ++p) {
    if (!divided.results[p]) keys.insert(divided.keys[p].key);
  }
  return keys.size();
}

// "greedy+dp": the algorithms behind the parts' orders, most ops first.
std::string AlgorithmName(const Partition& partition,
                          const std::vector<std::optional<ScheduleResult>>& results) {
  std::map<std::string, int64_t> ops;
  for (size_t p = 0; p < results.size(); ++p) {
    ops[results[p]->algorithm] += static_cast<int64_t>(partition.parts[p].ops.size());
  }
  std::vector<std::pair<int64_t, std::string>> ranked;
  ranked.reserve(ops.size());
  for (const auto& [name, count] : ops) ranked.push_back({-count, name});
  std::sort(ranked.begin(), ranked.end());
  return absl::StrJoin(ranked, "+",
                       [](std::string* out, const auto& entry) { out->append(entry.second); });
}

// Step 6: the parts' orders concatenated and re-simulated as one schedule.
// Statistics, one rule each: states_expanded is the work of all parts
// (summed); states_stored the largest single search (maxed: searches of
// different parts never hold their states at once in one process, and a
// worker's memory is its own); `iterative` (HMCOS's iterations) summed
// (IterativeStats::Add); time the whole call's wall time; `parts`
// one entry per part, a served (cached) part with zero work. Lower bound:
// the max of the part bounds and the spec's bound of the whole; status
// from it (ApplyLowerBound).
absl::StatusOr<ScheduleResult> Combine(const MemoryModel& model, const Partition& partition,
                                       std::vector<std::optional<ScheduleResult>> results,
                                       absl::Time start, const ScheduleLimits& limits) {
  std::vector<std::vector<int32_t>> orders(results.size());
  int64_t max_part_peak = 0, proven = 0;
  ScheduleStats stats;
  std::vector<PartStats> parts;
  for (size_t p = 0; p < results.size(); ++p) {
    const ScheduleResult& part = *results[p];
    max_part_peak = std::max(max_part_peak, part.peak_bytes);
    proven = std::max(proven, part.lower_bound_bytes);
    stats.states_expanded += part.stats.states_expanded;
    stats.states_stored = std::max(stats.states_stored, part.stats.states_stored);
    stats.iterative.Add(part.stats.iterative);
    parts.push_back(PartStats{partition.parts[p].model.num_ops(), part.peak_bytes,
                              part.lower_bound_bytes, part.status, part.algorithm,
                              part.stats.states_expanded, part.stats.time});
  }
  std::string algorithm = AlgorithmName(partition, results);
  for (size_t p = 0; p < results.size(); ++p) orders[p] = std::move(results[p]->order);
  absl::StatusOr<ScheduleResult> whole = FinishSchedule(
      model, ConcatenatePartOrders(partition, orders), std::move(algorithm), start, limits);
  // The partition's exactness (HourglassPartitioner) in one line; a bug in
  // the boundary accounting would show here first.
  if (!whole.ok() || whole->peak_bytes != max_part_peak) {
    return absl::InternalError(absl::StrCat(
        "concatenated part orders fail the re-check: ",
        whole.ok() ? absl::StrCat("peak ", whole->peak_bytes, " != max part peak ", max_part_peak)
                   : std::string(whole.status().message())));
  }
  ApplyLowerBound(proven, MemoryLowerBound(model), *whole);
  whole->stats.states_expanded = stats.states_expanded;
  whole->stats.states_stored = stats.states_stored;
  whole->stats.iterative = stats.iterative;
  whole->parts = std::move(parts);
  return whole;
}

}  // namespace

absl::StatusOr<PartScheduleResult> ScheduleByParts(const MemoryModel& model,
                                                   const PartScheduleOptions& options,
                                                   const ScheduleLimits& limits,
                                                   PartRunner& runner, ScheduleCache* cache) {
  const absl::Time start = limits.Now();
  // Unknown names are the caller's error, not a worker failure.
  ORDO_RETURN_IF_ERROR(PartSchedulers().Create(options.scheduler).status());
  DividedModel divided = Split(model, options);
  if (cache != nullptr) LookUp(options, *cache, divided);
  if (options.search_only_peak_parts) {
    ORDO_RETURN_IF_ERROR(ScheduleCheaply(model, limits, divided));
    SettleCheapParts(cache, divided);
  }
  if (options.on_progress) options.on_progress(divided.out.stats.parts, divided.out.stats.cache_hits);

  // Rounds of at most runner.max_parallel_tasks() keys; one round unless
  // the runner runs fewer tasks at once than there are parts to run.
  absl::flat_hash_set<std::string> runners;
  for (size_t remaining = UnsettledKeys(divided); remaining > 0;
       remaining = UnsettledKeys(divided)) {
    const std::vector<size_t> round = NextRound(divided, runner.max_parallel_tasks());
    ORDO_RETURN_IF_ERROR(RunRound(round, remaining, options, limits, options.search_only_peak_parts,
                                  runner, cache, divided, runners));
    if (options.search_only_peak_parts) SettleCheapParts(cache, divided);
  }
  ORDO_RETURN_IF_ERROR(SearchPeakPartsAgain(options, limits, runner, cache, divided, runners));
  ORDO_RETURN_IF_ERROR(CheckCancelled(options, limits));
  divided.out.stats.runners_used = static_cast<int32_t>(runners.size());
  if (options.on_progress) options.on_progress(divided.out.stats.parts, divided.out.stats.parts);

  ORDO_ASSIGN_OR_RETURN(divided.out.schedule,
                        Combine(model, divided.partition, std::move(divided.results), start,
                                limits));
  divided.out.stats.time = divided.out.schedule.stats.time;
  return std::move(divided.out);
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
