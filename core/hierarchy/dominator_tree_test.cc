#include "core/hierarchy/dominator_tree.h"

#include <utility>
#include <vector>

#include "core/hierarchy/digraph.h"
#include "core/memory/memory_model.h"
#include "core/testing/test_graph.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::TestGraph;
using ::testing::ElementsAre;
using ::testing::UnorderedElementsAre;

// A diamond followed by a tail: a is the entry, d the join.
//   a -> b -> d -> e
//   a -> c -> d
Digraph Diamond() {
  MemoryModel model = *BuildMemoryModel(TestGraph(R"(
    input x 1
    op a Conv x -> a:1
    op b Conv a -> b:1
    op c Conv a -> c:1
    op d Add b c -> d:1
    op e Conv d -> e:1
    output e
  )"),
                                        {});
  return Digraph::OfOps(model);
}

Digraph Reversed(const Digraph& graph) {
  std::vector<std::pair<int32_t, int32_t>> edges;
  for (int32_t v = 0; v < graph.num_nodes(); ++v) {
    for (int32_t w : graph.successors(v)) edges.push_back({w, v});
  }
  return Digraph(graph.num_nodes(), edges);
}

TEST(DominatorTreeTest, DiamondDominators) {
  const DominatorTree tree(Diamond(), /*root=*/0);
  EXPECT_EQ(tree.idom(0), kNoId);
  EXPECT_EQ(tree.idom(1), 0);
  EXPECT_EQ(tree.idom(2), 0);
  EXPECT_EQ(tree.idom(3), 0);  // neither branch alone dominates the join
  EXPECT_EQ(tree.idom(4), 3);
  EXPECT_TRUE(tree.Dominates(0, 4));
  EXPECT_TRUE(tree.Dominates(3, 3));
  EXPECT_FALSE(tree.Dominates(1, 3));
  EXPECT_THAT(tree.Dominated(3), ElementsAre(3, 4));
  EXPECT_THAT(tree.Dominated(0), UnorderedElementsAre(0, 1, 2, 3, 4));
}

TEST(DominatorTreeTest, PostDominatorsAreDominatorsOfTheReversedGraph) {
  const DominatorTree post(Reversed(Diamond()), /*root=*/4);
  EXPECT_EQ(post.idom(3), 4);
  EXPECT_EQ(post.idom(1), 3);
  EXPECT_EQ(post.idom(2), 3);
  EXPECT_EQ(post.idom(0), 3);  // every path from a to the exit passes d
  EXPECT_THAT(post.Dominated(3), UnorderedElementsAre(0, 1, 2, 3));
}

// Cooper-Harvey-Kennedy's own example (Figure 4 of the paper, nodes
// renumbered 5..1 -> 0..4): a loop, where one pass is not enough.
TEST(DominatorTreeTest, IrreducibleLoopConverges) {
  const Digraph graph(5, {{0, 1}, {0, 2}, {1, 3}, {2, 4}, {3, 4}, {4, 3}});
  const DominatorTree tree(graph, 0);
  EXPECT_EQ(tree.idom(1), 0);
  EXPECT_EQ(tree.idom(2), 0);
  EXPECT_EQ(tree.idom(3), 0);
  EXPECT_EQ(tree.idom(4), 0);
}

TEST(DominatorTreeTest, UnreachableNodesDominateNothing) {
  const Digraph graph(3, {{0, 1}, {2, 1}});
  const DominatorTree tree(graph, 0);
  EXPECT_FALSE(tree.reachable(2));
  EXPECT_EQ(tree.idom(2), kNoId);
  EXPECT_FALSE(tree.Dominates(2, 1));
  EXPECT_TRUE(tree.Dominates(0, 1));
  EXPECT_TRUE(tree.Dominated(2).empty());
}

// No recursion anywhere: a chain far deeper than any call stack.
TEST(DominatorTreeTest, DeepChainNeedsNoRecursion) {
  constexpr int32_t kNodes = 1'000'000;
  std::vector<std::pair<int32_t, int32_t>> edges;
  for (int32_t v = 0; v + 1 < kNodes; ++v) edges.push_back({v, v + 1});
  const DominatorTree tree(Digraph(kNodes, edges), 0);
  EXPECT_EQ(tree.idom(kNodes - 1), kNodes - 2);
  EXPECT_TRUE(tree.Dominates(1, kNodes - 1));
  EXPECT_EQ(tree.Dominated(kNodes - 3).size(), 3u);
}

}  // namespace
}  // namespace ordo
