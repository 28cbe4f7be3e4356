// Region fusion (region_fusion.h): the demand-driven rings against the
// chain's line buffers and against rings worked out by hand on a diamond;
// growing a region keeps it convex and refuses ops that cannot stream.

#include "core/rewrite/region_fusion.h"

#include <random>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/memory/memory_model.h"
#include "core/rewrite/onnx_test_model.h"
#include "core/rewrite/patch_fusion.h"
#include "core/testing/status_matchers.h"
#include "core/testing/trials.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::testing::ElementsAre;

TensorId TensorNamed(const Graph& graph, const std::string& name) {
  return *graph.FindTensor(name);
}

// Ops in model order (ids 0-3). x [1, 2, 8, 8] -> P (3x3 Conv, pad 1) -> a; a -> A (3x3 Conv, pad 1) -> b;
// a -> B (Relu) -> c; y = Add(b, c).
OnnxTestModel Diamond() {
  OnnxTestModel m;
  std::mt19937 rng(3);
  m.Input("x", {1, 2, 8, 8});
  m.Weight("wp", {2, 2, 3, 3}, &rng);
  m.Weight("wa", {2, 2, 3, 3}, &rng);
  SetIntsAttribute(m.Node("Conv", {"x", "wp"}, {"a"}), "pads", {1, 1, 1, 1});
  SetIntsAttribute(m.Node("Conv", {"a", "wa"}, {"b"}), "pads", {1, 1, 1, 1});
  m.Node("Relu", {"a"}, {"c"});
  m.Node("Add", {"b", "c"}, {"y"});
  m.Output("y");
  return m;
}

TEST(RegionFusionTest, AChainAsARegionKeepsTheChainsLineBuffers) {
  const int32_t trials = ::ordo::testing::Trials(30);
  for (int32_t trial = 0; trial < trials; ++trial) {
    const onnx::ModelProto model =
        RandomWindowChain(400 + trial, 2 + trial % 5, 8 + trial % 7, /*with_data=*/false).model();
    ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(model));
    ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel memory, BuildMemoryModel(graph, MemoryOptions{}));
    const std::vector<std::vector<OpId>> chains = FindFusibleChains(graph);
    ASSERT_EQ(chains.size(), 1) << trial;
    ORDO_ASSERT_OK_AND_ASSIGN(StageCost stage, CostOfStage(graph, memory, chains[0], StageRun{}));
    ORDO_ASSERT_OK_AND_ASSIGN(
        RegionCost region,
        CostOfRegion(graph, memory, StreamableOps(graph, &model.graph()), chains[0]));
    EXPECT_EQ(region.workspace_bytes, stage.workspace_bytes) << "chain " << trial;
    EXPECT_EQ(region.workspace_elements, stage.workspace_elements) << "chain " << trial;
    EXPECT_EQ(region.macs, stage.macs) << "chain " << trial;
  }
}

TEST(RegionFusionTest, DiamondRingsAreWhatTheRowScheduleHolds) {
  const OnnxTestModel m = Diamond();
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(m.model()));
  ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel memory, BuildMemoryModel(graph, MemoryOptions{}));
  const std::vector<OpId> ops = {0, 1, 2, 3};
  ORDO_ASSERT_OK_AND_ASSIGN(
      RegionCost cost, CostOfRegion(graph, memory, StreamableOps(graph, &m.model().graph()), ops));
  EXPECT_THAT(cost.inputs, ElementsAre(TensorNamed(graph, "x")));
  EXPECT_THAT(cost.outputs, ElementsAre(TensorNamed(graph, "y")));
  EXPECT_THAT(cost.internal, ElementsAre(TensorNamed(graph, "a"), TensorNamed(graph, "b"),
                                         TensorNamed(graph, "c")));
  // Output row y needs b and c row y; b row y needs a rows y-1..y+1, which
  // are all held while the Relu still waits for a row y: 3 rows of a.
  EXPECT_THAT(cost.ring_rows, ElementsAre(3, 1, 1));
  const int64_t row_bytes = 2 * 8 * 4;  // C x W x float
  EXPECT_EQ(cost.workspace_bytes, 5 * row_bytes);
  EXPECT_EQ(cost.step_bytes,
            memory.tensors[TensorNamed(graph, "x")].bytes +
                memory.tensors[TensorNamed(graph, "y")].bytes + 5 * row_bytes);
}

TEST(RegionFusionTest, RefusesRegionsThatAreNotConvexOrStreamNothing) {
  const OnnxTestModel m = Diamond();
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(m.model()));
  ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel memory, BuildMemoryModel(graph, MemoryOptions{}));
  const std::vector<bool> streamable = StreamableOps(graph, &m.model().graph());
  // P and Add without A: a -> A -> b -> Add leaves and comes back.
  EXPECT_THAT(CostOfRegion(graph, memory, streamable,
                           std::vector<OpId>{0, 3})
                  .status(),
              ::ordo::testing::StatusIs(absl::StatusCode::kInvalidArgument, ::testing::_));
  // One op alone has no internal tensor.
  EXPECT_THAT(CostOfRegion(graph, memory, streamable, std::vector<OpId>{1}).status(),
              ::ordo::testing::StatusIs(absl::StatusCode::kInvalidArgument, ::testing::_));
}

TEST(RegionFusionTest, InternalizingATensorJoinsEveryOpOnAPathBetween) {
  // x -> P -> a; a -> B1 -> b1 -> B2 -> b2; y = Add(a, b2).
  OnnxTestModel m;
  std::mt19937 rng(5);
  m.Input("x", {1, 2, 6, 6});
  m.Weight("w", {2, 2, 1, 1}, &rng);
  m.Node("Conv", {"x", "w"}, {"a"});
  m.Node("Relu", {"a"}, {"b1"});
  m.Node("Sigmoid", {"b1"}, {"b2"});
  m.Node("Add", {"a", "b2"}, {"y"});
  m.Output("y");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(m.model()));
  const std::vector<bool> streamable = StreamableOps(graph, &m.model().graph());
  std::optional<std::vector<std::vector<OpId>>> regions =
      InternalizeTensor(graph, streamable, {}, TensorNamed(graph, "a"));
  ASSERT_TRUE(regions.has_value());
  EXPECT_THAT(*regions, ElementsAre(ElementsAre(0, 1, 2, 3)));
  // Graph inputs and outputs cannot be internal.
  EXPECT_FALSE(InternalizeTensor(graph, streamable, {}, TensorNamed(graph, "x")).has_value());
  EXPECT_FALSE(InternalizeTensor(graph, streamable, {}, TensorNamed(graph, "y")).has_value());
}

TEST(RegionFusionTest, AnOpThatCannotStreamStopsTheRegion) {
  // The Softmax over channels between a's readers is not a row op here.
  OnnxTestModel m;
  std::mt19937 rng(6);
  m.Input("x", {1, 2, 6, 6});
  m.Weight("w", {2, 2, 1, 1}, &rng);
  m.Node("Conv", {"x", "w"}, {"a"});
  SetIntAttribute(m.Node("Softmax", {"a"}, {"s"}), "axis", 1);
  m.Node("Add", {"a", "s"}, {"y"});
  m.Output("y");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(m.model()));
  const std::vector<bool> streamable = StreamableOps(graph, &m.model().graph());
  EXPECT_FALSE(streamable[1]);
  EXPECT_FALSE(InternalizeTensor(graph, streamable, {}, TensorNamed(graph, "a")).has_value());
}

}  // namespace
}  // namespace ordo
