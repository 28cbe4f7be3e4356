#include "core/onnx/function_inlining.h"

#include <algorithm>
#include <string>
#include <vector>

#include "core/onnx/onnx_import.h"
#include "core/onnx/prepare_model.h"
#include "core/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::SizeIs;

constexpr auto kInvalid = absl::StatusCode::kInvalidArgument;

void AddValue(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& list,
              const std::string& name, const std::vector<int64_t>& dims) {
  onnx::ValueInfoProto& info = *list.Add();
  info.set_name(name);
  auto* tensor = info.mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) tensor->mutable_shape()->add_dim()->set_dim_value(d);
}

onnx::NodeProto Node(const std::string& op, const std::vector<std::string>& inputs,
                     const std::vector<std::string>& outputs, const std::string& domain = "") {
  onnx::NodeProto node;
  node.set_op_type(op);
  node.set_domain(domain);
  for (const std::string& i : inputs) node.add_input(i);
  for (const std::string& o : outputs) node.add_output(o);
  return node;
}

void AddInts(onnx::NodeProto& node, const std::string& name, const std::vector<int64_t>& ints) {
  onnx::AttributeProto& a = *node.add_attribute();
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INTS);
  for (int64_t i : ints) a.add_ints(i);
}

void AddRef(onnx::NodeProto& node, const std::string& name, const std::string& ref) {
  onnx::AttributeProto& a = *node.add_attribute();
  a.set_name(name);
  a.set_ref_attr_name(ref);
  a.set_type(onnx::AttributeProto::INTS);
}

onnx::FunctionProto& AddFunction(onnx::ModelProto& model, const std::string& domain,
                                 const std::string& name, const std::vector<std::string>& inputs,
                                 const std::vector<std::string>& outputs,
                                 const std::vector<onnx::NodeProto>& body) {
  onnx::FunctionProto& f = *model.add_functions();
  f.set_domain(domain);
  f.set_name(name);
  for (const std::string& i : inputs) f.add_input(i);
  for (const std::string& o : outputs) f.add_output(o);
  for (const onnx::NodeProto& n : body) *f.add_node() = n;
  onnx::OperatorSetIdProto& opset = *f.add_opset_import();
  opset.set_version(13);
  return f;
}

// x [1,4,8,8] -> lib.Block(x, w) -> y, where Block = lib.ConvRelu twice
// with a residual Add, and ConvRelu = Conv(pads from the call) -> Relu.
// Flat, the block holds x, two conv outputs and the sum; as two opaque
// calls only x and y.
onnx::ModelProto BlockModel() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(13);
  onnx::OperatorSetIdProto& lib = *model.add_opset_import();
  lib.set_domain("lib");
  lib.set_version(1);
  onnx::GraphProto& g = *model.mutable_graph();
  g.set_name("blocks");
  AddValue(*g.mutable_input(), "x", {1, 4, 8, 8});
  onnx::TensorProto& w = *g.add_initializer();
  w.set_name("w");
  w.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {4, 4, 3, 3}) w.add_dims(d);
  onnx::NodeProto call = Node("Block", {"x", "w"}, {"y"}, "lib");
  call.set_name("block1");
  *g.add_node() = call;
  AddValue(*g.mutable_output(), "y", {1, 4, 8, 8});

  onnx::NodeProto conv = Node("Conv", {"in", "k"}, {"c"});
  AddRef(conv, "pads", "padding");
  AddFunction(model, "lib", "ConvRelu", {"in", "k"}, {"out"}, {conv, Node("Relu", {"c"}, {"out"})});
  onnx::NodeProto first = Node("ConvRelu", {"in", "k"}, {"a"}, "lib");
  AddInts(first, "padding", {1, 1, 1, 1});
  onnx::NodeProto second = Node("ConvRelu", {"a", "k"}, {"b"}, "lib");
  AddInts(second, "padding", {1, 1, 1, 1});
  onnx::FunctionProto& block = AddFunction(model, "lib", "Block", {"in", "k"}, {"out"},
                                           {first, second, Node("Add", {"b", "in"}, {"out"})});
  onnx::OperatorSetIdProto& inner = *block.add_opset_import();
  inner.set_domain("lib");
  inner.set_version(1);
  return model;
}

std::vector<std::string> NodeNames(const onnx::ModelProto& model) {
  std::vector<std::string> names;
  for (const onnx::NodeProto& n : model.graph().node()) names.push_back(n.name());
  return names;
}

TEST(FunctionInliningTest, NestedCallsBecomeTheirBodiesWithPrefixedNames) {
  onnx::ModelProto model = BlockModel();
  ORDO_ASSERT_OK(InlineLocalFunctions(model));
  EXPECT_THAT(NodeNames(model),
              ElementsAre("block1/ConvRelu_0/Conv_0", "block1/ConvRelu_0/Relu_1",
                          "block1/ConvRelu_1/Conv_0", "block1/ConvRelu_1/Relu_1", "block1/Add_2"));
  const onnx::GraphProto& g = model.graph();
  EXPECT_THAT(g.node(0).input(), ElementsAre("x", "w"));
  EXPECT_THAT(g.node(1).output(), ElementsAre("block1/a"));
  EXPECT_THAT(g.node(2).input(), ElementsAre("block1/a", "w"));
  EXPECT_THAT(g.node(4).input(), ElementsAre("block1/b", "x"));
  EXPECT_THAT(g.node(4).output(), ElementsAre("y"));
  // The call's attribute, under the body's name for it.
  ASSERT_THAT(g.node(0).attribute(), SizeIs(1));
  EXPECT_EQ(g.node(0).attribute(0).name(), "pads");
  EXPECT_THAT(g.node(0).attribute(0).ints(), ElementsAre(1, 1, 1, 1));
  EXPECT_TRUE(g.node(0).attribute(0).ref_attr_name().empty());
  EXPECT_THAT(model.functions(), IsEmpty());
}

// The reason to inline: as opaque calls the block's activations vanish.
TEST(FunctionInliningTest, ThePreparedModelCountsTheBodiesActivations) {
  const std::string bytes = BlockModel().SerializeAsString();
  EXPECT_THAT(ImportOnnx(bytes),
              StatusIs(kInvalid, HasSubstr("node \"block1\" calls the "
                                           "model-local function \"lib.Block\"")));
  ORDO_ASSERT_OK_AND_ASSIGN(std::string prepared, PreparedOnnxBytes(bytes, {}));
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(prepared));
  EXPECT_EQ(graph.num_ops(), 5);
}

TEST(FunctionInliningTest, AttributeDefaultsComeFromAttributeProtoElseAreLeftOut) {
  onnx::ModelProto model = BlockModel();
  // No padding on the first call: ConvRelu's default (attribute_proto, field
  // 11, unknown to ONNX 1.12) is used; the second call gives none either and
  // the function below it has no default: the attribute is left out.
  onnx::FunctionProto& block = *model.mutable_functions(1);
  block.mutable_node(0)->clear_attribute();
  onnx::AttributeProto fallback;
  fallback.set_name("padding");
  fallback.set_type(onnx::AttributeProto::INTS);
  for (int i = 0; i < 4; ++i) fallback.add_ints(2);
  model.mutable_functions(0)->mutable_unknown_fields()->AddLengthDelimited(
      11, fallback.SerializeAsString());
  ORDO_ASSERT_OK(InlineLocalFunctions(model));
  EXPECT_THAT(model.graph().node(0).attribute(0).ints(), ElementsAre(2, 2, 2, 2));
  EXPECT_THAT(model.graph().node(2).attribute(0).ints(), ElementsAre(1, 1, 1, 1));

  onnx::ModelProto bare = BlockModel();
  bare.mutable_functions(1)->mutable_node(0)->clear_attribute();
  ORDO_ASSERT_OK(InlineLocalFunctions(bare));
  EXPECT_THAT(bare.graph().node(0).attribute(), IsEmpty());
}

TEST(FunctionInliningTest, LeftOutInputsAreAbsentAndPassedThroughOutputsAreCopied) {
  onnx::ModelProto model = BlockModel();
  onnx::GraphProto& g = *model.mutable_graph();
  g.clear_node();
  AddFunction(model, "lib", "Maybe", {"in", "bias"}, {"out", "in", "extra"},
              {Node("Add", {"in", "bias"}, {"out"}), Node("Relu", {"out"}, {"extra"})});
  onnx::NodeProto call = Node("Maybe", {"x"}, {"y", "copy"}, "lib");
  call.set_name("maybe");
  *g.add_node() = call;
  ORDO_ASSERT_OK(InlineLocalFunctions(model));
  EXPECT_THAT(NodeNames(model), ElementsAre("maybe/Add_0", "maybe/Relu_1", "maybe/Identity"));
  EXPECT_THAT(g.node(0).input(), ElementsAre("x", ""));
  EXPECT_THAT(g.node(1).output(), ElementsAre("maybe/extra"));  // not taken by the call
  EXPECT_THAT(g.node(2).input(), ElementsAre("x"));
  EXPECT_THAT(g.node(2).output(), ElementsAre("copy"));
}

TEST(FunctionInliningTest, NamesStayUniqueAcrossCallsAndTheGraph) {
  onnx::ModelProto model = BlockModel();
  onnx::GraphProto& g = *model.mutable_graph();
  g.mutable_node(0)->set_name("");                   // unnamed calls get the op type as prefix
  *g.add_node() = Node("Relu", {"y"}, {"Block/a"});  // a graph value the prefix would take
  onnx::NodeProto again = Node("Block", {"Block/a", "w"}, {"z"}, "lib");
  *g.add_node() = again;
  ORDO_ASSERT_OK(InlineLocalFunctions(model));
  std::vector<std::string> values;
  for (const onnx::NodeProto& n : g.node())
    values.insert(values.end(), n.output().begin(), n.output().end());
  std::sort(values.begin(), values.end());
  EXPECT_EQ(std::adjacent_find(values.begin(), values.end()), values.end());
  std::vector<std::string> names = NodeNames(model);
  std::sort(names.begin(), names.end());
  EXPECT_EQ(std::adjacent_find(names.begin(), names.end()), names.end());
  EXPECT_THAT(g.node(1).output(), ElementsAre("Block/a_1"));
}

TEST(FunctionInliningTest, OrdoFusedStagesStayOneOp) {
  onnx::ModelProto model = BlockModel();
  model.mutable_functions(1)->set_domain(std::string(kOrdoFusionDomain));
  model.mutable_graph()->mutable_node(0)->set_domain(std::string(kOrdoFusionDomain));
  ORDO_ASSERT_OK(InlineLocalFunctions(model));
  EXPECT_THAT(NodeNames(model), ElementsAre("block1"));
  EXPECT_THAT(model.functions(), SizeIs(1));
}

TEST(FunctionInliningTest, BadFunctionsAreRefusedNamingThem) {
  onnx::ModelProto recursive = BlockModel();
  *recursive.mutable_functions(0)->add_node() = Node("Block", {"out", "k"}, {"again"}, "lib");
  EXPECT_THAT(InlineLocalFunctions(recursive),
              StatusIs(kInvalid, HasSubstr("local function \"lib.Block\" calls itself")));

  onnx::ModelProto too_many = BlockModel();
  too_many.mutable_graph()->mutable_node(0)->add_input("x");
  EXPECT_THAT(InlineLocalFunctions(too_many),
              StatusIs(kInvalid, HasSubstr("node \"block1\" calls local function \"lib.Block\" "
                                           "with 3 inputs and 1 outputs; it takes at most 2")));

  onnx::ModelProto versions = BlockModel();
  versions.mutable_functions(0)->mutable_opset_import(0)->set_version(17);
  EXPECT_THAT(InlineLocalFunctions(versions),
              StatusIs(kInvalid, HasSubstr("local function \"lib.ConvRelu\" imports opset 17 of "
                                           "domain \"ai.onnx\" but the model imports 13")));

  // A chain of 70 functions, each calling the next.
  onnx::ModelProto deep = BlockModel();
  for (int level = 0; level < 70; ++level) {
    AddFunction(deep, "lib", "F" + std::to_string(level), {"in"}, {"out"},
                {Node(level == 69 ? "Relu" : "F" + std::to_string(level + 1), {"in"}, {"out"},
                      level == 69 ? "" : "lib")});
  }
  *deep.mutable_graph()->mutable_node(0) = Node("F0", {"x"}, {"y"}, "lib");
  EXPECT_THAT(InlineLocalFunctions(deep),
              StatusIs(kInvalid, HasSubstr("inside more than 64 nested calls")));

  onnx::ModelProto overloaded = BlockModel();
  *overloaded.add_functions() = overloaded.functions(0);
  EXPECT_THAT(InlineLocalFunctions(overloaded),
              StatusIs(kInvalid, HasSubstr("two local functions \"lib.ConvRelu\" (overloads")));

  onnx::ModelProto big = BlockModel();
  EXPECT_THAT(InlineLocalFunctions(big, 4),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("more than 4 nodes")));
}

TEST(FunctionInliningTest, OpsetsOnlyTheFunctionsImportAreAdded) {
  onnx::ModelProto model = BlockModel();
  onnx::OperatorSetIdProto& ms = *model.mutable_functions(0)->add_opset_import();
  ms.set_domain("com.microsoft");
  ms.set_version(1);
  ORDO_ASSERT_OK(InlineLocalFunctions(model));
  std::vector<std::string> domains;
  for (const auto& opset : model.opset_import()) domains.push_back(opset.domain());
  EXPECT_THAT(domains, ElementsAre("", "lib", "com.microsoft"));
}

TEST(FunctionInliningTest, AModelWithoutFunctionsOrOverridesIsNotCopied) {
  onnx::ModelProto model = BlockModel();
  ORDO_ASSERT_OK(InlineLocalFunctions(model));
  ORDO_ASSERT_OK_AND_ASSIGN(auto prepared, PrepareOnnxModel(model.SerializeAsString(), {}));
  EXPECT_FALSE(prepared.has_value());
}

}  // namespace
}  // namespace ordo
