#include "core/tflite/tflite_import.h"

#include <string>

#include "absl/strings/str_cat.h"
#include "core/memory/memory_model.h"
#include "core/testing/status_matchers.h"
#include "core/tflite/tflite_model.h"
#include "core/tflite/tflite_test_model.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::StatusIs;
using ::ordo::testing::TfliteTestModel;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::StartsWith;
using namespace ::ordo::testing;  // NOLINT: the kTflite* codes

// input -> CONV_2D(w) -> RELU -> RESHAPE -> output, int8.
TfliteTestModel Chain() {
  TfliteTestModel m;
  const int32_t x = m.Tensor({"x", {1, 8, 8, 4}});
  const int32_t w = m.Tensor({"w", {8, 3, 3, 4}, kTfliteInt8, /*weight=*/true});
  const int32_t c = m.Tensor({"conv", {1, 8, 8, 8}});
  const int32_t r = m.Tensor({"relu", {1, 8, 8, 8}});
  const int32_t y = m.Tensor({"y", {1, 512}});
  m.Operator({kTfliteConv2d, {x, w, -1}, {c}});
  m.Operator({kTfliteRelu, {c}, {r}});
  m.Operator({kTfliteReshape, {r}, {y}});
  m.Inputs({x});
  m.Outputs({y});
  return m;
}

TEST(TfliteImportTest, MapsTensorsAndOperatorsLikeOnnx) {
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportTflite(Chain().Build()));
  ASSERT_EQ(graph.num_ops(), 3);
  EXPECT_EQ(graph.op(0).type, "CONV_2D");
  EXPECT_EQ(graph.op(0).name, "op0_CONV_2D");
  EXPECT_EQ(graph.op(2).source_index, 2);
  EXPECT_EQ(graph.op(0).inputs.size(), 2u);  // the omitted bias is dropped
  const Tensor& x = graph.tensor(*graph.FindTensor("x"));
  EXPECT_EQ(x.kind, TensorKind::kInput);
  EXPECT_EQ(x.bytes, 256);
  EXPECT_EQ(graph.tensor(*graph.FindTensor("w")).kind, TensorKind::kWeight);
  EXPECT_EQ(graph.tensor(*graph.FindTensor("y")).kind, TensorKind::kOutput);
  EXPECT_EQ(graph.tensor(*graph.FindTensor("conv")).dtype, DataType::kInt8);
}

TEST(TfliteImportTest, ElementwiseAndReshapeRunInPlace) {
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportTflite(Chain().Build()));
  ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel model, BuildMemoryModel(graph, MemoryOptions{}));
  EXPECT_EQ(model.ops[0].inplace_input, kNoId);
  EXPECT_EQ(model.ops[1].inplace_input, *graph.FindTensor("conv"));
  EXPECT_EQ(model.ops[2].inplace_input, *graph.FindTensor("relu"));
}

// TFLM allocates an INT4 activation a byte per element (TfLiteTypeSizeOf),
// so a plan at the packed size would let its neighbours overlap it; a
// weight is stored packed in the file, and counts so under count_weights.
TEST(TfliteImportTest, SubByteActivationsTakeAByteAWeightCountsBits) {
  TfliteTestModel m;
  const int32_t x = m.Tensor({"x", {3, 3}, kTfliteInt4});
  const int32_t w = m.Tensor({"w", {3, 3}, kTfliteInt4, /*weight=*/true});
  const int32_t y = m.Tensor({"y", {3, 3}, kTfliteInt4});
  m.Operator({kTfliteAdd, {x, w}, {y}});
  m.Inputs({x});
  m.Outputs({y});
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportTflite(m.Build()));
  EXPECT_EQ(graph.tensor(*graph.FindTensor("x")).bytes, 9);
  EXPECT_EQ(graph.tensor(*graph.FindTensor("y")).bytes, 9);
  EXPECT_EQ(graph.tensor(*graph.FindTensor("w")).bytes, 5);  // 36 bits
}

TEST(TfliteImportTest, VariableTensorsLiveTheWholeRun) {
  TfliteTestModel m;
  const int32_t x = m.Tensor({"x", {4}});
  const int32_t state = m.Tensor({"state", {16}, kTfliteInt8, false, /*is_variable=*/true});
  const int32_t y = m.Tensor({"y", {4}});
  m.Operator({kTfliteAdd, {x, state}, {y}});
  m.Inputs({x});
  m.Outputs({y});
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportTflite(m.Build()));
  const Tensor& s = graph.tensor(*graph.FindTensor("state"));
  EXPECT_EQ(s.kind, TensorKind::kInput);
  EXPECT_TRUE(s.is_graph_output);
  EXPECT_TRUE(s.is_runtime_buffer);
  EXPECT_FALSE(graph.tensor(*graph.FindTensor("x")).is_runtime_buffer);
  // State is no model input or output: outside-the-arena I/O keeps it in.
  MemoryOptions outside;
  outside.io_outside_arena = true;
  ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel model, BuildMemoryModel(graph, outside));
  EXPECT_EQ(model.tensors[*graph.FindTensor("state")].bytes, 16);
  EXPECT_EQ(model.tensors[*graph.FindTensor("x")].bytes, 0);
}

// Vela's scratch for the Ethos-U operator: read, written by no operator.
TEST(TfliteImportTest, TensorsNoOperatorWritesAreRuntimeBuffersFromTheStart) {
  TfliteTestModel m;
  const int32_t x = m.Tensor({"x", {4}});
  const int32_t scratch = m.Tensor({"scratch", {64}});
  const int32_t y = m.Tensor({"y", {4}});
  m.Operator({kTfliteCustom, {x, scratch}, {y}, "ethos-u"});
  m.Inputs({x});
  m.Outputs({y});
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportTflite(m.Build()));
  const Tensor& s = graph.tensor(*graph.FindTensor("scratch"));
  EXPECT_EQ(s.kind, TensorKind::kInput);  // live before step 0
  EXPECT_FALSE(s.is_graph_output);        // freed after its last reader
  EXPECT_TRUE(s.is_runtime_buffer);
  EXPECT_EQ(graph.inputs().size(), 2u);
}

// TFLM allocates zero-byte tensors nowhere (the converter's int8 LSTM
// writes its intermediates with shape [0]; a RESHAPE to a scalar reads a
// shape operand of shape [0]).
TEST(TfliteImportTest, TensorsWithoutElementsAreLeftOut) {
  TfliteTestModel m;
  const int32_t x = m.Tensor({"x", {4}});
  const int32_t shape = m.Tensor({"shape", {0}, kTfliteFloat32});
  const int32_t y = m.Tensor({"y", {4}});
  const int32_t gate = m.Tensor({"gate_intermediate", {0}});
  const int32_t z = m.Tensor({"z", {4}});
  m.Operator({kTfliteReshape, {x, shape}, {y}});
  m.Operator({kTfliteCustom, {y}, {z}, "UnidirectionalLstmLike", {gate}});
  m.Inputs({x});
  m.Outputs({z});
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportTflite(m.Build()));
  EXPECT_FALSE(graph.FindTensor("shape").has_value());
  EXPECT_FALSE(graph.FindTensor("gate_intermediate").has_value());
  EXPECT_EQ(graph.op(0).inputs.size(), 1u);
  EXPECT_EQ(graph.op(1).outputs.size(), 1u);

  TfliteTestModel empty;
  const int32_t a = empty.Tensor({"a", {4}});
  const int32_t b = empty.Tensor({"b", {0, 4}});
  empty.Operator({kTfliteRelu, {a}, {b}});
  empty.Inputs({a});
  EXPECT_THAT(ImportTflite(empty.Build()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("Operator 0 (RELU): every output has zero elements")));
}

TEST(TfliteImportTest, ConstantOutputsAreLeftOutAndUnwrittenOnesLiveThroughout) {
  TfliteTestModel m;
  const int32_t x = m.Tensor({"x", {4}});
  const int32_t y = m.Tensor({"y", {4}});
  const int32_t table = m.Tensor({"table", {8}, kTfliteInt8, /*weight=*/true});
  const int32_t unwritten = m.Tensor({"unwritten", {32}});
  m.Operator({kTfliteRelu, {x}, {y}});
  m.Inputs({x});
  m.Outputs({y, table, unwritten});
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportTflite(m.Build()));
  EXPECT_EQ(graph.outputs().size(), 2u);
  const Tensor& u = graph.tensor(*graph.FindTensor("unwritten"));
  EXPECT_EQ(u.kind, TensorKind::kInput);
  EXPECT_TRUE(u.is_graph_output);
  EXPECT_FALSE(u.is_runtime_buffer);  // model output: --io-outside-arena moves it out
}

// Tensor.external_buffer (schema field 10) keeps constant data outside the
// flatbuffer: a weight, not an activation nothing writes.
TEST(TfliteImportTest, ATensorInAnExternalBufferIsAWeight) {
  TfliteTestModel m;
  const int32_t x = m.Tensor({"x", {1, 16}});
  const int32_t w = m.Tensor({.name = "w", .shape = {8, 16}, .external_buffer = 1});
  const int32_t y = m.Tensor({"y", {1, 8}});
  m.Operator({kTfliteAdd, {x, w}, {y}});
  m.Inputs({x});
  m.Outputs({y});
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportTflite(m.Build()));
  EXPECT_EQ(graph.tensor(*graph.FindTensor("w")).kind, TensorKind::kWeight);
}

// Buffer 0 is the schema's empty sentinel; TFLM would read tensors that
// point at it as constants if it held data.
TEST(TfliteImportTest, RefusesDataInBufferZero) {
  TfliteTestModel m = Chain();
  m.DataInBufferZero();
  EXPECT_THAT(ImportTflite(m.Build()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("Buffer 0: holds data, but the schema reserves it")));
}

TEST(TfliteImportTest, UnnamedAndDuplicateTensorNamesGetIndexNames) {
  TfliteTestModel m;
  const int32_t x = m.Tensor({"", {4}});
  const int32_t y = m.Tensor({"a", {4}});
  const int32_t z = m.Tensor({"a", {4}});
  m.Operator({kTfliteRelu, {x}, {y}});
  m.Operator({kTfliteRelu, {y}, {z}});
  m.Inputs({x});
  m.Outputs({z});
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportTflite(m.Build()));
  EXPECT_TRUE(graph.FindTensor("t0").has_value());
  EXPECT_TRUE(graph.FindTensor("t2").has_value());
}

TEST(TfliteImportTest, CustomOperatorsAreNamedByTheirCode) {
  TfliteTestModel m;
  const int32_t x = m.Tensor({"x", {4}});
  const int32_t y = m.Tensor({"y", {4}});
  m.Operator({kTfliteCustom, {x}, {y}, "MyOp"});
  m.Inputs({x});
  m.Outputs({y});
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportTflite(m.Build()));
  EXPECT_EQ(graph.op(0).type, "MyOp");
  EXPECT_EQ(graph.op(0).domain, kTfliteCustomDomain);
}

// A custom code may read like an in-place op ("Sin" is TF's own custom-op
// example; TF's Mean is a reduction), but what the kernel does is unknown.
TEST(TfliteImportTest, CustomOperatorsNeverWriteOverTheirInput) {
  for (const char* code : {"Sin", "Mean", "Identity", "RELU"}) {
    TfliteTestModel m;
    const int32_t x = m.Tensor({"x", {4}});
    const int32_t y = m.Tensor({"y", {4}});
    m.Operator({kTfliteCustom, {x}, {y}, code});
    m.Inputs({x});
    m.Outputs({y});
    ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportTflite(m.Build()));
    ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel model, BuildMemoryModel(graph, MemoryOptions{}));
    EXPECT_EQ(model.ops[0].inplace_input, kNoId) << code;
  }
}

TEST(TfliteImportTest, RefusesControlFlowNamingTheOperator) {
  TfliteTestModel m;
  const int32_t x = m.Tensor({"x", {4}});
  const int32_t y = m.Tensor({"y", {4}});
  m.Operator({kTfliteIf, {x}, {y}});
  m.Inputs({x});
  m.Outputs({y});
  EXPECT_THAT(ImportTflite(m.Build()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("Operator 0 (IF)")));
}

// A converter's stateful model (resource variables) starts with CALL_ONCE;
// the refusal says how to convert it instead.
TEST(TfliteImportTest, CallOnceIsRefusedWithTheStatefulConversionToUse) {
  constexpr int32_t kTfliteCallOnce = 129;
  TfliteTestModel m;
  const int32_t x = m.Tensor({"x", {4}});
  const int32_t y = m.Tensor({"y", {4}});
  m.Operator({kTfliteCallOnce, {}, {}});
  m.Operator({kTfliteRelu, {x}, {y}});
  m.Inputs({x});
  m.Outputs({y});
  EXPECT_THAT(ImportTflite(m.Build()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("Operator 0 (CALL_ONCE)"),
                             HasSubstr("convert without them, with the state as a model input "
                                       "and output"))));
}

// LiteRT runs a composite's decomposition subgraph: its activations count.
TEST(TfliteImportTest, RefusesStablehloOperatorsThatRunASubgraph) {
  TfliteTestModel m;
  const int32_t x = m.Tensor({"x", {4}});
  const int32_t y = m.Tensor({"y", {4}});
  m.Operator({kTfliteStablehloComposite, {x}, {y}});
  m.Inputs({x});
  m.Outputs({y});
  EXPECT_THAT(ImportTflite(m.Build()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("Operator 0 (STABLEHLO_COMPOSITE) runs another subgraph")));
  // A custom operator's code is only a name.
  TfliteTestModel custom;
  const int32_t a = custom.Tensor({"a", {4}});
  const int32_t b = custom.Tensor({"b", {4}});
  custom.Operator({kTfliteCustom, {a}, {b}, "WHILE"});
  custom.Inputs({a});
  custom.Outputs({b});
  ORDO_EXPECT_OK(ImportTflite(custom.Build()).status());
}

TEST(TfliteImportTest, OutOfRangeIndicesNameTableAndIndex) {
  TfliteTestModel m;
  const int32_t x = m.Tensor({"x", {4}});
  const int32_t y = m.Tensor({"y", {4}});
  m.Operator({kTfliteRelu, {x}, {y}});
  m.Operator({kTfliteRelu, {y, 99}, {x}});
  m.Inputs({x});
  m.Outputs({y});
  EXPECT_THAT(ImportTflite(m.Build()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("SubGraph 0 Operator 1 (RELU): input 1 is tensor 99")));
}

TEST(TfliteImportTest, RefusesCyclicWiring) {
  TfliteTestModel m;
  const int32_t x = m.Tensor({"x", {4}});
  const int32_t a = m.Tensor({"a", {4}});
  const int32_t b = m.Tensor({"b", {4}});
  m.Operator({kTfliteAdd, {x, b}, {a}});
  m.Operator({kTfliteRelu, {a}, {b}});
  m.Inputs({x});
  m.Outputs({b});
  EXPECT_THAT(ImportTflite(m.Build()), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("op")));
}

TEST(TfliteImportTest, RefusesActivationsWithoutStaticSize) {
  TfliteTestModel m;
  const int32_t x = m.Tensor({"x", {4}, kTfliteString});
  const int32_t y = m.Tensor({"y", {4}});
  m.Operator({kTfliteRelu, {x}, {y}});
  m.Inputs({x});
  m.Outputs({y});
  EXPECT_THAT(ImportTflite(m.Build()),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("SubGraph 0 Tensor 0 \"x\": type STRING has no static size")));
}

TEST(TfliteImportTest, RefusesDynamicDims) {
  TfliteTestModel m;
  const int32_t x = m.Tensor({"x", {-1, 4}});
  const int32_t y = m.Tensor({"y", {4}});
  m.Operator({kTfliteRelu, {x}, {y}});
  m.Inputs({x});
  m.Outputs({y});
  EXPECT_THAT(ImportTflite(m.Build()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("dim 0 is -1")));
}

// A converter's dynamic batch: shape_signature -1, shape 1. TFLM runs (and
// ordo plans) `shape`; the import says so, naming the tensor.
TEST(TfliteImportTest, ADynamicDimInTheSignatureIsPlannedAtItsShapeAndNoted) {
  TfliteTestModel m;
  const int32_t x = m.Tensor({.name = "serving_default_x:0",
                              .shape = {1, 224, 224, 3},
                              .shape_signature = {-1, 224, 224, 3}});
  const int32_t y = m.Tensor({"y", {1, 224, 224, 3}});
  m.Operator({kTfliteRelu, {x}, {y}});
  m.Inputs({x});
  m.Outputs({y});
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportTflite(m.Build()));
  EXPECT_EQ(graph.tensor(*graph.FindTensor("serving_default_x:0")).bytes, 224 * 224 * 3);
  EXPECT_THAT(graph.notes(),
              ElementsAre("input \"serving_default_x:0\": shape_signature [-1,224,224,3] has "
                          "dynamic dims; planned at shape [1,224,224,3], as TensorFlow Lite "
                          "Micro runs it"));
  // A signature without -1, or none, says nothing.
  EXPECT_THAT(ImportTflite(Chain().Build())->notes(), IsEmpty());
}

// A dynamic batch reaches every activation: one note for all of them, with
// the count and the graph inputs named, not a line per tensor.
TEST(TfliteImportTest, ManyDynamicTensorsGiveOneNoteNamingTheInputs) {
  TfliteTestModel m;
  const int32_t a = m.Tensor({.name = "a", .shape = {1, 4}, .shape_signature = {-1, 4}});
  const int32_t b = m.Tensor({.name = "b", .shape = {2, 4}, .shape_signature = {2, 4}});
  int32_t last = a;
  for (int i = 0; i < 300; ++i) {
    const int32_t next =
        m.Tensor({.name = absl::StrCat("t", i), .shape = {1, 4}, .shape_signature = {-1, 4}});
    m.Operator({kTfliteAdd, {last, b}, {next}});
    last = next;
  }
  m.Inputs({a, b});
  m.Outputs({last});
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportTflite(m.Build()));
  EXPECT_THAT(graph.notes(),
              ElementsAre("301 tensors have dynamic dims in shape_signature; each is planned at "
                          "its shape, as TensorFlow Lite Micro runs it: input \"a\" [-1,4] at "
                          "[1,4] and 300 more"));
}

// Names come from the file: the note stays one printable line.
TEST(TfliteImportTest, ANoteQuotesHostileNamesPrintably) {
  TfliteTestModel m;
  const int32_t c = m.Tensor({"c", {4}});
  const int32_t x = m.Tensor({.name = "x\nforged line", .shape = {4}, .shape_signature = {-1}});
  m.Operator({kTfliteRelu, {c}, {x}});
  m.Inputs({c});
  m.Outputs({x});
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportTflite(m.Build()));
  ASSERT_EQ(graph.notes().size(), 1u);
  EXPECT_THAT(graph.notes()[0], StartsWith("output \"x\\nforged line\": shape_signature [-1]"));
}

TEST(TfliteImportTest, GarbageAndEveryTruncationAreInvalidArgument) {
  EXPECT_THAT(ImportTflite("garbage"), StatusIs(absl::StatusCode::kInvalidArgument,
                                                HasSubstr("\"TFL3\"")));
  const std::string model = Chain().Build();
  for (size_t size = 0; size < model.size(); ++size) {
    absl::StatusOr<Graph> graph = ImportTflite(model.substr(0, size));
    EXPECT_FALSE(graph.ok()) << size;
    if (!graph.ok()) {
      EXPECT_EQ(graph.status().code(), absl::StatusCode::kInvalidArgument) << size;
    }
  }
}

TEST(TfliteImportTest, OperatorLimitIsResourceExhausted) {
  GraphLimits limits;
  limits.max_ops = 2;
  EXPECT_THAT(ImportTflite(Chain().Build(), limits),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("3 operators")));
}

}  // namespace
}  // namespace ordo
