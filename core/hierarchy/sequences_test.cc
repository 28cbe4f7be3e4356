#include "core/hierarchy/sequences.h"

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

std::vector<std::vector<int32_t>> Sequences(const MemoryModel& model) {
  return FormSequences(model, Digraph::OfOps(model));
}

// Footprints relative to the live bytes before op a (stable / transient):
// a 100/0 (x dies), b 100/0, r 0/0 (in place), c 10/-90, d 110 > 100:
// Condition 1 fails, so d starts a sequence of its own.
TEST(SequencesTest, ChainSplitsWhereTheFirstStepStopsBeingTheHighest) {
  MemoryModel model = *BuildMemoryModel(TestGraph(R"(
    input x 100
    op a Conv x -> a:100
    op b Conv a -> b:100
    op r Relu b -> r:100
    op c Conv r -> c:10
    op d Conv c -> d:200
    output d
  )"),
                                        {});
  EXPECT_THAT(Sequences(model), ElementsAre(ElementsAre(0, 1, 2, 3), ElementsAre(4)));
}

// Relative to the bytes before a: a's step is 50 (x dies after it: 40),
// b's 40 + 60 = 100 > 50, and the transient rises from 40 to 50: both
// conditions fail.
TEST(SequencesTest, GrowingChainIsNotJoined) {
  MemoryModel model = *BuildMemoryModel(TestGraph(R"(
    input x 10
    op a Conv x -> a:50
    op b Conv a -> b:60
    output b
  )"),
                                        {});
  EXPECT_THAT(Sequences(model), ElementsAre(ElementsAre(0), ElementsAre(1)));
}

// x is also read by e, so it may outlive a: a's stable footprint is taken
// as 100 with x alive, and b's (100 - 0 + 100 = 200) is higher. With e gone,
// x dies at a and b fits (Condition 1: 100 >= 0 + 100).
TEST(SequencesTest, FirstOpInputsCountAsDyingOnlyWhenNoOneElseReadsThem) {
  MemoryModel shared = *BuildMemoryModel(TestGraph(R"(
    input x 100
    op a Conv x -> a:100
    op b Conv a -> b:100
    op e Conv x -> e:1
    output b
    output e
  )"),
                                         {});
  EXPECT_THAT(Sequences(shared), ElementsAre(ElementsAre(0), ElementsAre(1), ElementsAre(2)));
  MemoryModel alone = *BuildMemoryModel(TestGraph(R"(
    input x 100
    op a Conv x -> a:100
    op b Conv a -> b:100
    output b
  )"),
                                        {});
  EXPECT_THAT(Sequences(alone), ElementsAre(ElementsAre(0, 1)));
}

// Structure: a fork ends a chain (a has two successors), a join starts one
// (d has two predecessors), and an op reading a graph input mid-chain (f)
// starts one.
TEST(SequencesTest, ForksJoinsAndGraphInputsBreakChains) {
  MemoryModel model = *BuildMemoryModel(TestGraph(R"(
    input x 10
    input y 1
    op a Conv x -> a:10
    op b Relu a -> b:10
    op c Relu a -> c:10
    op d Add b c -> d:10
    op e Relu d -> e:10
    op f Add e y -> f:10
    output f
  )"),
                                        {});
  EXPECT_THAT(Sequences(model), ElementsAre(ElementsAre(0), ElementsAre(1), ElementsAre(2),
                                            ElementsAre(3, 4), ElementsAre(5)));
}

TEST(SequencesTest, SingletonsAreNumberedTopologically) {
  MemoryModel model = *BuildMemoryModel(TestGraph(R"(
    input x 1
    op a Conv x -> a:1
    op b Conv a -> b:1
    output b
  )"),
                                        {});
  EXPECT_THAT(SingletonSequences(Digraph::OfOps(model)),
              ElementsAre(ElementsAre(0), ElementsAre(1)));
}

}  // namespace
}  // namespace ordo
