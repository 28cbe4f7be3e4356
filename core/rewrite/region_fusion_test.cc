// Region fusion (region_fusion.h): the demand-driven rings against the
// chain's line buffers and against rings worked out by hand on a diamond;
// column strips' halos and recomputed MACs worked out by hand; growing a
// region keeps it convex and refuses ops that cannot stream.

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

// NAS cells' FactorizedReduce: r = Relu(x); a = AvgPool(r, 1, stride 2);
// b = AvgPool(Slice(Pad(r, bottom/right 1), starts 1), 1, stride 2);
// y = Concat(a, b). Output row y reads r rows 2y (a) and 2y + 1 (b).
OnnxTestModel FactorizedReduce() {
  OnnxTestModel m;
  m.Input("x", {1, 2, 8, 8});
  m.IntWeight("pads", {0, 0, 0, 0, 0, 0, 1, 1});
  m.IntWeight("starts", {1, 1});
  m.IntWeight("ends", {9, 9});
  m.IntWeight("axes", {2, 3});
  m.Node("Relu", {"x"}, {"r"});
  onnx::NodeProto& p1 = m.Node("AveragePool", {"r"}, {"a"});
  SetIntsAttribute(p1, "kernel_shape", {1, 1});
  SetIntsAttribute(p1, "strides", {2, 2});
  m.Node("Pad", {"r", "pads"}, {"padded"});
  m.Node("Slice", {"padded", "starts", "ends", "axes"}, {"shifted"});
  onnx::NodeProto& p2 = m.Node("AveragePool", {"shifted"}, {"b"});
  SetIntsAttribute(p2, "kernel_shape", {1, 1});
  SetIntsAttribute(p2, "strides", {2, 2});
  SetIntAttribute(m.Node("Concat", {"a", "b"}, {"y"}), "axis", 1);
  m.Output("y");
  return m;
}

TEST(RegionFusionTest, PadAndSliceReadTheRowsTheirConstantsSay) {
  const OnnxTestModel m = FactorizedReduce();
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(m.model()));
  ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel memory, BuildMemoryModel(graph, MemoryOptions{}));
  const StreamWindows windows = StreamableOps(graph, &m.model().graph());
  std::optional<std::vector<std::vector<OpId>>> regions =
      InternalizeTensor(graph, windows, {}, TensorNamed(graph, "r"));
  ASSERT_TRUE(regions.has_value());
  regions = InternalizeTensor(graph, windows, *regions, TensorNamed(graph, "a"));
  ASSERT_TRUE(regions.has_value());
  ASSERT_EQ(regions->size(), 1u);
  ORDO_ASSERT_OK_AND_ASSIGN(RegionCost cost,
                            CostOfRegion(graph, memory, windows, regions->front()));
  EXPECT_THAT(cost.outputs, ElementsAre(TensorNamed(graph, "y")));
  // Output row y: a reads r row 2y, then b reads shifted row 2y = padded row
  // 2y + 1 = r row 2y + 1. Rows are produced in order, so padded holds row
  // 2y (read by nobody) beside 2y + 1; r is consumed as it comes.
  ASSERT_EQ(cost.internal.size(), cost.ring_rows.size());
  for (size_t i = 0; i < cost.internal.size(); ++i) {
    EXPECT_EQ(cost.ring_rows[i], cost.internal[i] == TensorNamed(graph, "padded") ? 2 : 1)
        << graph.tensor(cost.internal[i]).name;
  }
  // In two strips (y columns 0..1, then 2..3) the columns follow the same
  // constants: a reads r columns 0..2, b reads shifted 0..2 = padded 1..3
  // = r 1..3, so r holds 4 columns, padded and shifted 3; nothing is
  // recomputed (the two strips read disjoint columns of r).
  ORDO_ASSERT_OK_AND_ASSIGN(RegionCost strips,
                            CostOfRegion(graph, memory, windows, regions->front(), 2));
  for (size_t i = 0; i < strips.internal.size(); ++i) {
    const std::string& name = graph.tensor(strips.internal[i]).name;
    const int64_t expected = name == "r" ? 4 : name == "padded" || name == "shifted" ? 3 : 2;
    EXPECT_EQ(strips.ring_columns[i], expected) << name;
  }
  EXPECT_EQ(strips.extra_macs, 0);
  // Without the constants a Slice cannot stream, and Pad covers every shift.
  const StreamWindows blind = StreamableOps(graph, nullptr);
  EXPECT_FALSE(blind[3].has_value());
  ASSERT_TRUE(blind[2].has_value());
  EXPECT_EQ(blind[2]->InputRange(0, 4, 5, 8), std::make_pair(int64_t{3}, int64_t{5}));
}

TEST(RegionFusionTest, AShortPathRunsAheadInsteadOfHoldingRowsForTheLongOne) {
  // t = Relu(x) read by three 3x3 convs in a row (output p) and by a
  // Sigmoid (output q). Producing p and q in proportion keeps q at p's row
  // while p's convs read three rows ahead of it, so t holds the rows in
  // between; running readers first lets q take every row of t at once, and
  // t holds only the first conv's window.
  OnnxTestModel m;
  std::mt19937 rng(9);
  m.Input("x", {1, 2, 12, 8});
  m.Node("Relu", {"x"}, {"t"});
  std::string in = "t";
  for (int i = 1; i <= 3; ++i) {
    const std::string w = absl::StrCat("w", i);
    const std::string out = i == 3 ? "p" : absl::StrCat("c", i);
    m.Weight(w, {2, 2, 3, 3}, &rng);
    SetIntsAttribute(m.Node("Conv", {in, w}, {out}), "pads", {1, 1, 1, 1});
    in = out;
  }
  m.Node("Sigmoid", {"t"}, {"q"});
  m.Output("p");
  m.Output("q");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(m.model()));
  ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel memory, BuildMemoryModel(graph, MemoryOptions{}));
  const StreamWindows windows = StreamableOps(graph, &m.model().graph());
  ORDO_ASSERT_OK_AND_ASSIGN(
      RegionCost cost, CostOfRegion(graph, memory, windows, std::vector<OpId>{0, 1, 2, 3, 4}));
  EXPECT_EQ(cost.row_order, RowOrder::kReadersFirst);
  EXPECT_THAT(cost.internal, ElementsAre(TensorNamed(graph, "t"), TensorNamed(graph, "c1"),
                                         TensorNamed(graph, "c2")));
  EXPECT_THAT(cost.ring_rows, ElementsAre(3, 3, 3));
}

TEST(RegionFusionTest, DiamondInTwoStripsKeepsHalosAndRecomputesThem) {
  const OnnxTestModel m = Diamond();
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(m.model()));
  ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel memory, BuildMemoryModel(graph, MemoryOptions{}));
  const StreamWindows windows = StreamableOps(graph, &m.model().graph());
  ORDO_ASSERT_OK_AND_ASSIGN(RegionCost whole,
                            CostOfRegion(graph, memory, windows, std::vector<OpId>{0, 1, 2, 3}));
  ORDO_ASSERT_OK_AND_ASSIGN(
      RegionCost strips, CostOfRegion(graph, memory, windows, std::vector<OpId>{0, 1, 2, 3}, 2));
  // Strip 0 writes y columns 0..3, so b and c columns 0..3, and a columns
  // 0..4 (b's 3x3 window reaches one column right); strip 1: a 3..7.
  EXPECT_THAT(whole.ring_columns, ElementsAre(8, 8, 8));
  EXPECT_THAT(strips.ring_columns, ElementsAre(5, 4, 4));
  EXPECT_THAT(strips.ring_rows, ElementsAre(3, 1, 1));  // the rows do not change
  EXPECT_EQ(strips.workspace_bytes, (3 * 5 + 4 + 4) * 2 * 4);
  EXPECT_EQ(strips.workspace_elements, (3 * 5 + 4 + 4) * 2);
  // P computes 10 of a's 8 columns: 2/8 of its 128 x 2 x 9 MACs again.
  EXPECT_EQ(whole.extra_macs, 0);
  EXPECT_EQ(strips.extra_macs, 128 * 2 * 9 * 2 / 8);
  EXPECT_EQ(strips.macs, whole.macs + strips.extra_macs);
  EXPECT_EQ(strips.step_bytes, whole.step_bytes - whole.workspace_bytes + strips.workspace_bytes);
}

TEST(RegionFusionTest, PointwiseRegionsSplitIntoStripsForFree) {
  // Only 1x1 windows and per-element ops: a strip reads exactly its own
  // columns, so S strips hold W / S columns (rounded up) and add no MACs.
  OnnxTestModel m;
  std::mt19937 rng(7);
  m.Input("x", {1, 3, 5, 12});
  m.Weight("w1", {4, 3, 1, 1}, &rng);
  m.Weight("w2", {4, 4, 1, 1}, &rng);
  m.Node("Conv", {"x", "w1"}, {"a"});
  m.Node("Relu", {"a"}, {"r"});
  m.Node("Conv", {"r", "w2"}, {"b"});
  m.Node("Add", {"a", "b"}, {"y"});
  m.Output("y");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(m.model()));
  ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel memory, BuildMemoryModel(graph, MemoryOptions{}));
  const StreamWindows windows = StreamableOps(graph, &m.model().graph());
  for (int32_t strips = 1; strips <= 12; ++strips) {
    ORDO_ASSERT_OK_AND_ASSIGN(
        RegionCost cost, CostOfRegion(graph, memory, windows, std::vector<OpId>{0, 1, 2, 3}, strips));
    EXPECT_EQ(cost.extra_macs, 0) << strips;
    for (int64_t columns : cost.ring_columns) EXPECT_EQ(columns, (12 + strips - 1) / strips) << strips;
  }
  EXPECT_THAT(CostOfRegion(graph, memory, windows, std::vector<OpId>{0, 1, 2, 3}, 0).status(),
              ::ordo::testing::StatusIs(absl::StatusCode::kInvalidArgument, ::testing::_));
}

TEST(RegionFusionTest, ColumnsNoStripReadsAreNotClaimedAsSavedMacs) {
  // A 1x1 window of stride 2 over 8 columns reads 0, 2, 4 and 6: in two
  // strips the Relu computes columns 0..2 and 4..6 (6 of 8), which a
  // region does not count as MACs saved.
  OnnxTestModel m;
  std::mt19937 rng(10);
  m.Input("x", {1, 2, 4, 8});
  m.Weight("w", {2, 2, 1, 1}, &rng);
  m.Node("Relu", {"x"}, {"a"});
  SetIntsAttribute(m.Node("Conv", {"a", "w"}, {"y"}), "strides", {2, 2});
  m.Output("y");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(m.model()));
  ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel memory, BuildMemoryModel(graph, MemoryOptions{}));
  const StreamWindows windows = StreamableOps(graph, &m.model().graph());
  ORDO_ASSERT_OK_AND_ASSIGN(RegionCost whole,
                            CostOfRegion(graph, memory, windows, std::vector<OpId>{0, 1}));
  ORDO_ASSERT_OK_AND_ASSIGN(RegionCost strips,
                            CostOfRegion(graph, memory, windows, std::vector<OpId>{0, 1}, 2));
  EXPECT_THAT(strips.ring_columns, ElementsAre(3));
  EXPECT_EQ(strips.extra_macs, 0);
  EXPECT_EQ(strips.macs, whole.macs);
}

TEST(RegionFusionTest, RefusesRegionsThatAreNotConvexOrStreamNothing) {
  const OnnxTestModel m = Diamond();
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(m.model()));
  ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel memory, BuildMemoryModel(graph, MemoryOptions{}));
  const StreamWindows windows = StreamableOps(graph, &m.model().graph());
  // P and Add without A: a -> A -> b -> Add leaves and comes back.
  EXPECT_THAT(CostOfRegion(graph, memory, windows,
                           std::vector<OpId>{0, 3})
                  .status(),
              ::ordo::testing::StatusIs(absl::StatusCode::kInvalidArgument, ::testing::_));
  // One op alone has no internal tensor.
  EXPECT_THAT(CostOfRegion(graph, memory, windows, std::vector<OpId>{1}).status(),
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
  const StreamWindows windows = StreamableOps(graph, &m.model().graph());
  std::optional<std::vector<std::vector<OpId>>> regions =
      InternalizeTensor(graph, windows, {}, TensorNamed(graph, "a"));
  ASSERT_TRUE(regions.has_value());
  EXPECT_THAT(*regions, ElementsAre(ElementsAre(0, 1, 2, 3)));
  // Graph inputs and outputs cannot be internal.
  EXPECT_FALSE(InternalizeTensor(graph, windows, {}, TensorNamed(graph, "x")).has_value());
  EXPECT_FALSE(InternalizeTensor(graph, windows, {}, TensorNamed(graph, "y")).has_value());
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
  const StreamWindows windows = StreamableOps(graph, &m.model().graph());
  EXPECT_FALSE(windows[1].has_value());
  EXPECT_FALSE(InternalizeTensor(graph, windows, {}, TensorNamed(graph, "a")).has_value());
}

}  // namespace
}  // namespace ordo
