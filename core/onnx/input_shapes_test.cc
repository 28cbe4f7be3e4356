#include "core/onnx/input_shapes.h"

#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "core/onnx/onnx_import.h"
#include "core/onnx/prepare_model.h"
#include "core/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"

namespace ordo {
namespace {

using ::ordo::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::EndsWith;
using ::testing::HasSubstr;

constexpr auto kInvalid = absl::StatusCode::kInvalidArgument;

// A dim in AddInput: a value, or a symbol when negative ("" = no dim_param).
struct Dim {
  int64_t value = 0;
  std::string symbol;
  Dim(int64_t v) : value(v) {}  // NOLINT: dims read like {1, "batch", 224}
  Dim(const char* s) : value(-1), symbol(s) {}  // NOLINT
};

onnx::ValueInfoProto& AddValue(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& list,
                               const std::string& name, const std::vector<Dim>& dims) {
  onnx::ValueInfoProto& info = *list.Add();
  info.set_name(name);
  auto* tensor = info.mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  auto* shape = tensor->mutable_shape();
  for (const Dim& d : dims) {
    if (d.value >= 0) {
      shape->add_dim()->set_dim_value(d.value);
    } else {
      shape->add_dim()->set_dim_param(d.symbol);
    }
  }
  return info;
}

onnx::NodeProto& AddNode(onnx::GraphProto& graph, const std::string& op,
                         const std::vector<std::string>& inputs,
                         const std::vector<std::string>& outputs) {
  onnx::NodeProto& node = *graph.add_node();
  node.set_op_type(op);
  node.set_name(outputs[0]);
  for (const std::string& i : inputs) node.add_input(i);
  for (const std::string& o : outputs) node.add_output(o);
  return node;
}

// x [batch, 3, 8, 8] -> Relu -> flatten as PyTorch exports it (Shape ->
// Gather(0) -> Unsqueeze -> Concat with [-1] -> Reshape) -> y [batch, 192].
onnx::ModelProto DynamicBatchModel() {
  onnx::ModelProto model;
  model.set_ir_version(7);
  model.add_opset_import()->set_version(13);
  onnx::GraphProto& g = *model.mutable_graph();
  g.set_name("dynamic");
  AddValue(*g.mutable_input(), "x", {"batch", 3, 8, 8});
  AddValue(*g.mutable_output(), "y", {"batch", 192});
  auto ints = [&](const std::string& name, const std::vector<int64_t>& values,
                  bool scalar = false) {
    onnx::TensorProto& t = *g.add_initializer();
    t.set_name(name);
    t.set_data_type(onnx::TensorProto::INT64);
    if (!scalar) t.add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t.add_int64_data(v);
  };
  ints("zero", {0}, /*scalar=*/true);
  ints("axes0", {0});
  ints("minus_one", {-1});
  AddNode(g, "Relu", {"x"}, {"r"});
  AddNode(g, "Shape", {"r"}, {"s"});
  AddNode(g, "Gather", {"s", "zero"}, {"n"});
  AddNode(g, "Unsqueeze", {"n", "axes0"}, {"n1"});
  AddNode(g, "Concat", {"n1", "minus_one"}, {"target"}).add_attribute()->CopyFrom([] {
    onnx::AttributeProto a;
    a.set_name("axis");
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(0);
    return a;
  }());
  AddNode(g, "Reshape", {"r", "target"}, {"y"});
  return model;
}

std::vector<int64_t> InputDims(const onnx::GraphProto& graph, int index) {
  std::vector<int64_t> dims;
  for (const auto& d : graph.input(index).type().tensor_type().shape().dim()) {
    dims.push_back(d.has_dim_value() ? d.dim_value() : -1);
  }
  return dims;
}

TEST(InputShapesTest, BatchSetsTheSymbolicLeadingDim) {
  onnx::ModelProto model = DynamicBatchModel();
  ORDO_ASSERT_OK(ApplyInputShapes({.batch = 4}, *model.mutable_graph()));
  EXPECT_THAT(InputDims(model.graph(), 0), ElementsAre(4, 3, 8, 8));
}

// Sequence-first exports (PyTorch's default LSTM/GRU layout) name the batch
// at dim 1; --batch sets it there, not the sequence length at dim 0.
TEST(InputShapesTest, BatchSetsTheDimNamedBatchWhereverItIs) {
  onnx::ModelProto model = DynamicBatchModel();
  AddValue(*model.mutable_graph()->mutable_input(), "frames", {20, "batch_size", 16});
  AddValue(*model.mutable_graph()->mutable_input(), "state", {1, "Batch", 32});
  ORDO_ASSERT_OK(ApplyInputShapes({.batch = 2}, *model.mutable_graph()));
  EXPECT_THAT(InputDims(model.graph(), 0), ElementsAre(2, 3, 8, 8));
  EXPECT_THAT(InputDims(model.graph(), 1), ElementsAre(20, 2, 16));
  EXPECT_THAT(InputDims(model.graph(), 2), ElementsAre(1, 2, 32));
}

// Two dims that both say "batch" name no one axis: dim 0 stays the rule.
TEST(InputShapesTest, BatchFallsBackToDimZeroWhenTwoDimsSayBatch) {
  onnx::ModelProto model = DynamicBatchModel();
  AddValue(*model.mutable_graph()->mutable_input(), "pairs", {"batch_a", "batch_b", 4});
  ORDO_ASSERT_OK(ApplyInputShapes({.batch = 3}, *model.mutable_graph()));
  EXPECT_THAT(InputDims(model.graph(), 1), ElementsAre(3, -1, 4));
}

// Transformer-style inputs share a named dim; one --dim-param sets it in
// all of them (onnxruntime's make_dynamic_shape_fixed --dim_param).
onnx::ModelProto TwoInputsSharingSequence() {
  onnx::ModelProto model = DynamicBatchModel();
  AddValue(*model.mutable_graph()->mutable_input(), "ids", {"batch", "sequence"});
  AddValue(*model.mutable_graph()->mutable_input(), "mask", {"batch", "sequence"});
  AddNode(*model.mutable_graph(), "Add", {"ids", "mask"}, {"sum"});
  return model;
}

TEST(InputShapesTest, DimParamSetsTheNamedDimInEveryInput) {
  onnx::ModelProto model = TwoInputsSharingSequence();
  ORDO_ASSERT_OK(
      ApplyInputShapes({.batch = 1, .dim_params = {{"sequence", 128}}}, *model.mutable_graph()));
  EXPECT_THAT(InputDims(model.graph(), 0), ElementsAre(1, 3, 8, 8));
  EXPECT_THAT(InputDims(model.graph(), 1), ElementsAre(1, 128));
  EXPECT_THAT(InputDims(model.graph(), 2), ElementsAre(1, 128));
  ORDO_EXPECT_OK(ImportOnnx(model.SerializeAsString()));
}

// Named "batch" too: set by name, so --batch finds nothing left to set.
TEST(InputShapesTest, DimParamCanSetTheBatchByItsName) {
  onnx::ModelProto model = TwoInputsSharingSequence();
  ORDO_ASSERT_OK(
      ApplyInputShapes({.dim_params = {{"batch", 2}, {"sequence", 16}}}, *model.mutable_graph()));
  EXPECT_THAT(InputDims(model.graph(), 0), ElementsAre(2, 3, 8, 8));
  EXPECT_THAT(InputDims(model.graph(), 2), ElementsAre(2, 16));
}

// onnxruntime's optimizer writes contrib ops (com.microsoft FusedMatMul)
// whose outputs are declared with the input's dim names; the flags set a
// name everywhere (make_dim_param_fixed), so the declaration sizes the op.
TEST(InputShapesTest, NamedDimsAreSetInDeclarationsToo) {
  for (const bool by_batch : {true, false}) {
    onnx::ModelProto model;
    model.set_ir_version(7);
    model.add_opset_import()->set_version(13);
    model.add_opset_import()->set_domain("com.microsoft");
    model.mutable_opset_import(1)->set_version(1);
    onnx::GraphProto& g = *model.mutable_graph();
    g.set_name("contrib");
    AddValue(*g.mutable_input(), "a", {"batch", 8, "sequence"});
    AddValue(*g.mutable_input(), "b", {"batch", "sequence", 16});
    AddNode(g, "FusedMatMul", {"a", "b"}, {"t"}).set_domain("com.microsoft");
    AddValue(*g.mutable_value_info(), "t", {"batch", 8, 16});
    AddNode(g, "Relu", {"t"}, {"y"});
    AddValue(*g.mutable_output(), "y", {"batch", 8, 16});
    const InputShapes shapes = by_batch
                                   ? InputShapes{.batch = 2, .dim_params = {{"sequence", 4}}}
                                   : InputShapes{.dim_params = {{"batch", 2}, {"sequence", 4}}};
    ORDO_ASSERT_OK(ApplyInputShapes(shapes, g));
    ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(model.SerializeAsString()));
    EXPECT_EQ(graph.tensor(*graph.FindTensor("t")).bytes, 2 * 8 * 16 * 4);
    EXPECT_EQ(graph.tensor(*graph.FindTensor("y")).bytes, 2 * 8 * 16 * 4);
  }
}

TEST(InputShapesTest, DimParamMustNameASymbolicDimAndBePositive) {
  onnx::ModelProto model = TwoInputsSharingSequence();
  EXPECT_THAT(ApplyInputShapes({.dim_params = {{"seq_len", 128}}}, *model.mutable_graph()),
              StatusIs(kInvalid, HasSubstr("--dim-param seq_len=128: no graph input has a "
                                           "symbolic dim named \"seq_len\"; the named ones are "
                                           "\"batch\", \"sequence\"")));
  EXPECT_THAT(ApplyInputShapes({.dim_params = {{"sequence", 0}}}, *model.mutable_graph()),
              StatusIs(kInvalid, HasSubstr("--dim-param sequence=0: must be positive")));
  onnx::ModelProto fixed = DynamicBatchModel();
  ORDO_ASSERT_OK(ApplyInputShapes({.batch = 1}, *fixed.mutable_graph()));
  EXPECT_THAT(ApplyInputShapes({.dim_params = {{"batch", 1}}}, *fixed.mutable_graph()),
              StatusIs(kInvalid, HasSubstr("the model's inputs have no named symbolic dims")));
}

TEST(InputShapesTest, InputShapeMustAgreeWithDimParam) {
  onnx::ModelProto model = TwoInputsSharingSequence();
  EXPECT_THAT(ApplyInputShapes({.shapes = {{"ids", {1, 64}}}, .dim_params = {{"sequence", 128}}},
                               *model.mutable_graph()),
              StatusIs(kInvalid, HasSubstr("--input-shape ids=1x64: dim 1 (\"sequence\") of "
                                           "graph input \"ids\" is 128 by --dim-param "
                                           "sequence=128, not 64")));
  onnx::ModelProto agreeing = TwoInputsSharingSequence();
  ORDO_ASSERT_OK(ApplyInputShapes(
      {.shapes = {{"ids", {2, 128}}}, .batch = 2, .dim_params = {{"sequence", 128}}},
      *agreeing.mutable_graph()));
  EXPECT_THAT(InputDims(agreeing.graph(), 1), ElementsAre(2, 128));
  EXPECT_THAT(InputDims(agreeing.graph(), 2), ElementsAre(2, 128));
}

TEST(InputShapesTest, ADimNamedInSeveralInputsGetsTheDimParamHint) {
  EXPECT_THAT(ImportOnnx(TwoInputsSharingSequence().SerializeAsString()),
              StatusIs(kInvalid, HasSubstr("x=1x3x8x8 --input-shape ids=1x<sequence> --input-shape "
                                           "mask=1x<sequence> with each <...> replaced by the "
                                           "size to compile for; or, by dim name, --batch 1 "
                                           "--dim-param sequence=<sequence> (API")));
}

TEST(InputShapesTest, InputShapeSetsSymbolicDimsAndRepeatsStaticOnes) {
  onnx::ModelProto model = DynamicBatchModel();
  ORDO_ASSERT_OK(ApplyInputShapes({.shapes = {{"x", {2, 3, 8, 8}}}}, *model.mutable_graph()));
  EXPECT_THAT(InputDims(model.graph(), 0), ElementsAre(2, 3, 8, 8));
}

// --batch sets the inputs --input-shape does not give; where the shape
// gives an input's batch dim another value, the two disagree, as a
// --dim-param would (a probe: --batch 2 beside a shape of batch 4 for the
// only input was ignored without a word).
TEST(InputShapesTest, InputShapeAndBatchMustAgree) {
  onnx::ModelProto model = DynamicBatchModel();
  EXPECT_THAT(
      ApplyInputShapes({.shapes = {{"x", {2, 3, 8, 8}}}, .batch = 5}, *model.mutable_graph()),
      StatusIs(absl::StatusCode::kInvalidArgument,
               HasSubstr("--batch 5 and --input-shape x=2x3x8x8 disagree: dim 0 of graph "
                         "input \"x\" is its batch dim, 2 by the shape")));
  ORDO_ASSERT_OK(
      ApplyInputShapes({.shapes = {{"x", {2, 3, 8, 8}}}, .batch = 2}, *model.mutable_graph()));
  EXPECT_THAT(InputDims(model.graph(), 0), ElementsAre(2, 3, 8, 8));
}

TEST(InputShapesTest, ShapesFlowThroughFoldedShapeComputations) {
  ORDO_ASSERT_OK_AND_ASSIGN(
      std::string bytes, PreparedOnnxBytes(DynamicBatchModel().SerializeAsString(), {.batch = 2}));
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(bytes));
  ASSERT_EQ(graph.num_ops(), 2);  // Relu, Reshape; the shape chain is folded
  EXPECT_THAT(graph.tensor(graph.FindTensor("y").value()).dims, ElementsAre(2, 192));
}

// bench/onnx-sweep: a dynamic model that also lists its input as a graph
// output kept the output's symbolic batch, and the first Conv was refused
// for it although --batch had set the input.
TEST(InputShapesTest, AnInputListedAsAnOutputTooTakesTheSetDims) {
  onnx::ModelProto model = DynamicBatchModel();
  AddValue(*model.mutable_graph()->mutable_output(), "x", {"batch", 3, 8, 8});
  ORDO_ASSERT_OK_AND_ASSIGN(std::string bytes,
                            PreparedOnnxBytes(model.SerializeAsString(), {.batch = 2}));
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(bytes));
  EXPECT_THAT(graph.tensor(graph.FindTensor("x").value()).dims, ElementsAre(2, 3, 8, 8));
  EXPECT_THAT(graph.tensor(graph.FindTensor("y").value()).dims, ElementsAre(2, 192));
}

TEST(InputShapesTest, UnknownInputIsNamedWithTheInputsThereAre) {
  onnx::ModelProto model = DynamicBatchModel();
  EXPECT_THAT(ApplyInputShapes({.shapes = {{"image", {1, 3, 8, 8}}}}, *model.mutable_graph()),
              StatusIs(kInvalid, HasSubstr("--input-shape image=1x3x8x8: the model has no "
                                           "graph input \"image\"; its graph inputs are \"x\"")));
}

TEST(InputShapesTest, WeightIsNotAnInput) {
  onnx::ModelProto model = DynamicBatchModel();
  EXPECT_THAT(ApplyInputShapes({.shapes = {{"axes0", {1}}}}, *model.mutable_graph()),
              StatusIs(kInvalid, HasSubstr("\"axes0\" is a weight (initializer), not a graph "
                                           "input")));
}

TEST(InputShapesTest, ContradictingAStaticDimNamesTheDim) {
  onnx::ModelProto model = DynamicBatchModel();
  EXPECT_THAT(ApplyInputShapes({.shapes = {{"x", {1, 4, 8, 8}}}}, *model.mutable_graph()),
              StatusIs(kInvalid, HasSubstr("--input-shape x=1x4x8x8: dim 1 of graph input \"x\" "
                                           "is static 3 in the model, not 4")));
}

TEST(InputShapesTest, WrongRankShowsTheModelsDims) {
  onnx::ModelProto model = DynamicBatchModel();
  EXPECT_THAT(ApplyInputShapes({.shapes = {{"x", {1, 3, 8}}}}, *model.mutable_graph()),
              StatusIs(kInvalid, HasSubstr("graph input \"x\" has rank 4 (<batch>x3x8x8); the "
                                           "override gives 3 dims")));
}

TEST(InputShapesTest, NonPositiveDimsAreRefused) {
  onnx::ModelProto model = DynamicBatchModel();
  EXPECT_THAT(ApplyInputShapes({.shapes = {{"x", {0, 3, 8, 8}}}}, *model.mutable_graph()),
              StatusIs(kInvalid, HasSubstr("dim 0 is 0; dims must be positive")));
  EXPECT_THAT(ApplyInputShapes({.batch = -2}, *model.mutable_graph()),
              StatusIs(kInvalid, HasSubstr("--batch -2: must be positive")));
}

// The messages name the CLI's flags and, for a service client, the fields.
TEST(InputShapesTest, RefusalsNameTheApiFieldsToo) {
  onnx::ModelProto model = DynamicBatchModel();
  EXPECT_THAT(
      ApplyInputShapes({.batch = -2}, *model.mutable_graph()),
      StatusIs(kInvalid, EndsWith("(API and Python client: input_shapes / dim_params / batch)")));
  EXPECT_THAT(
      ApplyInputShapes({.shapes = {{"y", {1, 3, 8, 8}}}}, *model.mutable_graph()),
      StatusIs(kInvalid, EndsWith("(API and Python client: input_shapes / dim_params / batch)")));
}

TEST(InputShapesTest, BatchOnAStaticModelMustAgreeWithIt) {
  onnx::ModelProto model = DynamicBatchModel();
  ORDO_ASSERT_OK(ApplyInputShapes({.batch = 1}, *model.mutable_graph()));
  ORDO_EXPECT_OK(ApplyInputShapes({.batch = 1}, *model.mutable_graph()));  // idempotent
  EXPECT_THAT(ApplyInputShapes({.batch = 8}, *model.mutable_graph()),
              StatusIs(kInvalid, HasSubstr("--batch 8: no graph input has a symbolic batch dim "
                                           "(dim 0, or a dim named like \"batch\"), and "
                                           "dim 0 of graph input \"x\" is static 1")));
}

TEST(InputShapesTest, NoOverrideListsEverySymbolicDimAndTheBatchFix) {
  onnx::ModelProto model = DynamicBatchModel();
  AddValue(*model.mutable_graph()->mutable_input(), "mask", {"batch", 8});
  AddNode(*model.mutable_graph(), "Relu", {"mask"}, {"m"});
  EXPECT_THAT(ImportOnnx(model.SerializeAsString()),
              StatusIs(kInvalid,
                       HasSubstr("graph input \"x\": dim 0 is \"batch\" (symbolic); dims must be "
                                 "static and positive. Symbolic input dims: \"x\" dim 0 "
                                 "(\"batch\"), \"mask\" dim 0 (\"batch\"). To compile one shape, "
                                 "add --batch 1 (or --input-shape x=1x3x8x8 --input-shape "
                                 "mask=1x8)")));
}

TEST(InputShapesTest, TheSuggestedFixPutsOneAtTheBatchAxis) {
  onnx::ModelProto model = DynamicBatchModel();
  AddValue(*model.mutable_graph()->mutable_input(), "frames", {"seq", "batch", 8});
  AddNode(*model.mutable_graph(), "Relu", {"frames"}, {"f"});
  EXPECT_THAT(ImportOnnx(model.SerializeAsString()),
              StatusIs(kInvalid, HasSubstr("add --input-shape x=1x3x8x8 --input-shape "
                                           "frames=<seq>x1x8 with each <...> replaced")));
  model.mutable_graph()
      ->mutable_input(1)
      ->mutable_type()
      ->mutable_tensor_type()
      ->mutable_shape()
      ->mutable_dim(0)
      ->set_dim_value(5);
  EXPECT_THAT(ImportOnnx(model.SerializeAsString()),
              StatusIs(kInvalid, HasSubstr("add --batch 1 (or --input-shape x=1x3x8x8 "
                                           "--input-shape frames=5x1x8)")));
}

// Once --batch has set dim 1, the import could take the symbolic dim 0 for
// the batch and ask for --batch again; the override says what is left.
TEST(InputShapesTest, BatchAtDimOneRefusesASymbolicSequenceLeftBehind) {
  onnx::ModelProto model = DynamicBatchModel();
  AddValue(*model.mutable_graph()->mutable_input(), "frames", {"seq", "batch", 8});
  EXPECT_THAT(
      ApplyInputShapes({.batch = 1}, *model.mutable_graph()),
      StatusIs(kInvalid, HasSubstr("--batch 1 set dim 1 (\"batch\") of graph input \"frames\", its "
                                   "batch dim; dim 0 (\"seq\") is still symbolic. To compile one "
                                   "shape, add --dim-param seq=<seq> (every input's dim of that "
                                   "name) with each <...>")));
  // A name used twice in the input is one flag.
  onnx::ModelProto twice = DynamicBatchModel();
  AddValue(*twice.mutable_graph()->mutable_input(), "pairs", {"seq", "batch", "seq"});
  const absl::Status repeated = ApplyInputShapes({.batch = 1}, *twice.mutable_graph());
  EXPECT_THAT(repeated, StatusIs(kInvalid, HasSubstr("add --dim-param seq=<seq> (every input's")));
  EXPECT_EQ(absl::StrContains(repeated.message(), "seq=<seq> --dim-param"), false);
  onnx::ModelProto given = DynamicBatchModel();
  AddValue(*given.mutable_graph()->mutable_input(), "frames", {"seq", "batch", 8});
  ORDO_ASSERT_OK(
      ApplyInputShapes({.shapes = {{"frames", {20, 1, 8}}}, .batch = 1}, *given.mutable_graph()));
  EXPECT_THAT(InputDims(given.graph(), 1), ElementsAre(20, 1, 8));
}

TEST(InputShapesTest, NonLeadingSymbolicDimsGetPlaceholders) {
  onnx::ModelProto model = DynamicBatchModel();
  model.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()
      ->mutable_shape()->mutable_dim(2)->set_dim_param("height");
  EXPECT_THAT(ImportOnnx(model.SerializeAsString()),
              StatusIs(kInvalid, HasSubstr("add --input-shape x=1x3x<height>x8 with each <...> "
                                           "replaced by the size to compile for")));
  // --batch alone leaves "height": the same message, about dim 2.
  ORDO_ASSERT_OK_AND_ASSIGN(std::string bytes,
                            PreparedOnnxBytes(model.SerializeAsString(), {.batch = 1}));
  EXPECT_THAT(ImportOnnx(bytes),
              StatusIs(kInvalid, HasSubstr("graph input \"x\": dim 2 is \"height\" (symbolic)")));
}

TEST(InputShapesTest, ParseDims) {
  ORDO_ASSERT_OK_AND_ASSIGN(std::vector<int64_t> dims, ParseDims("1x3x224x224", "x"));
  EXPECT_THAT(dims, ElementsAre(1, 3, 224, 224));
  ORDO_ASSERT_OK_AND_ASSIGN(dims, ParseDims("2,5", "w"));
  EXPECT_THAT(dims, ElementsAre(2, 5));
  EXPECT_THAT(ParseDims("1x-3", "--input-shape x"),
              StatusIs(kInvalid, HasSubstr("--input-shape x: dim 1 is \"-3\"; dims must be "
                                           "positive integers")));
  EXPECT_THAT(ParseDims("", "w"), StatusIs(kInvalid, HasSubstr("w: no dims")));
  EXPECT_EQ(FormatDims({1, 3, 224}), "1x3x224");
}

}  // namespace
}  // namespace ordo
