#include "core/schedule/serenity_scheduler.h"

#include <atomic>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/memory/simulator.h"
#include "core/testing/fake_clock.h"
#include "core/testing/status_matchers.h"
#include "core/testing/schedule_checks.h"
#include "core/testing/test_graph.h"
#include "core/testing/trials.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::ExpectValidSchedule;
using ::ordo::testing::TestModel;

using ::ordo::testing::TickingClock;

using ::ordo::testing::DistinctBranches;

using ::ordo::testing::BruteForceMinPeak;
using ::ordo::testing::RandomDag;
using ::testing::AnyOf;

testing::RandomDagOptions RandomOptions(std::mt19937_64& rng, int trial) {
  testing::RandomDagOptions options;
  options.num_ops = 1 + static_cast<int32_t>(rng() % 10);
  options.num_inputs = 1 + static_cast<int32_t>(rng() % 3);
  options.max_inputs = 1 + static_cast<int32_t>(rng() % 3);
  options.second_output_chance = (trial % 3) * 0.2;
  options.inplace_chance = (trial % 4) * 0.25;
  return options;
}

// Algorithm 2's budgets as written: halve on 'timeout', back up halfway
// to the previous budget on 'no solution'.
TEST(AdaptiveSoftBudgetTest, FollowsAlgorithm2) {
  AdaptiveSoftBudget budget(/*hard_budget=*/1000, /*spec_bound=*/100);
  EXPECT_EQ(budget.Next(AdaptiveSoftBudget::kNoSolution), 1000);  // line 5: tau_max
  EXPECT_EQ(budget.Next(AdaptiveSoftBudget::kTimeout), 500);
  EXPECT_EQ(budget.Next(AdaptiveSoftBudget::kTimeout), 250);
  EXPECT_EQ(budget.Next(AdaptiveSoftBudget::kNoSolution), 375);  // (250 + 500) / 2
  EXPECT_EQ(budget.infeasible(), 250);
  EXPECT_TRUE(budget.KnownInfeasible(250));
  EXPECT_FALSE(budget.KnownInfeasible(251));
  EXPECT_EQ(budget.Next(AdaptiveSoftBudget::kTimeout), 187);
  EXPECT_TRUE(budget.KnownInfeasible(187));
}

// Where Algorithm 2 would step back to a budget already known infeasible,
// the next one lies between the infeasible and the timed-out budgets.
TEST(AdaptiveSoftBudgetTest, NeverRevisitsAKnownInfeasibleBudget) {
  AdaptiveSoftBudget budget(1000, 100);
  budget.Next(AdaptiveSoftBudget::kNoSolution);                  // 1000
  budget.Next(AdaptiveSoftBudget::kTimeout);                     // 500
  EXPECT_EQ(budget.Next(AdaptiveSoftBudget::kNoSolution), 750);  // 500 infeasible
  // 750 infeasible too: as written (750 + 500) / 2 = 625, below 750.
  EXPECT_EQ(budget.Next(AdaptiveSoftBudget::kNoSolution), 750 + (1000 - 750) / 2);
  EXPECT_EQ(budget.infeasible(), 750);
}

// A budget below the spec's bound needs no attempt.
TEST(AdaptiveSoftBudgetTest, BudgetsBelowTheSpecBoundAreInfeasible) {
  AdaptiveSoftBudget budget(1000, 600);
  EXPECT_TRUE(budget.KnownInfeasible(599));
  EXPECT_FALSE(budget.KnownInfeasible(600));
}

// With time to finish, the first attempt (tau = Kahn's peak) is exact.
TEST(SerenitySchedulerTest, MatchesBruteForceOnRandomDags) {
  std::mt19937_64 rng(77);
  for (int trial = 0; trial < ::ordo::testing::Trials(1500); ++trial) {
    MemoryModel model = TestModel(RandomDag(rng, RandomOptions(rng, trial)));
    const int64_t expected = BruteForceMinPeak(model).peak_bytes;
    ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult result, SerenityScheduler().Schedule(model, {}));
    ExpectValidSchedule(model, result);
    ASSERT_EQ(result.peak_bytes, expected) << "trial " << trial;
    ASSERT_EQ(result.status, ScheduleStatus::kOptimal);
  }
}

// Algorithm 1 alone (① of SERENITY's Table 2): one attempt with no budget,
// so nothing but signature merging narrows the search; exact whenever it
// finishes.
TEST(SerenitySchedulerTest, AlgorithmOneAloneMatchesBruteForce) {
  std::mt19937_64 rng(79);
  SerenityOptions options;
  options.adaptive_soft_budget = false;
  const SerenityScheduler dp_alone(options);
  for (int trial = 0; trial < ::ordo::testing::Trials(1500); ++trial) {
    MemoryModel model = TestModel(RandomDag(rng, RandomOptions(rng, trial)));
    if (trial % 13 == 0) model.constant_bytes = 5;
    const int64_t expected = BruteForceMinPeak(model).peak_bytes;
    ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult result, dp_alone.Schedule(model, {}));
    ExpectValidSchedule(model, result);
    ASSERT_EQ(result.peak_bytes, expected) << "trial " << trial;
    ASSERT_EQ(result.status, ScheduleStatus::kOptimal) << "trial " << trial;
    ASSERT_EQ(result.algorithm, "serenity") << "trial " << trial;
  }
}

// Attempts that time out after a few signatures drive Algorithm 2 through
// lowered and raised budgets. Whatever it ends with must be sound: an
// optimal claim is the optimum, a bound never exceeds it.
TEST(SerenitySchedulerTest, EveryBudgetOutcomeIsSound) {
  std::mt19937_64 rng(78);
  int optimal = 0, bounded = 0;
  for (int trial = 0; trial < ::ordo::testing::Trials(1500); ++trial) {
    MemoryModel model = TestModel(RandomDag(rng, RandomOptions(rng, trial)));
    const int64_t expected = BruteForceMinPeak(model).peak_bytes;
    TickingClock clock(absl::Milliseconds(1));
    ScheduleLimits limits;
    limits.clock = &clock;
    limits.deadline = clock.Now() + absl::Milliseconds(400);
    SerenityOptions options;
    options.check_every = 1;
    options.attempt_time_limit = absl::Milliseconds(2 + trial % 5);
    ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult result,
                              SerenityScheduler(options).Schedule(model, limits));
    ExpectValidSchedule(model, result);
    ASSERT_LE(result.lower_bound_bytes, expected) << "trial " << trial;
    if (result.status == ScheduleStatus::kOptimal) {
      ASSERT_EQ(result.peak_bytes, expected) << "trial " << trial;
      ++optimal;
    }
    if (result.status == ScheduleStatus::kBounded) ++bounded;
  }
  EXPECT_GT(optimal, 0);
  EXPECT_GT(bounded, 0);  // some 'no solution' answers raised the bound
}

TEST(SerenitySchedulerTest, DeadlineReturnsAValidSchedule) {
  MemoryModel model = TestModel(DistinctBranches(200));
  ScheduleLimits limits;
  const absl::Time start = absl::Now();
  limits.deadline = start + absl::Milliseconds(200);
  ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult result, SerenityScheduler().Schedule(model, limits));
  // Without the deadline this search runs for minutes; the margin is wide
  // because CI machines are shared and a loaded one failed a 300 ms margin.
  EXPECT_LT(absl::Now() - start, absl::Milliseconds(200 + 2800));
  ExpectValidSchedule(model, result);
  EXPECT_THAT(result.status, AnyOf(ScheduleStatus::kBounded, ScheduleStatus::kHeuristic));
}

TEST(SerenitySchedulerTest, CancelledCallReturnsAValidSchedule) {
  MemoryModel model = TestModel(DistinctBranches(200));
  std::atomic<bool> cancelled{true};
  ScheduleLimits limits;
  limits.cancelled = &cancelled;
  ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult result, SerenityScheduler().Schedule(model, limits));
  ExpectValidSchedule(model, result);
  EXPECT_EQ(result.stats.states_expanded, 0);
}

}  // namespace
}  // namespace ordo
