#include "core/memory/live_memory.h"

#include "core/memory/memory_model.h"
#include "core/memory/simulator.h"
#include "core/testing/test_graph.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::kInPlaceChainGraph;
using ::ordo::testing::TestGraph;
using ::ordo::testing::TestModel;

TEST(LiveMemoryTest, StepsThroughAChainWithAnInPlaceOp) {
  Graph g = TestGraph(kInPlaceChainGraph);
  const MemoryModel model = TestModel(g);
  LiveMemory memory(model);
  EXPECT_EQ(memory.live_bytes(), 10);

  const LiveMemory::Step preview = memory.Preview(0);
  EXPECT_EQ(memory.live_bytes(), 10);  // a preview changes nothing
  const LiveMemory::Step a = memory.Run(0);
  EXPECT_EQ(a.footprint_bytes, preview.footprint_bytes);
  EXPECT_EQ(a.footprint_bytes, 30);
  EXPECT_EQ(a.live_after_bytes, 20);  // x freed after its last reader
  EXPECT_EQ(a.inplace_input, kNoId);

  const LiveMemory::Step r = memory.Run(1);
  EXPECT_EQ(r.footprint_bytes, 20);  // z written over y
  EXPECT_EQ(r.inplace_input, *g.FindTensor("y"));
  EXPECT_EQ(r.live_after_bytes, 20);

  const LiveMemory::Step b = memory.Run(2);
  EXPECT_EQ(b.footprint_bytes, 21);
  EXPECT_EQ(b.live_after_bytes, 1);  // the output stays
  EXPECT_EQ(memory.live_bytes(), 1);
}

TEST(LiveMemoryTest, NoInPlaceWhileAnotherReaderRemainsOrOverAnOutput) {
  Graph g = TestGraph(R"(
    input x 8
    op p Relu x -> y:8
    op q Relu x -> z:8
    op s Relu z -> u:8
    output y
    output z
    output u
  )");
  const MemoryModel model = TestModel(g);
  LiveMemory memory(model);
  const LiveMemory::Step p = memory.Run(0);
  EXPECT_EQ(p.inplace_input, kNoId);  // q still reads x
  EXPECT_EQ(p.footprint_bytes, 16);
  const LiveMemory::Step q = memory.Run(1);
  EXPECT_EQ(q.inplace_input, *g.FindTensor("x"));  // the last reader of x
  EXPECT_EQ(q.footprint_bytes, 16);
  const LiveMemory::Step s = memory.Run(2);
  EXPECT_EQ(s.inplace_input, kNoId);  // z is an output: never overwritten
  EXPECT_EQ(s.footprint_bytes, 24);
}

TEST(StepTableTest, StartsWithTheOutputsAndListsTheInputsThatMayDie) {
  Graph g = TestGraph(R"(
    input x 8
    op p Relu x -> y:8
    op q Relu x -> z:8
    op s Relu z -> u:8
    op t Add y u -> v:8 dead:2
    output z
    output v
  )");
  const MemoryModel model = TestModel(g);
  const StepTable steps(model);
  ASSERT_EQ(steps.num_ops(), 4);
  // t's outputs both count while it runs; `dead` (read by no one) not after.
  const StepBytes t = steps.Start(3, 100);
  EXPECT_EQ(t.footprint, 110);
  EXPECT_EQ(t.live_after, 108);
  // x may die at p or at q, whichever reads it last; z is an output: never.
  ASSERT_EQ(steps.releases(0).size(), 1u);
  EXPECT_EQ(steps.releases(0)[0].tensor, *g.FindTensor("x"));
  EXPECT_TRUE(steps.releases(0)[0].overwritten);  // Relu, same size
  EXPECT_TRUE(steps.releases(2).empty());
  // Freed: dies after the step, and written over during it when in place.
  StepBytes p = steps.Start(0, 8);
  StepTable::Free(steps.releases(0)[0], p);
  EXPECT_EQ(p.footprint, 8);
  EXPECT_EQ(p.live_after, 8);
  ASSERT_EQ(steps.releases(3).size(), 2u);  // y and u
  StepBytes both = steps.Start(3, 24);
  for (const StepTable::Release& r : steps.releases(3)) StepTable::Free(r, both);
  EXPECT_EQ(both.live_after, 24 + 8 - 16);
}

TEST(LiveMemoryTest, UnreadInputsAreNotLiveOnceStepsBegin) {
  Graph g = TestGraph(R"(
    input x 8
    input unused 100
    op a Conv x -> y:4
    output y
  )");
  const MemoryModel model = TestModel(g);
  EXPECT_EQ(InitialBytes(model), 108);  // the footprint before step 0
  EXPECT_EQ(InitialLiveBytes(model), 8);
  EXPECT_EQ(LiveMemory(model).live_bytes(), 8);
}

}  // namespace
}  // namespace ordo
