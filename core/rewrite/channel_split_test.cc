#include "core/rewrite/channel_split.h"

#include <random>
#include <string>

#include "core/onnx/onnx_import.h"
#include "core/rewrite/model_edit.h"
#include "core/rewrite/onnx_test_model.h"
#include "core/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

// MobileNetV2's inverted residual: expand 1x1 (8 -> 32) -> Relu ->
// depthwise 3x3 -> Relu -> project 1x1 (32 -> 8) -> Add(x).
OnnxTestModel InvertedResidual() {
  return InvertedResidualBlock({.expanded = 32, .bias = true, .skip = true});
}

TEST(ChannelSplitTest, PlansTheWholeInvertedResidual) {
  OnnxTestModel m = InvertedResidual();
  ORDO_ASSERT_OK_AND_ASSIGN(Graph g, ImportOnnx(m.Bytes()));
  ORDO_ASSERT_OK_AND_ASSIGN(ChannelSplitPlan plan, PlanChannelSplit(g, {"e_op", 4}));
  EXPECT_EQ(plan.producer, *g.FindOp("e_op"));
  EXPECT_THAT(plan.chain, ElementsAre(*g.FindOp("er_op"), *g.FindOp("d_op"), *g.FindOp("dr_op")));
  EXPECT_EQ(plan.consumer, *g.FindOp("p_op"));
  EXPECT_EQ(plan.channels, 32);
}

TEST(ChannelSplitTest, SplitsIntoSlicesSummedByAdds) {
  OnnxTestModel m = InvertedResidual();
  ORDO_ASSERT_OK_AND_ASSIGN(Graph g, ImportOnnx(m.Bytes()));
  ORDO_ASSERT_OK_AND_ASSIGN(onnx::ModelProto out, ApplyChannelSplit(m.model(), g, {"e_op", 4}));
  std::string bytes;
  ASSERT_TRUE(out.SerializeToString(&bytes));
  ORDO_ASSERT_OK_AND_ASSIGN(Graph rewritten, ImportOnnx(bytes));
  int convs = 0, adds = 0, relus = 0, concats = 0;
  for (const Op& op : rewritten.ops()) {
    convs += op.type == "Conv";
    adds += op.type == "Add";
    relus += op.type == "Relu";
    concats += op.type == "Concat";
  }
  EXPECT_EQ(convs, 12);  // 4 x (expand, depthwise, partial project)
  EXPECT_EQ(adds, 3 + 1);
  EXPECT_EQ(relus, 8);
  EXPECT_EQ(concats, 0);
  // No full-width expanded tensor is left: every slice has 8 channels.
  for (const Op& op : rewritten.ops()) {
    if (op.type == "Relu") {
      EXPECT_EQ(rewritten.tensor(op.outputs[0]).dims[1], 8) << op.name;
    }
  }
  // Depthwise slices have group 8 and their own weights; the originals go.
  const onnx::NodeProto* dw_part = nullptr;
  for (const onnx::NodeProto& node : out.graph().node()) {
    if (node.name() == "d_op_ch1") dw_part = &node;
  }
  ASSERT_NE(dw_part, nullptr);
  for (const onnx::AttributeProto& a : dw_part->attribute()) {
    if (a.name() == "group") {
      EXPECT_EQ(a.i(), 8);
    }
  }
  EXPECT_EQ(FindInitializer(out.graph(), "we"), nullptr);
  EXPECT_EQ(FindInitializer(out.graph(), "wp"), nullptr);
  const onnx::TensorProto* part = FindInitializer(out.graph(), "wd_ch2");
  ASSERT_NE(part, nullptr);
  EXPECT_THAT(part->dims(), ElementsAre(8, 1, 3, 3));
  // The graph's output keeps its name and shape.
  EXPECT_THAT(rewritten.tensor(*rewritten.FindTensor("y")).dims, ElementsAre(1, 8, 16, 16));
}

TEST(ChannelSplitTest, EndsInAConcatWhenTheChainForks) {
  OnnxTestModel m;
  m.Input("x", {1, 4, 8, 8});
  m.Weight("w", {6, 4, 1, 1}, nullptr);
  m.Node("Conv", {"x", "w"}, {"c"});
  m.Node("Relu", {"c"}, {"r"});
  m.Node("Sigmoid", {"r"}, {"s"});
  m.Node("Add", {"r", "s"}, {"y"});
  m.Output("y");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph g, ImportOnnx(m.Bytes()));
  ORDO_ASSERT_OK_AND_ASSIGN(ChannelSplitPlan plan, PlanChannelSplit(g, {"c_op", 3}));
  EXPECT_EQ(plan.consumer, kNoId);
  ORDO_ASSERT_OK_AND_ASSIGN(onnx::ModelProto out, ApplyChannelSplit(m.model(), g, {"c_op", 3}));
  std::string bytes;
  ASSERT_TRUE(out.SerializeToString(&bytes));
  ORDO_ASSERT_OK_AND_ASSIGN(Graph rewritten, ImportOnnx(bytes));
  const Tensor& r = rewritten.tensor(*rewritten.FindTensor("r"));
  EXPECT_EQ(rewritten.op(r.producer).type, "Concat");
  EXPECT_THAT(r.dims, ElementsAre(1, 6, 8, 8));
}

TEST(ChannelSplitTest, RefusesWhatItCannotSplit) {
  OnnxTestModel m = InvertedResidual();
  ORDO_ASSERT_OK_AND_ASSIGN(Graph g, ImportOnnx(m.Bytes()));
  EXPECT_THAT(PlanChannelSplit(g, {"nope", 2}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("nope")));
  EXPECT_THAT(PlanChannelSplit(g, {"e_op", 33}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("e_op")));
  EXPECT_THAT(PlanChannelSplit(g, {"e_op", 1}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("e_op")));
  EXPECT_THAT(PlanChannelSplit(g, {"d_op", 2}),
              StatusIs(absl::StatusCode::kUnimplemented, HasSubstr("d_op")));
  // The project Conv's output feeds an Add with the skip: nothing to carry
  // the split through.
  EXPECT_THAT(PlanChannelSplit(g, {"p_op", 2}),
              StatusIs(absl::StatusCode::kUnimplemented, HasSubstr("p_op")));
}

// expand 1x1 (4 -> 6) -> Relu -> Resize x2 -> project 1x1: the split
// carries through the Resize into the partial project Convs.
OnnxTestModel UpsampleBlock(const std::vector<float>& scales) {
  OnnxTestModel m;
  m.Input("x", {1, 4, 8, 8});
  m.Weight("we", {6, 4, 1, 1}, nullptr);
  m.Node("Conv", {"x", "we"}, {"e"});
  m.Node("Relu", {"e"}, {"r"});
  m.FloatWeight("scales", scales);
  m.Node("Resize", {"r", "", "scales"}, {"u"});
  m.Weight("wp", {4, 6, 1, 1}, nullptr);
  m.Node("Conv", {"u", "wp"}, {"y"});
  m.Output("y");
  return m;
}

TEST(ChannelSplitTest, CarriesThroughAResizeThatKeepsChannels) {
  OnnxTestModel m = UpsampleBlock({1, 1, 2, 2});
  ORDO_ASSERT_OK_AND_ASSIGN(Graph g, ImportOnnx(m.Bytes()));
  ORDO_ASSERT_OK_AND_ASSIGN(ChannelSplitPlan plan, PlanChannelSplit(g, {"e_op", 2}));
  EXPECT_THAT(plan.chain, ElementsAre(*g.FindOp("r_op"), *g.FindOp("u_op")));
  EXPECT_EQ(plan.consumer, *g.FindOp("y_op"));
  ORDO_ASSERT_OK_AND_ASSIGN(onnx::ModelProto out, ApplyChannelSplit(m.model(), g, {"e_op", 2}));
  std::string bytes;
  ASSERT_TRUE(out.SerializeToString(&bytes));
  ORDO_ASSERT_OK_AND_ASSIGN(Graph rewritten, ImportOnnx(bytes));
  int resizes = 0;
  for (const Op& op : rewritten.ops()) {
    if (op.type != "Resize") continue;
    ++resizes;
    EXPECT_THAT(rewritten.tensor(op.outputs[0]).dims, ElementsAre(1, 3, 16, 16)) << op.name;
  }
  EXPECT_EQ(resizes, 2);
}

TEST(ChannelSplitTest, StopsAtAResizeItCannotCarry) {
  // Resampling C: the chain ends before the Resize, in a Concat.
  OnnxTestModel channels = UpsampleBlock({1, 2, 2, 2});
  channels.Weight("wp2", {4, 12, 1, 1}, nullptr);
  onnx::ModelProto model = channels.model();
  model.mutable_graph()->mutable_node(3)->set_input(1, "wp2");
  std::string bytes;
  ASSERT_TRUE(model.SerializeToString(&bytes));
  ORDO_ASSERT_OK_AND_ASSIGN(Graph g, ImportOnnx(bytes));
  ORDO_ASSERT_OK_AND_ASSIGN(ChannelSplitPlan plan, PlanChannelSplit(g, {"e_op", 2}));
  EXPECT_THAT(plan.chain, ElementsAre(*g.FindOp("r_op")));
  EXPECT_EQ(plan.consumer, kNoId);

  // `sizes` names the full C: not carried either.
  OnnxTestModel sized;
  sized.Input("x", {1, 4, 8, 8});
  sized.Weight("we", {6, 4, 1, 1}, nullptr);
  sized.Node("Conv", {"x", "we"}, {"e"});
  sized.IntWeight("sizes", {1, 6, 16, 16});
  sized.Node("Resize", {"e", "", "", "sizes"}, {"u"});
  sized.Node("Relu", {"u"}, {"y"});
  sized.Output("y");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph gs, ImportOnnx(sized.Bytes()));
  EXPECT_THAT(PlanChannelSplit(gs, {"e_op", 2}),
              StatusIs(absl::StatusCode::kUnimplemented, HasSubstr("e_op")));

  // A C scale of 1.2 keeps C = 4 (floor(4.8)) but interpolates between
  // channels: refused where the model carries the values.
  OnnxTestModel odd;
  odd.Input("x", {1, 4, 8, 8});
  odd.Weight("we", {4, 4, 1, 1}, nullptr);
  odd.Node("Conv", {"x", "we"}, {"e"});
  odd.FloatWeight("scales", {1, 1.2f, 2, 2});
  odd.Node("Resize", {"e", "", "scales"}, {"u"});
  odd.Output("u");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph go, ImportOnnx(odd.Bytes()));
  ASSERT_THAT(go.tensor(*go.FindTensor("u")).dims, ElementsAre(1, 4, 16, 16));
  EXPECT_THAT(ApplyChannelSplit(odd.model(), go, {"e_op", 2}),
              StatusIs(absl::StatusCode::kUnimplemented, HasSubstr("resample N or C")));
}

TEST(ChannelSplitTest, EvenSplit) {
  EXPECT_THAT(EvenSplit(10, 4), ElementsAre(3, 3, 2, 2));
  EXPECT_THAT(EvenSplit(8, 2), ElementsAre(4, 4));
}

}  // namespace
}  // namespace ordo
