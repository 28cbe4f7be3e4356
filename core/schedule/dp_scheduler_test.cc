#include "core/schedule/dp_scheduler.h"

#include <atomic>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "core/memory/simulator.h"
#include "core/schedule/greedy_scheduler.h"
#include "core/schedule/op_dag.h"
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
using ::ordo::testing::ManyBranches;

using ::ordo::testing::BruteForceMinPeak;
using ::ordo::testing::RandomDag;
using ::ordo::testing::kGreedyTrapGraph;
using ::ordo::testing::TestGraph;
using ::testing::AnyOf;

// Greedy starts the wide branch (a1) first because its first step is
// cheaper, and then holds 50 bytes while the other branch runs.
TEST(DpSchedulerTest, BeatsGreedyWhereGreedyIsShortSighted) {
  MemoryModel model = TestModel(kGreedyTrapGraph);
  OpDag dag(model);
  const int64_t greedy_peak = *SimulatePeak(model, GreedyOrder(model, dag));
  ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult result, DpScheduler().Schedule(model, {}));
  ExpectValidSchedule(model, result);
  EXPECT_EQ(result.peak_bytes, testing::BruteForceMinPeak(model).peak_bytes);
  EXPECT_LT(result.peak_bytes, greedy_peak);
  EXPECT_EQ(result.status, ScheduleStatus::kOptimal);
  EXPECT_EQ(result.lower_bound_bytes, result.peak_bytes);
  EXPECT_EQ(result.algorithm, "dp");
}

TEST(DpSchedulerTest, EmptyAndSingleOpModels) {
  MemoryModel empty;
  ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult none, DpScheduler().Schedule(empty, {}));
  EXPECT_TRUE(none.order.empty());
  EXPECT_EQ(none.status, ScheduleStatus::kOptimal);
  MemoryModel one = TestModel(TestGraph("input x 3\nop a Conv x -> y:4\noutput y\n"));
  ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult result, DpScheduler().Schedule(one, {}));
  EXPECT_EQ(result.peak_bytes, 7);
  EXPECT_EQ(result.status, ScheduleStatus::kOptimal);
}

struct RandomCase {
  int32_t max_ops;
  double inplace_chance;
  double second_output_chance;
};

// The property every exact scheduler must have: the brute-force optimum,
// proved, on thousands of random small DAGs.
TEST(DpSchedulerTest, MatchesBruteForceOnRandomDags) {
  std::mt19937_64 rng(2024);
  int beaten = 0;
  for (int trial = 0; trial < ::ordo::testing::Trials(3000); ++trial) {
    testing::RandomDagOptions options;
    options.num_ops = 1 + static_cast<int32_t>(rng() % 10);
    options.num_inputs = 1 + static_cast<int32_t>(rng() % 3);
    options.max_inputs = 1 + static_cast<int32_t>(rng() % 3);
    options.second_output_chance = (trial % 3) * 0.2;
    options.inplace_chance = (trial % 4) * 0.25;
    Graph g = RandomDag(rng, options);
    MemoryModel model = TestModel(g);
    if (trial % 11 == 0) model.constant_bytes = 7;
    const int64_t expected = BruteForceMinPeak(model).peak_bytes;
    ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult result, DpScheduler().Schedule(model, {}));
    ExpectValidSchedule(model, result);
    ASSERT_EQ(result.peak_bytes, expected) << "trial " << trial;
    ASSERT_EQ(result.status, ScheduleStatus::kOptimal) << "trial " << trial;
    ASSERT_EQ(result.lower_bound_bytes, expected);
    if (result.algorithm == "dp") ++beaten;
  }
  EXPECT_GT(beaten, 0);  // the search did more than confirm the heuristic
}

TEST(DpSchedulerTest, DominanceChangesNoPeak) {
  std::mt19937_64 rng(7);
  DpScheduler plain(DpOptions{.dominance = false, .complete_every = 0});
  for (int trial = 0; trial < ::ordo::testing::Trials(500); ++trial) {
    testing::RandomDagOptions options;
    options.num_ops = 1 + static_cast<int32_t>(rng() % 10);
    options.num_inputs = 1 + static_cast<int32_t>(rng() % 2);
    options.second_output_chance = 0.2;
    options.inplace_chance = 0.5;
    MemoryModel model = TestModel(RandomDag(rng, options));
    ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult with, DpScheduler().Schedule(model, {}));
    ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult without, plain.Schedule(model, {}));
    ASSERT_EQ(with.peak_bytes, without.peak_bytes) << "trial " << trial;
  }
}

// Each way the search narrows its space, alone and together, against brute
// force: signature merging and the bound-ordered open list are always on;
// dominance (step 4) and greedy completions (step 5, here after every
// expansion so they lower the incumbent as often as they can) are switched
// one at a time; the incumbent's pruning (step 3) runs from the worst
// start (model order, kept unless beaten) and from the optimum itself,
// which must then be proved rather than improved.
TEST(DpSchedulerTest, EachSearchSpaceReductionMatchesBruteForce) {
  struct Variant {
    const char* name;
    DpOptions options;
  };
  const Variant variants[] = {
      {"merging only", DpOptions{.dominance = false, .complete_every = 0}},
      {"dominance", DpOptions{.dominance = true, .complete_every = 0}},
      {"completions", DpOptions{.dominance = false, .complete_every = 1}},
      {"all", DpOptions{}},
  };
  std::mt19937_64 rng(2025);
  for (int trial = 0; trial < ::ordo::testing::Trials(1500); ++trial) {
    testing::RandomDagOptions options;
    options.num_ops = 1 + static_cast<int32_t>(rng() % 10);
    options.num_inputs = 1 + static_cast<int32_t>(rng() % 3);
    options.max_inputs = 1 + static_cast<int32_t>(rng() % 3);
    options.second_output_chance = (trial % 3) * 0.2;
    options.inplace_chance = (trial % 4) * 0.25;
    MemoryModel model = TestModel(RandomDag(rng, options));
    if (trial % 13 == 0) model.constant_bytes = 5;
    const testing::BruteForceResult brute = BruteForceMinPeak(model);
    for (const Variant& variant : variants) {
      const std::string where = absl::StrCat(variant.name, " trial ", trial);
      ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult result,
                                DpScheduler(variant.options).Schedule(model, {}));
      ExpectValidSchedule(model, result);
      ASSERT_EQ(result.peak_bytes, brute.peak_bytes) << where;
      ASSERT_EQ(result.status, ScheduleStatus::kOptimal) << where;
    }
    std::vector<int32_t> model_order(model.num_ops());
    for (int32_t op = 0; op < model.num_ops(); ++op) model_order[op] = op;
    ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult from_model,
                              DpScheduler().Improve(model, {}, model_order, "model"));
    ASSERT_EQ(from_model.peak_bytes, brute.peak_bytes) << "from model order, trial " << trial;
    ASSERT_EQ(from_model.status, ScheduleStatus::kOptimal);
    ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult from_optimum,
                              DpScheduler().Improve(model, {}, brute.order, "brute"));
    ASSERT_EQ(from_optimum.peak_bytes, brute.peak_bytes) << "from the optimum, trial " << trial;
    ASSERT_EQ(from_optimum.algorithm, "brute");  // nothing beats it
    ASSERT_EQ(from_optimum.status, ScheduleStatus::kOptimal);
    ASSERT_EQ(from_optimum.lower_bound_bytes, brute.peak_bytes);
  }
}

// The dominance rule on graphs too big for brute force: the search without
// it (and without greedy completions) must prove the same optimum.
TEST(DpSchedulerTest, DominanceChangesNoPeakOnMediumGraphs) {
  std::mt19937_64 rng(8);
  DpScheduler plain(DpOptions{.dominance = false, .complete_every = 0});
  for (int trial = 0; trial < ::ordo::testing::Trials(300); ++trial) {
    MemoryModel model;
    if (trial % 2 == 0) {
      testing::RandomDagOptions options;
      options.num_ops = 12 + static_cast<int32_t>(rng() % 10);
      options.num_inputs = 1 + static_cast<int32_t>(rng() % 3);
      options.second_output_chance = 0.2;
      options.inplace_chance = 0.5;
      model = TestModel(RandomDag(rng, options));
    } else {
      testing::RandomHourglassOptions options;
      options.num_cells = 2 + static_cast<int32_t>(rng() % 3);
      options.skip_chance = 0.3;
      options.output_chance = 0.1;
      options.inplace_chance = 0.5;
      model = TestModel(testing::RandomHourglass(rng, options));
    }
    ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult with, DpScheduler().Schedule(model, {}));
    ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult without, plain.Schedule(model, {}));
    ASSERT_EQ(with.status, ScheduleStatus::kOptimal);
    ASSERT_EQ(without.status, ScheduleStatus::kOptimal);
    ASSERT_EQ(with.peak_bytes, without.peak_bytes) << "trial " << trial;
  }
}

TEST(DpSchedulerTest, ImprovesOnAGivenIncumbentAndNamesItWhenKept) {
  MemoryModel model = TestModel(ManyBranches(3));
  // Model order runs every a_i first: 1 + 3*10 + ... ; dp finds better.
  ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult result,
                            DpScheduler().Improve(model, {}, {0, 2, 4, 1, 3, 5, 6}, "model"));
  EXPECT_EQ(result.algorithm, "dp");
  EXPECT_EQ(result.status, ScheduleStatus::kOptimal);
  ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult kept,
                            DpScheduler().Improve(model, {}, result.order, "mine"));
  EXPECT_EQ(kept.algorithm, "mine");
  EXPECT_EQ(kept.peak_bytes, result.peak_bytes);
  EXPECT_EQ(kept.status, ScheduleStatus::kOptimal);
}

TEST(DpSchedulerTest, DeadlineOnFakeClockReturnsTheIncumbent) {
  MemoryModel model = TestModel(DistinctBranches(200));
  TickingClock clock(absl::Milliseconds(1));
  ScheduleLimits limits;
  limits.clock = &clock;
  limits.deadline = clock.Now() + absl::Milliseconds(200);
  ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult result, DpScheduler().Schedule(model, limits));
  ExpectValidSchedule(model, result);
  EXPECT_THAT(result.status, AnyOf(ScheduleStatus::kBounded, ScheduleStatus::kHeuristic));
  EXPECT_GT(result.stats.states_expanded, 0);
  EXPECT_LT(result.stats.states_expanded, 200 * DpOptions().check_every);
}

TEST(DpSchedulerTest, RealDeadlineIsHonoured) {
  MemoryModel model = TestModel(DistinctBranches(200));
  ScheduleLimits limits;
  const absl::Time start = absl::Now();
  limits.deadline = start + absl::Milliseconds(200);
  ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult result, DpScheduler().Schedule(model, limits));
  const absl::Duration took = absl::Now() - start;
  ExpectValidSchedule(model, result);
  // Without the deadline this search runs for minutes; the margin is wide
  // because CI machines are shared and loaded ones miss tight margins.
  EXPECT_LT(took, absl::Milliseconds(200 + 2800));
  EXPECT_THAT(result.status, AnyOf(ScheduleStatus::kBounded, ScheduleStatus::kHeuristic));
}

TEST(DpSchedulerTest, CancelledCallReturnsAValidScheduleAtOnce) {
  MemoryModel model = TestModel(DistinctBranches(200));
  std::atomic<bool> cancelled{true};
  ScheduleLimits limits;
  limits.cancelled = &cancelled;
  ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult result, DpScheduler().Schedule(model, limits));
  ExpectValidSchedule(model, result);
  EXPECT_LE(result.stats.states_expanded, DpOptions().check_every);
  EXPECT_NE(result.status, ScheduleStatus::kOptimal);
}

TEST(DpSchedulerTest, StateMemoryLimitStopsTheSearch) {
  MemoryModel model = TestModel(DistinctBranches(200));
  ScheduleLimits limits;
  limits.max_state_bytes = 4 << 20;
  ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult result, DpScheduler().Schedule(model, limits));
  ExpectValidSchedule(model, result);
  EXPECT_GT(result.stats.states_stored, 1000);
  // Each stored state costs well over 40 bytes, so 4 MiB holds < 100k.
  EXPECT_LT(result.stats.states_stored, 100000);
  EXPECT_NE(result.status, ScheduleStatus::kOptimal);
}

}  // namespace
}  // namespace ordo
