#include "core/schedule/serenity_scheduler.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/memory/simulator.h"
#include "core/schedule/greedy_scheduler.h"
#include "core/schedule/op_dag.h"
#include "core/schedule/op_set_table.h"
#include "core/schedule/schedule_state_space.h"
#include "core/schedule/topological_orders.h"
#include "core/util/status_macros.h"

namespace ordo {
namespace {

enum class Flag { kSolution, kNoSolution, kTimeout, kCancelled };

// M_i of Algorithm 1, per signature: (mu_peak, mu, and s_i as a parent
// pointer into M_{i-1} plus the op appended).
struct Memo {
  int64_t peak;
  int64_t live;
  int32_t parent;
  int32_t op;
};

struct Attempt {
  Flag flag = Flag::kNoSolution;
  std::vector<int32_t> order;  // when kSolution
  int64_t peak = 0;
  int64_t signatures = 0;  // visited, all steps
  int64_t expansions = 0;  // signatures expanded
};

// One run of Algorithm 1 with soft budget `budget`, stopping at `deadline`.
class BudgetedDp {
 public:
  BudgetedDp(const ScheduleStateSpace& space, const SerenityOptions& options,
             const ScheduleLimits& limits, absl::Time deadline)
      : space_(space),
        options_(options),
        limits_(limits),
        deadline_(deadline),
        current_(space.words()),
        next_(space.words()),
        set_(space.words()),
        child_(space.words()) {}

  Attempt Run(int64_t budget);

 private:
  // Search step i -> i+1 (Algorithm 1, lines 9-25). False on a limit.
  bool Step(int64_t budget, Attempt& attempt);
  Flag CheckLimits() const;
  int64_t MemoryBytes() const;
  std::vector<int32_t> Path() const;

  const ScheduleStateSpace& space_;
  const SerenityOptions& options_;
  const ScheduleLimits& limits_;
  const absl::Time deadline_;
  // Signatures of M_i and M_{i+1}; memos of every step (the last one being
  // built during Step), for the paths.
  OpSetTable current_, next_;
  std::vector<std::vector<Memo>> memos_;
  std::vector<uint64_t> set_, child_;
  std::vector<int32_t> ready_;
  Flag stop_ = Flag::kNoSolution;
};

Attempt BudgetedDp::Run(int64_t budget) {
  Attempt attempt;
  if (space_.initial_footprint() > budget) return attempt;
  current_.FindOrInsert(set_.data(), 0);
  memos_.push_back({{space_.initial_footprint(), space_.initial_live(), kNoId, kNoId}});
  attempt.signatures = 1;
  for (int32_t i = 0; i < space_.num_ops(); ++i) {
    if (!Step(budget, attempt)) {
      attempt.flag = stop_;
      return attempt;
    }
    if (memos_.back().empty()) return attempt;  // every path exceeded the budget
    std::swap(current_, next_);
  }
  attempt.flag = Flag::kSolution;
  attempt.peak = memos_.back()[0].peak;
  attempt.order = Path();
  return attempt;
}

bool BudgetedDp::Step(int64_t budget, Attempt& attempt) {
  next_.Clear();
  // M_{i+1} is built in place, so that the memory check counts it.
  memos_.emplace_back();
  const std::vector<Memo>& from = memos_[memos_.size() - 2];
  std::vector<Memo>& to = memos_.back();
  for (int32_t s = 0; s < static_cast<int32_t>(from.size()); ++s) {
    if (++attempt.expansions % std::max(1, options_.check_every) == 0) {
      stop_ = CheckLimits();
      if (stop_ != Flag::kNoSolution) return false;
    }
    std::copy_n(current_.set(s), space_.words(), set_.data());
    space_.ReadyOps(set_.data(), ready_);
    for (int32_t op : ready_) {
      const ScheduleStateSpace::Step step = space_.Run(set_.data(), from[s].live, op);
      const int64_t peak = std::max(from[s].peak, step.footprint);
      if (peak > budget) continue;  // soft budget: prune (§3.2, Figure 8a)
      std::copy(set_.begin(), set_.end(), child_.begin());
      ScheduleStateSpace::Add(child_.data(), op);
      auto [entry, inserted] =
          next_.FindOrInsert(child_.data(), current_.hash(s) ^ space_.zobrist(op));
      if (inserted) {
        to.push_back({peak, step.live_after, s, op});
        ++attempt.signatures;
      } else if (peak < to[entry].peak) {
        // Memoize the schedule with the least peak (line 21).
        to[entry] = {peak, step.live_after, s, op};
      }
    }
  }
  return true;
}

Flag BudgetedDp::CheckLimits() const {
  if (limits_.StopRequested()) {
    return Flag::kCancelled;
  }
  // Entries are numbered with int32_t: a step that large is a timeout too.
  if (limits_.Now() >= deadline_ || MemoryBytes() > limits_.max_state_bytes ||
      next_.size() >= INT32_MAX / 2) {
    return Flag::kTimeout;
  }
  return Flag::kNoSolution;
}

int64_t BudgetedDp::MemoryBytes() const {
  int64_t bytes = current_.MemoryBytes() + next_.MemoryBytes();
  for (const std::vector<Memo>& memos : memos_) {
    bytes += static_cast<int64_t>(memos.capacity() * sizeof(Memo));
  }
  // The buffers of the step being built grow by doubling: count their next
  // growth, so the limit holds through it.
  const int64_t growing =
      std::max(next_.MemoryBytes(), static_cast<int64_t>(memos_.back().capacity() * sizeof(Memo)));
  return bytes + growing;
}

std::vector<int32_t> BudgetedDp::Path() const {
  std::vector<int32_t> order(memos_.size() - 1);
  int32_t entry = 0;
  for (size_t i = memos_.size() - 1; i > 0; --i) {
    order[i - 1] = memos_[i][entry].op;
    entry = memos_[i][entry].parent;
  }
  return order;
}

AdaptiveSoftBudget::Outcome OutcomeOf(Flag flag) {
  return flag == Flag::kTimeout ? AdaptiveSoftBudget::kTimeout : AdaptiveSoftBudget::kNoSolution;
}

// Algorithm 2's loop: attempts under shrinking or growing budgets until one
// finds a solution, the limits stop it, or max_attempts pass.
struct MetaSearch {
  Flag flag = Flag::kNoSolution;
  Attempt solution;        // when flag == kSolution
  int64_t infeasible = 0;  // every schedule's peak is above this
  ScheduleStats stats;
};

MetaSearch SearchBudgets(const ScheduleStateSpace& space, const SerenityOptions& options,
                         const ScheduleLimits& limits, int64_t hard_budget, int64_t spec_bound) {
  MetaSearch search;
  if (!options.adaptive_soft_budget) {
    // Algorithm 1 alone: nothing is pruned (no peak exceeds INT64_MAX), so
    // 'no solution' cannot happen and a limit proves nothing.
    Attempt result = BudgetedDp(space, options, limits, limits.deadline).Run(INT64_MAX);
    search.stats.states_expanded = result.expansions;
    search.stats.states_stored = result.signatures;
    search.flag = result.flag;
    if (search.flag == Flag::kSolution) search.solution = std::move(result);
    search.infeasible = spec_bound - 1;
    return search;
  }
  AdaptiveSoftBudget budgets(hard_budget, spec_bound);
  for (int32_t attempt = 0; attempt < options.max_attempts && !limits.Expired(); ++attempt) {
    const int64_t budget = budgets.Next(OutcomeOf(search.flag));
    if (budgets.KnownInfeasible(budget)) {
      search.flag = Flag::kNoSolution;
      continue;
    }
    const absl::Time deadline =
        std::min(limits.deadline, limits.Now() + options.attempt_time_limit);
    Attempt result = BudgetedDp(space, options, limits, deadline).Run(budget);
    search.stats.states_expanded += result.expansions;
    search.stats.states_stored = std::max(search.stats.states_stored, result.signatures);
    search.flag = result.flag;
    if (search.flag == Flag::kSolution) {
      search.solution = std::move(result);
      break;
    }
    if (search.flag == Flag::kCancelled) break;
  }
  // Record the last answer's bound.
  if (search.flag == Flag::kNoSolution) budgets.Next(AdaptiveSoftBudget::kNoSolution);
  search.infeasible = budgets.infeasible();
  return search;
}

}  // namespace

int64_t AdaptiveSoftBudget::Next(Outcome last) {
  const int64_t old_budget = old_, new_budget = new_;
  if (last == kTimeout) {
    old_ = new_budget;
    new_ = new_budget / 2;
    lowest_timeout_ = std::min(lowest_timeout_, new_budget);
  } else {
    old_ = new_budget;
    new_ = (new_budget + old_budget) / 2;
    // Line 5's initial flag is no attempt's answer: it only starts at tau_max.
    if (!first_) {
      infeasible_ = std::max(infeasible_, new_budget);
      if (new_ <= infeasible_) new_ = infeasible_ + (lowest_timeout_ - infeasible_) / 2;
    }
  }
  first_ = false;
  return new_;
}

absl::StatusOr<ScheduleResult> SerenityScheduler::Schedule(const MemoryModel& model,
                                                           const ScheduleLimits& limits) const {
  const absl::Time start = limits.Now();
  OpDag dag(model);
  std::vector<int32_t> kahn = KahnOrder(dag);
  std::vector<int32_t> greedy = GreedyOrder(model, dag);
  ORDO_ASSIGN_OR_RETURN(const int64_t hard_budget, SimulatePeak(model, kahn));
  ORDO_ASSIGN_OR_RETURN(const int64_t greedy_peak, SimulatePeak(model, greedy));
  const int64_t spec_bound = MemoryLowerBound(model);
  // The paper's DP as published, without ordo's symmetry edges, so that
  // the ablation (bench/ordo-ablation) measures the paper's method.
  const ScheduleStateSpace space(model, /*break_symmetry=*/false);
  MetaSearch search = SearchBudgets(space, options_, limits, hard_budget, spec_bound);
  // Without a solution: the better of the cheap orders.
  std::vector<int32_t> order = std::move(search.solution.order);
  std::string algorithm = "serenity";
  if (search.flag != Flag::kSolution) {
    const bool use_greedy = greedy_peak < hard_budget;
    order = use_greedy ? std::move(greedy) : std::move(kahn);
    algorithm = use_greedy ? "greedy" : "kahn";
  }
  ORDO_ASSIGN_OR_RETURN(ScheduleResult result,
                        FinishSchedule(model, std::move(order), algorithm, start, limits));
  // The DP's own count must be the simulator's; a difference is a bug.
  if (search.flag == Flag::kSolution && result.peak_bytes != search.solution.peak) {
    return absl::InternalError(absl::StrCat("serenity: counted peak ", search.solution.peak,
                                            ", simulated ", result.peak_bytes));
  }
  const int64_t proven = search.flag == Flag::kSolution ? result.peak_bytes : search.infeasible + 1;
  ApplyLowerBound(proven, spec_bound, result);
  result.stats.states_expanded = search.stats.states_expanded;
  result.stats.states_stored = search.stats.states_stored;
  return result;
}

}  // namespace ordo
