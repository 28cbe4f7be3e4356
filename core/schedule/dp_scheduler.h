#ifndef ORDO_CORE_SCHEDULE_DP_SCHEDULER_H_
#define ORDO_CORE_SCHEDULE_DP_SCHEDULER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "core/schedule/scheduler.h"

namespace ordo {

struct DpOptions {
  // Expand only an op that is free to run now when there is one (see the
  // class comment). Off only to test that it changes nothing.
  bool dominance = true;
  // Advance interchangeable chains in one order (ScheduleStateSpace). Off
  // only to test that it changes nothing.
  bool break_symmetry = true;
  // Expansions between two reads of the clock and the cancellation flag.
  int32_t check_every = 1024;
  // Expansions between two greedy completions of the state being expanded,
  // which may lower the incumbent while the search runs; 0 disables.
  int32_t complete_every = 8192;
};

// Exact minimum-peak scheduling: a best-first (bottleneck A*) search over
// partial schedules, merged by signature as in SERENITY's dynamic program
// (§3.1, Algorithm 1), ordered by a lower bound instead of level by level.
//
// 1. Incumbent: the better of the greedy and Kahn orders (or the caller's).
//    If its peak equals the spec's lower bound (MemoryLowerBound), it is
//    optimal: return at once.
// 2. A state is the set S of scheduled ops (ScheduleStateSpace); for each S
//    keep only the least path peak g(S) and a parent pointer. Its key is
//    max(g(S), LB, live(S) + least step growth): a lower bound on the peak
//    of every schedule through S that never decreases along a path, so
//    states leave the open list in key order and the first complete state
//    to leave it is optimal; a state's first expansion is final (a later,
//    cheaper path to S can only have g below the key, where g no longer
//    matters). Ties go to deeper states, then newer ones (a dive: a
//    complete schedule at the current key is found fast).
// 3. States with key >= the incumbent's peak are dropped: they cannot beat
//    it. When the open list runs dry the incumbent is proved optimal.
// 4. Dominance: when a ready op u has footprint <= max(key(S), the least
//    footprint of S's ready ops' steps) (both lower bounds on the peak of
//    every schedule through S: one of those steps comes next) and does not
//    increase live memory, some best completion of S runs u first (moving u
//    to the front lowers or keeps every step in between), so u is the only
//    child expanded.
// 5. Now and then the state being expanded is completed greedily; a better
//    schedule lowers the incumbent (anytime).
//
// Limits: the clock and the cancellation flag are read every
// `check_every` expansions; the bytes of stored states (arena, index,
// records, heap) are kept under max_state_bytes, counting the next growth
// of the largest buffer. On a limit it returns the incumbent with
// lower_bound_bytes = the least key still open (proved: every schedule
// below it would pass through an open state), status kBounded when that
// beats the spec's bound, else kHeuristic. kOptimal only when proved.
//
// Time and memory are exponential in the width of the graph in the worst
// case (O(2^n) sets); a few tens of bytes plus n/8 per stored state.
// Stateless between calls: one instance may serve concurrent calls.
class DpScheduler final : public Scheduler {
 public:
  explicit DpScheduler(DpOptions options = {}) : options_(options) {}

  absl::string_view name() const override { return "dp"; }
  absl::StatusOr<ScheduleResult> Schedule(const MemoryModel& model,
                                          const ScheduleLimits& limits) const override;

  // The search of Schedule, starting from `incumbent` (a valid order of
  // `model`, produced by `incumbent_algorithm`) as the schedule to beat.
  // The result names `incumbent_algorithm` when the incumbent is what comes
  // back (the search may still have proved it optimal), else "dp".
  absl::StatusOr<ScheduleResult> Improve(const MemoryModel& model, const ScheduleLimits& limits,
                                         std::vector<int32_t> incumbent,
                                         std::string incumbent_algorithm) const;

 private:
  DpOptions options_;
};

}  // namespace ordo

#endif  // ORDO_CORE_SCHEDULE_DP_SCHEDULER_H_
