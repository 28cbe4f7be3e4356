#include "core/graph/graph.h"

#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/testing/status_matchers.h"
#include "core/testing/test_graph.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::ParseTestGraph;
using ::ordo::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

constexpr auto kInvalid = absl::StatusCode::kInvalidArgument;

TEST(GraphTest, ResolvesProducersConsumersAndKinds) {
  ORDO_ASSERT_OK_AND_ASSIGN(Graph g, ParseTestGraph(R"(
    input x 4
    weight w 9
    op a Conv x w -> y:8
    op b Add y y -> z:8
    output z
  )"));
  TensorId y = *g.FindTensor("y");
  EXPECT_EQ(g.tensor(y).producer, *g.FindOp("a"));
  EXPECT_THAT(g.tensor(y).consumers, ElementsAre(*g.FindOp("b")));
  EXPECT_EQ(g.tensor(*g.FindTensor("x")).kind, TensorKind::kInput);
  EXPECT_EQ(g.tensor(*g.FindTensor("w")).kind, TensorKind::kWeight);
  EXPECT_EQ(g.tensor(y).kind, TensorKind::kActivation);
  EXPECT_EQ(g.tensor(*g.FindTensor("z")).kind, TensorKind::kOutput);
  EXPECT_THAT(g.inputs(), ElementsAre(*g.FindTensor("x")));
  EXPECT_THAT(g.outputs(), ElementsAre(*g.FindTensor("z")));
  EXPECT_THAT(g.Successors(0), ElementsAre(1));
  EXPECT_THAT(g.Predecessors(1), ElementsAre(0));
}

// The name indexes view the Graph's own names; a copy must find names in
// its own copies and a move must keep them, short (inline) names included.
// The import's notes travel with the graph too.
TEST(GraphTest, CopiesAndMovesFindEveryNameAfterTheSourceIsGone) {
  const std::string long_name = "/cells.0/pre1/f/f.0/Relu_output_0_long_enough";
  std::optional<Graph> copy;
  std::optional<Graph> moved;
  {
    GraphBuilder builder("g");
    builder.AddTensorBytes("x", 4, TensorKind::kInput);
    builder.AddTensorBytes(long_name, 8);
    builder.AddOp("a", "Relu", {"x"}, {long_name});
    builder.AddOp(long_name + "_op", "Relu", {long_name}, {"z"});
    builder.AddTensorBytes("z", 8);
    builder.AddGraphInput("x");
    builder.AddGraphOutput("z");
    builder.AddNote("input \"x\" has a dynamic dim");
    ORDO_ASSERT_OK_AND_ASSIGN(Graph built, std::move(builder).Build());
    copy.emplace(built);
    Graph assigned;
    assigned = built;
    moved.emplace(std::move(built));
    built = Graph();  // what the moved-from graph held is gone
    copy = assigned;
  }
  for (const Graph* g : {&*copy, &*moved}) {
    EXPECT_EQ(g->FindTensor("x"), 0);
    EXPECT_EQ(g->FindTensor(long_name), 1);
    EXPECT_EQ(g->FindTensor("z"), 2);
    EXPECT_EQ(g->FindOp("a"), 0);
    EXPECT_EQ(g->FindOp(long_name + "_op"), 1);
    EXPECT_EQ(g->FindTensor("missing"), std::nullopt);
    EXPECT_THAT(g->notes(), ElementsAre("input \"x\" has a dynamic dim"));
  }
}

// Reserve is only a hint: fewer or more ops than reserved build the same
// graph, and a count beyond the limits is clamped instead of allocated.
TEST(GraphTest, ReserveChangesNothingButRoom) {
  for (int64_t ops : {int64_t{0}, int64_t{1}, int64_t{-5}, int64_t{1} << 40}) {
    GraphBuilder builder("g", GraphLimits{.max_ops = 10, .max_tensors = 10});
    builder.Reserve(ops, ops);
    builder.AddTensorBytes("x", 4, TensorKind::kInput);
    builder.AddTensorBytes("y", 8);
    builder.AddTensorBytes("z", 8);
    builder.AddOp("a", "Relu", {"x"}, {"y"});
    builder.AddOp("b", "Relu", {"y"}, {"z"});
    builder.AddGraphInput("x");
    builder.AddGraphOutput("z");
    ORDO_ASSERT_OK_AND_ASSIGN(Graph g, std::move(builder).Build());
    EXPECT_EQ(g.num_ops(), 2);
    EXPECT_EQ(g.num_tensors(), 3);
    EXPECT_EQ(g.tensor(*g.FindTensor("y")).producer, *g.FindOp("a"));
    EXPECT_THAT(g.tensor(*g.FindTensor("y")).consumers, ElementsAre(*g.FindOp("b")));
  }
}

TEST(GraphTest, OpsGivenByTensorIdsBuildTheSameGraphAsByNames) {
  GraphBuilder by_id("g");
  const TensorId x = by_id.AddTensorBytes("x", 4, TensorKind::kInput);
  const TensorId w = by_id.AddTensorBytes("w", 9, TensorKind::kWeight);
  const TensorId y = by_id.AddTensorBytes("y", 8);
  const TensorId z = by_id.AddTensorBytes("z", 8);
  by_id.AddOpWithTensorIds("a", "Conv", {x, w}, {y}, {}, 0, "");
  by_id.AddOpWithTensorIds("b", "Add", {y, y}, {z}, {}, 1, "");
  by_id.AddGraphInput("x");
  by_id.AddGraphOutput("z");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph g, std::move(by_id).Build());
  EXPECT_EQ(*g.FindTensor("y"), y);
  EXPECT_THAT(g.op(0).inputs, ElementsAre(x, w));
  EXPECT_THAT(g.op(1).inputs, ElementsAre(y, y));
  EXPECT_THAT(g.tensor(y).consumers, ElementsAre(1));
  EXPECT_EQ(g.tensor(z).producer, 1);
  EXPECT_EQ(g.tensor(z).kind, TensorKind::kOutput);

  GraphBuilder unknown("g");
  const TensorId t = unknown.AddTensorBytes("t", 4);
  unknown.AddOpWithTensorIds("a", "Relu", {t + 5}, {t}, {}, 0, "");
  EXPECT_THAT(std::move(unknown).Build(),
              StatusIs(kInvalid, HasSubstr("op \"a\" reads tensor id 5, which is not declared")));
  GraphBuilder twice("g");
  const TensorId u = twice.AddTensorBytes("u", 4);
  twice.AddOpWithTensorIds("a", "Split", {}, {u, u}, {}, 0, "");
  EXPECT_THAT(std::move(twice).Build(),
              StatusIs(kInvalid, HasSubstr("op \"a\" writes tensor \"u\" twice")));
}

TEST(GraphTest, BytesFromDtypeAndDims) {
  GraphBuilder builder;
  builder.AddTensor("x", DataType::kFloat16, {2, 3}, TensorKind::kInput);
  builder.AddGraphInput("x");
  builder.AddTensor("y", DataType::kInt64, {5});
  builder.AddOp("a", "Cast", {"x"}, {"y"});
  builder.AddGraphOutput("y");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph g, std::move(builder).Build());
  EXPECT_EQ(g.tensor(0).bytes, 12);
  EXPECT_EQ(g.tensor(1).bytes, 40);
}

TEST(GraphValidationTest, Cycle) {
  EXPECT_THAT(ParseTestGraph(R"(
    input x 1
    op a Add x c -> b:1
    op d Relu b -> c:1
    output c
  )").status(), StatusIs(kInvalid, HasSubstr("cycle through op")));
}

TEST(GraphValidationTest, SelfLoop) {
  EXPECT_THAT(ParseTestGraph(R"(
    input x 1
    op a Add x y -> y:1
    output y
  )").status(), StatusIs(kInvalid, HasSubstr("cycle through op \"a\"")));
}

TEST(GraphValidationTest, UndefinedTensor) {
  EXPECT_THAT(ParseTestGraph(R"(
    input x 1
    op a Add x ghost -> y:1
    output y
  )").status(), StatusIs(kInvalid, HasSubstr("op \"a\" reads tensor \"ghost\"")));
}

TEST(GraphValidationTest, DuplicateProducer) {
  GraphBuilder builder;
  builder.AddTensorBytes("x", 1, TensorKind::kInput);
  builder.AddGraphInput("x");
  builder.AddTensorBytes("y", 1);
  builder.AddOp("a", "Relu", {"x"}, {"y"});
  builder.AddOp("b", "Relu", {"x"}, {"y"});
  EXPECT_THAT(std::move(builder).Build().status(),
              StatusIs(kInvalid, HasSubstr("tensor \"y\" has two producers")));
}

TEST(GraphValidationTest, ConsumedButNeverProduced) {
  GraphBuilder builder;
  builder.AddTensorBytes("x", 1);  // activation, not an input
  builder.AddTensorBytes("y", 1);
  builder.AddOp("a", "Relu", {"x"}, {"y"});
  EXPECT_THAT(std::move(builder).Build().status(),
              StatusIs(kInvalid, HasSubstr("\"x\" is read by op \"a\" but never produced")));
}

TEST(GraphValidationTest, BadDims) {
  for (auto [dims, message] : std::vector<std::pair<std::vector<int64_t>, std::string>>{
           {{1, 0, 3}, "zero-size"},
           {{1, -1}, "unknown or dynamic"},
           {{int64_t{1} << 40, int64_t{1} << 40}, "overflow"}}) {
    GraphBuilder builder;
    builder.AddTensor("x", DataType::kFloat32, {1}, TensorKind::kInput);
    builder.AddGraphInput("x");
    builder.AddTensor("conv3:0", DataType::kFloat32, dims);
    builder.AddOp("conv3", "Conv", {"x"}, {"conv3:0"});
    EXPECT_THAT(std::move(builder).Build().status(),
                StatusIs(kInvalid, ::testing::AllOf(HasSubstr("conv3:0"), HasSubstr(message))));
  }
}

TEST(GraphValidationTest, UnknownDtype) {
  GraphBuilder builder;
  builder.AddTensor("x", DataType::kUnknown, {1}, TensorKind::kInput);
  builder.AddGraphInput("x");
  EXPECT_THAT(std::move(builder).Build().status(),
              StatusIs(kInvalid, HasSubstr("no ops")));
  GraphBuilder with_op;
  with_op.AddTensor("x", DataType::kUnknown, {1}, TensorKind::kInput);
  with_op.AddGraphInput("x");
  with_op.AddTensorBytes("y", 1);
  with_op.AddOp("a", "Relu", {"x"}, {"y"});
  EXPECT_THAT(std::move(with_op).Build().status(),
              StatusIs(kInvalid, HasSubstr("tensor \"x\": unknown dtype")));
}

TEST(GraphValidationTest, EmptyGraph) {
  EXPECT_THAT(ParseTestGraph("input x 1\n").status(),
              StatusIs(kInvalid, HasSubstr("no ops")));
}

TEST(GraphValidationTest, OpLimit) {
  EXPECT_THAT(ParseTestGraph(R"(
    input x 1
    op a Relu x -> y:1
    op b Relu y -> z:1
  )", GraphLimits{.max_ops = 1}).status(),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("limit is 1")));
}

TEST(GraphValidationTest, DuplicateNames) {
  EXPECT_THAT(ParseTestGraph(R"(
    input x 1
    op a Relu x -> y:1
    op a Relu y -> z:1
  )").status(), StatusIs(kInvalid, HasSubstr("op \"a\": name is used twice")));
  GraphBuilder builder("g");
  builder.AddTensorBytes("x", 1, TensorKind::kInput);
  builder.AddTensorBytes("y", 1);
  builder.AddTensorBytes("y", 2);
  builder.AddOp("a", "Relu", {"x"}, {"y"});
  EXPECT_THAT(std::move(builder).Build(),
              StatusIs(kInvalid, HasSubstr("tensor \"y\" is declared twice")));
}

TEST(GraphValidationTest, GraphOutputNotDeclared) {
  EXPECT_THAT(ParseTestGraph(R"(
    input x 1
    op a Relu x -> y:1
    output nothing
  )").status(), StatusIs(kInvalid, HasSubstr("graph output \"nothing\"")));
}

// A weight listed as a graph output (any front end: ONNX folding, a
// TFLite buffer, the native format) is a constant the runtime reads from
// the weights: it is no graph output of the schedule, and a note says so,
// once however often it is listed.
TEST(GraphTest, AWeightListedAsAnOutputIsLeftOutWithANote) {
  GraphBuilder builder("g");
  builder.AddTensorBytes("x", 4, TensorKind::kInput);
  builder.AddTensorBytes("w", 8, TensorKind::kWeight);
  builder.AddTensorBytes("y", 4);
  builder.AddOp("relu", "Relu", {"x"}, {"y"});
  builder.AddGraphInput("x");
  builder.AddGraphOutput("w");
  builder.AddGraphOutput("y");
  builder.AddGraphOutput("w");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph g, std::move(builder).Build());
  EXPECT_THAT(g.outputs(), ElementsAre(*g.FindTensor("y")));
  EXPECT_FALSE(g.tensor(*g.FindTensor("w")).is_graph_output);
  EXPECT_THAT(g.notes(), ElementsAre(HasSubstr("graph output \"w\" is a constant")));
}

// A detection export may list thousands of constants as outputs, and a
// hostile one a few hundred thousand in a few megabytes: one note names
// four and counts the rest. (Telling them apart was quadratic in the first
// version; onnx_import_bench's BM_BuildManyConstantOutputs times it.)
TEST(GraphTest, ManyConstantOutputsGetOneNote) {
  constexpr int kConstants = 100000;
  GraphBuilder builder = ::ordo::testing::ManyConstantOutputs(kConstants);
  builder.AddGraphOutput("c0");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph g, std::move(builder).Build());
  EXPECT_EQ(g.outputs().size(), 1u);
  EXPECT_THAT(g.notes(), ElementsAre(HasSubstr(absl::StrCat("and ", kConstants - 4, " more"))));
}

TEST(GraphTest, DeepChainDoesNotRecurse) {
  GraphBuilder builder;
  builder.AddTensorBytes("t0", 1, TensorKind::kInput);
  builder.AddGraphInput("t0");
  const int kDepth = 90000;
  for (int i = 1; i <= kDepth; ++i) {
    builder.AddTensorBytes("t" + std::to_string(i), 1);
    builder.AddOp("op" + std::to_string(i), "Relu", {"t" + std::to_string(i - 1)},
                  {"t" + std::to_string(i)});
  }
  ORDO_ASSERT_OK_AND_ASSIGN(Graph g, std::move(builder).Build());
  EXPECT_EQ(g.num_ops(), kDepth);
}

}  // namespace
}  // namespace ordo
