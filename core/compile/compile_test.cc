#include "core/compile/compile.h"

#include <random>

#include "core/arena/arena_plan.h"
#include "core/arena/arena_planner_registry.h"
#include "core/testing/status_matchers.h"
#include "core/testing/test_graph.h"
#include "core/testing/trials.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::StatusIs;
using ::ordo::testing::TestGraph;
using ::testing::HasSubstr;

using ::ordo::testing::kTwoBranchesGraph;

TEST(CompileTest, ReportsScheduleBaselinesAndVerifiedProfile) {
  Graph g = TestGraph(kTwoBranchesGraph);
  RealClock clock;
  ORDO_ASSERT_OK_AND_ASSIGN(CompileResult result, Compile(g, {}, clock));
  EXPECT_EQ(result.peak_bytes, 52);
  EXPECT_EQ(result.simulation.peak_bytes, 52);
  EXPECT_EQ(result.schedule.size(), 5u);
  ASSERT_EQ(result.baselines.size(), 3u);
  EXPECT_EQ(result.baselines[0].name, "model_order");
  EXPECT_EQ(result.baselines[0].peak_bytes, 101);
  EXPECT_LE(result.lower_bound_bytes, result.peak_bytes);
  EXPECT_EQ(result.scheduler, "best");
}

// Estimate's numbers are the simulator's: the bound of the model, the peaks
// of the model order and of greedy (kTwoBranchesGraph: 101 and 52).
TEST(CompileTest, EstimateReportsTheBoundAndTheBaselinePeaksOfTheModel) {
  const Graph g = TestGraph(kTwoBranchesGraph);
  ORDO_ASSERT_OK_AND_ASSIGN(EstimateResult estimate, Estimate(g, {}, nullptr));
  EXPECT_EQ(estimate.ops, 5);
  EXPECT_EQ(estimate.model_order_peak_bytes, 101);
  EXPECT_EQ(estimate.greedy_peak_bytes, 52);
  EXPECT_EQ(estimate.lower_bound_bytes, MemoryLowerBound(*BuildMemoryModel(g, {})));
  std::mt19937_64 rng(11);
  for (int i = 0; i < 50; ++i) {
    const Graph random = ::ordo::testing::RandomDag(rng, {.num_ops = 2 + i % 30});
    ORDO_ASSERT_OK_AND_ASSIGN(EstimateResult result, Estimate(random, {}, nullptr));
    EXPECT_EQ(result.lower_bound_bytes, MemoryLowerBound(*BuildMemoryModel(random, {})));
    EXPECT_LE(result.lower_bound_bytes, result.greedy_peak_bytes);
  }
}

TEST(CompileTest, ArenaIsVerifiedAndTrafficNeverWorseThanModelOrderAtEqualPeak) {
  std::mt19937_64 rng(5);
  RealClock clock;
  for (int i = 0; i < 100; ++i) {
    Graph g = ::ordo::testing::RandomDag(rng, {.num_ops = 4 + i % 20, .num_inputs = 1 + i % 2});
    CompileOptions options;
    options.on_chip_bytes = 40 + i;
    options.alignment = 8;
    ORDO_ASSERT_OK_AND_ASSIGN(CompileResult result, Compile(g, options, clock));
    MemoryModel model = *BuildMemoryModel(g, options.memory);
    ORDO_EXPECT_OK(VerifyArena(model, result.simulation, result.arena));
    ASSERT_TRUE(result.traffic.has_value());
    ASSERT_TRUE(result.model_order_traffic.has_value());
    if (result.baselines[0].peak_bytes == result.peak_bytes) {
      EXPECT_LE(result.traffic->total_bytes, result.model_order_traffic->total_bytes);
    }
    ASSERT_EQ(result.arena_baselines.size(), 2u);
    EXPECT_EQ(result.arena_baselines[0].name, "tflite");
    EXPECT_EQ(result.arena_baselines[1].name, "tflm");
    for (const ArenaBaseline& baseline : result.arena_baselines) {
      EXPECT_LE(result.arena.arena_bytes, baseline.schedule_bytes) << baseline.name;
      // Figures reused from the arena stage equal planning afresh.
      ArenaOptions fresh;
      fresh.planner = baseline.name;
      fresh.alignment = options.alignment;
      ORDO_ASSERT_OK_AND_ASSIGN(ArenaPlan on_schedule,
                                PlanArena(model, result.simulation, fresh, clock));
      EXPECT_EQ(baseline.schedule_bytes, on_schedule.arena_bytes) << baseline.name;
      ORDO_ASSERT_OK_AND_ASSIGN(ArenaPlan on_model_order,
                                PlanArena(model, result.model_order_simulation, fresh, clock));
      EXPECT_EQ(baseline.model_order_bytes, on_model_order.arena_bytes) << baseline.name;
    }
  }
}

TEST(CompileTest, IoOutsideArenaLeavesGraphInputsAndOutputsOutOfPeakAndArena) {
  Graph g = TestGraph(R"(
    input x 40
    op a1 Conv x -> a:50
    op b1 Conv x -> b:50
    op a2 Conv a -> a_small:1
    op b2 Conv b -> b_small:1
    op j Add a_small b_small -> y:30
    output y
  )");
  RealClock clock;
  CompileOptions options;
  options.memory.io_outside_arena = true;
  options.alignment = 1;
  ORDO_ASSERT_OK_AND_ASSIGN(CompileResult result, Compile(g, options, clock));
  EXPECT_TRUE(result.memory.io_outside_arena);
  // a1 (a), a2 (a + a_small), b1 (a_small + b), ...: x and y cost nothing.
  EXPECT_EQ(result.peak_bytes, 52);
  EXPECT_EQ(result.arena.arena_bytes, 52);
  for (const TensorPlacement& p : result.arena.tensors) {
    EXPECT_NE(p.tensor, *g.FindTensor("x"));
    EXPECT_NE(p.tensor, *g.FindTensor("y"));
  }
  EXPECT_EQ(result.arena.tensors.size(), 4u);
  ORDO_ASSERT_OK_AND_ASSIGN(CompileResult counted, Compile(g, {.alignment = 1}, clock));
  EXPECT_FALSE(counted.memory.io_outside_arena);
  EXPECT_EQ(counted.peak_bytes, 91);  // a2 or b1 with x live: 40 + 50 + 1
}

TEST(CompileTest, RejectsUnknownSchedulerAndBadOptions) {
  Graph g = TestGraph(kTwoBranchesGraph);
  RealClock clock;
  EXPECT_THAT(Compile(g, {.scheduler = "nope"}, clock).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unknown scheduler")));
  EXPECT_THAT(Compile(g, {.time_limit = absl::Seconds(-1)}, clock).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("negative")));
  EXPECT_THAT(Compile(g, {.arena_planner = "nope"}, clock).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("nope")));
  EXPECT_THAT(Compile(g, {.alignment = 0}, clock).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("alignment")));
}

}  // namespace
}  // namespace ordo
