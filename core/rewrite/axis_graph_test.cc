#include "core/rewrite/axis_graph.h"

#include "core/onnx/onnx_import.h"
#include "core/rewrite/onnx_test_model.h"
#include "core/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

// x -> Conv 1x1 (c1) -> Relu (r1) -> depthwise 3x3 (d1) -> Concat(d1, x2)
// -> GlobalAveragePool -> Flatten.
Graph TestGraph() {
  OnnxTestModel m;
  m.Input("x", {1, 4, 8, 8});
  m.Input("x2", {1, 2, 8, 8});
  m.Weight("w1", {8, 4, 1, 1}, nullptr);
  m.Node("Conv", {"x", "w1"}, {"c1"});
  m.Node("Relu", {"c1"}, {"r1"});
  m.Weight("wd", {8, 1, 3, 3}, nullptr);
  onnx::NodeProto& dw = m.Node("Conv", {"r1", "wd"}, {"d1"});
  SetIntAttribute(dw, "group", 8);
  SetIntsAttribute(dw, "pads", {1, 1, 1, 1});
  SetIntAttribute(m.Node("Concat", {"d1", "x2"}, {"cat"}), "axis", 1);
  m.Node("GlobalAveragePool", {"cat"}, {"g"});
  m.Node("Flatten", {"g"}, {"f"});
  m.Output("f");
  absl::StatusOr<Graph> graph = ImportOnnx(m.Bytes());
  EXPECT_TRUE(graph.ok()) << graph.status();
  return *std::move(graph);
}

std::vector<OpId> Ops(const Graph& g, std::initializer_list<const char*> names) {
  std::vector<OpId> ids;
  for (const char* name : names) ids.push_back(*g.FindOp(name));
  return ids;
}

TEST(AxisGraphTest, ConvConnectsSpatialAxesButNotChannels) {
  const Graph g = TestGraph();
  const AxisGraph acg = AxisGraph::Build(g, Ops(g, {"c1_op", "r1_op"}));
  const TensorId x = *g.FindTensor("x"), c1 = *g.FindTensor("c1"), r1 = *g.FindTensor("r1");
  EXPECT_TRUE(acg.Connected(x, 2, r1, 2));
  EXPECT_TRUE(acg.Connected(x, 3, r1, 3));
  EXPECT_TRUE(acg.Connected(x, 0, r1, 0));
  EXPECT_FALSE(acg.Connected(x, 1, c1, 1));  // reduced by the group-1 Conv
  EXPECT_TRUE(acg.Connected(c1, 1, r1, 1));  // element-wise
  EXPECT_TRUE(acg.SpatiallyTileable());
  EXPECT_FALSE(acg.ChannelConnected());
  EXPECT_EQ(acg.halo_edges(), 0);  // 1x1, stride 1
}

TEST(AxisGraphTest, DepthwiseConvKeepsChannelsAndHasAHalo) {
  const Graph g = TestGraph();
  const AxisGraph acg = AxisGraph::Build(g, Ops(g, {"r1_op", "d1_op"}));
  EXPECT_TRUE(acg.ChannelConnected());
  EXPECT_TRUE(acg.SpatiallyTileable());
  EXPECT_EQ(acg.halo_edges(), 1);
  EXPECT_EQ(acg.Component(*g.FindTensor("g"), 1), -1);  // not in the region
}

TEST(AxisGraphTest, ConcatJoinsSpatialAxesAndGlobalPoolEndsThem) {
  const Graph g = TestGraph();
  const AxisGraph cat = AxisGraph::Build(g, Ops(g, {"cat_op"}));
  const TensorId d1 = *g.FindTensor("d1"), x2 = *g.FindTensor("x2"), c = *g.FindTensor("cat");
  EXPECT_TRUE(cat.Connected(d1, 2, x2, 2));
  EXPECT_FALSE(cat.Connected(d1, 1, c, 1));
  EXPECT_TRUE(cat.SpatiallyTileable());
  EXPECT_THAT(cat.Breakers(1), ElementsAre(*g.FindOp("cat_op")));

  const AxisGraph head = AxisGraph::Build(g, Ops(g, {"d1_op", "cat_op", "g_op", "f_op"}));
  EXPECT_FALSE(head.SpatiallyTileable());
  EXPECT_THAT(head.Breakers(2), ElementsAre(*g.FindOp("g_op"), *g.FindOp("f_op")));
  EXPECT_THAT(head.Breakers(0), ElementsAre(*g.FindOp("f_op")));
  EXPECT_TRUE(head.Connected(c, 1, *g.FindTensor("g"), 1));  // GAP keeps channels
  EXPECT_THAT(AxisGraph::Build(g, Ops(g, {"c1_op"})).Breakers(2), IsEmpty());
}

// x -> Relu -> Resize(scales) -> Relu: channels carry through a Resize
// that keeps C; rows and columns end at it. One that resamples C breaks
// every axis.
TEST(AxisGraphTest, ResizeKeepsChannelsAndEndsSpatialAxes) {
  for (bool channels_too : {false, true}) {
    SCOPED_TRACE(channels_too);
    OnnxTestModel m;
    m.Input("x", {1, 4, 8, 8});
    m.Node("Relu", {"x"}, {"a"});
    m.FloatWeight("scales",
                  channels_too ? std::vector<float>{1, 2, 2, 2} : std::vector<float>{1, 1, 2, 2});
    m.Node("Resize", {"a", "", "scales"}, {"u"});
    m.Node("Relu", {"u"}, {"y"});
    m.Output("y");
    ORDO_ASSERT_OK_AND_ASSIGN(Graph g, ImportOnnx(m.Bytes()));
    const AxisGraph acg = AxisGraph::Build(g, Ops(g, {"a_op", "u_op", "y_op"}));
    const TensorId x = *g.FindTensor("x"), y = *g.FindTensor("y");
    EXPECT_EQ(acg.ChannelConnected(), !channels_too);
    EXPECT_EQ(acg.Connected(x, 1, y, 1), !channels_too);
    EXPECT_FALSE(acg.Connected(x, 2, y, 2));
    EXPECT_FALSE(acg.SpatiallyTileable());
    EXPECT_THAT(acg.Breakers(2), ElementsAre(*g.FindOp("u_op")));
    EXPECT_EQ(acg.Breakers(1).size(), channels_too ? 1u : 0u);
  }
}

}  // namespace
}  // namespace ordo
