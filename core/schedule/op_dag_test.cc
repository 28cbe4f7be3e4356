#include "core/schedule/op_dag.h"

#include <random>
#include <vector>

#include "core/memory/memory_model.h"
#include "core/testing/test_graph.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::RandomDag;
using ::ordo::testing::RandomDagOptions;
using ::ordo::testing::TestModel;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::IsEmpty;

// b reads y twice and c reads y and z: each neighbour is listed once.
TEST(OpDagTest, ListsEachNeighbourOnceInAscendingOrder) {
  const MemoryModel model = TestModel(R"(
    input x 4
    op a Relu x -> y:4
    op b Add y y -> z:4
    op c Add z y -> w:4
    output w
  )");
  const OpDag dag(model);
  ASSERT_EQ(dag.num_ops(), 3);
  EXPECT_THAT(dag.predecessors(0), IsEmpty());
  EXPECT_THAT(dag.predecessors(1), ElementsAre(0));
  EXPECT_THAT(dag.predecessors(2), ElementsAre(0, 1));
  EXPECT_THAT(dag.successors(0), ElementsAre(1, 2));
  EXPECT_THAT(dag.successors(1), ElementsAre(2));
  EXPECT_THAT(dag.successors(2), IsEmpty());
  EXPECT_EQ(dag.in_degree(2), 2);
}

// Against the definition on random DAGs: p precedes q exactly when q reads a
// tensor p writes.
TEST(OpDagTest, MatchesTheDefinitionOnRandomDags) {
  std::mt19937_64 rng(19);
  for (int trial = 0; trial < 200; ++trial) {
    RandomDagOptions options;
    options.num_ops = 1 + trial % 40;
    options.max_inputs = 4;
    const MemoryModel model = *BuildMemoryModel(RandomDag(rng, options), {});
    const int32_t n = model.num_ops();
    std::vector<std::vector<bool>> edge(n, std::vector<bool>(n, false));
    for (int32_t q = 0; q < n; ++q) {
      for (int32_t t : model.ops[q].inputs) {
        if (model.tensors[t].producer != kNoId) edge[model.tensors[t].producer][q] = true;
      }
    }
    const OpDag dag(model);
    ASSERT_EQ(dag.num_ops(), n);
    for (int32_t op = 0; op < n; ++op) {
      std::vector<int32_t> preds, succs;
      for (int32_t other = 0; other < n; ++other) {
        if (edge[other][op]) preds.push_back(other);
        if (edge[op][other]) succs.push_back(other);
      }
      EXPECT_THAT(dag.predecessors(op), ElementsAreArray(preds)) << "trial " << trial;
      EXPECT_THAT(dag.successors(op), ElementsAreArray(succs)) << "trial " << trial;
      EXPECT_EQ(dag.in_degree(op), static_cast<int32_t>(preds.size()));
    }
  }
}

}  // namespace
}  // namespace ordo
