#include "core/schedule/greedy_scheduler.h"

#include "core/memory/simulator.h"
#include "core/schedule/topological_orders.h"
#include "core/testing/test_graph.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::TestGraph;
using ::testing::ElementsAre;

// Two branches from x: the "big" branch creates 100 bytes and shrinks to 1;
// the "small" branch stays at 10. Running big first frees its 100 before the
// small branch's 10 are held: peak 1+100+... Greedy must finish a branch that
// shrinks memory rather than interleave.
TEST(GreedySchedulerTest, FinishesShrinkingBranchBeforeOpeningAnother) {
  Graph g = TestGraph(R"(
    input x 1
    op a1 Conv x -> a:50
    op b1 Conv x -> b:50
    op a2 Conv a -> a_small:1
    op b2 Conv b -> b_small:1
    op j Add a_small b_small -> y:1
    output y
  )");
  MemoryModel model = *BuildMemoryModel(g, {});
  OpDag dag(model);
  std::vector<int32_t> order = GreedyOrder(model, dag);
  EXPECT_THAT(order, ElementsAre(0, 2, 1, 3, 4));
  EXPECT_EQ(*SimulatePeak(model, order), 52);
  EXPECT_EQ(*SimulatePeak(model, KahnOrder(dag)), 101);
}

}  // namespace
}  // namespace ordo
