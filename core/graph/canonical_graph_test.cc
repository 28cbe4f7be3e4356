#include "core/graph/canonical_graph.h"

#include <algorithm>
#include <functional>
#include <numeric>
#include <random>

#include "absl/strings/str_cat.h"
#include "core/testing/status_matchers.h"
#include "core/testing/test_graph.h"
#include "core/testing/trials.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

// How Rebuild changes a graph besides renaming.
struct Change {
  // Called on each op's (type, input names) before it is added.
  std::function<void(OpId, std::string&, std::vector<std::string>&)> op;
  // Called on each tensor's byte size.
  std::function<void(TensorId, int64_t&)> tensor;
};

// `graph` rebuilt with every name given a per-call prefix, tensors declared
// in a shuffled order, the graph renamed, and `change` applied.
Graph Rebuild(const Graph& graph, std::mt19937_64& rng, const std::string& prefix,
              const Change& change = {}) {
  auto tensor_name = [&](TensorId t) { return absl::StrCat(prefix, graph.tensor(t).name); };
  GraphBuilder builder(prefix + "graph");
  std::vector<TensorId> tensors(graph.num_tensors());
  std::iota(tensors.begin(), tensors.end(), 0);
  std::shuffle(tensors.begin(), tensors.end(), rng);
  for (TensorId t : tensors) {
    const Tensor& tensor = graph.tensor(t);
    int64_t bytes = tensor.bytes;
    if (change.tensor) change.tensor(t, bytes);
    const TensorKind kind =
        tensor.kind == TensorKind::kOutput ? TensorKind::kActivation : tensor.kind;
    builder.AddTensorBytes(tensor_name(t), bytes, kind);
  }
  for (OpId o = 0; o < graph.num_ops(); ++o) {
    const Op& op = graph.op(o);
    std::string type = op.type;
    std::vector<std::string> inputs, outputs;
    for (TensorId t : op.inputs) inputs.push_back(tensor_name(t));
    for (TensorId t : op.outputs) outputs.push_back(tensor_name(t));
    if (change.op) change.op(o, type, inputs);
    builder.AddOp(prefix + op.name, type, inputs, outputs, op.attributes);
  }
  for (TensorId t : graph.inputs()) builder.AddGraphInput(tensor_name(t));
  for (TensorId t : graph.outputs()) builder.AddGraphOutput(tensor_name(t));
  absl::StatusOr<Graph> rebuilt = std::move(builder).Build();
  EXPECT_TRUE(rebuilt.ok()) << rebuilt.status();
  return rebuilt.ok() ? *std::move(rebuilt) : Graph();
}

Graph RandomGraph(std::mt19937_64& rng, int trial) {
  testing::RandomDagOptions options;
  options.num_ops = 2 + trial % 30;
  options.num_inputs = 1 + trial % 3;
  return testing::RandomDag(rng, options);
}

TEST(CanonicalGraphTest, RenamingAndDeclarationOrderNeverChangeTheForm) {
  std::mt19937_64 rng(19);
  for (int trial = 0; trial < testing::Trials(200); ++trial) {
    const Graph graph = RandomGraph(rng, trial);
    const Graph renamed = Rebuild(graph, rng, absl::StrCat("export", trial, "/"));
    const CanonicalGraph a = CanonicalizeGraph(graph);
    const CanonicalGraph b = CanonicalizeGraph(renamed);
    ASSERT_EQ(a.form, b.form) << "trial " << trial;
    // The numbering maps each tensor to its renamed twin.
    for (TensorId t = 0; t < graph.num_tensors(); ++t) {
      const TensorId twin = b.tensor_of_canonical[a.canonical_of_tensor[t]];
      EXPECT_EQ(renamed.tensor(twin).name,
                absl::StrCat("export", trial, "/", graph.tensor(t).name));
    }
  }
}

TEST(CanonicalGraphTest, AnyChangeOfSizeTypeOrEdgeChangesTheForm) {
  std::mt19937_64 rng(20);
  for (int trial = 0; trial < testing::Trials(200); ++trial) {
    const Graph graph = RandomGraph(rng, trial);
    const std::string form = CanonicalizeGraph(graph).form;
    const OpId target_op = static_cast<OpId>(rng() % graph.num_ops());
    const TensorId target_tensor = static_cast<TensorId>(rng() % graph.num_tensors());

    Change size;
    size.tensor = [&](TensorId t, int64_t& bytes) {
      if (t == target_tensor) bytes += 1;
    };
    EXPECT_NE(CanonicalizeGraph(Rebuild(graph, rng, "s/", size)).form, form) << trial;

    Change type;
    type.op = [&](OpId o, std::string& op_type, std::vector<std::string>&) {
      if (o == target_op) op_type += "X";
    };
    EXPECT_NE(CanonicalizeGraph(Rebuild(graph, rng, "t/", type)).form, form) << trial;

    // An edge: the op's first input read from a graph input instead (or,
    // when it already is that input, dropped for another graph input, or
    // duplicated).
    const std::string first_input = graph.tensor(graph.inputs()[0]).name;
    Change edge;
    edge.op = [&](OpId o, std::string&, std::vector<std::string>& inputs) {
      if (o != target_op) return;
      if (inputs[0] != "e/" + first_input) {
        inputs[0] = "e/" + first_input;
      } else {
        inputs.push_back(inputs[0]);
      }
    };
    EXPECT_NE(CanonicalizeGraph(Rebuild(graph, rng, "e/", edge)).form, form) << trial;
  }
}

TEST(CanonicalGraphTest, AttributesAndDimsArePartOfTheForm) {
  const Graph a = testing::TestGraph(R"(
    input x 64
    op a Conv x -> y:64
    output y
  )");
  GraphBuilder with_attribute("other");
  with_attribute.AddTensorBytes("in", 64, TensorKind::kInput);
  with_attribute.AddTensorBytes("out", 64);
  with_attribute.AddOp("conv", "Conv", {"in"}, {"out"}, {{"group", int64_t{2}}});
  with_attribute.AddGraphInput("in");
  with_attribute.AddGraphOutput("out");
  ORDO_ASSERT_OK_AND_ASSIGN(const Graph b, std::move(with_attribute).Build());
  EXPECT_NE(CanonicalizeGraph(a).form, CanonicalizeGraph(b).form);

  GraphBuilder shaped_1("g"), shaped_2("g");
  shaped_1.AddTensor("x", DataType::kFloat32, {1, 16}, TensorKind::kInput);
  shaped_2.AddTensor("x", DataType::kFloat32, {16, 1}, TensorKind::kInput);
  for (GraphBuilder* builder : {&shaped_1, &shaped_2}) {
    builder->AddTensor("y", DataType::kFloat32, {1, 16});
    builder->AddOp("r", "Relu", {"x"}, {"y"});
    builder->AddGraphInput("x");
    builder->AddGraphOutput("y");
  }
  ORDO_ASSERT_OK_AND_ASSIGN(const Graph c, std::move(shaped_1).Build());
  ORDO_ASSERT_OK_AND_ASSIGN(const Graph d, std::move(shaped_2).Build());
  EXPECT_NE(CanonicalizeGraph(c).form, CanonicalizeGraph(d).form);
}

}  // namespace
}  // namespace ordo
