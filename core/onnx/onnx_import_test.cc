#include "core/onnx/onnx_import.h"

#include <cstdint>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <limits>
#include <limits>
#include <queue>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/escaping.h"
#include "core/memory/memory_model.h"
#include "core/memory/simulator.h"
#include "core/testing/status_matchers.h"
#include "core/testing/test_paths.h"
#include "core/testing/trials.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onnx/checker.h"
#include "onnx/onnx_pb.h"

namespace ordo {
namespace {

using ::ordo::testing::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::Not;

constexpr auto kInvalid = absl::StatusCode::kInvalidArgument;
constexpr auto kExhausted = absl::StatusCode::kResourceExhausted;

// In TestModel dims, a symbolic dim named "N".
constexpr int64_t kN = -1;

// A small ONNX model written inline: opset 13, IR version 7. Tensors are
// float unless an element type is given.
class TestModel {
 public:
  TestModel() {
    model_.set_ir_version(7);
    model_.add_opset_import()->set_version(13);
    model_.mutable_graph()->set_name("test");
  }

  TestModel& Input(const std::string& name, std::initializer_list<int64_t> dims,
                   int32_t elem_type = onnx::TensorProto::FLOAT) {
    SetType(model_.mutable_graph()->add_input(), name, dims, elem_type);
    return *this;
  }
  TestModel& Output(const std::string& name, std::initializer_list<int64_t> dims,
                    int32_t elem_type = onnx::TensorProto::FLOAT) {
    SetType(model_.mutable_graph()->add_output(), name, dims, elem_type);
    return *this;
  }
  // A graph output with an element type and no shape: left to inference.
  TestModel& ShapelessOutput(const std::string& name,
                             int32_t elem_type = onnx::TensorProto::FLOAT) {
    onnx::ValueInfoProto& info = *model_.mutable_graph()->add_output();
    info.set_name(name);
    info.mutable_type()->mutable_tensor_type()->set_elem_type(elem_type);
    return *this;
  }
  // An opset_import entry, as a file using a custom domain's ops has.
  TestModel& Opset(const std::string& domain, int64_t version) {
    onnx::OperatorSetIdProto& opset = *model_.add_opset_import();
    opset.set_domain(domain);
    opset.set_version(version);
    return *this;
  }
  TestModel& ValueInfo(const std::string& name, std::initializer_list<int64_t> dims,
                       int32_t elem_type = onnx::TensorProto::FLOAT) {
    SetType(model_.mutable_graph()->add_value_info(), name, dims, elem_type);
    return *this;
  }
  // A float initializer; without values it has dims only and points at an
  // external file that does not exist, like the benchmark models.
  TestModel& Weight(const std::string& name, std::initializer_list<int64_t> dims,
                    std::initializer_list<float> values = {}) {
    onnx::TensorProto& t = *model_.mutable_graph()->add_initializer();
    t.set_name(name);
    t.set_data_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) t.add_dims(d);
    for (float v : values) t.add_float_data(v);
    if (values.size() == 0) {
      t.set_data_location(onnx::TensorProto::EXTERNAL);
      auto* entry = t.add_external_data();
      entry->set_key("location");
      entry->set_value("missing.bin");
    }
    return *this;
  }
  onnx::NodeProto& Node(const std::string& op, const std::vector<std::string>& inputs,
                        const std::vector<std::string>& outputs, const std::string& name = "",
                        const std::string& domain = "") {
    onnx::NodeProto& node = *model_.mutable_graph()->add_node();
    node.set_op_type(op);
    node.set_name(name);
    node.set_domain(domain);
    for (const std::string& i : inputs) node.add_input(i);
    for (const std::string& o : outputs) node.add_output(o);
    return node;
  }

  onnx::ModelProto& proto() { return model_; }
  std::string Bytes() const { return model_.SerializeAsString(); }

 private:
  static void SetType(onnx::ValueInfoProto* info, const std::string& name,
                      std::initializer_list<int64_t> dims, int32_t elem_type) {
    info->set_name(name);
    auto* tensor = info->mutable_type()->mutable_tensor_type();
    tensor->set_elem_type(elem_type);
    auto* shape = tensor->mutable_shape();
    for (int64_t d : dims) {
      if (d == kN) {
        shape->add_dim()->set_dim_param("N");
      } else {
        shape->add_dim()->set_dim_value(d);
      }
    }
  }

  onnx::ModelProto model_;
};

void AddIntsAttribute(onnx::NodeProto& node, const std::string& name,
                      std::initializer_list<int64_t> values) {
  onnx::AttributeProto& a = *node.add_attribute();
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a.add_ints(v);
}

void AddIntAttribute(onnx::NodeProto& node, const std::string& name, int64_t value) {
  onnx::AttributeProto& a = *node.add_attribute();
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(value);
}

std::string ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

std::string ExampleModel(const std::string& name) {
  return ReadFile(ordo::testing::ExampleModelsDir() + "/" + name + ".onnx");
}

std::vector<std::string> OpNames(const Graph& graph) {
  std::vector<std::string> names;
  for (const Op& op : graph.ops()) names.push_back(op.name);
  return names;
}

std::vector<OpId> ModelOrder(const Graph& graph) {
  std::vector<OpId> order(graph.num_ops());
  for (OpId i = 0; i < graph.num_ops(); ++i) order[i] = i;
  return order;
}

// Peak under the default rules of the memory model.
int64_t Peak(const Graph& graph, const std::vector<OpId>& schedule) {
  absl::StatusOr<MemoryModel> model = BuildMemoryModel(graph, MemoryOptions{});
  if (!model.ok()) return -1;
  return SimulatePeak(*model, schedule).value_or(-1);
}

// A topological order that always runs the ready op with the highest id: as
// far from model order as a valid order gets.
std::vector<OpId> LatestFirstOrder(const Graph& graph) {
  std::vector<int32_t> waiting(graph.num_ops());
  std::priority_queue<OpId> ready;
  for (OpId op = 0; op < graph.num_ops(); ++op) {
    waiting[op] = static_cast<int32_t>(graph.Predecessors(op).size());
    if (waiting[op] == 0) ready.push(op);
  }
  std::vector<OpId> order;
  while (!ready.empty()) {
    OpId op = ready.top();
    ready.pop();
    order.push_back(op);
    for (OpId next : graph.Successors(op)) {
      if (--waiting[next] == 0) ready.push(next);
    }
  }
  return order;
}

const Tensor& TensorNamed(const Graph& graph, const std::string& name) {
  static const Tensor kMissing = [] {
    Tensor t;
    t.name = "<missing>";
    return t;
  }();
  std::optional<TensorId> id = graph.FindTensor(name);
  return id ? graph.tensor(*id) : kMissing;
}

// --------------------------------------------------------------------------
// The example models (scripts/make-example-models).

TEST(OnnxImportTest, ImportsTinyCellInFileOrder) {
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(ExampleModel("tiny_cell")));
  EXPECT_THAT(OpNames(graph), ElementsAre("a", "a_relu", "e", "b", "c", "b_relu", "k", "d", "f",
                                          "g", "h", "i", "j", "l", "m", "o", "p", "q", "fc"));
  for (OpId op = 0; op < graph.num_ops(); ++op) {
    EXPECT_EQ(graph.op(op).source_index, op);
  }
  EXPECT_EQ(TensorNamed(graph, "x").kind, TensorKind::kInput);
  EXPECT_EQ(TensorNamed(graph, "x").bytes, 16 * 32 * 32 * 4);
  EXPECT_EQ(TensorNamed(graph, "a").bytes, 32 * 32 * 32 * 4);
  EXPECT_EQ(TensorNamed(graph, "a.weight").kind, TensorKind::kWeight);
  EXPECT_THAT(TensorNamed(graph, "a.weight").dims, ElementsAre(32, 16, 1, 1));
  EXPECT_EQ(TensorNamed(graph, "y").kind, TensorKind::kOutput);
  EXPECT_THAT(TensorNamed(graph, "y").dims, ElementsAre(1, 10));
}

TEST(OnnxImportTest, TinyCellPeakDependsOnTheSchedule) {
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(ExampleModel("tiny_cell")));
  // File order keeps a_relu and e (32 channels each) live beside x.
  EXPECT_EQ(Peak(graph, ModelOrder(graph)), 393216);
  // Finishing a_relu's consumers (d, e, f) before opening the narrow branches.
  EXPECT_EQ(Peak(graph, {0, 1, 7, 2, 8, 4, 3, 5, 9, 10, 11, 12, 6, 13, 14, 15, 16, 17, 18}),
            360448);
}

TEST(OnnxImportTest, ImportsSmallResnet) {
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(ExampleModel("small_resnet")));
  EXPECT_EQ(graph.num_ops(), 16);
  EXPECT_THAT(TensorNamed(graph, "b2.add").dims, ElementsAre(1, 32, 16, 16));
  // At b1.conv2 the skip (stem_relu), b1.relu1 and b1.conv2's output are
  // live: 3 x 16 x 32 x 32 x 4 bytes.
  EXPECT_EQ(Peak(graph, ModelOrder(graph)), 196608);
}

// Hand-computed: x [1,8,16,16] -> conv1/relu1 [1,16,16,16] -> the channel
// split's Shape -> Gather -> Div -> Unsqueeze folds to [8], so left and right
// are [1,8,16,16]; F.pad's pads fold to [0,0,0,1, 0,0,1,2], so padded is
// [1,8,17,19]; the flatten target folds to [1,-1], so flat is [1,16].
TEST(OnnxImportTest, FoldsShapeSubgraphToStaticShapes) {
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(ExampleModel("shape_subgraph")));
  EXPECT_THAT(OpNames(graph), ElementsAre("conv1", "relu1", "left", "right", "pad", "conv2",
                                          "merge", "pool", "flat", "fc"));
  std::vector<int32_t> source_indices;
  for (const Op& op : graph.ops()) source_indices.push_back(op.source_index);
  EXPECT_THAT(source_indices, ElementsAre(0, 1, 12, 13, 30, 31, 32, 33, 41, 42));

  EXPECT_THAT(TensorNamed(graph, "left").dims, ElementsAre(1, 8, 16, 16));
  EXPECT_THAT(TensorNamed(graph, "right").dims, ElementsAre(1, 8, 16, 16));
  EXPECT_THAT(TensorNamed(graph, "padded").dims, ElementsAre(1, 8, 17, 19));
  EXPECT_EQ(TensorNamed(graph, "padded").bytes, 8 * 17 * 19 * 4);
  EXPECT_THAT(TensorNamed(graph, "conv2").dims, ElementsAre(1, 8, 16, 16));
  EXPECT_THAT(TensorNamed(graph, "flat").dims, ElementsAre(1, 16));
  // Symbolic dims in the file's output declaration are resolved by inference.
  EXPECT_THAT(TensorNamed(graph, "y").dims, ElementsAre(1, 10));

  // Folded values are weights, read by the ops that need them.
  const Tensor& pads = TensorNamed(graph, "pad.pads");
  EXPECT_EQ(pads.kind, TensorKind::kWeight);
  EXPECT_THAT(pads.dims, ElementsAre(8));
  EXPECT_EQ(pads.dtype, DataType::kInt64);
  EXPECT_EQ(TensorNamed(graph, "split.half_1d").kind, TensorKind::kWeight);
  EXPECT_EQ(TensorNamed(graph, "flat.target").kind, TensorKind::kWeight);
  // Shape reads of activations are gone with the Shape ops.
  EXPECT_THAT(TensorNamed(graph, "relu1").consumers,
              ElementsAre(*graph.FindOp("left"), *graph.FindOp("right")));
  // Intermediate folded values nobody scheduled reads are not declared.
  EXPECT_EQ(graph.FindTensor("pad.concat"), std::nullopt);
  EXPECT_EQ(graph.FindOp("pad.cast"), std::nullopt);
  EXPECT_EQ(graph.FindOp("split.shape"), std::nullopt);
  EXPECT_EQ(graph.FindOp("n3"), std::nullopt);  // an unnamed Constant

  // x 8192 | conv1 24576 | relu1 in place 16384 | left 24576 |
  // right: relu1 + left + right = 32768 | pad 26720 | conv2 26720 |
  // merge: conv2 + right + merged = 32768 | pool | flat in place | fc.
  EXPECT_EQ(Peak(graph, ModelOrder(graph)), 32768);
}

// --------------------------------------------------------------------------
// Folding, naming, attributes, optional tensors.

TEST(OnnxImportTest, FoldsWeightOnlyChainsEvenWithoutWeightData) {
  TestModel m;
  m.Input("x", {1, 4}).Output("z", {1, 4});
  m.Weight("w", {4}, {1, 2, 3, 4});  // evaluated: Neg has data to work on
  m.Weight("v", {4});                // no data: Sin folds, value unknown
  m.Node("Neg", {"w"}, {"neg_w"}, "neg");
  m.Node("Sin", {"v"}, {"sin_v"}, "sin");
  m.Node("Add", {"x", "neg_w"}, {"y"}, "add");
  m.Node("Mul", {"y", "sin_v"}, {"z"}, "mul");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(m.Bytes()));
  EXPECT_THAT(OpNames(graph), ElementsAre("add", "mul"));
  EXPECT_EQ(TensorNamed(graph, "neg_w").kind, TensorKind::kWeight);
  EXPECT_EQ(TensorNamed(graph, "sin_v").kind, TensorKind::kWeight);
  EXPECT_THAT(TensorNamed(graph, "sin_v").dims, ElementsAre(4));
  // Only the weights the ops read count under count_weights: neg_w + sin_v.
  MemoryOptions options;
  options.count_weights = true;
  ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel model, BuildMemoryModel(graph, options));
  EXPECT_EQ(model.constant_bytes, 16 + 16);
}

// A value_info without a shape (an exporter's, or an earlier inference
// round's from before the value was known) must not hide a folded tensor's
// dims: torchvision's Swin-T builds its shifted-window attention mask this
// way, and the Add of mask and scores stayed shapeless.
TEST(OnnxImportTest, FoldedValueIsNotHiddenByAShapelessValueInfo) {
  TestModel m;
  m.Input("x", {1, 4}).Output("y", {kN, kN});
  m.Node("Shape", {"x"}, {"s"}, "shape");
  m.Node("ConstantOfShape", {"s"}, {"mask"}, "mask");
  m.Node("Add", {"x", "mask"}, {"y"}, "add");
  onnx::ValueInfoProto& shapeless = *m.proto().mutable_graph()->add_value_info();
  shapeless.set_name("mask");
  shapeless.mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(m.Bytes()));
  EXPECT_THAT(OpNames(graph), ElementsAre("add"));
  EXPECT_THAT(TensorNamed(graph, "mask").dims, ElementsAre(1, 4));
  EXPECT_THAT(TensorNamed(graph, "y").dims, ElementsAre(1, 4));
}

TEST(OnnxImportTest, NamesNodesUniquelyAndDeterministically) {
  TestModel m;
  m.Input("x", {2}).Output("e", {2});
  for (const char* t : {"a", "b", "c", "d", "e"}) m.ValueInfo(t, {2});
  m.Node("Relu", {"x"}, {"a"});  // unnamed -> n0
  m.Node("Relu", {"a"}, {"b"}, "dup");
  m.Node("Relu", {"b"}, {"c"}, "dup");  // duplicate -> dup_1
  m.Node("Relu", {"c"}, {"d"});         // n3 is taken by the next node
  m.Node("Relu", {"d"}, {"e"}, "n3");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(m.Bytes()));
  EXPECT_THAT(OpNames(graph), ElementsAre("n0", "dup", "dup_1", "n3_1", "n3"));
}

TEST(OnnxImportTest, UnsortedFileGetsStableTopologicalOrder) {
  TestModel m;
  m.Input("x", {2}).Output("c", {2}).ValueInfo("a", {2}).ValueInfo("b", {2});
  m.Node("Relu", {"b"}, {"c"}, "last");
  m.Node("Relu", {"x"}, {"a"}, "first");
  m.Node("Relu", {"a"}, {"b"}, "middle");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(m.Bytes()));
  EXPECT_THAT(OpNames(graph), ElementsAre("first", "middle", "last"));
  EXPECT_EQ(graph.op(0).source_index, 1);
  EXPECT_EQ(graph.op(2).source_index, 0);
  ORDO_ASSERT_OK_AND_ASSIGN(std::string sorted,
                            ReorderOnnxNodes(m.Bytes(), graph, ModelOrder(graph)));
  onnx::ModelProto model;
  ASSERT_TRUE(model.ParseFromString(sorted));
  EXPECT_EQ(model.graph().node(0).name(), "first");
}

TEST(OnnxImportTest, KeepsAttributes) {
  TestModel m;
  m.Input("x", {1, 4}).Output("y", {1, 4});
  onnx::NodeProto& node = m.Node("LeakyRelu", {"x"}, {"y"}, "leaky");
  onnx::AttributeProto& alpha = *node.add_attribute();
  alpha.set_name("alpha");
  alpha.set_type(onnx::AttributeProto::FLOAT);
  alpha.set_f(0.25f);
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(m.Bytes()));
  ASSERT_EQ(graph.op(0).attributes.size(), 1u);
  EXPECT_EQ(graph.op(0).attributes[0].name, "alpha");
  EXPECT_EQ(std::get<double>(graph.op(0).attributes[0].value), 0.25);

  ORDO_ASSERT_OK_AND_ASSIGN(Graph cell, ImportOnnx(ExampleModel("tiny_cell")));
  const Op& conv = cell.op(*cell.FindOp("o"));
  std::vector<std::string> names;
  for (const Attribute& a : conv.attributes) names.push_back(a.name);
  // onnx.helper writes attributes sorted by name.
  EXPECT_THAT(names, ElementsAre("kernel_shape", "pads", "strides"));
  EXPECT_THAT(std::get<std::vector<int64_t>>(conv.attributes[2].value), ElementsAre(2, 2));
  ORDO_ASSERT_OK_AND_ASSIGN(Graph folded, ImportOnnx(ExampleModel("shape_subgraph")));
  EXPECT_EQ(std::get<std::string>(folded.op(*folded.FindOp("pad")).attributes[0].value),
            "constant");
}

// No value_info at all: shapes come from ONNX shape inference.
TEST(OnnxImportTest, MultipleAndOptionalOutputsAndOptionalInputs) {
  TestModel m;
  m.Input("x", {1, 4, 8, 8}).Weight("hi", {}, {6.0f});
  onnx::NodeProto& pool = m.Node("MaxPool", {"x"}, {"y", "indices"}, "pool");
  AddIntsAttribute(pool, "kernel_shape", {2, 2});
  AddIntsAttribute(pool, "strides", {2, 2});
  m.Node("Clip", {"y", "", "hi"}, {"z"}, "clip");
  m.Node("Dropout", {"z"}, {"w", ""}, "drop");
  m.proto().mutable_graph()->add_output()->set_name("w");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(m.Bytes()));
  ASSERT_EQ(graph.num_ops(), 3);
  const Op& pool_op = graph.op(0);
  ASSERT_EQ(pool_op.outputs.size(), 2u);
  EXPECT_EQ(graph.tensor(pool_op.outputs[1]).dtype, DataType::kInt64);
  EXPECT_EQ(graph.tensor(pool_op.outputs[1]).bytes, 4 * 4 * 4 * 8);
  EXPECT_TRUE(graph.tensor(pool_op.outputs[1]).consumers.empty());
  const Op& clip = graph.op(1);
  ASSERT_EQ(clip.inputs.size(), 2u);
  EXPECT_EQ(graph.tensor(clip.inputs[1]).name, "hi");
  EXPECT_EQ(graph.tensor(clip.inputs[1]).kind, TensorKind::kWeight);
  EXPECT_EQ(graph.op(2).outputs.size(), 1u);
  EXPECT_THAT(TensorNamed(graph, "w").dims, ElementsAre(1, 4, 4, 4));
}

// --------------------------------------------------------------------------
// Bad input: every error has a code and names what is wrong.

TEST(OnnxImportErrorTest, TruncatedBytes) {
  const std::string bytes = ExampleModel("tiny_cell");
  ASSERT_GT(bytes.size(), 1000u);
  EXPECT_THAT(ImportOnnx(absl::string_view(bytes).substr(0, bytes.size() / 2)),
              StatusIs(kInvalid, HasSubstr("not a valid ONNX model")));
}

TEST(OnnxImportErrorTest, GarbageBytes) {
  EXPECT_THAT(ImportOnnx("\xff\xff\xff\xff\xff this is not protobuf"),
              StatusIs(kInvalid, HasSubstr("not a valid ONNX model")));
}

// An attribute "value" whose tensor (field 5, t) holds an 11-byte varint:
// protobuf refuses the model, the import's wire scan skips the tensor
// without looking inside (core/onnx/model_view.h).
void AddAttributeWithBrokenTensor(onnx::NodeProto& node) {
  const std::string broken_tensor = "\x08\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01";
  const std::string attribute = std::string("\x0a\x05value", 7) + "\x2a" +
                                static_cast<char>(broken_tensor.size()) + broken_tensor;
  onnx::NodeProto::GetReflection()->MutableUnknownFields(&node)->AddLengthDelimited(5, attribute);
}

// Nothing to fold: the import reads the view only and never sees the damage.
TEST(OnnxImportErrorTest, DamageInsideASkippedFieldIsNotReadWhenNothingFolds) {
  TestModel m;
  m.Input("x", {1, 4}).Output("y", {1, 4});
  AddAttributeWithBrokenTensor(m.Node("Relu", {"x"}, {"y"}, "relu"));
  onnx::ModelProto parsed;
  ASSERT_FALSE(parsed.ParseFromString(m.Bytes())) << "test bug: protobuf parses the bytes";
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(m.Bytes()));
  EXPECT_THAT(OpNames(graph), ElementsAre("relu"));
}

// Folding needs the parsed model, and then protobuf's refusal is the answer.
TEST(OnnxImportErrorTest, DamageInsideASkippedFieldIsRefusedWhenFoldingParses) {
  TestModel m;
  m.Input("x", {1, 4}).Output("y", {1, 4});
  m.Weight("w", {4}, {1, 2, 3, 4});
  m.Node("Neg", {"w"}, {"neg_w"}, "neg");
  AddAttributeWithBrokenTensor(m.Node("Add", {"x", "neg_w"}, {"y"}, "add"));
  EXPECT_THAT(ImportOnnx(m.Bytes()), StatusIs(kInvalid, HasSubstr("not a valid ONNX model")));
}

TEST(OnnxImportErrorTest, EmptyBytes) {
  EXPECT_THAT(ImportOnnx(""),
              StatusIs(kInvalid, HasSubstr("not a valid ONNX model: it has no graph")));
}

// An op whose schema at the model's (old) opset infers no shapes: Pad-1
// (its pads the `paddings` attribute). The message asks for the shapes, not for
// onnx.version_converter, which converts opset 1-6 broadcasting wrongly.
TEST(OnnxImportErrorTest, AnOpWithoutInferenceAtItsOpsetAsksForItsShapes) {
  TestModel m;
  m.proto().mutable_opset_import(0)->set_version(1);
  m.Input("x", {2, 4}).ShapelessOutput("y");
  AddIntsAttribute(m.Node("Pad", {"x"}, {"m"}, "first"), "paddings", {0, 1, 0, 1});
  m.Node("Relu", {"m"}, {"y"}, "second");
  EXPECT_THAT(ImportOnnx(m.Bytes()),
              StatusIs(kInvalid,
                       AllOf(HasSubstr("Op \"first\" (Pad) has no shape inference "
                                       "in ONNX's schema at this model's opset"),
                             HasSubstr("graph.value_info"), Not(HasSubstr("version_converter")))));
}

// Opset 1-5 ops whose version 6 only dropped consumed_inputs (Relu-1,
// Add-1 with its legacy broadcast, BatchNormalization-1) are sized by
// version 6's inference, Concat-1 (axis 1 by default) and Reshape-1 (its
// target an attribute) by their own, and a declaration the first op
// contradicts is stale (Model Zoo-era files were refused at their first
// Relu; a resized input kept the old declarations).
TEST(OnnxImportTest, OpsetOneToFiveOpsAreSizedAsVersionSix) {
  TestModel m;
  m.proto().mutable_opset_import(0)->set_version(3);
  m.Input("x", {1, 3, 8, 8}).ShapelessOutput("y").Weight("mean", {3});
  m.Weight("s", {3}).Weight("b", {3}).Weight("mu", {3}).Weight("var", {3});
  onnx::NodeProto& sub = m.Node("Sub", {"x", "mean"}, {"centred"}, "centre");
  AddIntAttribute(sub, "broadcast", 1);
  AddIntAttribute(sub, "axis", 1);
  AddIntsAttribute(m.Node("Relu", {"centred"}, {"r"}, "relu"), "consumed_inputs", {0});
  m.Node("BatchNormalization", {"r", "s", "b", "mu", "var"}, {"n"}, "bn");
  m.Node("Concat", {"n", "r"}, {"both"}, "concat");  // Concat-1: axis 1
  AddIntsAttribute(m.Node("Reshape", {"both"}, {"y"}, "flatten"), "shape", {0, -1});
  m.ValueInfo("centred", {1, 3, 16, 16});  // stale: the input was resized
  absl::StatusOr<Graph> graph = ImportOnnx(m.Bytes());
  ORDO_ASSERT_OK(graph.status());
  for (const char* name : {"centred", "r", "n"}) {
    EXPECT_EQ(graph->tensor(*graph->FindTensor(name)).bytes, 3 * 8 * 8 * 4) << name;
  }
  EXPECT_EQ(graph->tensor(*graph->FindTensor("both")).dims, (std::vector<int64_t>{1, 6, 8, 8}));
  EXPECT_EQ(graph->tensor(*graph->FindTensor("y")).dims, (std::vector<int64_t>{1, 384}));
}

// IR 3 lists every initializer as a graph input too, often without a
// shape: the initializer's dims are the value's.
TEST(OnnxImportTest, AnInitializerListedAsAnInputWithoutAShapeKeepsItsDims) {
  TestModel m;
  m.proto().set_ir_version(3);
  m.Input("x", {1, 4, 8, 8}).Input("W", {});
  m.proto().mutable_graph()->mutable_input(1)->mutable_type()->mutable_tensor_type()->clear_shape();
  m.Weight("W", {4, 4, 1, 1});
  m.Node("Conv", {"x", "W"}, {"c"}, "conv");
  m.ShapelessOutput("c");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(m.Bytes()));
  EXPECT_EQ(graph.tensor(*graph.FindTensor("c")).bytes, 4 * 8 * 8 * 4);
  EXPECT_EQ(graph.tensor(*graph.FindTensor("W")).kind, TensorKind::kWeight);
}

TEST(OnnxImportErrorTest, SequenceValuesAreNamedAsSuch) {
  TestModel m;
  m.Input("a", {2, 4}).Input("b", {2, 4}).Output("y", {4, 4});
  m.Node("SequenceConstruct", {"a", "b"}, {"seq"}, "pack");
  onnx::NodeProto& concat = m.Node("ConcatFromSequence", {"seq"}, {"y"}, "unpack");
  onnx::AttributeProto& axis = *concat.add_attribute();
  axis.set_name("axis");
  axis.set_type(onnx::AttributeProto::INT);
  axis.set_i(0);
  EXPECT_THAT(ImportOnnx(m.Bytes()),
              StatusIs(kInvalid, HasSubstr("Op \"pack\" (SequenceConstruct) makes a Sequence or "
                                           "Optional value, not a tensor")));
}

// An ai.onnx.ml op without inference (Scaler): no opset gives it one, so
// the fix is the declaration alone.
TEST(OnnxImportErrorTest, AnMlOpWithoutInferenceAsksForItsShapes) {
  TestModel m;
  m.Opset("ai.onnx.ml", 1);
  m.Input("x", {1, 4}).Output("y", {1, 4});
  m.Node("Scaler", {"x"}, {"s"}, "scale", "ai.onnx.ml");
  m.Node("Relu", {"s"}, {"y"}, "relu");
  EXPECT_THAT(ImportOnnx(m.Bytes()),
              StatusIs(kInvalid, AllOf(HasSubstr("Op \"scale\" (Scaler) has no shape inference"),
                                       HasSubstr("list the op's output shapes in graph.value_info"),
                                       Not(HasSubstr("version_converter")))));
}

// A scalar initializer of `elem_type` holding `value`: a quantization scale
// or zero point.
void AddScalar(TestModel& m, const std::string& name, int32_t elem_type, float value) {
  onnx::TensorProto& t = *m.proto().mutable_graph()->add_initializer();
  t.set_name(name);
  t.set_data_type(elem_type);
  if (elem_type == onnx::TensorProto::FLOAT) {
    t.add_float_data(value);
  } else if (elem_type == onnx::TensorProto::FLOAT16) {
    t.add_int32_data(0x2e66);  // 0.1 as float16 bits
  } else {
    t.add_int32_data(static_cast<int32_t>(value));
  }
}

// QuantizeLinear-21's output_dtype and DequantizeLinear-19's scale type set
// the output's element type; libonnx 1.12 applies version 13, which gives
// uint8 and float32. Such a node is treated as unknown to the library: its
// declaration stands, and without one the refusal names the feature.
TEST(OnnxImportErrorTest, NewerQuantizationTypesAreSizedByTheirDeclarations) {
  struct Case {
    int64_t opset;
    std::string op;
    int32_t input_type;
    int32_t scale_type;
    int64_t output_dtype;  // 0: none
    int32_t output_type;
    std::string feature;
  };
  const Case cases[] = {
      {21, "QuantizeLinear", onnx::TensorProto::FLOAT, onnx::TensorProto::FLOAT,
       onnx::TensorProto::INT16, onnx::TensorProto::INT16, "output_dtype (QuantizeLinear-21)"},
      {19, "DequantizeLinear", onnx::TensorProto::INT8, onnx::TensorProto::FLOAT16, 0,
       onnx::TensorProto::FLOAT16, "an x_scale that is not float32"},
  };
  for (const Case& c : cases) {
    for (const bool declared : {true, false}) {
      SCOPED_TRACE(absl::StrCat(c.op, declared ? " declared" : " undeclared"));
      TestModel m;
      m.proto().mutable_opset_import(0)->set_version(c.opset);
      m.Input("x", {1, 8, 4, 4}, c.input_type).Output("z", {1, 8, 4, 4}, c.output_type);
      AddScalar(m, "s", c.scale_type, 0.1F);
      onnx::NodeProto& node = m.Node(c.op, {"x", "s"}, {"y"}, "q");
      if (c.output_dtype != 0) AddIntAttribute(node, "output_dtype", c.output_dtype);
      m.Node("Identity", {"y"}, {"z"}, "copy");
      if (declared) m.ValueInfo("y", {1, 8, 4, 4}, c.output_type);
      absl::StatusOr<Graph> graph = ImportOnnx(m.Bytes());
      if (declared) {
        ORDO_ASSERT_OK(graph.status());
        EXPECT_EQ(graph->tensor(*graph->FindTensor("y")).bytes, 8 * 4 * 4 * 2);
      } else {
        EXPECT_THAT(graph, StatusIs(kInvalid, HasSubstr(absl::StrCat("uses ", c.feature))));
      }
    }
  }
}

// onnxruntime's QOperator files (its quantizer, ONNX Model Zoo's int8
// models) use com.microsoft ops libonnx does not know; ordo sizes the
// common ones itself (microsoft_quantized_ops.h), so a file without
// value_info for them imports, and a resized file's stale declarations for
// them are inferred again.
TEST(OnnxImportTest, MicrosoftQuantizedOpsAreSizedWithoutDeclarations) {
  for (const bool stale : {false, true}) {
    SCOPED_TRACE(stale ? "declared at another batch" : "undeclared");
    constexpr int32_t kU8 = onnx::TensorProto::UINT8;
    TestModel m;
    m.Opset("com.microsoft", 1);
    m.Input("x", {2, 4, 9, 9});
    AddScalar(m, "s", onnx::TensorProto::FLOAT, 0.1F);
    AddScalar(m, "z", kU8, 128);
    m.Node("QuantizeLinear", {"x", "s", "z"}, {"q"}, "quantize");
    m.Node("QLinearAdd", {"q", "s", "z", "q", "s", "z", "s", "z"}, {"add"}, "add", "com.microsoft");
    m.Node("QLinearSigmoid", {"add", "s", "z", "s", "z"}, {"sig"}, "sig", "com.microsoft");
    AddIntAttribute(m.Node("QLinearConcat", {"s", "z", "add", "s", "z", "sig", "s", "z"}, {"cat"},
                           "cat", "com.microsoft"),
                    "axis", 1);
    onnx::NodeProto& pool = m.Node("QLinearAveragePool", {"cat", "s", "z", "s", "z"}, {"pool"},
                                   "pool", "com.microsoft");
    AddIntsAttribute(pool, "kernel_shape", {3, 3});
    AddIntsAttribute(pool, "strides", {2, 2});
    AddIntAttribute(pool, "ceil_mode", 1);
    m.Node("QLinearGlobalAveragePool", {"pool", "s", "z", "s", "z"}, {"gap"}, "gap",
           "com.microsoft");
    m.Node("DequantizeLinear", {"gap", "s", "z"}, {"y"}, "dequantize");
    m.Output("y", {2, 8, 1, 1});
    if (stale) {  // the file's own batch was 1
      m.ValueInfo("add", {1, 4, 9, 9}, kU8).ValueInfo("cat", {1, 8, 9, 9}, kU8);
      m.ValueInfo("pool", {1, 8, 4, 4}, kU8).ValueInfo("gap", {1, 8, 1, 1}, kU8);
      m.ValueInfo("q", {1, 4, 9, 9}, kU8);
    }
    ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(m.Bytes()));
    const auto dims = [&](const std::string& name) {
      return graph.tensor(*graph.FindTensor(name)).dims;
    };
    EXPECT_THAT(dims("add"), ElementsAre(2, 4, 9, 9));
    EXPECT_THAT(dims("sig"), ElementsAre(2, 4, 9, 9));
    EXPECT_THAT(dims("cat"), ElementsAre(2, 8, 9, 9));
    EXPECT_THAT(dims("pool"), ElementsAre(2, 8, 4, 4));  // (9 - 3) / 2 + 1
    EXPECT_THAT(dims("gap"), ElementsAre(2, 8, 1, 1));
    EXPECT_EQ(graph.tensor(*graph.FindTensor("cat")).bytes, 2 * 8 * 9 * 9);  // uint8
  }
}

// Standard ops of opsets 18-24 that libonnx 1.12 does not know are sized
// by ordo (newer_standard_ops.h) at their opset and later, with no
// value_info: PyTorch writes nn.GELU as Gelu at opset 20 and nn.Mish as
// Mish at 18. At an opset before the op existed the file is invalid, and
// the refusal names the opset to export at.
TEST(OnnxImportTest, StandardOpsNewerThanTheLibraryAreSizedAtTheirOpset) {
  struct Case {
    std::string op;
    int64_t since;
    std::vector<std::string> inputs;  // after "r"
    int32_t elem_type = onnx::TensorProto::FLOAT;
  };
  const std::vector<Case> cases = {
      {"Mish", 18, {}},
      {"BitwiseNot", 18, {}, onnx::TensorProto::INT32},
      {"BitwiseAnd", 18, {"row"}, onnx::TensorProto::INT32},
      {"BitwiseXor", 18, {"row"}, onnx::TensorProto::INT32},
      {"GroupNormalization", 18, {"scale", "bias"}},
      {"Gelu", 20, {}},
      {"RMSNormalization", 23, {"scale"}},
      {"RotaryEmbedding", 23, {"scale", "scale"}},
      {"Swish", 24, {}},
  };
  for (const Case& c : cases) {
    for (const int64_t opset : {c.since - 1, c.since, int64_t{24}}) {
      SCOPED_TRACE(absl::StrCat(c.op, " at opset ", opset));
      TestModel m;
      m.proto().mutable_opset_import(0)->set_version(opset);
      m.Input("x", {2, 4, 5, 6}, c.elem_type);
      if (c.elem_type == onnx::TensorProto::FLOAT) {
        m.Weight("scale", {4}, {1, 1, 1, 1}).Weight("bias", {4}, {0, 0, 0, 0});
      }
      m.Input("row", {6}, c.elem_type);  // broadcast over the last dim
      m.Node("Neg", {"x"}, {"r"}, "neg");
      std::vector<std::string> inputs = {"r"};
      inputs.insert(inputs.end(), c.inputs.begin(), c.inputs.end());
      onnx::NodeProto& node = m.Node(c.op, inputs, {"y"}, "newer");
      if (c.op == "GroupNormalization") AddIntAttribute(node, "num_groups", 2);
      m.ShapelessOutput("y", c.elem_type);
      absl::StatusOr<Graph> graph = ImportOnnx(m.Bytes());
      if (opset < c.since) {
        EXPECT_THAT(graph, StatusIs(kInvalid, HasSubstr(absl::StrCat(
                                                  "is a standard operator only from opset ",
                                                  c.since, " on, and the model imports opset ",
                                                  opset))));
        continue;
      }
      ASSERT_TRUE(graph.ok()) << graph.status();
      const Tensor& y = graph->tensor(*graph->FindTensor("y"));
      EXPECT_THAT(y.dims, ElementsAre(2, 4, 5, 6));
      EXPECT_EQ(y.bytes, 2 * 4 * 5 * 6 * 4);
    }
  }
}

// Inputs of these ops have types of their own: RotaryEmbedding's
// position_ids are int64 beside float caches, and RMSNormalization's Y has
// the scale's type, not X's. When a type error elsewhere makes the import
// check every node's types, the refusal names the op at fault (the Relu
// whose output is declared int32), not a newer op taking valid types.
TEST(OnnxImportErrorTest, ATypeErrorAfterNewerOpsIsNamedWhereItIs) {
  for (const std::string op : {"RotaryEmbedding", "RMSNormalization"}) {
    SCOPED_TRACE(op);
    TestModel m;
    m.proto().mutable_opset_import(0)->set_version(23);
    m.Input("x", {1, 2, 4, 8},
            op == "RMSNormalization" ? onnx::TensorProto::FLOAT16 : onnx::TensorProto::FLOAT);
    m.Weight("cache", {4, 4}).Weight("scale", {8});
    m.Input("positions", {1, 4}, onnx::TensorProto::INT64);
    if (op == "RotaryEmbedding") {
      m.Node(op, {"x", "cache", "cache", "positions"}, {"n"}, "newer");
    } else {
      m.Node(op, {"x", "scale"}, {"n"}, "newer");
    }
    m.Node("Relu", {"n"}, {"y"}, "relu");
    m.ShapelessOutput("y", onnx::TensorProto::INT32);
    EXPECT_THAT(ImportOnnx(m.Bytes()), StatusIs(kInvalid, AllOf(HasSubstr("node name: relu"),
                                                                HasSubstr("(FLOAT) vs (INT32)"))));
  }
}

// QLinearAveragePool's output dims are onnxruntime's (pool_attributes.h):
// floor or ceil, VALID with ceil_mode, and a last window that would start
// in the tail padding dropped; hostile attributes are refused.
TEST(OnnxImportTest, QLinearAveragePoolIsSizedAsOnnxruntimeAllocatesIt) {
  struct Case {
    int64_t in, kernel, stride, pad_head, pad_tail;
    std::string auto_pad;
    bool ceil_mode;
    int64_t out;  // 0: refused
  };
  const Case cases[] = {
      {10, 3, 2, 0, 0, "NOTSET", false, 4},
      {10, 3, 2, 0, 0, "NOTSET", true, 5},
      {10, 3, 2, 0, 0, "VALID", true, 5},
      {10, 3, 2, 0, 0, "SAME_UPPER", false, 5},
      {4, 2, 3, 0, 2, "NOTSET", true, 2},  // the third window starts in the padding
      {4, 2, 3, 0, 2, "NOTSET", false, 2},
      {3, 5, 1, 0, 0, "NOTSET", false, 0},                 // window over the input
      {8, 2, 1, -1, 0, "NOTSET", false, 0},                // negative pad
      {8, 2, int64_t{1} << 40, 0, 0, "NOTSET", false, 0},  // stride over 2^31
      {8, 2, 1, int64_t{1} << 62, 0, "NOTSET", false, 0},  // pad over 2^31
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(absl::StrCat(c.in, " k", c.kernel, " s", c.stride, " p", c.pad_head, ",",
                              c.pad_tail, " ", c.auto_pad, c.ceil_mode ? " ceil" : ""));
    TestModel m;
    m.Opset("com.microsoft", 1);
    m.Input("x", {1, 2, 1, c.in}, onnx::TensorProto::UINT8);
    AddScalar(m, "s", onnx::TensorProto::FLOAT, 0.1F);
    onnx::NodeProto& pool =
        m.Node("QLinearAveragePool", {"x", "s", "", "s", ""}, {"y"}, "pool", "com.microsoft");
    AddIntsAttribute(pool, "kernel_shape", {1, c.kernel});
    AddIntsAttribute(pool, "strides", {1, c.stride});
    AddIntsAttribute(pool, "pads", {0, c.pad_head, 0, c.pad_tail});
    onnx::AttributeProto& auto_pad = *pool.add_attribute();
    auto_pad.set_name("auto_pad");
    auto_pad.set_type(onnx::AttributeProto::STRING);
    auto_pad.set_s(c.auto_pad);
    AddIntAttribute(pool, "ceil_mode", c.ceil_mode ? 1 : 0);
    m.ShapelessOutput("y", onnx::TensorProto::UINT8);
    absl::StatusOr<Graph> graph = ImportOnnx(m.Bytes());
    if (c.out == 0) {
      EXPECT_THAT(graph, StatusIs(kInvalid, HasSubstr("pool")));
    } else {
      ORDO_ASSERT_OK(graph.status());
      EXPECT_THAT(graph->tensor(*graph->FindTensor("y")).dims, ElementsAre(1, 2, 1, c.out));
    }
  }
  // Global pooling with channels last keeps the last dim.
  TestModel m;
  m.Opset("com.microsoft", 1);
  m.Input("x", {1, 5, 5, 16}, onnx::TensorProto::UINT8);
  AddScalar(m, "s", onnx::TensorProto::FLOAT, 0.1F);
  AddIntAttribute(
      m.Node("QLinearGlobalAveragePool", {"x", "s", "", "s", ""}, {"y"}, "gap", "com.microsoft"),
      "channels_last", 1);
  m.ShapelessOutput("y", onnx::TensorProto::UINT8);
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(m.Bytes()));
  EXPECT_THAT(graph.tensor(*graph.FindTensor("y")).dims, ElementsAre(1, 1, 1, 16));
}

// Slice-1 (opsets 1-9) counts a negative start or end from the dim's end
// and clamps both; libonnx 1.12 left such a dim unknown and the file was
// refused.
TEST(OnnxImportTest, ANegativeSliceOneIndexCountsFromTheEnd) {
  struct Case {
    std::vector<int64_t> starts, ends, axes;
    std::vector<int64_t> dims;
  };
  const Case cases[] = {
      {{-3}, {std::numeric_limits<int64_t>::max()}, {3}, {1, 3, 8, 3}},
      {{1}, {-1}, {2}, {1, 3, 6, 8}},
      {{-100, 0}, {-2, 100}, {2, -1}, {1, 3, 6, 8}},
      {{0, 0, -2}, {1, 2, 100}, {}, {1, 2, 2, 8}},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(::testing::PrintToString(c.starts) + " " + ::testing::PrintToString(c.ends));
    TestModel m;
    m.proto().mutable_opset_import(0)->set_version(9);
    m.Input("x", {1, 3, 8, 8});
    onnx::NodeProto& slice = m.Node("Slice", {"x"}, {"y"}, "slice");
    const auto ints = [&](const std::string& name, const std::vector<int64_t>& values) {
      if (values.empty()) return;
      onnx::AttributeProto& a = *slice.add_attribute();
      a.set_name(name);
      a.set_type(onnx::AttributeProto::INTS);
      for (int64_t v : values) a.add_ints(v);
    };
    ints("starts", c.starts);
    ints("ends", c.ends);
    ints("axes", c.axes);
    m.Node("Relu", {"y"}, {"z"}, "relu");
    m.ShapelessOutput("z");
    ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(m.Bytes()));
    EXPECT_EQ(graph.tensor(*graph.FindTensor("y")).dims, c.dims);
  }
}

// A quantized model starts with QuantizeLinear: resized without touching
// its declarations (onnx.tools.update_model_dims, then --batch), every
// shape was the old size's (a helper's probe: 4x too small at batch 4).
TEST(OnnxImportTest, AQuantizedModelResizedWithoutItsDeclarationsIsInferredAgain) {
  TestModel m;
  m.Input("x", {4, 3, 8, 8}).Weight("w", {4, 3, 1, 1});
  AddScalar(m, "s", onnx::TensorProto::FLOAT, 0.1F);
  AddScalar(m, "zp", onnx::TensorProto::UINT8, 128);
  m.Node("QuantizeLinear", {"x", "s", "zp"}, {"q"}, "quantize");
  m.Node("DequantizeLinear", {"q", "s", "zp"}, {"d"}, "dequantize");
  m.Node("Conv", {"d", "w"}, {"y"}, "conv");
  m.Output("y", {1, 4, 8, 8})
      .ValueInfo("q", {1, 3, 8, 8}, onnx::TensorProto::UINT8)
      .ValueInfo("d", {1, 3, 8, 8});
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(m.Bytes()));
  EXPECT_EQ(graph.tensor(*graph.FindTensor("q")).bytes, 4 * 3 * 8 * 8);
  EXPECT_EQ(graph.tensor(*graph.FindTensor("d")).bytes, 4 * 3 * 8 * 8 * 4);
  EXPECT_THAT(graph.tensor(*graph.FindTensor("y")).dims, ElementsAre(4, 4, 8, 8));
}

// AveragePool-19's dilations widen the window; libonnx 1.12's AveragePool-11
// ignores them (14x14 instead of 12x12) and overrode the declaration. The
// node is treated as unknown to the library: its declared shape stands, and
// without one the refusal names the feature.
TEST(OnnxImportErrorTest, AFeatureOfANewerOpsetIsSizedByItsDeclaration) {
  for (const bool declared : {true, false}) {
    TestModel m;
    m.proto().mutable_opset_import(0)->set_version(19);
    m.Input("x", {1, 8, 16, 16}).Output("z", {1, 8, 12, 12});
    onnx::NodeProto& pool = m.Node("AveragePool", {"x"}, {"y"}, "pool");
    AddIntsAttribute(pool, "kernel_shape", {3, 3});
    AddIntsAttribute(pool, "dilations", {2, 2});
    m.Node("Relu", {"y"}, {"z"}, "relu");
    if (declared) m.ValueInfo("y", {1, 8, 12, 12});
    absl::StatusOr<Graph> graph = ImportOnnx(m.Bytes());
    if (declared) {
      ORDO_ASSERT_OK(graph.status());
      EXPECT_EQ(graph->tensor(*graph->FindTensor("y")).bytes, 8 * 12 * 12 * 4);
    } else {
      EXPECT_THAT(graph, StatusIs(kInvalid, HasSubstr("Op \"pool\" (AveragePool) uses dilations "
                                                      "(AveragePool-19), newer than the ONNX "
                                                      "library ordo uses knows")));
    }
  }
  // Dilations of 1 (and the same op at opset 17) are the library's own.
  TestModel plain;
  plain.proto().mutable_opset_import(0)->set_version(19);
  plain.Input("x", {1, 8, 16, 16}).Output("y", {1, 8, 14, 14});
  onnx::NodeProto& pool = plain.Node("AveragePool", {"x"}, {"y"}, "pool");
  AddIntsAttribute(pool, "kernel_shape", {3, 3});
  AddIntsAttribute(pool, "dilations", {1, 1});
  ORDO_EXPECT_OK(ImportOnnx(plain.Bytes()).status());
}

// Split-18's num_outputs over a dim it does not divide gives chunks of
// ceil(dim / n) and a smaller last one (torch.chunk's convention, which the
// spec adopted); libonnx 1.12 refused it as "not evenly splittable".
TEST(OnnxImportTest, Split18SplitsUnevenlyWithTheLastChunkSmaller) {
  TestModel m;
  m.proto().mutable_opset_import(0)->set_version(18);
  m.Input("x", {1, 10, 4, 4}).ShapelessOutput("a").ShapelessOutput("b");
  m.ShapelessOutput("c").ShapelessOutput("d");
  onnx::NodeProto& split = m.Node("Split", {"x"}, {"a", "b", "c", "d"}, "split");
  AddIntAttribute(split, "axis", -3);
  AddIntAttribute(split, "num_outputs", 4);
  absl::StatusOr<Graph> graph = ImportOnnx(m.Bytes());
  ORDO_ASSERT_OK(graph.status());
  std::vector<int64_t> bytes;
  for (const char* name : {"a", "b", "c", "d"}) {
    bytes.push_back(graph->tensor(*graph->FindTensor(name)).bytes);
  }
  EXPECT_THAT(bytes, ElementsAre(3 * 16 * 4, 3 * 16 * 4, 3 * 16 * 4, 1 * 16 * 4));

  // Chunks of ceil(2 / 4) = 1 leave -1 for the last: refused, naming the op.
  TestModel too_many;
  too_many.proto().mutable_opset_import(0)->set_version(18);
  too_many.Input("x", {2, 3}).ShapelessOutput("a").ShapelessOutput("b");
  too_many.ShapelessOutput("c").ShapelessOutput("d");
  onnx::NodeProto& bad = too_many.Node("Split", {"x"}, {"a", "b", "c", "d"}, "split");
  AddIntAttribute(bad, "num_outputs", 4);
  EXPECT_THAT(ImportOnnx(too_many.Bytes()),
              StatusIs(kInvalid, AllOf(HasSubstr("split"), HasSubstr("num_outputs 4 does not "
                                                                     "split dim 2"))));
}

// Element types newer than the linked ONNX (1.12) are named, with the fix.
TEST(OnnxImportErrorTest, NewerElementTypesAreNamedWithAFix) {
  TestModel m;
  m.Input("x", {4}, 17).Output("y", {4}, 17);
  m.Node("Identity", {"x"}, {"y"}, "copy");
  EXPECT_THAT(ImportOnnx(m.Bytes()),
              StatusIs(kInvalid, AllOf(HasSubstr("element type 17 (FLOAT8E4M3FN, ONNX 1.14 or "
                                                 "later; export in float32"),
                                       HasSubstr("--activation-dtype"))));
}

TEST(OnnxImportErrorTest, Cycle) {
  TestModel m;
  m.Input("x", {4}).Output("c", {4}).ValueInfo("b", {4});
  m.Node("Add", {"x", "c"}, {"b"}, "add");
  m.Node("Relu", {"b"}, {"c"}, "relu");
  EXPECT_THAT(ImportOnnx(m.Bytes()),
              StatusIs(kInvalid, HasSubstr("graph has a cycle through op \"add\"")));
}

TEST(OnnxImportErrorTest, UndefinedTensor) {
  TestModel m;
  m.Input("x", {4}).Output("y", {4});
  m.Node("Add", {"x", "ghost"}, {"y"}, "add");
  EXPECT_THAT(ImportOnnx(m.Bytes()),
              StatusIs(kInvalid, HasSubstr("op \"add\" reads tensor \"ghost\", which is "
                                           "not defined")));
}

TEST(OnnxImportErrorTest, TwoProducers) {
  TestModel m;
  m.Input("x", {4}).Output("y", {4});
  m.Node("Relu", {"x"}, {"y"}, "first");
  m.Node("Neg", {"x"}, {"y"}, "second");
  EXPECT_THAT(ImportOnnx(m.Bytes()),
              StatusIs(kInvalid, HasSubstr("tensor \"y\" has two producers: op "
                                           "\"first\" and op \"second\"")));
}

TEST(OnnxImportErrorTest, NodeWritesAWeight) {
  TestModel m;
  m.Input("x", {4}).Output("w", {4}).Weight("w", {4});
  m.Node("Relu", {"x"}, {"w"}, "relu");
  EXPECT_THAT(ImportOnnx(m.Bytes()),
              StatusIs(kInvalid, HasSubstr("op \"relu\" writes tensor \"w\", which is "
                                           "a weight")));
}

TEST(OnnxImportErrorTest, SymbolicInputDim) {
  TestModel m;
  m.Input("x", {kN, 4}).Output("y", {kN, 4});
  m.Node("Relu", {"x"}, {"y"}, "relu");
  EXPECT_THAT(ImportOnnx(m.Bytes()),
              StatusIs(kInvalid, HasSubstr("graph input \"x\": dim 0 is \"N\" "
                                           "(symbolic); dims must be static")));
}

// A custom op: ONNX cannot infer it, so the file's declaration stands.
TEST(OnnxImportErrorTest, SymbolicActivationDimNamesTheProducer) {
  TestModel m;
  m.Input("x", {1, 4}).Output("y", {kN, 4});
  m.Node("Foo", {"x"}, {"y"}, "foo", "com.example");
  EXPECT_THAT(ImportOnnx(m.Bytes()),
              StatusIs(kInvalid, HasSubstr("tensor \"y\" (output of op \"foo\"): dim 0 "
                                           "is \"N\" (symbolic)")));
}

TEST(OnnxImportErrorTest, UnknownShapeNamesTheProducer) {
  TestModel m;
  m.Input("x", {1, 4});
  m.Node("Foo", {"x"}, {"t"}, "foo", "com.example");
  m.Node("Relu", {"t"}, {"y"}, "relu");
  m.proto().mutable_graph()->add_output()->set_name("y");
  EXPECT_THAT(ImportOnnx(m.Bytes()),
              StatusIs(kInvalid, HasSubstr("tensor \"t\" (output of op \"foo\"): shape "
                                           "is unknown")));
  // The fix the message names (bench/onnx-sweep: it named none): the
  // custom op's output declared in value_info (and its domain imported, as
  // a valid file does).
  EXPECT_THAT(ImportOnnx(m.Bytes()),
              StatusIs(kInvalid, HasSubstr("Op \"foo\" (Foo, domain \"com.example\") is not "
                                           "an operator the ONNX library ordo uses knows")));
  EXPECT_THAT(ImportOnnx(m.Bytes()), StatusIs(kInvalid, HasSubstr("graph.value_info")));
  m.ValueInfo("t", {1, 4});
  m.Opset("com.example", 1);
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(m.Bytes()));
  EXPECT_THAT(graph.tensor(graph.FindTensor("t").value()).dims, ElementsAre(1, 4));
}

// libonnx 1.12's data propagation for Shape crashed on an input nothing
// could type (bench/onnx-sweep: a custom op upstream of a Shape).
TEST(OnnxImportErrorTest, ShapeOfAnUntypedValueIsAnErrorNotACrash) {
  TestModel m;
  m.Input("x", {1, 4});
  m.Node("Foo", {"x"}, {"t"}, "foo", "com.example");
  m.Node("Relu", {"t"}, {"r"}, "relu");
  m.Node("Shape", {"r"}, {"s"}, "shape");
  m.Node("Reshape", {"x", "s"}, {"y"}, "reshape");
  m.proto().mutable_graph()->add_output()->set_name("y");
  m.Opset("com.example", 1);
  for (int opset : {13, 15, 17}) {  // Shape-13 and Shape-15 (the one that crashed)
    m.proto().mutable_opset_import(0)->set_version(opset);
    EXPECT_THAT(ImportOnnx(m.Bytes()),
                StatusIs(kInvalid, HasSubstr("Op \"foo\" (Foo, domain \"com.example\") is not "
                                             "an operator the ONNX library ordo uses knows")))
        << "opset " << opset;
  }
}

// bench/onnx-sweep: a graph input of another element type than the
// weights failed ONNX's inference only at the graph output's declaration,
// at the model's end; the message now names the first op that may not take
// its inputs' types, and which input.
TEST(OnnxImportErrorTest, AnInputOfAnotherElementTypeIsNamedAtTheFirstOpItBreaks) {
  for (const auto& [elem_type, cause] :
       std::vector<std::pair<int32_t, std::string>>{
           {onnx::TensorProto::FLOAT16, "W has inconsistent type tensor(float)"},
           {onnx::TensorProto::UINT8, "X typestr: T, has unsupported type: tensor(uint8)"}}) {
    TestModel m;
    m.Input("x", {1, 3, 8, 8}, elem_type);
    m.Weight("w", {4, 3, 1, 1});
    m.Node("Conv", {"x", "w"}, {"c"}, "conv");
    m.Node("Relu", {"c"}, {"r"}, "relu");
    m.Node("Flatten", {"r"}, {"y"}, "flatten");
    m.Output("y", {1, 256});
    EXPECT_THAT(ImportOnnx(m.Bytes()),
                StatusIs(kInvalid, AllOf(HasSubstr("node name: conv"), HasSubstr(cause))))
        << cause;
  }
}

// libonnx 1.12's convolution inference read past the input's dims when the
// weight, whose rank it takes the kernel's from, has another rank
// (scripts/fuzz onnx_import_fuzzer: a Conv of a Flatten's output). Each op
// of the family, without kernel_shape, which is what crashed.
TEST(OnnxImportErrorTest, AConvolutionOfInputAndWeightOfOtherRanksIsAnErrorNotACrash) {
  for (const char* op : {"Conv", "ConvTranspose"}) {
    TestModel m;
    m.Input("x", {1, 16, 4, 4}).Weight("w", {16, 8, 1, 1});
    m.Node("Flatten", {"x"}, {"flat"}, "flatten");
    m.Node(op, {"flat", "w"}, {"y"}, "conv");
    m.proto().mutable_graph()->add_output()->set_name("y");
    EXPECT_THAT(ImportOnnx(m.Bytes()),
                StatusIs(kInvalid, AllOf(HasSubstr("node name: conv"),
                                         HasSubstr("the input (rank 2) and the weight (input 1, "
                                                   "rank 4) must have the same rank"))))
        << op;
  }
}

// bench/onnx-sweep: ONNX's inference took the last declaration of a graph
// input that is also a graph output, here one without dims, and every
// shape after it was lost; the most complete declaration now counts.
TEST(OnnxImportTest, AnInputDeclaredAgainAsAnOutputWithoutDimsKeepsItsDims) {
  TestModel m;
  m.Input("x", {1, 4});
  m.Node("Relu", {"x"}, {"r"}, "relu");
  m.Node("Relu", {"r"}, {"y"}, "relu2");
  m.proto().mutable_graph()->add_output()->set_name("y");
  onnx::ValueInfoProto& again = *m.proto().mutable_graph()->add_output();
  again.set_name("x");
  again.mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(m.Bytes()));
  EXPECT_THAT(graph.tensor(graph.FindTensor("y").value()).dims, ElementsAre(1, 4));
}

// A custom op inside a shape computation leaves the Reshape after it
// unknown; the message names the custom op, not only the Reshape.
TEST(OnnxImportErrorTest, UnknownShapeNamesTheUnknownOperatorUpstream) {
  TestModel m;
  m.Input("x", {1, 4});
  m.Node("Shape", {"x"}, {"s"}, "shape");
  m.Node("MyIdentity", {"s"}, {"s2"}, "custom", "com.example");
  m.Node("Reshape", {"x", "s2"}, {"y"}, "reshape");
  m.proto().mutable_graph()->add_output()->set_name("y");
  m.Opset("com.example", 1);
  EXPECT_THAT(ImportOnnx(m.Bytes()),
              StatusIs(kInvalid, HasSubstr("(output of op \"reshape\"): shape is unknown after "
                                           "shape inference and constant folding. It depends on "
                                           "a value computed by op \"custom\" (MyIdentity, "
                                           "domain \"com.example\"), which is not an "
                                           "operator")));
}

// bench/onnx-sweep: a custom op whose output's shape is known but whose
// value is not (a custom-domain Constant giving an Unsqueeze its axes) left
// the Reshape unknown with no reason: the values above it had folded, so
// the walk stopped there. Each Concat input's shape is known; the value of
// one is not.
TEST(OnnxImportErrorTest, UnknownShapeNamesACustomOpWhoseValueASettingInputNeeds) {
  TestModel m;
  m.Input("x", {2, 6});
  auto int64_tensor = [](onnx::TensorProto& t, std::initializer_list<int64_t> dims, int64_t v) {
    t.set_data_type(onnx::TensorProto::INT64);
    for (int64_t d : dims) t.add_dims(d);
    t.add_int64_data(v);
  };
  onnx::GraphProto& graph = *m.proto().mutable_graph();
  onnx::TensorProto& index = *graph.add_initializer();
  index.set_name("index");
  int64_tensor(index, {}, 1);
  onnx::TensorProto& head = *graph.add_initializer();
  head.set_name("head");
  int64_tensor(head, {1}, 2);
  m.Node("Shape", {"x"}, {"s"}, "shape");
  m.Node("Gather", {"s", "index"}, {"width"}, "gather");
  onnx::AttributeProto& value = *m.Node("Constant", {}, {"axes"}, "axes", "com.example")
                                     .add_attribute();
  value.set_name("value");
  value.set_type(onnx::AttributeProto::TENSOR);
  int64_tensor(*value.mutable_t(), {1}, 0);
  m.ValueInfo("axes", {1}, onnx::TensorProto::INT64);  // its shape, not its value
  m.Node("Unsqueeze", {"width", "axes"}, {"w1"}, "unsqueeze");
  onnx::AttributeProto& axis = *m.Node("Concat", {"head", "w1"}, {"target"}, "concat")
                                    .add_attribute();
  axis.set_name("axis");
  axis.set_type(onnx::AttributeProto::INT);
  axis.set_i(0);
  m.Node("Reshape", {"x", "target"}, {"y"}, "reshape");
  graph.add_output()->set_name("y");
  m.Opset("com.example", 1);
  EXPECT_THAT(ImportOnnx(m.Bytes()),
              StatusIs(kInvalid, HasSubstr("(output of op \"reshape\"): shape is unknown after "
                                           "shape inference and constant folding. It depends on "
                                           "a value computed by op \"axes\" (Constant, domain "
                                           "\"com.example\")")));
}

// A traced export's Reshape target fixed at the export's input size: at
// another size the element counts differ, which ONNX's inference accepts
// (bench/onnx-sweep: torchvision's ViT at 97x131 compiled to the 224 plan).
TEST(OnnxImportErrorTest, ReshapeToAnotherElementCountIsRefused) {
  auto model = [](std::initializer_list<int64_t> input) {
    TestModel m;
    m.Input("x", input);
    onnx::TensorProto& target = *m.proto().mutable_graph()->add_initializer();
    target.set_name("target");
    target.set_data_type(onnx::TensorProto::INT64);
    target.add_dims(3);
    for (int64_t dim : {1, 8, 49}) target.add_int64_data(dim);
    m.Node("Relu", {"x"}, {"r"}, "relu");
    m.Node("Reshape", {"r", "target"}, {"y"}, "flatten_patches");
    m.proto().mutable_graph()->add_output()->set_name("y");
    return m;
  };
  ORDO_ASSERT_OK_AND_ASSIGN(Graph exported_size, ImportOnnx(model({1, 8, 7, 7}).Bytes()));
  EXPECT_THAT(exported_size.tensor(exported_size.FindTensor("y").value()).dims,
              ElementsAre(1, 8, 49));
  EXPECT_THAT(ImportOnnx(model({1, 8, 3, 4}).Bytes()),
              StatusIs(kInvalid, HasSubstr("op \"flatten_patches\" (Reshape): input \"r\" has 96 "
                                           "elements (1x8x3x4) but the target shape 1x8x49 has "
                                           "392, so the model cannot run at these input shapes. "
                                           "The target is a constant of the export")));
}

// A model whose input a tool resized (16x16 to 8x8) without touching
// value_info declares every shape at the old size; they were the plan's
// shapes before (bench/onnx-sweep). The shapes now come from the input.
TEST(OnnxImportTest, ShapesDeclaredForAnotherInputSizeAreInferredAgain) {
  TestModel m;
  m.Input("x", {1, 3, 8, 8}).Weight("w", {4, 3, 1, 1});
  m.Node("Conv", {"x", "w"}, {"y"}, "conv");
  m.Node("Relu", {"y"}, {"z"}, "relu");
  m.Output("z", {1, 4, 16, 16}).ValueInfo("y", {1, 4, 16, 16});
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(m.Bytes()));
  EXPECT_THAT(graph.tensor(graph.FindTensor("y").value()).dims, ElementsAre(1, 4, 8, 8));
  EXPECT_THAT(graph.tensor(graph.FindTensor("z").value()).dims, ElementsAre(1, 4, 8, 8));
}

// The review of fb3f1a6: one first op reading another's output (x - f(x))
// put the other's stale declaration into the check, which then failed and
// called the file fresh.
TEST(OnnxImportTest, StaleDeclarationsAreFoundThroughChainedFirstOps) {
  TestModel m;
  m.Input("x", {1, 3, 8, 8});
  m.Node("Relu", {"x"}, {"a"}, "relu");
  m.Node("Sub", {"x", "a"}, {"y"}, "sub");
  m.Output("y", {1, 3, 16, 16}).ValueInfo("a", {1, 3, 16, 16});
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(m.Bytes()));
  EXPECT_THAT(graph.tensor(graph.FindTensor("y").value()).dims, ElementsAre(1, 3, 8, 8));
}

// A consistent opset-11 file whose ops changed form at opset 13 (Squeeze's
// axes an attribute, then an input) is not called stale: the check infers
// at the file's opsets, and only ops whose inference is exact.
TEST(OnnxImportTest, AConsistentOpset11FileKeepsItsDeclarations) {
  TestModel m;
  m.proto().mutable_opset_import(0)->set_version(11);
  m.Input("x", {1, 1, 8}).Weight("w", {2, 1, 1});
  m.Node("Conv", {"x", "w"}, {"c"}, "conv");
  onnx::NodeProto& squeeze = m.Node("Squeeze", {"x"}, {"s"}, "squeeze");
  onnx::AttributeProto& axes = *squeeze.add_attribute();
  axes.set_name("axes");
  axes.set_type(onnx::AttributeProto::INTS);
  axes.add_ints(1);
  m.Node("Relu", {"s"}, {"y"}, "relu");
  m.Output("y", {1, 8}).Output("c", {1, 2, 8}).ValueInfo("s", {1, 8});
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(m.Bytes()));
  EXPECT_THAT(graph.tensor(graph.FindTensor("y").value()).dims, ElementsAre(1, 8));
  EXPECT_THAT(graph.tensor(graph.FindTensor("c").value()).dims, ElementsAre(1, 2, 8));
}

// Declarations that agree with the input stand, and a custom op's declared
// output shape (nothing else gives it) stands even when others are redone.
TEST(OnnxImportTest, DeclarationsOfCustomOpsStandWhenOthersAreInferredAgain) {
  TestModel m;
  m.Input("x", {1, 3, 8, 8}).Weight("w", {4, 3, 1, 1});
  m.Node("Conv", {"x", "w"}, {"y"}, "conv");
  m.Node("Foo", {"y"}, {"f"}, "foo", "com.example");
  m.Node("Relu", {"f"}, {"z"}, "relu");
  m.Output("z", {1, 4, 16, 16}).ValueInfo("y", {1, 4, 16, 16}).ValueInfo("f", {1, 4, 2, 2});
  m.Opset("com.example", 1);
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(m.Bytes()));
  EXPECT_THAT(graph.tensor(graph.FindTensor("y").value()).dims, ElementsAre(1, 4, 8, 8));
  EXPECT_THAT(graph.tensor(graph.FindTensor("f").value()).dims, ElementsAre(1, 4, 2, 2));
  EXPECT_THAT(graph.tensor(graph.FindTensor("z").value()).dims, ElementsAre(1, 4, 2, 2));
}

// A resized model (here its batch, 1 in the file, now 4) whose custom op
// copied an input's dim into its declared output: that declaration is the
// old size's and nothing infers the op, so it was planned 4x too small. It
// is refused with the fix; a declared dim that copies no changed input dim
// stands.
TEST(OnnxImportErrorTest, ACustomOpsDeclarationAtTheOldSizeOfAResizedModelIsRefused) {
  for (const bool batch_major : {true, false}) {
    SCOPED_TRACE(batch_major ? "batch-major output" : "fixed-size output");
    TestModel m;
    m.Input("x", {4, 3, 8, 8}).Weight("w", {4, 3, 1, 1});
    m.Node("Conv", {"x", "w"}, {"y"}, "conv");
    m.Node("Foo", {"y"}, {"f"}, "foo", "com.example");
    m.Node("Relu", {"f"}, {"z"}, "relu");
    m.Opset("com.example", 1);
    m.ValueInfo("y", {1, 4, 8, 8});
    if (batch_major) {
      m.ValueInfo("f", {1, 4, 8, 8}).Output("z", {1, 4, 8, 8});
    } else {
      m.ValueInfo("f", {2, 16}).Output("z", {2, 16});
    }
    absl::StatusOr<Graph> graph = ImportOnnx(m.Bytes());
    if (batch_major) {
      EXPECT_THAT(graph, StatusIs(kInvalid,
                                  AllOf(HasSubstr("op \"foo\" (Foo) has no shape inference"),
                                        HasSubstr("output \"f\" is declared 1x4x8x8"),
                                        HasSubstr("\"y\" was declared 1x4x8x8 and is now 4x4x8x8"),
                                        HasSubstr("in graph.value_info"))));
    } else {
      ORDO_ASSERT_OK(graph.status());
      EXPECT_THAT(graph->tensor(*graph->FindTensor("f")).dims, ElementsAre(2, 16));
      EXPECT_THAT(graph->tensor(*graph->FindTensor("y")).dims, ElementsAre(4, 4, 8, 8));
    }
  }
}

// libonnx 1.12 truncates (in - window) / stride toward zero, so a window
// up to stride - 1 longer than its input got a 1-long output where the spec
// (floor) gives none and runtimes refuse to run (a probe of PyTorch audio
// exports: MaxPool of kernel 4 over 3 samples). With ceil_mode the spec
// gives 1, and the model runs.
TEST(OnnxImportErrorTest, AWindowLongerThanItsInputIsRefusedAtAnyStride) {
  for (const int64_t ceil_mode : {0, 1}) {
    SCOPED_TRACE(ceil_mode);
    TestModel m;
    m.Input("x", {1, 2, 3});
    onnx::NodeProto& pool = m.Node("MaxPool", {"x"}, {"y"}, "pool4");
    AddIntsAttribute(pool, "kernel_shape", {4});
    AddIntsAttribute(pool, "strides", {4});
    AddIntAttribute(pool, "ceil_mode", ceil_mode);
    m.proto().mutable_graph()->add_output()->set_name("y");
    absl::StatusOr<Graph> graph = ImportOnnx(m.Bytes());
    if (ceil_mode == 0) {
      EXPECT_THAT(graph,
                  StatusIs(kInvalid, HasSubstr("op \"pool4\" (MaxPool) gets an empty "
                                               "output from its inputs: they are smaller "
                                               "than its window (it spans 4 along spatial "
                                               "axis 0, dim 2, where input \"x\" is 3 long")));
    } else {
      ORDO_ASSERT_OK(graph.status());
      EXPECT_THAT(graph->tensor(*graph->FindTensor("y")).dims, ElementsAre(1, 2, 1));
    }
  }
  // A strided convolution whose kernel (from its weight) outgrows the input:
  // the refusal names it, not the op after it.
  TestModel conv;
  conv.Input("x", {1, 1, 70}).Weight("w", {4, 1, 80});
  AddIntsAttribute(conv.Node("Conv", {"x", "w"}, {"c"}, "conv1"), "strides", {16});
  conv.Node("Relu", {"c"}, {"y"}, "relu");
  conv.proto().mutable_graph()->add_output()->set_name("y");
  EXPECT_THAT(ImportOnnx(conv.Bytes()),
              StatusIs(kInvalid, HasSubstr("op \"conv1\" (Conv) gets an empty output")));
  // Padding that makes room is counted.
  TestModel padded;
  padded.Input("x", {1, 1, 70}).Weight("w", {4, 1, 80});
  AddIntsAttribute(padded.Node("Conv", {"x", "w"}, {"y"}, "conv1"), "pads", {5, 5});
  padded.proto().mutable_graph()->add_output()->set_name("y");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph fits, ImportOnnx(padded.Bytes()));
  EXPECT_THAT(fits.tensor(*fits.FindTensor("y")).dims, ElementsAre(1, 4, 1));
}

// A position table indexed by Range(sequence length): at a length past the
// table the Gather cannot run (PyTorch: IndexError), but inference sized its
// output from the indices' count and the model was planned (a probe: a GPT
// of 256 positions compiled at 300 tokens).
TEST(OnnxImportErrorTest, AGatherPastItsTableAtThisInputSizeIsRefused) {
  for (const int64_t tokens : {4, 6}) {
    SCOPED_TRACE(tokens);
    TestModel m;
    m.Input("x", {1, tokens, 2}).Weight("table", {4, 2});
    for (const auto& [name, value] : {std::pair{"zero", 0}, {"one", 1}}) {
      onnx::TensorProto& t = *m.proto().mutable_graph()->add_initializer();
      t.set_name(name);
      t.set_data_type(onnx::TensorProto::INT64);
      t.add_int64_data(value);
    }
    m.Node("Shape", {"x"}, {"shape"}, "shape");
    m.Node("Gather", {"shape", "one"}, {"n"}, "length");
    m.Node("Range", {"zero", "n", "one"}, {"positions"}, "range");
    m.Node("Gather", {"table", "positions"}, {"pos"}, "positions_of_table");
    m.Node("Add", {"x", "pos"}, {"y"}, "add");
    m.proto().mutable_graph()->add_output()->set_name("y");
    absl::StatusOr<Graph> graph = ImportOnnx(m.Bytes());
    if (tokens <= 4) {
      ORDO_ASSERT_OK(graph.status());
      EXPECT_THAT(graph->tensor(*graph->FindTensor("y")).dims, ElementsAre(1, 4, 2));
    } else {
      EXPECT_THAT(graph, StatusIs(kInvalid, AllOf(HasSubstr("op \"positions_of_table\" (Gather) "
                                                            "reads index 4 of \"table\", which "
                                                            "has 4 along axis 0"),
                                                  HasSubstr("a sequence of at most 4"))));
    }
  }
}

// A Reshape target computed from one input's shape and data of another's
// (a token sequence and its mask given different lengths): the fix is sizes
// that agree, not "the target is a constant of the export" (a probe of
// transformer exports).
TEST(OnnxImportErrorTest, AReshapeTargetFromAnotherInputsShapeNamesThatInput) {
  TestModel m;
  m.Input("tokens", {3}).Input("mask", {4});
  m.Node("Shape", {"tokens"}, {"s"}, "shape");
  m.Node("Reshape", {"mask", "s"}, {"r"}, "reshape");
  m.proto().mutable_graph()->add_output()->set_name("r");
  EXPECT_THAT(ImportOnnx(m.Bytes()),
              StatusIs(kInvalid, AllOf(HasSubstr("op \"reshape\" (Reshape): input \"mask\" has "
                                                 "4 elements"),
                                       HasSubstr("computed from the shape of graph input "
                                                 "\"tokens\", which does not match the data"),
                                       Not(HasSubstr("a constant of the export")))));
  // A target made from the data's own input's shape (a dynamic batch beside
  // a size baked in at export, as MaxViT's window split) is the export's.
  TestModel own;
  own.Input("x", {2, 3});
  for (const auto& [name, value] : {std::pair{"first", 0}, {"baked", 7}}) {
    onnx::TensorProto& t = *own.proto().mutable_graph()->add_initializer();
    t.set_name(name);
    t.set_data_type(onnx::TensorProto::INT64);
    t.add_dims(1);
    t.add_int64_data(value);
  }
  own.Node("Relu", {"x"}, {"r"}, "relu");
  own.Node("Shape", {"x"}, {"s"}, "shape");
  own.Node("Gather", {"s", "first"}, {"batch"}, "batch");
  AddIntAttribute(own.Node("Concat", {"batch", "baked"}, {"target"}, "target"), "axis", 0);
  own.Node("Reshape", {"r", "target"}, {"y"}, "reshape");
  own.proto().mutable_graph()->add_output()->set_name("y");
  EXPECT_THAT(ImportOnnx(own.Bytes()),
              StatusIs(kInvalid, HasSubstr("The target is a constant of the export")));
}

// Inputs that do not broadcast (a sequence longer than a position table
// sized at export, a mask of another length than its tokens): ONNX says
// only "Incompatible dimensions"; the refusal names both inputs, their dims
// and the dim that disagrees (a probe of transformer exports).
TEST(OnnxImportErrorTest, InputsThatDoNotBroadcastAreNamedWithTheirDims) {
  TestModel m;
  m.Input("tokens", {1, 5, 4}).Input("table", {1, 3, 4});
  m.Node("Add", {"tokens", "table"}, {"y"}, "add_positions");
  m.proto().mutable_graph()->add_output()->set_name("y");
  EXPECT_THAT(ImportOnnx(m.Bytes()),
              StatusIs(kInvalid, AllOf(HasSubstr("Op \"add_positions\" (Add) gets \"tokens\" "
                                                 "(1x5x4) and \"table\" (1x3x4), whose dims 1 "
                                                 "and 1 (5 and 3) do not broadcast"),
                                       HasSubstr("one of them may be sized at export"))));
}

// scripts/fuzz-all: bytes the importer's scan accepts but protobuf refuses,
// with a node using a newer opset's feature: the folder's working copy of
// the (empty) model was indexed by the scan's node numbers (an abort).
TEST(OnnxImportErrorTest, UnparsableBytesWithANewerFeatureAreRefused) {
  const std::string bytes = ReadFile(ordo::testing::SourceDir() +
                                     "/tests/fuzz/corpus/onnx_import_fuzzer/"
                                     "unparsable_with_a_newer_feature.onnx");
  ASSERT_FALSE(bytes.empty());
  EXPECT_THAT(ImportOnnx(bytes), StatusIs(kInvalid, ::testing::_));
}

TEST(OnnxImportErrorTest, ZeroDim) {
  TestModel m;
  m.Input("x", {0, 4}).Output("y", {0, 4});
  m.Node("Relu", {"x"}, {"y"}, "relu");
  EXPECT_THAT(ImportOnnx(m.Bytes()),
              StatusIs(kInvalid, HasSubstr("graph input \"x\": dim 0 is 0 (zero-size "
                                           "tensor)")));
}

// An input smaller than a layer's window (SSD300's extra layers at 97x131,
// bench/onnx-sweep): the message says the input size is the cause.
TEST(OnnxImportErrorTest, AnInputTooSmallForAWindowNamesTheOpAndTheFix) {
  TestModel m;
  m.Input("x", {1, 3, 2, 2}).Weight("w", {4, 3, 3, 3});
  m.Node("Conv", {"x", "w"}, {"y"}, "conv3x3");
  m.proto().mutable_graph()->add_output()->set_name("y");
  EXPECT_THAT(ImportOnnx(m.Bytes()),
              StatusIs(kInvalid, HasSubstr("op \"conv3x3\" (Conv) gets an empty output from its "
                                           "inputs: they are smaller than its window")));
}

// scripts/fuzz-all: a compile-time node whose only output is omitted ("")
// is replaced without making the working copy, which the node list was
// then written into (a null dereference, UBSan).
TEST(OnnxImportTest, AFoldedNodeWithoutOutputsImports) {
  TestModel m;
  m.Input("x", {1, 4}).Output("y", {1, 4});
  m.Node("Shape", {"x"}, {""}, "unused_shape");
  m.Node("Relu", {"x"}, {"y"}, "relu");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(m.Bytes()));
  EXPECT_EQ(graph.num_ops(), 1);
}

// scripts/fuzz-all (onnx_import_fuzzer): bytes the view scans but protobuf
// refuses, with something to fold; the node list was copied from the empty
// parse by the view's node indices (abort in RepeatedPtrField::Get).
TEST(OnnxImportErrorTest, BytesProtobufRefusesWithSomethingToFoldAreAnError) {
  std::string bytes;
  ASSERT_TRUE(absl::Base64Unescape(
      "KgcSFG9yZG8gbWFrZS0tYWRvZG1iZWxzOnYKEfUBeAoBdxIBYRoBYSIDQWJzCg8KAWFSAXkaAWMiBGJ1bFJlEgNh"
      "ZCoRCICAgICAgICAQAgEEAFSAXel5PX+eBIWChQIARIQCgIIAQoCCHoKAggEKgIIBGIbCgV5EhYKFAgBEhAKAggB"
      "CgIICAoCCAQKAggEQgQKABAN",
      &bytes));
  EXPECT_THAT(ImportOnnx(bytes), StatusIs(kInvalid, HasSubstr("not a valid ONNX model")));
}

TEST(OnnxImportErrorTest, DimsOverflowInt64) {
  TestModel m;
  m.Input("x", {1, 4}).Output("y", {int64_t{1} << 31, int64_t{1} << 31});
  m.Node("Foo", {"x"}, {"y"}, "blowup", "com.example");
  EXPECT_THAT(ImportOnnx(m.Bytes()),
              StatusIs(kInvalid, HasSubstr("tensor \"y\" (output of op \"blowup\"): "
                                           "dims overflow int64")));
}

TEST(OnnxImportErrorTest, UnsupportedElementType) {
  TestModel m;
  m.Input("x", {1, 4}).Output("s", {1, 4}, onnx::TensorProto::STRING);
  m.Node("Foo", {"x"}, {"s"}, "to_string", "com.example");
  EXPECT_THAT(ImportOnnx(m.Bytes()),
              StatusIs(kInvalid, HasSubstr("tensor \"s\" (output of op \"to_string\"): "
                                           "element type STRING is not supported")));
}

TEST(OnnxImportErrorTest, IfIsRejected) {
  TestModel m;
  m.Input("cond", {}, onnx::TensorProto::BOOL).Output("y", {4});
  onnx::NodeProto& node = m.Node("If", {"cond"}, {"y"}, "branch");
  for (const char* name : {"then_branch", "else_branch"}) {
    onnx::AttributeProto& a = *node.add_attribute();
    a.set_name(name);
    a.set_type(onnx::AttributeProto::GRAPH);
    a.mutable_g()->set_name(name);
  }
  EXPECT_THAT(ImportOnnx(m.Bytes()),
              StatusIs(kInvalid, HasSubstr("control-flow op \"branch\" (If) is not "
                                           "supported yet")));
}

TEST(OnnxImportErrorTest, GraphAttributeIsRejected) {
  TestModel m;
  m.Input("x", {4}).Output("y", {4});
  onnx::NodeProto& node = m.Node("MyLoop", {"x"}, {"y"}, "custom", "com.example");
  onnx::AttributeProto& a = *node.add_attribute();
  a.set_name("bodies");
  a.set_type(onnx::AttributeProto::GRAPHS);
  a.add_graphs()->set_name("body");
  EXPECT_THAT(ImportOnnx(m.Bytes()),
              StatusIs(kInvalid, HasSubstr("control-flow op \"custom\" (MyLoop)")));
}

TEST(OnnxImportErrorTest, ZeroStrideIsRejectedBeforeShapeInference) {
  TestModel m;
  m.Input("x", {1, 1, 8, 8}).Weight("w", {1, 1, 3, 3});
  onnx::NodeProto& conv = m.Node("Conv", {"x", "w"}, {"y"}, "conv");
  AddIntsAttribute(conv, "strides", {1, 0});
  m.proto().mutable_graph()->add_output()->set_name("y");
  EXPECT_THAT(ImportOnnx(m.Bytes()),
              StatusIs(kInvalid, HasSubstr("op \"conv\" (Conv): attribute \"strides\" "
                                           "must be positive, got 0")));
}

TEST(OnnxImportErrorTest, TooManyNodes) {
  TestModel m;
  m.Input("x", {4}).Output("c", {4});
  m.Node("Relu", {"x"}, {"a"}, "r1");
  m.Node("Relu", {"a"}, {"b"}, "r2");
  m.Node("Relu", {"b"}, {"c"}, "r3");
  GraphLimits limits;
  limits.max_ops = 2;
  EXPECT_THAT(ImportOnnx(m.Bytes(), limits),
              StatusIs(kExhausted, HasSubstr("model has 3 nodes; the limit is 2")));
  // An unknown group field (start tag 99<<3|3, end tag 99<<3|4), valid
  // protobuf, makes the quick node count give up; the limit still holds.
  const std::string with_group = m.Bytes() + "\x9b\x06\x9c\x06";
  onnx::ModelProto parsed;
  ASSERT_TRUE(parsed.ParseFromString(with_group)) << "test bug: protobuf refuses the group";
  EXPECT_THAT(ImportOnnx(with_group, limits),
              StatusIs(kExhausted, HasSubstr("model has 3 nodes; the limit is 2")));
}

TEST(OnnxImportErrorTest, EverythingFolds) {
  TestModel m;
  m.Weight("w", {4}, {1, 2, 3, 4}).Output("y", {4});
  m.Node("Neg", {"w"}, {"y"}, "neg");
  EXPECT_THAT(ImportOnnx(m.Bytes()),
              StatusIs(kInvalid, HasSubstr("graph \"test\" has no ops to schedule")));
}

// A graph output computed from weights alone (PyTorch exports a returned
// constant, or anchors, this way) is read by the application from the
// weights: the model compiles without it, and the answer says so.
TEST(OnnxImportTest, AFoldedGraphOutputIsLeftOutWithANote) {
  TestModel m;
  m.Input("x", {4}).Weight("w", {4}, {1, 2, 3, 4}).Output("y", {4}).Output("r", {4});
  m.Node("Neg", {"w"}, {"y"}, "neg");
  m.Node("Relu", {"x"}, {"r"}, "relu");
  absl::StatusOr<Graph> graph = ImportOnnx(m.Bytes());
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(graph->num_ops(), 1);
  ASSERT_EQ(graph->outputs().size(), 1u);
  EXPECT_EQ(graph->tensor(graph->outputs()[0]).name, "r");
  EXPECT_THAT(graph->notes(), ElementsAre(AllOf(HasSubstr("graph output \"y\" is a constant"),
                                                HasSubstr("from the model's weights"))));
}

// Every constant output is named up to four, then counted; an initializer
// listed as an output is one too.
TEST(OnnxImportTest, ManyConstantOutputsShareOneNote) {
  TestModel m;
  m.Input("x", {4}).Output("r", {4});
  m.Node("Relu", {"x"}, {"r"}, "relu");
  for (int i = 0; i < 6; ++i) {
    const std::string name = absl::StrCat("anchor", i);
    m.Weight(name, {2}, {1, 2});
    m.Output(name, {2});
  }
  absl::StatusOr<Graph> graph = ImportOnnx(m.Bytes());
  ASSERT_TRUE(graph.ok()) << graph.status();
  EXPECT_EQ(graph->outputs().size(), 1u);
  EXPECT_THAT(graph->notes(),
              ElementsAre(AllOf(HasSubstr("graph outputs \"anchor0\", \"anchor1\", \"anchor2\", "
                                          "\"anchor3\" and 2 more are constants"))));
}

// When every output folds, nothing is left to run.
TEST(OnnxImportErrorTest, OnlyConstantOutputsLeaveNothingToSchedule) {
  TestModel m;
  m.Input("x", {4}).Weight("w", {4}, {1, 2, 3, 4}).Output("y", {4});
  m.Node("Neg", {"w"}, {"y"}, "neg");
  EXPECT_THAT(ImportOnnx(m.Bytes()), StatusIs(kInvalid, HasSubstr("has no ops to schedule")));
}

// bench/onnx-sweep: a weight listed as a graph output without dims (a
// tool dropped the outputs' shapes) hid the weight's dims from ONNX's
// inference, so the Conv reading it was refused as unknown, with no
// reason. The weight output is a constant the runtime reads; the Conv is
// sized from the weight's own dims.
TEST(OnnxImportTest, AWeightOutputWithoutDimsLeavesTheConvReadingItSized) {
  TestModel m;
  m.Input("x", {1, 3, 8, 8}).Weight("w", {4, 3, 1, 1});
  m.Node("Conv", {"x", "w"}, {"y"}, "conv");
  for (const char* output : {"y", "w"}) {  // types without dims
    onnx::ValueInfoProto& info = *m.proto().mutable_graph()->add_output();
    info.set_name(output);
    info.mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  }
  absl::StatusOr<Graph> graph = ImportOnnx(m.Bytes());
  ASSERT_TRUE(graph.ok()) << graph.status();
  ASSERT_EQ(graph->outputs().size(), 1u);
  EXPECT_EQ(graph->tensor(graph->outputs()[0]).dims, (std::vector<int64_t>{1, 4, 8, 8}));
  EXPECT_THAT(graph->notes(), ElementsAre(HasSubstr("graph output \"w\" is a constant")));
}

// Flipped and truncated bytes of real models must come back as a status:
// nothing may throw, crash or hang. Fixed seed, so failures reproduce.
TEST(OnnxImportErrorTest, MutatedModelsNeverCrash) {
  std::mt19937_64 rng(20240601);
  for (const char* name : {"tiny_cell", "small_resnet", "shape_subgraph"}) {
    const std::string original = ExampleModel(name);
    ASSERT_FALSE(original.empty());
    for (int trial = 0; trial < ::ordo::testing::Trials(300); ++trial) {
      std::string bytes = original;
      const int flips = 1 + static_cast<int>(rng() % 8);
      for (int i = 0; i < flips; ++i) {
        bytes[rng() % bytes.size()] = static_cast<char>(rng() % 256);
      }
      if (trial % 3 == 0) bytes.resize(rng() % bytes.size());
      absl::StatusOr<Graph> graph = ImportOnnx(bytes);
      if (!graph.ok()) {
        EXPECT_THAT(graph.status().code(), ::testing::AnyOf(kInvalid, kExhausted))
            << graph.status();
      }
    }
  }
}

// --------------------------------------------------------------------------
// ReorderOnnxNodes.

int64_t RawElementBytes(int32_t elem_type) {
  switch (elem_type) {
    case onnx::TensorProto::INT64:
    case onnx::TensorProto::DOUBLE:
      return 8;
    case onnx::TensorProto::FLOAT16:
      return 2;
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::BOOL:
      return 1;
    default:
      return 4;
  }
}

// Reorders, checks the result with ONNX's checker, and re-imports it.
absl::StatusOr<Graph> ReorderAndReimport(const std::string& bytes, const Graph& graph,
                                         const std::vector<OpId>& schedule) {
  absl::StatusOr<std::string> reordered = ReorderOnnxNodes(bytes, graph, schedule);
  if (!reordered.ok()) return reordered.status();
  onnx::ModelProto model;
  if (!model.ParseFromString(*reordered)) {
    return absl::InternalError("reordered bytes do not parse");
  }
  // The checker insists that external data files exist; the weightless models
  // here point at files that are not shipped. Their initializers are checked
  // as if they held their data inline, which is what matters for node order.
  for (onnx::TensorProto& t : *model.mutable_graph()->mutable_initializer()) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) continue;
    t.clear_external_data();
    t.clear_data_location();
    int64_t bytes = RawElementBytes(t.data_type());
    for (int64_t d : t.dims()) bytes *= d;
    t.set_raw_data(std::string(bytes, '\0'));
  }
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    return absl::InternalError(std::string("check_model: ") + e.what());
  }
  return ImportOnnx(*reordered);
}

std::vector<std::string> NamesInOrder(const Graph& graph, const std::vector<OpId>& schedule) {
  std::vector<std::string> names;
  names.reserve(schedule.size());
  for (OpId op : schedule) names.push_back(graph.op(op).name);
  return names;
}

TEST(ReorderOnnxNodesTest, RoundTripsTinyCell) {
  const std::string bytes = ExampleModel("tiny_cell");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(bytes));
  const std::vector<OpId> schedule = {0,  1,  7, 2,  8,  4,  3,  5,  9, 10,
                                      11, 12, 6, 13, 14, 15, 16, 17, 18};
  ORDO_ASSERT_OK_AND_ASSIGN(Graph reordered, ReorderAndReimport(bytes, graph, schedule));
  EXPECT_THAT(OpNames(reordered), ElementsAreArray(NamesInOrder(graph, schedule)));
  EXPECT_EQ(Peak(reordered, ModelOrder(reordered)), Peak(graph, schedule));
  EXPECT_EQ(Peak(reordered, ModelOrder(reordered)), 360448);
}

// Folded nodes come first, except Shape of an activation, which has to wait
// for its producer; the result is still topologically sorted.
TEST(ReorderOnnxNodesTest, RoundTripsShapeSubgraphInLatestFirstOrder) {
  const std::string bytes = ExampleModel("shape_subgraph");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(bytes));
  const std::vector<OpId> schedule = LatestFirstOrder(graph);
  ASSERT_NE(schedule, ModelOrder(graph));
  ORDO_ASSERT_OK_AND_ASSIGN(Graph reordered, ReorderAndReimport(bytes, graph, schedule));
  EXPECT_THAT(OpNames(reordered), ElementsAreArray(NamesInOrder(graph, schedule)));
  EXPECT_EQ(Peak(reordered, ModelOrder(reordered)), Peak(graph, schedule));

  onnx::ModelProto model;
  ASSERT_TRUE(model.ParseFromString(ReorderOnnxNodes(bytes, graph, schedule).value()));
  EXPECT_EQ(model.graph().node(0).op_type(), "Constant");
  EXPECT_EQ(model.graph().node_size(), 43);
}

TEST(ReorderOnnxNodesTest, RoundTripsModelWithoutWeightData) {
  TestModel m;
  m.Input("x", {1, 4}).Output("z", {1, 4}).Weight("v", {4});
  m.Node("Relu", {"x"}, {"a"}, "a");
  m.Node("Sigmoid", {"x"}, {"b"}, "b");
  m.Node("Add", {"a", "v"}, {"c"}, "c");
  m.Node("Mul", {"b", "c"}, {"z"}, "z");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(m.Bytes()));
  ORDO_ASSERT_OK_AND_ASSIGN(Graph reordered, ReorderAndReimport(m.Bytes(), graph, {1, 0, 2, 3}));
  EXPECT_THAT(OpNames(reordered), ElementsAre("b", "a", "c", "z"));
}

TEST(ReorderOnnxNodesTest, RoundTripsSharedModel) {
  const std::string bytes = ReadFile(ordo::testing::SharedModelsDir() + "/squeezenet1_1.onnx");
  if (bytes.empty()) GTEST_SKIP() << "../shared/models not found";
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(bytes));
  const std::vector<OpId> schedule = LatestFirstOrder(graph);
  ORDO_ASSERT_OK_AND_ASSIGN(Graph reordered, ReorderAndReimport(bytes, graph, schedule));
  EXPECT_THAT(OpNames(reordered), ElementsAreArray(NamesInOrder(graph, schedule)));
  EXPECT_EQ(Peak(reordered, ModelOrder(reordered)), Peak(graph, schedule));
}

TEST(ReorderOnnxNodesTest, RejectsBadSchedules) {
  const std::string bytes = ExampleModel("tiny_cell");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(bytes));
  std::vector<OpId> order = ModelOrder(graph);
  EXPECT_THAT(ReorderOnnxNodes(bytes, graph, absl::MakeSpan(order).subspan(1)),
              StatusIs(kInvalid, HasSubstr("schedule has 18 steps; the graph has 19")));
  std::vector<OpId> twice = order;
  twice[1] = 0;
  EXPECT_THAT(ReorderOnnxNodes(bytes, graph, twice),
              StatusIs(kInvalid, HasSubstr("runs op \"a\" twice")));
  std::vector<OpId> out_of_range = order;
  out_of_range[3] = 19;
  EXPECT_THAT(ReorderOnnxNodes(bytes, graph, out_of_range),
              StatusIs(kInvalid, HasSubstr("op id 19")));
  std::vector<OpId> swapped = order;
  std::swap(swapped[0], swapped[1]);
  EXPECT_THAT(ReorderOnnxNodes(bytes, graph, swapped),
              StatusIs(kInvalid, HasSubstr("schedule runs op \"a_relu\" before op "
                                           "\"a\"")));
  EXPECT_THAT(ReorderOnnxNodes("garbage", graph, order),
              StatusIs(kInvalid, HasSubstr("not a valid ONNX model")));
}

TEST(ReorderOnnxNodesTest, RejectsGraphOfAnotherModel) {
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(ExampleModel("tiny_cell")));
  EXPECT_THAT(ReorderOnnxNodes(ExampleModel("small_resnet"), graph, ModelOrder(graph)),
              StatusIs(kInvalid, HasSubstr("does not match a node of this model")));
}

// Reshape(y, Shape(a)) does not read a, so the Graph lets it run before a;
// a file cannot, because the folded Shape must follow a's producer.
TEST(ReorderOnnxNodesTest, AShapeReadBeforeItsActivationIsWrittenAsAConstant) {
  TestModel m;
  m.Input("x", {2, 3}).Output("r", {2, 3}).Output("a", {2, 3});
  m.ValueInfo("y", {6}).ValueInfo("s", {2});
  m.Node("Relu", {"x"}, {"a"}, "producer");
  m.Node("Shape", {"a"}, {"s"}, "shape");
  m.Node("Flatten", {"x"}, {"y_2d"}, "flatten");
  m.ValueInfo("y_2d", {2, 3});
  m.Node("Reshape", {"y_2d", "s"}, {"r"}, "reshape");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(m.Bytes()));
  ASSERT_THAT(OpNames(graph), ElementsAre("producer", "flatten", "reshape"));
  // In file order the Shape waits for its input, as it must.
  ORDO_ASSERT_OK_AND_ASSIGN(Graph reordered, ReorderAndReimport(m.Bytes(), graph, {1, 0, 2}));
  EXPECT_THAT(OpNames(reordered), ElementsAre("flatten", "producer", "reshape"));
  // The reshape before the producer: no file order runs Shape of "a" before
  // "a" exists, so at the size compiled "s" is written as a constant and the
  // Shape left out (a helper's probe: dynamic transformer exports, whose
  // Reshape targets come from Shape of later tensors, were refused).
  ORDO_ASSERT_OK_AND_ASSIGN(std::string bytes, ReorderOnnxNodes(m.Bytes(), graph, {1, 2, 0}));
  onnx::ModelProto model;
  ASSERT_TRUE(model.ParseFromString(bytes));
  std::vector<std::string> nodes;
  for (const onnx::NodeProto& node : model.graph().node()) nodes.push_back(node.name());
  EXPECT_THAT(nodes, ElementsAre("flatten", "reshape", "producer"));
  bool s_is_constant = false;
  for (const onnx::TensorProto& t : model.graph().initializer()) {
    if (t.name() == "s") {
      s_is_constant = true;
      EXPECT_THAT(t.int64_data(), ElementsAre(2, 3));
    }
  }
  EXPECT_TRUE(s_is_constant);
  ORDO_ASSERT_OK_AND_ASSIGN(Graph frozen, ReorderAndReimport(m.Bytes(), graph, {1, 2, 0}));
  EXPECT_THAT(OpNames(frozen), ElementsAre("flatten", "reshape", "producer"));
  EXPECT_EQ(Peak(frozen, ModelOrder(frozen)), Peak(graph, {1, 2, 0}));
  // A schedule that is not topological is still refused.
  EXPECT_THAT(ReorderOnnxNodes(m.Bytes(), graph, {2, 1, 0}),
              StatusIs(kInvalid, HasSubstr("before op \"flatten\"")));
}

}  // namespace
}  // namespace ordo

namespace ordo {
namespace {

TEST(OnnxImportDataDependentTest, NonZeroNamesTheOpAndWhy) {
  TestModel m;
  m.Input("x", {4}).Output("idx", {1, kN}, onnx::TensorProto::INT64);
  m.Node("NonZero", {"x"}, {"idx"}, "nz");
  EXPECT_THAT(ImportOnnx(m.Bytes()),
              StatusIs(kInvalid, HasSubstr("Op \"nz\" (NonZero) has an output whose size depends "
                                           "on the values of its inputs")));
  EXPECT_THAT(ImportOnnx(m.Bytes()),
              StatusIs(kInvalid, HasSubstr("declare that size for its outputs in graph.value_info")));
}

// The fix the refusal offers: a runtime that gives such an output a fixed
// maximum size (NonMaxSuppression's max_output_boxes_per_class) declares
// it, and the model is planned at that size.
TEST(OnnxImportDataDependentTest, ADeclaredMaximumSizeIsPlanned) {
  TestModel m;
  m.Input("x", {4}).Output("idx", {1, 3}, onnx::TensorProto::INT64);
  m.Node("NonZero", {"x"}, {"idx"}, "nz");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(m.Bytes()));
  EXPECT_EQ(graph.tensor(*graph.FindTensor("idx")).bytes, 3 * 8);
}

TEST(OnnxImportDataDependentTest, TopKWithKFromActivationsNamesTheInput) {
  TestModel m;
  m.Input("x", {1, 8}).Input("k", {1}, onnx::TensorProto::INT64);
  m.Output("values", {1, kN}).Output("indices", {1, kN}, onnx::TensorProto::INT64);
  m.Node("TopK", {"x", "k"}, {"values", "indices"}, "topk");
  EXPECT_THAT(ImportOnnx(m.Bytes()),
              StatusIs(kInvalid, HasSubstr("Input 1 (\"k\") of op \"topk\" (TopK) sets this shape "
                                           "and is computed from activation values at run time")));
}

TEST(OnnxImportDataDependentTest, TopKWithAFoldedKCompiles) {
  TestModel m;
  m.Input("x", {1, 8}).Output("values", {1, kN});
  onnx::NodeProto& shape = m.Node("Shape", {"x"}, {"s"}, "shape");
  (void)shape;
  // k = Shape(x)[1] / 2, a constant once x's shape is known.
  onnx::TensorProto& one = *m.proto().mutable_graph()->add_initializer();
  one.set_name("one");
  one.set_data_type(onnx::TensorProto::INT64);
  one.add_dims(1);
  one.add_int64_data(1);
  onnx::TensorProto& two = *m.proto().mutable_graph()->add_initializer();
  two.set_name("two");
  two.set_data_type(onnx::TensorProto::INT64);
  two.add_dims(1);
  two.add_int64_data(2);
  m.Node("Gather", {"s", "one"}, {"n"}, "gather");
  m.Node("Div", {"n", "two"}, {"k"}, "div");
  m.Node("TopK", {"x", "k"}, {"values", "indices"}, "topk");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(m.Bytes()));
  ASSERT_EQ(graph.num_ops(), 1);
  EXPECT_THAT(graph.tensor(graph.FindTensor("values").value()).dims, ElementsAre(1, 4));
}

// Shape -> Cast(elem_type) -> Mul(scale) -> Cast(INT64) -> Reshape of x
// (1x3x8x8), scale [1, 1, 8, 1/8] as `scale_bits` in `elem_type`, a 16-bit
// float: a model converted to it.
TestModel SixteenBitShapeArithmetic(int32_t elem_type, std::initializer_list<int32_t> scale_bits) {
  TestModel m;
  m.Input("x", {1, 3, 8, 8}).ShapelessOutput("y");
  onnx::TensorProto& scale = *m.proto().mutable_graph()->add_initializer();
  scale.set_name("scale");
  scale.set_data_type(elem_type);
  scale.add_dims(4);
  for (int32_t bits : scale_bits) scale.add_int32_data(bits);
  m.Node("Shape", {"x"}, {"s"}, "shape");
  AddIntAttribute(m.Node("Cast", {"s"}, {"s16"}, "to_16_bits"), "to", elem_type);
  m.Node("Mul", {"s16", "scale"}, {"scaled"}, "mul");
  AddIntAttribute(m.Node("Cast", {"scaled"}, {"target"}, "to_int"), "to", onnx::TensorProto::INT64);
  m.Node("Reshape", {"x", "target"}, {"r"}, "reshape");
  m.Node("Relu", {"r"}, {"y"}, "relu");
  return m;
}

// onnxconverter-common's float16 conversion turns a shape computation's
// Cast to FLOAT into one to FLOAT16: Shape -> Cast(FLOAT16) -> Mul ->
// Cast(INT64) -> Reshape must fold as the float one does. Before, the
// Reshape's shape stayed unknown and the model was refused.
TEST(OnnxImportTest, Float16ShapeArithmeticIsFolded) {
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph,
                            ImportOnnx(SixteenBitShapeArithmetic(onnx::TensorProto::FLOAT16,
                                                                 {0x3c00, 0x3c00, 0x4800, 0x3000})
                                           .Bytes()));
  ASSERT_EQ(graph.num_ops(), 2);
  EXPECT_THAT(graph.tensor(*graph.FindTensor("r")).dims, ElementsAre(1, 3, 64, 1));
}

// The same model converted to bfloat16 folds too (it was refused as of
// unknown shape).
TEST(OnnxImportTest, BFloat16ShapeArithmeticIsFolded) {
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph,
                            ImportOnnx(SixteenBitShapeArithmetic(onnx::TensorProto::BFLOAT16,
                                                                 {0x3f80, 0x3f80, 0x4100, 0x3e00})
                                           .Bytes()));
  ASSERT_EQ(graph.num_ops(), 2);
  EXPECT_THAT(graph.tensor(*graph.FindTensor("r")).dims, ElementsAre(1, 3, 64, 1));
}

TEST(OnnxImportDropoutTest, UnreadMaskIsDroppedAndDropoutIsAnInPlaceView) {
  TestModel m;
  m.Input("x", {1, 16}).Output("z", {1, 16});
  m.Node("Relu", {"x"}, {"r"}, "relu");
  m.Node("Dropout", {"r"}, {"d", "mask"}, "dropout");
  m.Node("Relu", {"d"}, {"z"}, "relu2");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(m.Bytes()));
  ASSERT_EQ(graph.num_ops(), 3);
  EXPECT_EQ(graph.op(1).outputs.size(), 1u);
  EXPECT_FALSE(graph.FindTensor("mask").has_value());
  ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel model, BuildMemoryModel(graph, {}));
  EXPECT_EQ(model.ops[1].inplace_input, graph.FindTensor("r").value());
}

// A mask that is read has the input's shape: of type T (the input's) before
// Dropout-10, bool from then on (the ONNX spec's versions; onnxruntime's
// kernels agree). Before, opsets 1-9 refused it as of unknown shape.
TEST(OnnxImportDropoutTest, AReadMaskHasTheInputsShapeAndItsOpsetsType) {
  struct Case {
    int64_t opset;
    DataType mask;
  };
  for (const Case c : {Case{3, DataType::kFloat32}, Case{7, DataType::kFloat32},
                       Case{9, DataType::kFloat32}, Case{12, DataType::kBool}}) {
    TestModel m;
    m.proto().mutable_opset_import(0)->set_version(c.opset);
    m.Input("x", {1, 16})
        .ShapelessOutput("z")
        .ShapelessOutput(
            "mask", c.mask == DataType::kBool ? onnx::TensorProto::BOOL : onnx::TensorProto::FLOAT);
    m.Node("Dropout", {"x"}, {"d", "mask"}, "dropout");
    m.Node("Relu", {"d"}, {"z"}, "relu");
    absl::StatusOr<Graph> graph = ImportOnnx(m.Bytes());
    ORDO_ASSERT_OK(graph.status()) << "opset " << c.opset;
    const Tensor& mask = graph->tensor(*graph->FindTensor("mask"));
    EXPECT_THAT(mask.dims, ElementsAre(1, 16)) << "opset " << c.opset;
    EXPECT_EQ(mask.dtype, c.mask) << "opset " << c.opset;
  }
}

// BatchNormalization before opset 14 with its training outputs (mean, var,
// saved_mean, saved_var) is a training op, read or not: the refusal names
// the op and output, says why, and how to export the model instead.
TEST(OnnxImportErrorTest, BatchNormalizationTrainingOutputsSayWhyAndHowToExport) {
  for (const bool read : {false, true}) {
    TestModel m;
    m.proto().mutable_opset_import(0)->set_version(9);
    m.Input("x", {1, 3, 8, 8}).ShapelessOutput("z");
    if (read) m.ShapelessOutput("running_mean");
    m.Weight("s", {3}).Weight("b", {3}).Weight("mu", {3}).Weight("var", {3});
    m.Node("BatchNormalization", {"x", "s", "b", "mu", "var"},
           {"y", "running_mean", "running_var", "saved_mean", "saved_var"}, "bn");
    m.Node("Relu", {"y"}, {"z"}, "relu");
    EXPECT_THAT(ImportOnnx(m.Bytes()),
                StatusIs(kInvalid, AllOf(HasSubstr("op \"bn\" (BatchNormalization): output 1 "
                                                   "\"running_mean\" (the spec's \"mean\") "
                                                   "exists only in training mode"),
                                         HasSubstr("model.eval() before torch.onnx.export"),
                                         HasSubstr("drop every output of the op but the first"))))
        << (read ? "read" : "unread");
  }
}

// Declared in value_info they are refused too (they were planned as
// declared): the file is a training graph whatever it declares. From opset
// 14, training_mode=1 is refused with or without the outputs, and
// running_mean / running_var without it; an eval-mode op still imports.
TEST(OnnxImportErrorTest, BatchNormalizationTrainingModeIsRefusedWhateverTheFileDeclares) {
  const auto refused = [](absl::string_view what) {
    return StatusIs(kInvalid,
                    AllOf(HasSubstr(absl::StrCat("op \"bn\" (BatchNormalization): ", what)),
                          HasSubstr("model.eval() before torch.onnx.export"),
                          HasSubstr("drop every output of the op but the first")));
  };
  TestModel declared;
  declared.proto().mutable_opset_import(0)->set_version(9);
  declared.Input("x", {1, 3, 8, 8}).ShapelessOutput("z");
  declared.Weight("s", {3}).Weight("b", {3}).Weight("mu", {3}).Weight("var", {3});
  declared.Node("BatchNormalization", {"x", "s", "b", "mu", "var"}, {"y", "m1", "v1"}, "bn");
  declared.Node("Relu", {"y"}, {"z"}, "relu");
  declared.ValueInfo("m1", {3}).ValueInfo("v1", {3});
  EXPECT_THAT(ImportOnnx(declared.Bytes()),
              refused("output 1 \"m1\" (the spec's \"mean\") exists only in training mode"));

  struct Case {
    int64_t training_mode;
    std::vector<std::string> outputs;
    std::string refusal;  // "" when it imports
  };
  for (const Case& c : {
           Case{1, {"y", "m1", "v1"}, "attribute training_mode=1 sets training mode"},
           Case{1, {"y"}, "attribute training_mode=1 sets training mode"},
           Case{0,
                {"y", "m1", "v1"},
                "output 1 \"m1\" (the spec's \"running_mean\") exists only in training mode"},
           Case{0,
                {"y", "", "v1"},
                "output 2 \"v1\" (the spec's \"running_var\") exists only in training mode"},
           Case{0, {"y"}, ""},
       }) {
    TestModel opset15;
    opset15.proto().mutable_opset_import(0)->set_version(15);
    opset15.Input("x", {1, 3, 8, 8}).ShapelessOutput("z");
    opset15.Weight("s", {3}).Weight("b", {3}).Weight("mu", {3}).Weight("var", {3});
    AddIntAttribute(
        opset15.Node("BatchNormalization", {"x", "s", "b", "mu", "var"}, c.outputs, "bn"),
        "training_mode", c.training_mode);
    opset15.Node("Relu", {"y"}, {"z"}, "relu");
    const std::string name =
        absl::StrCat("training_mode=", c.training_mode, ", ", c.outputs.size(), " outputs");
    if (c.refusal.empty()) {
      ORDO_EXPECT_OK(ImportOnnx(opset15.Bytes()).status()) << name;
    } else {
      EXPECT_THAT(ImportOnnx(opset15.Bytes()), refused(c.refusal)) << name;
    }
  }
}

}  // namespace
}  // namespace ordo
