#include "core/memory/sub_model.h"

#include <random>
#include <vector>

#include "core/memory/memory_model.h"
#include "core/testing/test_graph.h"
#include "core/testing/trials.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::TestGraph;
using ::testing::ElementsAre;

TEST(SubModelBuilderTest, RenumbersAndDropsEdgesOutside) {
  Graph g = TestGraph(R"(
    input x 10
    op a Conv x -> y:20
    op b Relu y -> z:20
    op c Conv z -> w:5
    op d Add y w -> v:20
    output v
  )");
  const MemoryModel model = *BuildMemoryModel(g, {});
  const int32_t y = *g.FindTensor("y"), z = *g.FindTensor("z"), w = *g.FindTensor("w");
  // Ops c then b, out of id order: local op 0 is c, 1 is b.
  SubModelBuilder builder(model);
  const MemoryModel sub = builder.Build({*g.FindOp("c"), *g.FindOp("b")},
                                        {{y, true}, {z, false}, {w, true}}, 7);
  EXPECT_EQ(sub.constant_bytes, 7);
  ASSERT_EQ(sub.num_tensors(), 3);
  EXPECT_EQ(sub.tensors[0].producer, kNoId);  // y: made by a, outside
  EXPECT_THAT(sub.tensors[0].consumers, ElementsAre(1));  // b (d is outside)
  EXPECT_TRUE(sub.tensors[0].live_at_end);
  EXPECT_EQ(sub.tensors[1].producer, 1);
  EXPECT_THAT(sub.tensors[1].consumers, ElementsAre(0));
  EXPECT_EQ(sub.tensors[2].producer, 0);
  EXPECT_TRUE(sub.tensors[2].consumers.empty());
  EXPECT_THAT(sub.ops[0].inputs, ElementsAre(1));
  EXPECT_THAT(sub.ops[0].outputs, ElementsAre(2));
  EXPECT_THAT(sub.ops[1].inputs, ElementsAre(0));
  // b (Relu) may overwrite y in the whole model, so in the sub-model too.
  ASSERT_EQ(model.ops[*g.FindOp("b")].inplace_input, y);
  EXPECT_EQ(sub.ops[1].inplace_input, 0);
}

// Cutting the whole model with every tensor keeps it as it is, and a builder
// used many times gives what a fresh one gives (its maps are reset).
TEST(SubModelBuilderTest, WholeModelIsItselfAndReuseIsClean) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < ordo::testing::Trials(50); ++trial) {
    const Graph g = ordo::testing::RandomDag(rng, {.num_ops = 12});
    const MemoryModel model = *BuildMemoryModel(g, {});
    std::vector<int32_t> ops(model.num_ops());
    for (int32_t i = 0; i < model.num_ops(); ++i) ops[i] = i;
    std::vector<SubModelTensor> tensors;
    for (int32_t t = 0; t < model.num_tensors(); ++t) {
      tensors.push_back({t, model.tensors[t].live_at_end});
    }
    SubModelBuilder reused(model);
    const MemoryModel half = reused.Build(absl::MakeSpan(ops).subspan(0, 6), tensors, 0);
    const MemoryModel whole = reused.Build(ops, tensors, model.constant_bytes);
    const MemoryModel half_again = SubModelBuilder(model).Build(
        absl::MakeSpan(ops).subspan(0, 6), tensors, 0);
    ASSERT_EQ(whole.num_tensors(), model.num_tensors());
    for (int32_t t = 0; t < model.num_tensors(); ++t) {
      EXPECT_EQ(whole.tensors[t].producer, model.tensors[t].producer);
      EXPECT_EQ(whole.tensors[t].consumers, model.tensors[t].consumers);
      EXPECT_EQ(whole.tensors[t].bytes, model.tensors[t].bytes);
      EXPECT_EQ(half.tensors[t].consumers, half_again.tensors[t].consumers);
      EXPECT_EQ(half.tensors[t].producer, half_again.tensors[t].producer);
    }
    for (int32_t i = 0; i < model.num_ops(); ++i) {
      EXPECT_EQ(whole.ops[i].inputs, model.ops[i].inputs);
      EXPECT_EQ(whole.ops[i].outputs, model.ops[i].outputs);
      EXPECT_EQ(whole.ops[i].inplace_input, model.ops[i].inplace_input);
    }
  }
}

}  // namespace
}  // namespace ordo
