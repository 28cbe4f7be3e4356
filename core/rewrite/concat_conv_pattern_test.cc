#include "core/rewrite/concat_conv_pattern.h"

#include <string>
#include <vector>

#include "core/onnx/onnx_import.h"
#include "core/rewrite/onnx_test_model.h"
#include "core/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::testing::ElementsAre;
using ::testing::IsEmpty;

std::vector<std::string> Names(const Graph& graph, const std::vector<OpId>& ops) {
  std::vector<std::string> names;
  for (OpId op : ops) names.push_back(graph.op(op).name);
  return names;
}

// x -> a (Conv, 3 ch), b (Conv, 5 ch) -> Concat -> Relu -> {1x1 Conv, depthwise Conv}
OnnxTestModel CellModel(const std::string& tail) {
  OnnxTestModel m;
  m.Input("x", {1, 2, 8, 8});
  m.Weight("wa", {3, 2, 1, 1}, nullptr);
  m.Weight("wb", {5, 2, 1, 1}, nullptr);
  m.Node("Conv", {"x", "wa"}, {"a"});
  m.Node("Conv", {"x", "wb"}, {"b"});
  SetIntAttribute(m.Node("Concat", {"a", "b"}, {"ab"}), "axis", 1);
  m.Node("Relu", {"ab"}, {"r"});
  m.Weight("w1", {4, 8, 1, 1}, nullptr);
  m.Node("Conv", {"r", "w1"}, {"y1"});
  m.Output("y1");
  if (tail == "depthwise") {
    m.Weight("wd", {8, 1, 3, 3}, nullptr);
    SetIntAttribute(m.Node("Conv", {"r", "wd"}, {"y2"}), "group", 8);
    m.Output("y2");
  } else if (tail == "pool") {
    SetIntsAttribute(m.Node("MaxPool", {"r"}, {"y2"}), "kernel_shape", {1, 1});
    m.Output("y2");
  } else if (tail == "grouped") {
    m.Weight("wg", {4, 4, 1, 1}, nullptr);
    SetIntAttribute(m.Node("Conv", {"r", "wg"}, {"y2"}), "group", 2);
    m.Output("y2");
  }
  return m;
}

TEST(ConcatConvPatternTest, FindsConcatThroughReluIntoConvs) {
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(CellModel("depthwise").Bytes()));
  std::vector<ConcatConvSite> sites = FindConcatConvSites(graph);
  ASSERT_EQ(sites.size(), 1u);
  EXPECT_EQ(graph.op(sites[0].concat).name, "ab_op");
  EXPECT_THAT(Names(graph, sites[0].per_channel_ops), ElementsAre("r_op"));
  EXPECT_THAT(Names(graph, sites[0].convs), ElementsAre("y1_op", "y2_op"));
  EXPECT_THAT(sites[0].partitions,
              ElementsAre(ConvPartition::kChannelWise, ConvPartition::kKernelWise));
  EXPECT_THAT(sites[0].part_channels, ElementsAre(3, 5));
}

TEST(ConcatConvPatternTest, NoSiteWhenAnyReaderIsNotAPartitionableConv) {
  for (const std::string tail : {"pool", "grouped"}) {
    ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(CellModel(tail).Bytes()));
    EXPECT_THAT(FindConcatConvSites(graph), IsEmpty()) << tail;
  }
}

TEST(ConcatConvPatternTest, NoSiteForAConcatAlongASpatialAxis) {
  OnnxTestModel m;
  m.Input("x", {1, 2, 4, 4});
  m.Input("z", {1, 2, 4, 4});
  SetIntAttribute(m.Node("Concat", {"x", "z"}, {"xz"}), "axis", 2);
  m.Weight("w", {3, 2, 1, 1}, nullptr);
  m.Node("Conv", {"xz", "w"}, {"y"});
  m.Output("y");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(m.Bytes()));
  EXPECT_THAT(FindConcatConvSites(graph), IsEmpty());
}

}  // namespace
}  // namespace ordo
