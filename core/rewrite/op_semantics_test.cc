#include "core/rewrite/op_semantics.h"

#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "core/onnx/onnx_import.h"
#include "core/rewrite/onnx_test_model.h"
#include "core/testing/status_matchers.h"
#include "core/testing/test_paths.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

Op MakeOp(std::string type, std::vector<Attribute> attributes, int outputs = 1) {
  Op op;
  op.name = "op";
  op.type = std::move(type);
  op.attributes = std::move(attributes);
  op.outputs.assign(outputs, 0);
  return op;
}

using Dims = std::vector<int64_t>;

// Attributes of opsets before 7-9 change what an op computes: such ops are
// not understood, so no rewrite tiles or splits them.
TEST(OpSemanticsTest, LegacyAttributesMakeAnOpUnknown) {
  EXPECT_EQ(ClassifyOp(MakeOp("Add", {{"broadcast", int64_t{1}}, {"axis", int64_t{1}}})),
            OpKind::kUnknown);
  EXPECT_EQ(ClassifyOp(MakeOp("Add", {})), OpKind::kBinaryElementwise);
  EXPECT_EQ(ClassifyOp(MakeOp("BatchNormalization", {{"spatial", int64_t{0}}})), OpKind::kUnknown);
  EXPECT_EQ(ClassifyOp(MakeOp("BatchNormalization", {{"spatial", int64_t{1}}})),
            OpKind::kBatchNormalization);
  EXPECT_TRUE(HasLegacySemantics(MakeOp("Pad", {{"paddings", Dims{0, 0, 1, 1}}})));
  EXPECT_FALSE(HasLegacySemantics(MakeOp("Pad", {{"pads", Dims{0, 0, 1, 1}}})));
}

TEST(OpSemanticsTest, ConvWithGroupStridePadDilation) {
  const Op conv = MakeOp("Conv", {{"group", int64_t{2}},
                                  {"strides", Dims{2, 1}},
                                  {"pads", Dims{1, 0, 1, 0}},
                                  {"dilations", Dims{1, 2}}});
  ORDO_ASSERT_OK_AND_ASSIGN(auto out, InferOutputDims(conv, {{1, 4, 9, 10}, {6, 2, 3, 3}, {6}}));
  // H: (9 + 2 - 3) / 2 + 1 = 5; W: (10 - 5) / 1 + 1 = 6.
  EXPECT_THAT(out, ElementsAre(Dims{1, 6, 5, 6}));
  ORDO_ASSERT_OK_AND_ASSIGN(ConvInfo info, AnalyzeConv(conv, {{1, 4, 9, 10}, {6, 2, 3, 3}, {6}}));
  EXPECT_EQ(info.group, 2);
  EXPECT_TRUE(info.has_bias);
  EXPECT_FALSE(info.depthwise());
}

TEST(OpSemanticsTest, DepthwiseConvWithMultiplier) {
  const Op conv = MakeOp("Conv", {{"group", int64_t{4}}, {"pads", Dims{1, 1, 1, 1}}});
  ORDO_ASSERT_OK_AND_ASSIGN(ConvInfo info, AnalyzeConv(conv, {{1, 4, 8, 8}, {8, 1, 3, 3}}));
  EXPECT_TRUE(info.depthwise());
  EXPECT_EQ(info.out_channels, 8);
  EXPECT_EQ(ChannelDependenceOf(conv), ChannelDependence::kGrouped);
}

TEST(OpSemanticsTest, ConvRejectsChannelsNotDivisibleByGroup) {
  const Op conv = MakeOp("Conv", {{"group", int64_t{3}}});
  EXPECT_THAT(AnalyzeConv(conv, {{1, 4, 8, 8}, {3, 1, 1, 1}}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("group 3")));
}

TEST(OpSemanticsTest, SameUpperPutsTheOddPadAtTheEnd) {
  const Op pool = MakeOp("MaxPool", {{"kernel_shape", Dims{2, 2}},
                                     {"strides", Dims{2, 2}},
                                     {"auto_pad", std::string("SAME_UPPER")}});
  ORDO_ASSERT_OK_AND_ASSIGN(Window window, AnalyzePool(pool, Dims{1, 3, 5, 5}));
  EXPECT_THAT(window.pads_begin, ElementsAre(0, 0));
  EXPECT_THAT(window.pads_end, ElementsAre(1, 1));
  ORDO_ASSERT_OK_AND_ASSIGN(auto out, InferOutputDims(pool, {{1, 3, 5, 5}}));
  EXPECT_THAT(out, ElementsAre(Dims{1, 3, 3, 3}));
}

TEST(OpSemanticsTest, CeilModePool) {
  const Op pool =
      MakeOp("AveragePool",
             {{"kernel_shape", Dims{3, 3}}, {"strides", Dims{2, 2}}, {"ceil_mode", int64_t{1}}});
  ORDO_ASSERT_OK_AND_ASSIGN(auto out, InferOutputDims(pool, {{1, 3, 8, 8}}));
  EXPECT_THAT(out, ElementsAre(Dims{1, 3, 4, 4}));
}

TEST(OpSemanticsTest, InputRangeIsTheReceptiveField) {
  const Op conv = MakeOp("Conv", {{"strides", Dims{2, 2}}, {"pads", Dims{1, 1, 1, 1}}});
  ORDO_ASSERT_OK_AND_ASSIGN(ConvInfo info, AnalyzeConv(conv, {{1, 1, 8, 8}, {1, 1, 3, 3}}));
  // Output rows 1..2 read input rows 1..5; row 0 reads the pad and rows 0..1.
  EXPECT_EQ(info.window.InputRange(0, 1, 3, 8), std::make_pair(int64_t{1}, int64_t{6}));
  EXPECT_EQ(info.window.InputRange(0, 0, 1, 8), std::make_pair(int64_t{0}, int64_t{2}));
}

TEST(OpSemanticsTest, ConcatSplitBroadcast) {
  const Op concat = MakeOp("Concat", {{"axis", int64_t{-3}}});
  ORDO_ASSERT_OK_AND_ASSIGN(auto joined, InferOutputDims(concat, {{1, 2, 4, 4}, {1, 3, 4, 4}}));
  EXPECT_THAT(joined, ElementsAre(Dims{1, 5, 4, 4}));
  EXPECT_THAT(InferOutputDims(concat, {{1, 2, 4, 4}, {1, 3, 4, 5}}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("off axis 1")));

  const Op split = MakeOp("Split", {{"axis", int64_t{1}}, {"split", Dims{1, 3}}}, 2);
  ORDO_ASSERT_OK_AND_ASSIGN(auto parts, InferOutputDims(split, {{1, 4, 2, 2}}));
  EXPECT_THAT(parts, ElementsAre(Dims{1, 1, 2, 2}, Dims{1, 3, 2, 2}));

  const Op add = MakeOp("Add", {});
  ORDO_ASSERT_OK_AND_ASSIGN(auto sum, InferOutputDims(add, {{1, 4, 2, 2}, {4, 1, 1}}));
  EXPECT_THAT(sum, ElementsAre(Dims{1, 4, 2, 2}));
}

// x [1,4,8,8] -> Resize(scales) -> y, as imported (ONNX shape inference
// reads the scales initializer).
Graph ResizeGraph(const std::vector<float>& scales, const std::string& mode = "") {
  OnnxTestModel m;
  m.Input("x", {1, 4, 8, 8});
  m.FloatWeight("scales", scales);
  onnx::NodeProto& resize = m.Node("Resize", {"x", "", "scales"}, {"y"});
  if (!mode.empty()) SetStringAttribute(resize, "coordinate_transformation_mode", mode);
  m.Output("y");
  absl::StatusOr<Graph> graph = ImportOnnx(m.Bytes());
  EXPECT_TRUE(graph.ok()) << graph.status();
  return *std::move(graph);
}

TEST(OpSemanticsTest, ResizeIsPerChannelWhenItKeepsNAndC) {
  const Graph up = ResizeGraph({1, 1, 2, 2});
  const Op& resize = up.op(*up.FindOp("y_op"));
  EXPECT_EQ(ClassifyOp(resize), OpKind::kResize);
  // The op alone does not say which axes its scales touch.
  EXPECT_EQ(ChannelDependenceOf(resize), ChannelDependence::kRearranges);
  EXPECT_EQ(ChannelDependenceOf(up, resize), ChannelDependence::kPerChannel);
  EXPECT_THAT(up.tensor(resize.outputs[0]).dims, ElementsAre(1, 4, 16, 16));
  // The scales are an operand: dims come from the Graph, not from here.
  EXPECT_THAT(InferOutputDims(resize, InputDims(up, resize)),
              StatusIs(absl::StatusCode::kUnimplemented, HasSubstr("scales and sizes")));

  // Resampling C, or cropping with tf_crop_and_resize, is not per channel.
  const Graph channels = ResizeGraph({1, 2, 1, 1});
  EXPECT_EQ(ChannelDependenceOf(channels, channels.op(0)), ChannelDependence::kRearranges);
  const Graph crop = ResizeGraph({1, 1, 2, 2}, "tf_crop_and_resize");
  EXPECT_EQ(ChannelDependenceOf(crop, crop.op(0)), ChannelDependence::kRearranges);
  const Graph half = ResizeGraph({1, 1, 2, 2}, "half_pixel");
  EXPECT_EQ(ChannelDependenceOf(half, half.op(0)), ChannelDependence::kPerChannel);

  // Resize-18 `axes` naming spatial axes only: per channel from the op.
  EXPECT_EQ(ChannelDependenceOf(MakeOp("Resize", {{"axes", Dims{2, 3}}})),
            ChannelDependence::kPerChannel);
  EXPECT_EQ(ChannelDependenceOf(MakeOp("Resize", {{"axes", Dims{1, 2}}})),
            ChannelDependence::kRearranges);
  EXPECT_EQ(ChannelDependenceOf(MakeOp("Resize", {{"axes", Dims{-2, -1}}})),
            ChannelDependence::kRearranges);  // rank unknown: conservative
  // Indices-like extra outputs do not exist, but two outputs are not Resize.
  EXPECT_EQ(ClassifyOp(MakeOp("Resize", {}, 2)), OpKind::kUnknown);
}

TEST(OpSemanticsTest, UpsampleSevenScalesAttributeGivesDims) {
  const Op up = MakeOp("Upsample", {{"scales", std::vector<double>{1, 1, 2, 1.5}}});
  EXPECT_EQ(ClassifyOp(up), OpKind::kResize);
  ORDO_ASSERT_OK_AND_ASSIGN(auto out, InferOutputDims(up, {{1, 3, 5, 5}}));
  EXPECT_THAT(out, ElementsAre(Dims{1, 3, 10, 7}));  // floor(5 x 1.5)
  EXPECT_THAT(InferOutputDims(up, {{1, 3, 5}}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("rank 3")));
  const Op zero = MakeOp("Upsample", {{"scales", std::vector<double>{1, 1, 0, 1}}});
  EXPECT_THAT(InferOutputDims(zero, {{1, 3, 5, 5}}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("axis 2")));
  // Upsample-9: scales as an operand.
  EXPECT_THAT(InferOutputDims(MakeOp("Upsample", {}), {{1, 3, 5, 5}, {4}}),
              StatusIs(absl::StatusCode::kUnimplemented, HasSubstr("Upsample")));
}

TEST(OpSemanticsTest, UnknownOpsAreNeverUnderstood) {
  const Op op = MakeOp("Reshape", {});
  EXPECT_EQ(ClassifyOp(op), OpKind::kUnknown);
  EXPECT_EQ(ChannelDependenceOf(op), ChannelDependence::kUnknown);
  EXPECT_THAT(InferOutputDims(op, {{1}}),
              StatusIs(absl::StatusCode::kUnimplemented, HasSubstr("Reshape")));
  // MaxPool with its Indices output computes something else.
  EXPECT_EQ(ClassifyOp(MakeOp("MaxPool", {}, 2)), OpKind::kUnknown);
  Op custom = MakeOp("Relu", {});
  custom.domain = "com.example";
  EXPECT_EQ(ClassifyOp(custom), OpKind::kUnknown);
}

// Against ONNX's own shape inference: every understood op of every model
// at hand gets the dims the importer recorded.
void ExpectSameDimsAsImporter(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream bytes;
  bytes << file.rdbuf();
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(bytes.str()));
  int understood = 0;
  for (const Op& op : graph.ops()) {
    absl::StatusOr<std::vector<Dims>> out = InferOutputDims(op, InputDims(graph, op));
    if (ClassifyOp(op) == OpKind::kUnknown ||
        out.status().code() == absl::StatusCode::kUnimplemented) {
      continue;
    }
    ASSERT_TRUE(out.ok()) << path << ": " << out.status();
    ASSERT_EQ(out->size(), op.outputs.size()) << op.name;
    for (size_t i = 0; i < op.outputs.size(); ++i) {
      EXPECT_EQ((*out)[i], graph.tensor(op.outputs[i]).dims) << path << " " << op.name;
    }
    ++understood;
  }
  EXPECT_GT(understood, 0) << path;
}

TEST(OpSemanticsTest, AgreesWithOnnxShapeInferenceOnExampleModels) {
  for (const auto& entry : std::filesystem::directory_iterator(ordo::testing::ExampleModelsDir())) {
    if (entry.path().extension() == ".onnx") ExpectSameDimsAsImporter(entry.path().string());
  }
}

TEST(OpSemanticsTest, AgreesWithOnnxShapeInferenceOnSharedModels) {
  if (!std::filesystem::exists(ordo::testing::SharedModelsDir())) {
    GTEST_SKIP() << "../shared/models not found; skipping (" << ordo::testing::SharedModelsDir()
                 << ")";
  }
  for (const auto& entry : std::filesystem::directory_iterator(ordo::testing::SharedModelsDir())) {
    if (entry.path().extension() == ".onnx") ExpectSameDimsAsImporter(entry.path().string());
  }
}

}  // namespace
}  // namespace ordo
