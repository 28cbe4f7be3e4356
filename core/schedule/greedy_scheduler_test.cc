#include "core/schedule/greedy_scheduler.h"

#include "core/memory/simulator.h"
#include "core/schedule/topological_orders.h"
#include "core/testing/test_graph.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::kTwoBranchesGraph;
using ::ordo::testing::TestModel;
using ::testing::ElementsAre;

// Two 50-byte branches from x, each shrinking to 1 byte: greedy must finish
// a branch that shrinks memory (peak 52) rather than interleave (101).
TEST(GreedySchedulerTest, FinishesShrinkingBranchBeforeOpeningAnother) {
  const MemoryModel model = TestModel(kTwoBranchesGraph);
  OpDag dag(model);
  std::vector<int32_t> order = GreedyOrder(model, dag);
  EXPECT_THAT(order, ElementsAre(0, 2, 1, 3, 4));
  EXPECT_EQ(*SimulatePeak(model, order), 52);
  EXPECT_EQ(*SimulatePeak(model, KahnOrder(dag)), 101);
}

}  // namespace
}  // namespace ordo
