#include "core/schedule/schedule_window.h"

#include <algorithm>
#include <random>
#include <vector>

#include "core/memory/simulator.h"
#include "core/schedule/greedy_scheduler.h"
#include "core/schedule/op_dag.h"
#include "core/testing/status_matchers.h"
#include "core/testing/test_graph.h"
#include "core/testing/trials.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::BruteForceMinPeak;
using ::ordo::testing::RandomDag;
using ::ordo::testing::RandomTopologicalOrder;
using ::ordo::testing::kGreedyTrapGraph;
using ::ordo::testing::TestModel;

// Every step of a window costs the same in the window's model as in the
// whole schedule, and its footprint before step 0 is no more than the step
// before the window (or the whole's initial bytes).
TEST(ScheduleWindowTest, StepsCostTheSameInTheWindowAndInTheWhole) {
  std::mt19937_64 rng(41);
  for (int trial = 0; trial < ::ordo::testing::Trials(2000); ++trial) {
    testing::RandomDagOptions options;
    options.num_ops = 1 + static_cast<int32_t>(rng() % 20);
    options.num_inputs = 1 + static_cast<int32_t>(rng() % 3);
    options.second_output_chance = 0.2;
    options.inplace_chance = 0.5;
    MemoryModel model = *BuildMemoryModel(RandomDag(rng, options), {});
    if (trial % 5 == 0) model.constant_bytes = 3;
    const std::vector<int32_t> order = RandomTopologicalOrder(model, rng);
    const int32_t n = model.num_ops();
    const int32_t begin = static_cast<int32_t>(rng() % (n + 1));
    const int32_t end = begin + static_cast<int32_t>(rng() % (n - begin + 1));
    const ScheduleWindow window = ExtractWindow(model, order, begin, end);
    std::vector<int32_t> identity(end - begin);
    for (int32_t i = 0; i < end - begin; ++i) identity[i] = i;
    ORDO_ASSERT_OK_AND_ASSIGN(SimulationResult whole, Simulate(model, order));
    ORDO_ASSERT_OK_AND_ASSIGN(SimulationResult part, Simulate(window.model, identity));
    for (int32_t i = 0; i < end - begin; ++i) {
      ASSERT_EQ(part.step_bytes[i], whole.step_bytes[begin + i]) << "trial " << trial;
    }
    const int64_t before = begin == 0 ? whole.initial_bytes : whole.step_bytes[begin - 1];
    ASSERT_LE(part.initial_bytes, before) << "trial " << trial;
  }
}

// Greedy holds a (40) while b's branch runs; the whole graph fits in one
// window, so refinement finds the optimum.
TEST(ScheduleWindowTest, RefinementFixesAShortSightedOrder) {
  const MemoryModel model = TestModel(kGreedyTrapGraph);
  const std::vector<int32_t> greedy = GreedyOrder(model, OpDag(model));
  const int64_t greedy_peak = *SimulatePeak(model, greedy);
  ORDO_ASSERT_OK_AND_ASSIGN(WindowRefinementResult refined,
                            RefineAroundPeak(model, greedy, 0, {}, {}));
  EXPECT_EQ(refined.peak_bytes, BruteForceMinPeak(model).peak_bytes);
  EXPECT_LT(refined.peak_bytes, greedy_peak);
  EXPECT_EQ(*SimulatePeak(model, refined.order), refined.peak_bytes);
  EXPECT_GE(refined.rounds, 1);
}

// A window at least as long as the schedule is the whole problem, so
// refinement is exact from any start: the brute-force optimum on thousands
// of small DAGs, from random orders.
TEST(ScheduleWindowTest, WholeScheduleWindowMatchesBruteForce) {
  std::mt19937_64 rng(43);
  WindowRefinementOptions whole;
  whole.window_ops = {16};
  for (int trial = 0; trial < ::ordo::testing::Trials(2000); ++trial) {
    testing::RandomDagOptions options;
    options.num_ops = 1 + static_cast<int32_t>(rng() % 10);
    options.num_inputs = 1 + static_cast<int32_t>(rng() % 3);
    options.max_inputs = 1 + static_cast<int32_t>(rng() % 3);
    options.second_output_chance = (trial % 3) * 0.2;
    options.inplace_chance = (trial % 4) * 0.25;
    MemoryModel model = *BuildMemoryModel(RandomDag(rng, options), {});
    if (trial % 7 == 0) model.constant_bytes = 3;
    const std::vector<int32_t> order = RandomTopologicalOrder(model, rng);
    ORDO_ASSERT_OK_AND_ASSIGN(WindowRefinementResult refined,
                              RefineAroundPeak(model, order, 0, whole, {}));
    ASSERT_EQ(refined.peak_bytes, BruteForceMinPeak(model).peak_bytes) << "trial " << trial;
    ASSERT_EQ(*SimulatePeak(model, refined.order), refined.peak_bytes);
  }
}

TEST(ScheduleWindowTest, RefinementNeverMakesItWorse) {
  std::mt19937_64 rng(42);
  WindowRefinementOptions small;
  small.window_ops = {3, 5};
  for (int trial = 0; trial < ::ordo::testing::Trials(300); ++trial) {
    testing::RandomDagOptions options;
    options.num_ops = 10 + static_cast<int32_t>(rng() % 30);
    options.inplace_chance = 0.5;
    MemoryModel model = *BuildMemoryModel(RandomDag(rng, options), {});
    const std::vector<int32_t> order = RandomTopologicalOrder(model, rng);
    ORDO_ASSERT_OK_AND_ASSIGN(WindowRefinementResult refined,
                              RefineAroundPeak(model, order, 0, small, {}));
    ASSERT_LE(refined.peak_bytes, *SimulatePeak(model, order));
    ASSERT_EQ(*SimulatePeak(model, refined.order), refined.peak_bytes);
  }
}

}  // namespace
}  // namespace ordo
