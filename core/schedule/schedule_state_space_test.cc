#include "core/schedule/schedule_state_space.h"

#include <random>
#include <vector>

#include "core/memory/simulator.h"
#include "core/testing/test_graph.h"
#include "core/testing/trials.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::RandomDag;
using ::ordo::testing::kInPlaceChainGraph;
using ::ordo::testing::TestGraph;
using ::ordo::testing::TestModel;

// A random topological order: a random ready op at each step.
std::vector<int32_t> RandomOrder(const ScheduleStateSpace& space, std::mt19937_64& rng) {
  std::vector<uint64_t> set(space.words(), 0);
  std::vector<int32_t> order, ready;
  for (int32_t step = 0; step < space.num_ops(); ++step) {
    space.ReadyOps(set.data(), ready);
    const int32_t op = ready[rng() % ready.size()];
    ScheduleStateSpace::Add(set.data(), op);
    order.push_back(op);
  }
  return order;
}

// ReadyAfter must give ReadyOps's list, in its order, after every step of
// random orders of random graphs (multi-consumer tensors, ops with several
// outputs, several graph inputs, more than one 64-op word).
TEST(ScheduleStateSpaceTest, ReadyAfterIsReadyOpsOfTheGrownSet) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < ::ordo::testing::Trials(300); ++trial) {
    testing::RandomDagOptions options;
    options.num_ops = 1 + static_cast<int32_t>(rng() % 150);
    options.num_inputs = 1 + static_cast<int32_t>(rng() % 3);
    options.max_inputs = 1 + static_cast<int32_t>(rng() % 4);
    options.second_output_chance = 0.3;
    Graph g = RandomDag(rng, options);
    // Every third graph a fan of alike branches, whose symmetry edges are
    // predecessors too.
    MemoryModel model =
        trial % 3 == 0 ? TestModel(testing::ManyBranches(1 + rng() % 40)) : TestModel(g);
    ScheduleStateSpace space(model, /*break_symmetry=*/true);
    std::vector<uint64_t> set(space.words(), 0);
    std::vector<int32_t> updated, scanned;
    space.ReadyOps(set.data(), updated);
    for (int32_t step = 0; step < space.num_ops(); ++step) {
      const int32_t op = updated[rng() % updated.size()];
      ScheduleStateSpace::Add(set.data(), op);
      space.ReadyAfter(set.data(), op, updated);
      space.ReadyOps(set.data(), scanned);
      ASSERT_EQ(updated, scanned) << "trial " << trial << " step " << step << " op " << op;
    }
    EXPECT_TRUE(updated.empty());
  }
}

TEST(ScheduleStateSpaceTest, InplaceStepMatchesTheSimulator) {
  Graph g = TestGraph(kInPlaceChainGraph);
  MemoryModel model = TestModel(g);
  ScheduleStateSpace space(model, /*break_symmetry=*/true);
  std::vector<uint64_t> set(1, 0);
  EXPECT_EQ(space.initial_footprint(), 10);
  EXPECT_EQ(space.initial_live(), 10);
  ScheduleStateSpace::Step a = space.Run(set.data(), 10, 0);
  EXPECT_EQ(a.footprint, 30);
  EXPECT_EQ(a.live_after, 20);
  ScheduleStateSpace::Add(set.data(), 0);
  ScheduleStateSpace::Step r = space.Run(set.data(), 20, 1);
  EXPECT_EQ(r.footprint, 20);  // z written over y
  EXPECT_EQ(r.live_after, 20);
}

// The incremental count must be the simulator's, step by step, on graphs
// with multi-consumer tensors, multi-output ops and in-place ops.
TEST(ScheduleStateSpaceTest, IncrementalCountEqualsSimulatorOnRandomGraphs) {
  std::mt19937_64 rng(42);
  for (int trial = 0; trial < ::ordo::testing::Trials(500); ++trial) {
    testing::RandomDagOptions options;
    options.num_ops = 1 + static_cast<int32_t>(rng() % 40);
    options.num_inputs = 1 + static_cast<int32_t>(rng() % 3);
    options.second_output_chance = 0.3;
    options.inplace_chance = 0.5;
    Graph g = RandomDag(rng, options);
    MemoryModel model = TestModel(g);
    if (trial % 7 == 0) model.constant_bytes = 5;
    ScheduleStateSpace space(model, /*break_symmetry=*/true);
    std::vector<int32_t> order = RandomOrder(space, rng);
    absl::StatusOr<SimulationResult> sim = Simulate(model, order);
    ASSERT_TRUE(sim.ok()) << sim.status();
    ASSERT_EQ(space.initial_footprint(), sim->initial_bytes);
    std::vector<uint64_t> set(space.words(), 0);
    int64_t live = space.initial_live();
    ASSERT_EQ(live, ScheduleStateSpace::LiveBytes(model, set.data()));
    for (size_t step = 0; step < order.size(); ++step) {
      ASSERT_TRUE(space.IsReady(set.data(), order[step]));
      ScheduleStateSpace::Step s = space.Run(set.data(), live, order[step]);
      ASSERT_EQ(s.footprint, sim->step_bytes[step]) << "trial " << trial << " step " << step;
      ASSERT_GE(s.footprint - live, space.min_step_growth());
      ScheduleStateSpace::Add(set.data(), order[step]);
      live = s.live_after;
      ASSERT_EQ(live, ScheduleStateSpace::LiveBytes(model, set.data()));
    }
  }
}

}  // namespace
}  // namespace ordo
