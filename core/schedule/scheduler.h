#ifndef ORDO_CORE_SCHEDULE_SCHEDULER_H_
#define ORDO_CORE_SCHEDULE_SCHEDULER_H_

#include <atomic>
#include <cstdint>
#include <string>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/memory/memory_model.h"
#include "core/util/clock.h"

namespace ordo {

// How much a returned schedule is known to be worth.
enum class ScheduleStatus : int8_t {
  kHeuristic,  // a valid schedule; nothing proved beyond the spec's bound
  kBounded,    // best found, with a proven lower bound above the spec's
  kOptimal,    // proved: no schedule has a lower peak
};

absl::string_view ScheduleStatusName(ScheduleStatus status);

// What a scheduler may spend. Every scheduler returns its best schedule so
// far when a limit is hit, never nothing while a heuristic schedule exists.
struct ScheduleLimits {
  // Wall-clock deadline, read from `clock`.
  absl::Time deadline = absl::InfiniteFuture();
  // Must outlive the call; null means the real clock.
  const Clock* clock = nullptr;
  // Memory the search may use for its states.
  int64_t max_state_bytes = int64_t{2} << 30;
  // Set by another thread to stop early; may be null. Must outlive the call.
  const std::atomic<bool>* cancelled = nullptr;
  // Set by another thread when this search's result is no longer wanted
  // (ScheduleByParts: a part that can no longer change the whole peak). The
  // search ends as on `cancelled`; only the caller tells them apart. May be
  // null. Must outlive the call.
  const std::atomic<bool>* stop = nullptr;

  absl::Time Now() const;
  // `cancelled` or `stop` is set.
  bool StopRequested() const;
  bool Expired() const;
};

// What HMCOS's iterative scheduling did (HMCOS Algorithm 1; schedulers
// hmcos and hierarchical), for reports and benchmarks; zero when the
// scheduler did not iterate. Per-iteration figures: ScheduleIteratively.
struct IterativeStats {
  int32_t sequences = 0;
  int32_t groups = 0;  // formed at the start
  int32_t iterations = 0;
  // A search stopped at a limit (deadline, state bytes, cancel).
  bool limit_hit = false;
  int64_t group_searches = 0;    // dynamic programs run on a group
  int64_t memo_hits = 0;         // group schedules reused (HMCOS Optimization 3)
  int64_t simple_schedules = 0;  // groups run in reverse post-order (Optimization 2)

  // Of several runs (parts of a divided model): counts summed, limit_hit
  // if any run hit one.
  void Add(const IterativeStats& other);
};

struct ScheduleStats {
  int64_t states_expanded = 0;
  int64_t states_stored = 0;
  absl::Duration time = absl::ZeroDuration();
  IterativeStats iterative;
};

// One part of a divided schedule (divide-and-conquer), for reports.
struct PartStats {
  int32_t ops = 0;
  int64_t peak_bytes = 0;
  int64_t lower_bound_bytes = 0;
  ScheduleStatus status = ScheduleStatus::kHeuristic;
  std::string algorithm;
  int64_t states_expanded = 0;
  absl::Duration time = absl::ZeroDuration();
};

struct ScheduleResult {
  std::vector<int32_t> order;
  // Re-simulated by the simulator, never the scheduler's own count.
  int64_t peak_bytes = 0;
  // A proven lower bound on every schedule's peak (>= the spec's bound).
  int64_t lower_bound_bytes = 0;
  ScheduleStatus status = ScheduleStatus::kHeuristic;
  // The algorithm that produced `order` (for portfolios: the winner).
  std::string algorithm;
  ScheduleStats stats;
  // Per part when the scheduler divided the graph; empty otherwise.
  std::vector<PartStats> parts;
};

// A scheduling algorithm. Implementations are stateless between calls, so one
// instance may serve concurrent calls.
class Scheduler {
 public:
  virtual ~Scheduler() = default;
  virtual absl::string_view name() const = 0;
  // An order of all ops of `model`. Errors only for limits that leave not even
  // a heuristic schedule, or a cancelled call.
  virtual absl::StatusOr<ScheduleResult> Schedule(
      const MemoryModel& model, const ScheduleLimits& limits) const = 0;
};

// Fills peak_bytes (re-simulated), lower_bound_bytes (at least the spec's
// bound) and stats.time for an order a scheduler computed. Fails on an
// invalid order: that is a bug in the scheduler, reported, never returned.
absl::StatusOr<ScheduleResult> FinishSchedule(const MemoryModel& model,
                                              std::vector<int32_t> order,
                                              std::string algorithm,
                                              absl::Time start,
                                              const ScheduleLimits& limits);
// The same with `lower_bound_bytes`, MemoryLowerBound(model), computed once
// by a caller that finishes several orders of one model (it costs about a
// simulation: on the DARTS stream's candidates the cheap orders' eight
// recomputations per part were a tenth of scheduling, dp_scheduler_bench).
absl::StatusOr<ScheduleResult> FinishSchedule(const MemoryModel& model,
                                              std::vector<int32_t> order,
                                              std::string algorithm,
                                              absl::Time start,
                                              const ScheduleLimits& limits,
                                              int64_t lower_bound_bytes);

// An order computed elsewhere (a remote worker, a cache entry), checked
// before anything uses it: `claimed.order` must be an order of every op of
// `model` and `claimed.peak_bytes` the simulator's peak of it (a worker that
// misreports its peak is broken or lying, whatever its order is worth). The
// claimed bound is kept between the spec's bound and the peak, and an
// `optimal` claim that the kept bound does not support falls to `bounded`.
// A bound itself cannot be re-checked cheaply: the claim is trusted, capped.
// DATA_LOSS naming the rule broken otherwise.
absl::StatusOr<ScheduleResult> CheckClaimedSchedule(const MemoryModel& model,
                                                    ScheduleResult claimed);

// Raises result.lower_bound_bytes to `proven_bytes` (a bound a search proved;
// capped at the peak) and sets the status from it: kOptimal when the bound
// reaches the peak, kBounded when it beats `spec_bound_bytes` (the spec's
// MemoryLowerBound), else kHeuristic.
void ApplyLowerBound(int64_t proven_bytes, int64_t spec_bound_bytes,
                     ScheduleResult& result);

}  // namespace ordo

#endif  // ORDO_CORE_SCHEDULE_SCHEDULER_H_
