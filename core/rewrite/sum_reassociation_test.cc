#include "core/rewrite/sum_reassociation.h"

#include <string>
#include <vector>

#include "core/rewrite/onnx_test_model.h"
#include "core/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::testing::ElementsAre;

// y = ((a + b) + c) + d over four activations of x; b is also read by
// "late", which the schedules below run last.
OnnxTestModel FourTermSum() {
  OnnxTestModel m;
  m.Input("x", {1, 2, 4, 4});
  m.Node("Relu", {"x"}, {"a"}).set_name("na");
  m.Node("Sigmoid", {"x"}, {"b"}).set_name("nb");
  m.Node("Relu", {"x"}, {"c"}).set_name("nc");
  m.Node("Sigmoid", {"x"}, {"d"}).set_name("nd");
  m.Node("Add", {"a", "b"}, {"s1"}).set_name("add1");
  m.Node("Add", {"s1", "c"}, {"s2"}).set_name("add2");
  m.Node("Add", {"s2", "d"}, {"y"}).set_name("add3");
  m.Node("Relu", {"b"}, {"late"}).set_name("nlate");
  m.Output("y");
  m.Output("late");
  return m;
}

std::vector<std::string> Names(const Graph& graph, const std::vector<TensorId>& tensors) {
  std::vector<std::string> names;
  for (TensorId t : tensors) names.push_back(graph.tensor(t).name);
  return names;
}

OpId IdOf(const Graph& graph, const std::string& name) { return *graph.FindOp(name); }

TEST(SumReassociationTest, FindsTheTreeItsTermsAndItsShape) {
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(FourTermSum().model()));
  const std::vector<SumTree> trees = FindSumTrees(graph);
  ASSERT_EQ(trees.size(), 1u);
  EXPECT_EQ(graph.op(trees[0].root).name, "add3");
  EXPECT_EQ(trees[0].adds.size(), 3u);
  EXPECT_EQ(trees[0].adds.back(), trees[0].root);
  EXPECT_TRUE(trees[0].left_deep);
  EXPECT_THAT(Names(graph, trees[0].terms), ElementsAre("a", "b", "c", "d"));
}

TEST(SumReassociationTest, SharedBroadcastAndTwoTermSumsAreNotTrees) {
  OnnxTestModel m;
  m.Input("x", {1, 2, 4, 4});
  m.Input("bias", {1, 2, 1, 1});
  m.Node("Relu", {"x"}, {"a"});
  m.Node("Sigmoid", {"x"}, {"b"});
  m.Node("Add", {"a", "b"}, {"s"});        // read twice below: a term of both
  m.Node("Add", {"s", "a"}, {"t"});        // two terms: s, a
  m.Node("Relu", {"s"}, {"u"});
  m.Node("Add", {"t", "bias"}, {"v"});     // broadcasts: not a plain Add
  m.Node("Add", {"x", "x"}, {"w"});        // x + x: one tree of two terms
  m.Output("u");
  m.Output("v");
  m.Output("w");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(m.model()));
  EXPECT_TRUE(FindSumTrees(graph).empty());
}

TEST(SumReassociationTest, ARightDeepTreeIsFoundWhole) {
  OnnxTestModel m;
  m.Input("x", {1, 2, 4, 4});
  m.Node("Relu", {"x"}, {"a"});
  m.Node("Sigmoid", {"x"}, {"b"});
  m.Node("Relu", {"b"}, {"c"});
  m.Node("Add", {"b", "c"}, {"s"});
  m.Node("Add", {"a", "s"}, {"y"});  // a + (b + c)
  m.Output("y");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(m.model()));
  const std::vector<SumTree> trees = FindSumTrees(graph);
  ASSERT_EQ(trees.size(), 1u);
  EXPECT_FALSE(trees[0].left_deep);
  EXPECT_THAT(Names(graph, trees[0].terms), ElementsAre("a", "b", "c"));
}

TEST(SumReassociationTest, TermsSortedByProducerOrByRelease) {
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(FourTermSum().model()));
  const SumTree tree = FindSumTrees(graph)[0];
  // d, c, b, a produced in that order; "late" (the other reader of b) last.
  const std::vector<int32_t> order = {
      IdOf(graph, "nd"),   IdOf(graph, "nc"),   IdOf(graph, "nb"),   IdOf(graph, "na"),
      IdOf(graph, "add1"), IdOf(graph, "add2"), IdOf(graph, "add3"), IdOf(graph, "nlate")};
  EXPECT_THAT(Names(graph, TermsInScheduleOrder(graph, tree, order, SumOrder::kProduced)),
              ElementsAre("d", "c", "b", "a"));
  // b stays live until "late" anyway: it joins the sum last.
  EXPECT_THAT(Names(graph, TermsInScheduleOrder(graph, tree, order, SumOrder::kReleased)),
              ElementsAre("d", "c", "a", "b"));
}

TEST(SumReassociationTest, RebuildsTheChainInScheduleOrderKeepingTheRoot) {
  const OnnxTestModel m = FourTermSum();
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(m.model()));
  const std::vector<SumTree> trees = FindSumTrees(graph);
  const std::vector<int32_t> order = {
      IdOf(graph, "nd"),   IdOf(graph, "nc"),   IdOf(graph, "nb"),   IdOf(graph, "na"),
      IdOf(graph, "add1"), IdOf(graph, "add2"), IdOf(graph, "add3"), IdOf(graph, "nlate")};
  int32_t rebuilt = -1;
  ORDO_ASSERT_OK_AND_ASSIGN(
      onnx::ModelProto out,
      ReassociateSums(m.model(), graph, trees, order, SumOrder::kProduced, &rebuilt));
  EXPECT_EQ(rebuilt, 1);
  ASSERT_EQ(out.graph().node_size(), m.model().graph().node_size());
  // The chain sits where the root was, before "late": d + c, + b, + a.
  const onnx::GraphProto& g = out.graph();
  EXPECT_EQ(g.node(4).op_type(), "Add");
  EXPECT_THAT(g.node(4).input(), ElementsAre("d", "c"));
  EXPECT_THAT(g.node(5).input(), ElementsAre(g.node(4).output(0), "b"));
  EXPECT_THAT(g.node(6).input(), ElementsAre(g.node(5).output(0), "a"));
  EXPECT_EQ(g.node(6).name(), "add3");
  EXPECT_EQ(g.node(6).output(0), "y");
  EXPECT_EQ(g.node(7).name(), "nlate");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph again, Import(out));
  EXPECT_EQ(again.num_ops(), graph.num_ops());
  const std::vector<SumTree> rebuilt_trees = FindSumTrees(again);
  ASSERT_EQ(rebuilt_trees.size(), 1u);
  EXPECT_THAT(Names(again, rebuilt_trees[0].terms), ElementsAre("d", "c", "b", "a"));
}

TEST(SumReassociationTest, ASumAlreadyInScheduleOrderIsLeftAlone) {
  const OnnxTestModel m = FourTermSum();
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(m.model()));
  std::vector<int32_t> model_order;
  for (OpId op = 0; op < graph.num_ops(); ++op) model_order.push_back(op);
  int32_t rebuilt = -1;
  ORDO_ASSERT_OK_AND_ASSIGN(onnx::ModelProto out,
                            ReassociateSums(m.model(), graph, FindSumTrees(graph), model_order,
                                            SumOrder::kProduced, &rebuilt));
  EXPECT_EQ(rebuilt, 0);
  EXPECT_EQ(out.SerializeAsString(), m.model().SerializeAsString());
}

}  // namespace
}  // namespace ordo
