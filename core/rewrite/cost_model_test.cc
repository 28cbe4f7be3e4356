#include "core/rewrite/cost_model.h"

#include "core/onnx/onnx_import.h"
#include "core/rewrite/onnx_test_model.h"
#include "core/rewrite/rewrite.h"
#include "core/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

int64_t MacsOf(const OnnxTestModel& m, const std::string& op_name) {
  absl::StatusOr<Graph> graph = ImportOnnx(m.Bytes());
  EXPECT_TRUE(graph.ok()) << graph.status();
  if (!graph.ok()) return -1;
  std::optional<OpId> id = graph->FindOp(op_name);
  EXPECT_TRUE(id.has_value()) << op_name;
  return id ? OpMacs(*graph, graph->op(*id)) : -1;
}

TEST(CostModelTest, ConvIsOutputElementsTimesFanIn) {
  OnnxTestModel m;
  m.Input("x", {1, 4, 8, 8});
  m.Weight("w", {8, 4, 3, 3}, nullptr);
  SetIntsAttribute(m.Node("Conv", {"x", "w"}, {"y"}), "pads", {1, 1, 1, 1});
  m.Output("y");
  // 8 x 8 x 8 outputs, each 4 channels x 3 x 3.
  EXPECT_EQ(MacsOf(m, "y_op"), 8 * 8 * 8 * 4 * 9);
}

TEST(CostModelTest, DepthwiseConvReadsOneChannel) {
  OnnxTestModel m;
  m.Input("x", {1, 4, 8, 8});
  m.Weight("w", {4, 1, 3, 3}, nullptr);
  onnx::NodeProto& conv = m.Node("Conv", {"x", "w"}, {"y"});
  SetIntsAttribute(conv, "pads", {1, 1, 1, 1});
  SetIntAttribute(conv, "group", 4);
  m.Output("y");
  EXPECT_EQ(MacsOf(m, "y_op"), 4 * 8 * 8 * 9);
}

TEST(CostModelTest, StridedConvCountsOutputsOnly) {
  OnnxTestModel m;
  m.Input("x", {1, 4, 8, 8});
  m.Weight("w", {8, 4, 3, 3}, nullptr);
  m.Weight("b", {8}, nullptr);
  onnx::NodeProto& conv = m.Node("Conv", {"x", "w", "b"}, {"y"});
  SetIntsAttribute(conv, "pads", {1, 1, 1, 1});
  SetIntsAttribute(conv, "strides", {2, 2});
  m.Output("y");
  EXPECT_EQ(MacsOf(m, "y_op"), 8 * 4 * 4 * 4 * 9);
}

TEST(CostModelTest, GemmAndElementwiseAndPools) {
  OnnxTestModel m;
  m.Input("x", {1, 4, 8, 8});
  m.Node("Relu", {"x"}, {"r"});
  onnx::NodeProto& pool = m.Node("MaxPool", {"r"}, {"p"});
  SetIntsAttribute(pool, "kernel_shape", {2, 2});
  SetIntsAttribute(pool, "strides", {2, 2});
  m.Node("GlobalAveragePool", {"p"}, {"g"});
  m.Node("Flatten", {"g"}, {"f"});
  m.Weight("w", {10, 4}, nullptr);
  m.Weight("b", {10}, nullptr);
  SetIntAttribute(m.Node("Gemm", {"f", "w", "b"}, {"y"}), "transB", 1);
  m.Output("y");
  EXPECT_EQ(MacsOf(m, "r_op"), 4 * 8 * 8);
  EXPECT_EQ(MacsOf(m, "p_op"), 4 * 4 * 4 * 4);  // 64 outputs x 2 x 2
  EXPECT_EQ(MacsOf(m, "g_op"), 4 * 4 * 4);      // its input's elements
  EXPECT_EQ(MacsOf(m, "f_op"), 0);
  EXPECT_EQ(MacsOf(m, "y_op"), 10 * 4);  // M=1, N=10, K=4

  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(m.Bytes()));
  const GraphCost cost = CostOf(graph);
  EXPECT_EQ(cost.macs, 256 + 256 + 64 + 0 + 40);
  EXPECT_EQ(cost.ops, 5);
}

TEST(CostModelTest, LatencyIsComputePlusOpOverhead) {
  LatencyModel latency;
  latency.macs_per_second = 1000;
  latency.op_overhead_seconds = 0.5;
  EXPECT_DOUBLE_EQ(LatencySeconds(GraphCost{2000, 4}, latency), 2.0 + 2.0);
  // 4 s -> 2.5 + 2.5 = 5 s.
  EXPECT_DOUBLE_EQ(LatencyOverhead(GraphCost{2000, 4}, GraphCost{2500, 5}, latency),
                   (5.0 - 4.0) / 4.0);
  EXPECT_DOUBLE_EQ(LatencyOverhead(GraphCost{0, 0}, GraphCost{10, 1}, latency), 0);
}

}  // namespace
}  // namespace ordo
