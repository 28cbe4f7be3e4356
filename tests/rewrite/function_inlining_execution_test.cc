// Proof by execution of InlineLocalFunctions (core/onnx/function_inlining.h):
// the reference executor runs a call in a scope of its own (its code shares
// nothing with the inliner), and the inlined model must compute the same
// outputs; the prepared model then imports with every body op.
#include <random>
#include <string>

#include "core/onnx/function_inlining.h"
#include "core/onnx/onnx_import.h"
#include "core/rewrite/onnx_test_model.h"
#include "core/testing/status_matchers.h"
#include "gtest/gtest.h"
#include "tests/rewrite/execution_checks.h"

namespace ordo {
namespace {

onnx::NodeProto Call(const std::string& function, const std::vector<std::string>& inputs,
                     const std::vector<std::string>& outputs, const std::string& name) {
  onnx::NodeProto node;
  node.set_op_type(function);
  node.set_domain("lib");
  node.set_name(name);
  for (const std::string& i : inputs) node.add_input(i);
  for (const std::string& o : outputs) node.add_output(o);
  return node;
}

onnx::NodeProto Op(const std::string& op, const std::vector<std::string>& inputs,
                   const std::vector<std::string>& outputs) {
  return Call(op, inputs, outputs, "");
}

// x [1,4,8,8] -> Res(x) -> Res(.) -> y with Res = ConvRelu, ConvRelu, Add
// with its input (a residual block as PyTorch's module-level functions
// write one), ConvRelu itself a function: two levels of calls, random
// weights, and the same weights read by both blocks.
onnx::ModelProto ResidualModel(std::mt19937& rng) {
  OnnxTestModel m;
  m.Input("x", {1, 4, 8, 8});
  m.Weight("w1", {4, 4, 3, 3}, &rng);
  m.Weight("w2", {4, 4, 3, 3}, &rng);
  m.Output("y");
  onnx::ModelProto model = m.model();
  onnx::OperatorSetIdProto& lib = *model.add_opset_import();
  lib.set_domain("lib");
  lib.set_version(1);
  onnx::GraphProto& g = *model.mutable_graph();
  *g.add_node() = Call("Res", {"x", "w1", "w2"}, {"r1"}, "res1");
  *g.add_node() = Call("Res", {"r1", "w2", "w1"}, {"y"}, "res2");

  auto function = [&](const std::string& name, const std::vector<std::string>& inputs,
                      const std::string& output) -> onnx::FunctionProto& {
    onnx::FunctionProto& f = *model.add_functions();
    f.set_domain("lib");
    f.set_name(name);
    for (const std::string& i : inputs) f.add_input(i);
    f.add_output(output);
    f.add_opset_import()->set_version(13);
    onnx::OperatorSetIdProto& inner = *f.add_opset_import();
    inner.set_domain("lib");
    inner.set_version(1);
    return f;
  };
  onnx::FunctionProto& conv_relu = function("ConvRelu", {"in", "k"}, "out");
  onnx::NodeProto conv = Op("Conv", {"in", "k"}, {"c"});
  conv.clear_domain();
  SetIntsAttribute(conv, "pads", {1, 1, 1, 1});
  *conv_relu.add_node() = conv;
  onnx::NodeProto relu = Op("Relu", {"c"}, {"out"});
  relu.clear_domain();
  *conv_relu.add_node() = relu;

  onnx::FunctionProto& res = function("Res", {"in", "ka", "kb"}, "out");
  *res.add_node() = Op("ConvRelu", {"in", "ka"}, {"a"});
  *res.add_node() = Op("ConvRelu", {"a", "kb"}, {"b"});
  onnx::NodeProto add = Op("Add", {"b", "in"}, {"out"});
  add.clear_domain();
  *res.add_node() = add;
  return model;
}

TEST(FunctionInliningExecutionTest, InlinedModelComputesWhatTheCallsDo) {
  for (uint32_t seed : {1u, 2u, 3u}) {
    std::mt19937 rng(seed);
    const onnx::ModelProto original = ResidualModel(rng);
    onnx::ModelProto inlined = original;
    ORDO_ASSERT_OK(InlineLocalFunctions(inlined));
    ASSERT_EQ(inlined.functions_size(), 0);
    ASSERT_EQ(inlined.graph().node_size(), 10);
    ExpectSameOutputs(original, inlined, seed, "residual blocks, seed " + std::to_string(seed),
                      {.expect_nonzero = true});
    ORDO_ASSERT_OK(CheckOnnx(inlined));
    ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(inlined.SerializeAsString()));
    EXPECT_EQ(graph.num_ops(), 10);
  }
}

}  // namespace
}  // namespace ordo
