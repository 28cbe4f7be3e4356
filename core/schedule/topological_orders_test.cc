#include "core/schedule/topological_orders.h"

#include <random>

#include "core/memory/simulator.h"
#include "core/schedule/greedy_scheduler.h"
#include "core/testing/test_graph.h"
#include "core/testing/trials.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::TestGraph;
using ::testing::ElementsAre;

// a feeds b and c; b feeds d; c feeds e; d and e join in f.
constexpr char kDiamond[] = R"(
  input x 1
  op a Conv x -> ta:1
  op b Conv ta -> tb:1
  op c Conv ta -> tc:1
  op d Conv tb -> td:1
  op e Conv tc -> te:1
  op f Add td te -> tf:1
  output tf
)";

TEST(TopologicalOrdersTest, KahnIsBreadthFirst) {
  Graph g = TestGraph(kDiamond);
  OpDag dag(*BuildMemoryModel(g, {}));
  EXPECT_THAT(KahnOrder(dag), ElementsAre(0, 1, 2, 3, 4, 5));
}

TEST(TopologicalOrdersTest, ReversePostOrderIsDepthFirst) {
  Graph g = TestGraph(kDiamond);
  OpDag dag(*BuildMemoryModel(g, {}));
  // DFS from a: b, d, f (post f, d, b), then c, e (post e, c), a.
  EXPECT_THAT(ReversePostOrder(dag), ElementsAre(0, 2, 4, 1, 3, 5));
}

TEST(TopologicalOrdersTest, AllOrdersAreValidOnRandomGraphs) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 300; ++i) {
    Graph g = ::ordo::testing::RandomDag(
        rng, {.num_ops = 2 + i % 30, .num_inputs = 1 + i % 3});
    MemoryModel model = *BuildMemoryModel(g, {});
    OpDag dag(model);
    for (const auto& order : {ModelOrder(dag), KahnOrder(dag), ReversePostOrder(dag),
                              GreedyOrder(model, dag)}) {
      absl::StatusOr<int64_t> peak = SimulatePeak(model, order);
      ASSERT_TRUE(peak.ok()) << peak.status();
      EXPECT_GE(*peak, MemoryLowerBound(model));
    }
  }
}

TEST(TopologicalOrdersTest, DeepChainIsIterative) {
  GraphBuilder builder;
  builder.AddTensorBytes("t0", 1, TensorKind::kInput);
  builder.AddGraphInput("t0");
  const int kDepth = 90000;
  for (int i = 1; i <= kDepth; ++i) {
    builder.AddTensorBytes("t" + std::to_string(i), 1);
    builder.AddOp("op" + std::to_string(i), "Conv", {"t" + std::to_string(i - 1)},
                  {"t" + std::to_string(i)});
  }
  Graph g = *std::move(builder).Build();
  OpDag dag(*BuildMemoryModel(g, {}));
  EXPECT_EQ(ReversePostOrder(dag).size(), static_cast<size_t>(kDepth));
}

}  // namespace
}  // namespace ordo
