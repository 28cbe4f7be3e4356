#ifndef ORDO_CORE_SCHEDULE_SERENITY_SCHEDULER_H_
#define ORDO_CORE_SCHEDULE_SERENITY_SCHEDULER_H_

#include <cstdint>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "core/schedule/scheduler.h"

namespace ordo {

struct SerenityOptions {
  // T of Algorithm 2: the time one DP attempt may take before it counts as
  // 'timeout'. Attempts also stop at the call's deadline.
  absl::Duration attempt_time_limit = absl::Seconds(1);
  // Attempts before giving up (Algorithm 2 has no such stop; with an
  // infinite deadline it could alternate forever).
  int32_t max_attempts = 64;
  // Signatures visited between two reads of the clock.
  int32_t check_every = 1024;
  // Algorithm 2 around the DP. When false, Algorithm 1 alone (① of the
  // paper's Table 2): one attempt with no budget at all, limited only by the
  // call's limits (not attempt_time_limit); no pruning, so an attempt that
  // finishes is optimal and one that hits a limit proves nothing.
  bool adaptive_soft_budget = true;
};

// The budgets of SERENITY's Algorithm 2 (adaptive soft budgeting), one per
// attempt: tau_old = tau_new = tau_max at first; after 'timeout' (tau_old,
// tau_new) <- (tau_new, tau_new / 2); after 'no solution' (tau_old, tau_new)
// <- (tau_new, (tau_new + tau_old) / 2). Budgets below the spec's bound are
// known infeasible; when the rule would propose a budget at or below the
// highest one known infeasible, it proposes the midpoint between that and
// the lowest budget that timed out instead (see SerenityScheduler). A
// value; not thread-safe.
class AdaptiveSoftBudget {
 public:
  enum Outcome { kTimeout, kNoSolution };

  AdaptiveSoftBudget(int64_t hard_budget, int64_t spec_bound)
      : old_(hard_budget),
        new_(hard_budget),
        lowest_timeout_(hard_budget + 1),
        infeasible_(spec_bound - 1) {}

  // The next budget, given the previous attempt's outcome; the first call
  // takes Algorithm 2's initial flag, kNoSolution, and returns tau_max.
  int64_t Next(Outcome last);
  // No schedule fits in `budget`: proved by the spec's bound or an attempt.
  bool KnownInfeasible(int64_t budget) const { return budget <= infeasible_; }
  // Every schedule's peak is above this.
  int64_t infeasible() const { return infeasible_; }

 private:
  int64_t old_, new_;
  int64_t lowest_timeout_;
  int64_t infeasible_;
  bool first_ = true;
};

// SERENITY (Ahn et al., MLSys 2020), §3.1-3.2 without divide-and-conquer
// and rewriting: the dynamic program of Algorithm 1 under the adaptive soft
// budget of Algorithm 2.
//
// Algorithm 1 (one attempt with budget tau): search step i holds, for each
// signature (the set of scheduled ops: it determines the zero-indegree set
// and the live memory), the schedule of least peak reaching it; step i+1
// appends each ready op to each of them and keeps the least peak per new
// signature, dropping paths whose peak exceeds tau. Memory follows the
// spec's rules (ScheduleStateSpace), not the paper's simpler count.
//
// Algorithm 2 (AdaptiveSoftBudget): hard budget tau_max = the peak of
// Kahn's order; start with tau = tau_max and flag 'no solution'; each round
// runs an attempt limited to `attempt_time_limit` (T); on 'timeout'
// (tau_old, tau_new) <- (tau_new, tau_new / 2); on 'no solution' (tau_old,
// tau_new) <- (tau_new, (tau_new + tau_old) / 2); stop at the first
// 'solution', after max_attempts, or at the deadline. Two changes, neither of
// which alters an answer: a budget below the spec's lower bound, or at or
// below one already found infeasible, is 'no solution' without running the
// DP; and when the rule above would propose such a budget after a 'no
// solution', it proposes the midpoint between the highest infeasible budget
// and the lowest budget that timed out instead (as written it could revisit
// known answers forever). An attempt that exceeds max_state_bytes counts as
// 'timeout'.
//
// What is proved: an attempt that finishes is exact for its budget, since
// the live memory after a set of ops depends on the set alone, so keeping
// the least peak per signature loses nothing (the paper's Theorem 1), and
// pruning at tau only drops paths above tau. Hence 'solution' under tau
// means the least peak of all schedules (every better one is below tau
// too): status kOptimal. 'no solution' under tau proves every peak exceeds
// tau: the lower bound becomes tau + 1. When no attempt finds a solution
// before the deadline, the result is the better of Kahn's and the greedy
// order, with that bound (kBounded if it beats the spec's, else kHeuristic).
//
// Cost per attempt: O(signatures within budget x ready ops x degree) time,
// and all visited signatures' records in memory (24 bytes each; the sets of
// two steps at a time). Exponential in the graph's width. Stateless between
// calls; one instance may serve concurrent calls.
class SerenityScheduler final : public Scheduler {
 public:
  explicit SerenityScheduler(SerenityOptions options = {}) : options_(options) {}

  absl::string_view name() const override { return "serenity"; }
  absl::StatusOr<ScheduleResult> Schedule(const MemoryModel& model,
                                          const ScheduleLimits& limits) const override;

 private:
  SerenityOptions options_;
};

}  // namespace ordo

#endif  // ORDO_CORE_SCHEDULE_SERENITY_SCHEDULER_H_
