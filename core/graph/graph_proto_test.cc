#include "core/graph/graph_proto.h"

#include <random>

#include "absl/strings/str_cat.h"
#include "core/testing/status_matchers.h"
#include "core/testing/test_graph.h"
#include "core/testing/trials.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::StatusIs;
using ::testing::HasSubstr;

constexpr char kJson[] = R"({
  "name": "tiny",
  "tensors": [
    {"name": "x", "dtype": "DATA_TYPE_FLOAT32", "dims": [1, 4]},
    {"name": "w", "dtype": "DATA_TYPE_FLOAT32", "dims": [4, 4]},
    {"name": "y", "sizeBytes": "64"},
    {"name": "z", "dtype": "DATA_TYPE_INT8", "dims": [16]}
  ],
  "ops": [
    {"name": "mm", "type": "MatMul", "inputs": ["x", "w"], "outputs": ["y"],
     "attributes": {"alpha": {"f": 1.5}, "axes": {"ints": {"values": ["1", "2"]}}}},
    {"name": "q", "type": "QuantizeLinear", "inputs": ["y"], "outputs": ["z"]}
  ],
  "inputs": ["x"],
  "outputs": ["z"]
})";

TEST(GraphProtoTest, JsonDerivesKindsAndSizes) {
  ORDO_ASSERT_OK_AND_ASSIGN(Graph g, ParseGraphJson(kJson));
  EXPECT_EQ(g.name(), "tiny");
  EXPECT_EQ(g.num_ops(), 2);
  EXPECT_EQ(g.tensor(*g.FindTensor("x")).kind, TensorKind::kInput);
  EXPECT_EQ(g.tensor(*g.FindTensor("w")).kind, TensorKind::kWeight);
  EXPECT_EQ(g.tensor(*g.FindTensor("y")).bytes, 64);
  EXPECT_EQ(g.tensor(*g.FindTensor("z")).kind, TensorKind::kOutput);
  EXPECT_EQ(g.tensor(*g.FindTensor("z")).bytes, 16);
  EXPECT_EQ(g.op(0).attributes.size(), 2u);
}

TEST(GraphProtoTest, BinaryRoundTrip) {
  ORDO_ASSERT_OK_AND_ASSIGN(Graph g, ParseGraphJson(kJson));
  std::string bytes = GraphToProto(g).SerializeAsString();
  ORDO_ASSERT_OK_AND_ASSIGN(Graph again, ParseGraphBinary(bytes));
  ASSERT_EQ(again.num_tensors(), g.num_tensors());
  for (TensorId t = 0; t < g.num_tensors(); ++t) {
    EXPECT_EQ(again.tensor(t).name, g.tensor(t).name);
    EXPECT_EQ(again.tensor(t).bytes, g.tensor(t).bytes);
    EXPECT_EQ(again.tensor(t).kind, g.tensor(t).kind);
  }
  EXPECT_EQ(again.op(0).attributes.size(), 2u);
}

TEST(GraphProtoTest, BadInputsNameTheProblem) {
  EXPECT_THAT(ParseGraphJson("{ nope").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("JSON")));
  EXPECT_THAT(ParseGraphJson(R"({"unknownField": 1})").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("JSON")));
  EXPECT_THAT(ParseGraphBinary("\xff\xff\xff garbage").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("protobuf")));
  EXPECT_THAT(ParseGraphJson(R"({"tensors": [{"name": "x"}], "ops": [
                 {"name": "a", "type": "Relu", "inputs": ["x"], "outputs": ["x"]}]})")
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("tensor \"x\"")));
  v1::Graph big;
  for (int i = 0; i < 5; ++i) big.add_ops()->set_name("op");
  EXPECT_THAT(GraphFromProto(big, {.max_ops = 4}).status(),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("limit is 4")));
}

// Ops whose names all resolve are added by tensor id; the graph is the same
// as the one the message was made from, edge for edge.
TEST(GraphProtoTest, RandomGraphsSurviveTheRoundTripEdgeForEdge) {
  std::mt19937_64 rng(19);
  for (int i = 0; i < ::ordo::testing::Trials(50); ++i) {
    const Graph g = ::ordo::testing::RandomDag(rng, {.num_ops = 3 + i % 30, .num_inputs = 1 + i % 3});
    ORDO_ASSERT_OK_AND_ASSIGN(Graph again, GraphFromProto(GraphToProto(g)));
    ASSERT_EQ(again.num_ops(), g.num_ops());
    ASSERT_EQ(again.num_tensors(), g.num_tensors());
    for (OpId op = 0; op < g.num_ops(); ++op) {
      EXPECT_EQ(again.op(op).name, g.op(op).name);
      EXPECT_EQ(again.op(op).inputs, g.op(op).inputs);
      EXPECT_EQ(again.op(op).outputs, g.op(op).outputs);
    }
    for (TensorId t = 0; t < g.num_tensors(); ++t) {
      EXPECT_EQ(again.tensor(t).consumers, g.tensor(t).consumers);
      EXPECT_EQ(again.tensor(t).kind, g.tensor(t).kind);
    }
    EXPECT_EQ(again.inputs(), g.inputs());
    EXPECT_EQ(again.outputs(), g.outputs());
  }
}

TEST(GraphProtoTest, UndeclaredAndOmittedTensorNames) {
  auto parse = [](absl::string_view ops) {
    return ParseGraphJson(absl::StrCat(R"({"tensors": [{"name": "x", "sizeBytes": "4"},
        {"name": "y", "sizeBytes": "4"}], "inputs": ["x"], "ops": [)", ops, "]}"));
  };
  // An empty input is an omitted optional input.
  ORDO_ASSERT_OK_AND_ASSIGN(
      Graph g, parse(R"({"name": "a", "type": "Relu", "inputs": ["x", ""], "outputs": ["y"]})"));
  EXPECT_EQ(g.op(0).inputs.size(), 1u);
  EXPECT_THAT(parse(R"({"name": "a", "type": "Add", "inputs": ["x", "w"], "outputs": ["y"]})")
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("op \"a\" reads tensor \"w\", which is not defined")));
  EXPECT_THAT(parse(R"({"name": "a", "type": "Relu", "inputs": ["x"], "outputs": ["z"]})")
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("op \"a\" writes tensor \"z\", which is not declared")));
  EXPECT_THAT(ParseGraphJson(R"({"tensors": [{"name": "x", "sizeBytes": "4"},
                 {"name": "x", "sizeBytes": "8"}], "inputs": ["x"], "ops": [
                 {"name": "a", "type": "Relu", "inputs": ["x"], "outputs": ["x"]}]})")
                  .status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("declared twice")));
}

}  // namespace
}  // namespace ordo
