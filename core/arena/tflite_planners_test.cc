#include "core/arena/tflite_planners.h"

#include <algorithm>
#include <numeric>
#include <random>

#include "core/arena/arena_plan.h"
#include "core/arena/greedy_by_size_planners.h"
#include "core/testing/status_matchers.h"
#include "core/testing/test_graph.h"
#include "core/testing/trials.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::IsOk;
using ::ordo::testing::TestGraph;
using ::testing::ElementsAre;

struct BlockSpec {
  int64_t size;
  int32_t first;
  int32_t last;
};

// A hand-written instance: block i is owned by tensor i; alignment 1 so the
// sizes are the numbers written.
ArenaProblem Problem(int32_t num_steps, const std::vector<BlockSpec>& specs) {
  ArenaProblem problem;
  problem.num_steps = num_steps;
  problem.alignment = 1;
  for (size_t i = 0; i < specs.size(); ++i) {
    ArenaBlock block;
    block.size = block.raw_bytes = specs[i].size;
    block.first = specs[i].first;
    block.last = specs[i].last;
    block.tensors = {static_cast<int32_t>(i)};
    problem.blocks.push_back(block);
    problem.block_of_tensor.push_back(static_cast<int32_t>(i));
  }
  return problem;
}

// Best fit and first fit part ways. Sizes decrease with the index, so all
// three size-ordered planners place B1..B4 and then s; by the rules:
//   B1 160 [0,0] -> 0      (nothing placed)
//   B2 100 [0,3] -> 160    (above B1)
//   B3  60 [1,1] -> 0      (B1 is dead at step 1; the gap below B2 holds it)
//   B4  50 [1,3] -> 60     (above B3, in the gap below B2)
//   s   40 [2,2]: at step 2 the gaps are [0,60) (B3 dead) and [110,160).
// TFLite's Allocate keeps the smallest gap that fits: 110. TFLite Micro takes
// the first: 0.
ArenaProblem BestFitVersusFirstFit() {
  return Problem(4, {{160, 0, 0}, {100, 0, 3}, {60, 1, 1}, {50, 1, 3}, {40, 2, 2}});
}

TEST(TfliteArenaPlannerTest, TakesTheSmallestGapThatFits) {
  const ArenaPlacement placement =
      TfliteArenaPlanner().Place(BestFitVersusFirstFit(), ArenaLimits{});
  EXPECT_THAT(placement.offsets, ElementsAre(0, 160, 0, 60, 110));
  EXPECT_EQ(placement.algorithm, "tflite");
}

TEST(TflmArenaPlannerTest, TakesTheFirstGapThatFits) {
  const ArenaPlacement placement = TflmArenaPlanner().Place(BestFitVersusFirstFit(), ArenaLimits{});
  EXPECT_THAT(placement.offsets, ElementsAre(0, 160, 0, 60, 0));
}

TEST(GreedyBySizePlannerTest, IsBestFitInSizeOrder) {
  const ArenaPlacement placement =
      GreedyBySizePlanner().Place(BestFitVersusFirstFit(), ArenaLimits{});
  EXPECT_THAT(placement.offsets, ElementsAre(0, 160, 0, 60, 110));
}

// TFLite's CreateTensorAllocationVector: whole-run tensors first by id, then
// decreasing size, equal sizes by allocation step (inputs count as step 0),
// remaining ties by id.
TEST(TfliteAllocationOrderTest, FollowsCreateTensorAllocationVector) {
  ArenaProblem problem = Problem(4, {{64, 2, 3},     // 0
                                     {64, -1, 1},    // 1: graph input, step 0
                                     {32, 0, 3},     // 2: whole run
                                     {128, 1, 2},    // 3
                                     {64, 0, 0},     // 4: step 0, ties with 1
                                     {16, -1, 3}});  // 5: whole run
  problem.blocks[2].whole_run = true;
  problem.blocks[5].whole_run = true;
  EXPECT_THAT(TfliteAllocationOrder(problem), ElementsAre(2, 5, 3, 1, 4, 0));
  // TFLite Micro: a stable sort on size alone.
  EXPECT_THAT(TflmAllocationOrder(problem), ElementsAre(3, 0, 1, 4, 2, 5));
}

// The whole pipeline on a graph, placements derived by hand from TFLite's
// rules (alignment 64; steps a=0 .. e=4):
//   tensor (bytes) live        order  placement
//   y0 (64)        [0,4]       1st    whole run (produced at step 0, output): 0
//   t1 (256)       [0,2]       2nd    above y0: 64
//   t4 (192)       [3,4]       3rd    t1 is dead: above y0: 64
//   x  (128)       [-1,0]      4th    above t1: 320
//   t3 (128)       [2,3]       5th    above t1, t4: 320 (x is dead)
//   t2 (64)        [1,3]       6th    above t3: 448
//   y1 (64)        [4,4]       7th    above t4: 256
// x and t3 tie on size; x is allocated first (step 0 vs 2). The arena, 512,
// is the lower bound: step 2 holds y0 + t1 + t2 + t3.
TEST(TfliteArenaPlannerTest, MatchesHandComputedPlacementsOnAGraph) {
  const Graph graph = TestGraph(R"(
    input x 128
    op a Conv x -> y0:64 t1:256
    op b Conv t1 -> t2:64
    op c Conv t1 -> t3:128
    op d Conv t2 t3 -> t4:192
    op e Conv t4 -> y1:64
    output y0
    output y1
  )");
  const MemoryModel model = *BuildMemoryModel(graph, {});
  const SimulationResult simulation = *Simulate(model, {0, 1, 2, 3, 4});
  const ArenaProblem problem = *BuildArenaProblem(model, simulation, 64);
  const ArenaPlacement placement = TfliteArenaPlanner().Place(problem, ArenaLimits{});
  const ArenaPlan plan = MakeArenaPlan(problem, simulation, placement.offsets);
  ASSERT_THAT(VerifyArena(model, simulation, plan), IsOk());
  auto offset = [&](absl::string_view name) {
    return placement.offsets[problem.block_of_tensor[*graph.FindTensor(name)]];
  };
  EXPECT_EQ(offset("y0"), 0);
  EXPECT_EQ(offset("t1"), 64);
  EXPECT_EQ(offset("t4"), 64);
  EXPECT_EQ(offset("x"), 320);
  EXPECT_EQ(offset("t3"), 320);
  EXPECT_EQ(offset("t2"), 448);
  EXPECT_EQ(offset("y1"), 256);
  EXPECT_EQ(plan.arena_bytes, 512);
  EXPECT_EQ(plan.lower_bound_bytes, 512);
}

// Greedy by breadth: the widest step first. Step 1 (breadth 60: two blocks
// of 30) is laid out before step 0 (breadth 50: one block of 50), although
// greedy by size would start with the 50.
TEST(GreedyByBreadthPlannerTest, LaysOutTheWidestStepFirst) {
  const ArenaProblem problem = Problem(2, {{50, 0, 0}, {30, 1, 1}, {30, 1, 1}});
  EXPECT_THAT(BreadthOrder(problem), ElementsAre(1, 2, 0));
  EXPECT_THAT(SizeOrder(problem), ElementsAre(0, 1, 2));
  const ArenaPlacement placement = GreedyByBreadthPlanner().Place(problem, ArenaLimits{});
  EXPECT_THAT(placement.offsets, ElementsAre(0, 0, 30));
}

TEST(GreedyByBreadthPlannerTest, OrdersStepsByBreadthThenTheirBlocksBySize) {
  // Breadths: before step 0: 10; step 0: 10 + 20 = 30; step 1: 20 + 70 = 90.
  const ArenaProblem problem = Problem(2, {{10, -1, 0}, {20, 0, 1}, {70, 1, 1}});
  EXPECT_THAT(BreadthOrder(problem), ElementsAre(2, 1, 0));
}


// The GPU delegate's construction, step lists and all: the reference that
// BreadthOrder must reproduce without building the lists.
std::vector<int32_t> BreadthOrderByProfiles(const ArenaProblem& problem) {
  const int32_t slots = problem.num_steps + 1;
  std::vector<std::vector<int32_t>> profile(slots);
  std::vector<int64_t> breadth(slots, 0);
  for (int32_t b = 0; b < static_cast<int32_t>(problem.blocks.size()); ++b) {
    const ArenaBlock& block = problem.blocks[b];
    for (int32_t s = block.first + 1; s <= block.last + 1; ++s) {
      profile[s].push_back(b);
      breadth[s] += block.raw_bytes;
    }
  }
  std::vector<int32_t> slot_order(slots);
  std::iota(slot_order.begin(), slot_order.end(), 0);
  std::stable_sort(slot_order.begin(), slot_order.end(),
                   [&breadth](int32_t a, int32_t b) { return breadth[a] > breadth[b]; });
  std::vector<int32_t> order;
  std::vector<bool> taken(problem.blocks.size(), false);
  for (int32_t s : slot_order) {
    std::vector<int32_t>& blocks = profile[s];
    std::sort(blocks.begin(), blocks.end(), [&problem](int32_t a, int32_t b) {
      const int64_t x = problem.blocks[a].raw_bytes;
      const int64_t y = problem.blocks[b].raw_bytes;
      return x != y ? x > y : a < b;
    });
    for (int32_t b : blocks) {
      if (!taken[b]) order.push_back(b);
      taken[b] = true;
    }
  }
  return order;
}

TEST(GreedyByBreadthPlannerTest, OrderEqualsTheStepListConstruction) {
  std::mt19937_64 rng(77);
  for (int trial = 0; trial < testing::Trials(500); ++trial) {
    const int32_t steps = std::uniform_int_distribution<int32_t>(1, 40)(rng);
    const int32_t blocks = std::uniform_int_distribution<int32_t>(1, 60)(rng);
    std::vector<BlockSpec> specs;
    for (int32_t b = 0; b < blocks; ++b) {
      int32_t first = std::uniform_int_distribution<int32_t>(-1, steps - 1)(rng);
      int32_t last = std::uniform_int_distribution<int32_t>(first, steps - 1)(rng);
      // Few distinct sizes, so ties in size and in breadth both occur.
      const int64_t size = 8 * std::uniform_int_distribution<int64_t>(1, 4)(rng);
      specs.push_back({size, first, std::max(first, last)});
    }
    const ArenaProblem problem = Problem(steps, specs);
    ASSERT_EQ(BreadthOrder(problem), BreadthOrderByProfiles(problem)) << "trial " << trial;
  }
}

}  // namespace
}  // namespace ordo
