// The reference executor against values worked out by hand from the ONNX
// operator docs: it is the judge of every rewrite, so it is checked first.

#include "tests/rewrite/reference_executor.h"

#include <string>
#include <vector>

#include "core/rewrite/onnx_test_model.h"
#include "core/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::FloatEq;
using ::testing::FloatNear;
using ::testing::HasSubstr;

// 1 2 3 / 4 5 6 / 7 8 9
FloatTensor Nine() { return {{1, 1, 3, 3}, {1, 2, 3, 4, 5, 6, 7, 8, 9}}; }

FloatTensor RunOne(const OnnxTestModel& m, TensorMap feeds, const std::string& output = "y") {
  absl::StatusOr<TensorMap> out = RunReference(m.model(), feeds);
  EXPECT_TRUE(out.ok()) << out.status();
  if (!out.ok()) return {};
  return out->at(output);
}

OnnxTestModel OneNode(const std::string& type, std::vector<std::string> inputs,
                      void (*attrs)(onnx::NodeProto&)) {
  OnnxTestModel m;
  m.Input("x", {1, 1, 3, 3});
  onnx::NodeProto& node = m.Node(type, inputs, {"y"});
  if (attrs != nullptr) attrs(node);
  m.Output("y");
  return m;
}

TEST(ReferenceExecutorTest, ConvPlain) {
  OnnxTestModel m = OneNode("Conv", {"x", "w"}, nullptr);
  FloatTensor w{{1, 1, 2, 2}, {1, 1, 1, 1}};
  FloatTensor y = RunOne(m, {{"x", Nine()}, {"w", w}});
  EXPECT_THAT(y.dims, ElementsAre(1, 1, 2, 2));
  EXPECT_THAT(y.values, ElementsAre(12, 16, 24, 28));
}

TEST(ReferenceExecutorTest, ConvPaddedStridedWithBias) {
  OnnxTestModel m = OneNode("Conv", {"x", "w", "b"}, [](onnx::NodeProto& n) {
    SetIntsAttribute(n, "pads", {1, 1, 1, 1});
    SetIntsAttribute(n, "strides", {2, 2});
  });
  FloatTensor y =
      RunOne(m, {{"x", Nine()}, {"w", {{1, 1, 2, 2}, {1, 1, 1, 1}}}, {"b", {{1}, {0.5f}}}});
  EXPECT_THAT(y.values, ElementsAre(1.5, 5.5, 11.5, 28.5));
}

TEST(ReferenceExecutorTest, ConvDilated) {
  OnnxTestModel m = OneNode("Conv", {"x", "w"}, [](onnx::NodeProto& n) {
    SetIntsAttribute(n, "dilations", {2, 2});
  });
  FloatTensor y = RunOne(m, {{"x", Nine()}, {"w", {{1, 1, 2, 2}, {1, 1, 1, 1}}}});
  EXPECT_THAT(y.values, ElementsAre(1 + 3 + 7 + 9));
}

TEST(ReferenceExecutorTest, ConvGrouped) {
  OnnxTestModel m;
  m.Input("x", {1, 2, 1, 2});
  SetIntAttribute(m.Node("Conv", {"x", "w"}, {"y"}), "group", 2);
  m.Output("y");
  // Two output channels per group: channel o reads input channel o / 2.
  FloatTensor y =
      RunOne(m, {{"x", {{1, 2, 1, 2}, {1, 2, 3, 4}}}, {"w", {{4, 1, 1, 1}, {1, 10, 100, 1000}}}});
  EXPECT_THAT(y.values, ElementsAre(1, 2, 10, 20, 300, 400, 3000, 4000));
}

// Values at x = -1, 0 and 1 from the formulas of the ONNX operator
// documentation, computed independently (Python's math module).
TEST(ReferenceExecutorTest, UnaryActivations) {
  struct Case {
    const char* type;
    void (*attrs)(onnx::NodeProto&);
    float at_minus_one, at_zero, at_one;
  };
  const Case cases[] = {
      {"Gelu", nullptr, -0.15865525F, 0, 0.84134475F},
      {"Gelu", [](onnx::NodeProto& n) { SetStringAttribute(n, "approximate", "tanh"); },
       -0.15880801F, 0, 0.84119199F},
      {"Mish", nullptr, -0.30340146F, 0, 0.86509839F},
      {"Swish", nullptr, -0.26894142F, 0, 0.73105858F},
      {"Tanh", nullptr, -0.76159416F, 0, 0.76159416F},
      {"Elu", nullptr, -0.63212056F, 0, 1},
      {"Selu", nullptr, -1.11133074F, 0, 1.05070102F},
      {"Softplus", nullptr, 0.31326169F, 0.69314718F, 1.31326169F},
      {"Softsign", nullptr, -0.5F, 0, 0.5F},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.type);
    OnnxTestModel m = OneNode(c.type, {"x"}, c.attrs);
    const FloatTensor y = RunOne(m, {{"x", {{1, 1, 3, 3}, {-1, 0, 1, -1, 0, 1, -1, 0, 1}}}});
    ASSERT_EQ(y.values.size(), 9u);
    EXPECT_THAT(y.values[0], FloatNear(c.at_minus_one, 1e-6F));
    EXPECT_THAT(y.values[1], FloatNear(c.at_zero, 1e-6F));
    EXPECT_THAT(y.values[2], FloatNear(c.at_one, 1e-6F));
  }
}

TEST(ReferenceExecutorTest, Pools) {
  OnnxTestModel max = OneNode("MaxPool", {"x"}, [](onnx::NodeProto& n) {
    SetIntsAttribute(n, "kernel_shape", {2, 2});
  });
  EXPECT_THAT(RunOne(max, {{"x", Nine()}}).values, ElementsAre(5, 6, 8, 9));
  OnnxTestModel avg = OneNode("AveragePool", {"x"}, [](onnx::NodeProto& n) {
    SetIntsAttribute(n, "kernel_shape", {2, 2});
    SetIntsAttribute(n, "strides", {2, 2});
    SetIntsAttribute(n, "pads", {1, 1, 1, 1});
  });
  // Pads are not counted by default.
  EXPECT_THAT(RunOne(avg, {{"x", Nine()}}).values, ElementsAre(1, 2.5, 5.5, 7));
  OnnxTestModel avg_pad = OneNode("AveragePool", {"x"}, [](onnx::NodeProto& n) {
    SetIntsAttribute(n, "kernel_shape", {2, 2});
    SetIntsAttribute(n, "strides", {2, 2});
    SetIntsAttribute(n, "pads", {1, 1, 1, 1});
    SetIntAttribute(n, "count_include_pad", 1);
  });
  EXPECT_THAT(RunOne(avg_pad, {{"x", Nine()}}).values, ElementsAre(0.25, 1.25, 2.75, 7));
}

TEST(ReferenceExecutorTest, ReluAddSumIdentityBatchNorm) {
  OnnxTestModel m;
  m.Input("x", {1, 2, 1, 2});
  m.Node("Relu", {"x"}, {"r"});
  m.Node("Add", {"r", "c"}, {"a"});  // c: [2, 1, 1] broadcast per channel
  m.Node("Sum", {"a", "r", "x"}, {"s"});
  m.Node("Identity", {"s"}, {"i"});
  SetIntAttribute(m.Node("Concat", {"i", "x"}, {"cat"}), "axis", 1);
  m.Node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"y"});
  m.Output("cat");
  m.Output("y");
  TensorMap feeds = {{"x", {{1, 2, 1, 2}, {-1, 2, 3, -4}}},
                     {"c", {{2, 1, 1}, {10, 20}}},
                     {"scale", {{2}, {2, 3}}},
                     {"bias", {{2}, {1, 0}}},
                     {"mean", {{2}, {1, 0}}},
                     {"var", {{2}, {4 - 1e-5f, 1 - 1e-5f}}}};
  ORDO_ASSERT_OK_AND_ASSIGN(TensorMap out, RunReference(m.model(), feeds));
  // r = 0 2 3 0; a = 10 12 23 20; s = a + r + x = 9 16 29 16.
  EXPECT_THAT(out["cat"].dims, ElementsAre(1, 4, 1, 2));
  EXPECT_THAT(out["cat"].values, ElementsAre(9, 16, 29, 16, -1, 2, 3, -4));
  // (x - mean) / sqrt(var + eps) * scale + bias.
  EXPECT_THAT(out["y"].values, ElementsAre(FloatNear(-1, 1e-5), FloatNear(2, 1e-5),
                                           FloatNear(9, 1e-5), FloatNear(-12, 1e-5)));
}

TEST(ReferenceExecutorTest, SplitAndSlice) {
  OnnxTestModel m;
  m.Input("x", {1, 3, 1, 2});
  m.IntWeight("sizes", {1, 2});
  SetIntAttribute(m.Node("Split", {"x", "sizes"}, {"p", "q"}), "axis", 1);
  m.IntWeight("starts", {1});
  m.IntWeight("ends", {-1});
  m.IntWeight("axes", {1});
  m.Node("Slice", {"x", "starts", "ends", "axes"}, {"mid"});
  m.Output("p");
  m.Output("q");
  m.Output("mid");
  ORDO_ASSERT_OK_AND_ASSIGN(TensorMap out,
                            RunReference(m.model(), {{"x", {{1, 3, 1, 2}, {1, 2, 3, 4, 5, 6}}}}));
  EXPECT_THAT(out["p"].values, ElementsAre(1, 2));
  EXPECT_THAT(out["q"].values, ElementsAre(3, 4, 5, 6));
  EXPECT_THAT(out["mid"].dims, ElementsAre(1, 1, 1, 2));
  EXPECT_THAT(out["mid"].values, ElementsAre(3, 4));
}

TEST(ReferenceExecutorTest, ReadsInitializerData) {
  std::mt19937 rng(1);
  OnnxTestModel m = OneNode("Conv", {"x", "w"}, nullptr);
  m.Weight("w", {1, 1, 1, 1}, &rng);
  const float w = m.model().graph().initializer(0).float_data(0);
  EXPECT_THAT(RunOne(m, {{"x", Nine()}}).values[8], FloatEq(9 * w));
}

// x = 1 2 / 3 4 resized by `scales` (or `sizes`).
struct ResizeCase {
  std::vector<float> scales;
  std::string mode = "nearest";
  std::string transform = "half_pixel";
  std::string nearest_mode;  // the default when empty
  std::vector<int64_t> sizes;
};

absl::StatusOr<TensorMap> RunResize(const ResizeCase& c) {
  OnnxTestModel m;
  m.Input("x", {1, 1, 2, 2});
  std::vector<std::string> inputs = {"x", ""};
  if (c.sizes.empty()) {
    m.FloatWeight("scales", c.scales);
    inputs.push_back("scales");
  } else {
    m.IntWeight("sizes", c.sizes);
    inputs.push_back("");
    inputs.push_back("sizes");
  }
  onnx::NodeProto& node = m.Node("Resize", inputs, {"y"});
  SetStringAttribute(node, "mode", c.mode);
  SetStringAttribute(node, "coordinate_transformation_mode", c.transform);
  if (!c.nearest_mode.empty()) SetStringAttribute(node, "nearest_mode", c.nearest_mode);
  m.Output("y");
  return RunReference(m.model(), {{"x", {{1, 1, 2, 2}, {1, 2, 3, 4}}}});
}

FloatTensor ResizeOf(const ResizeCase& c) {
  absl::StatusOr<TensorMap> out = RunResize(c);
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? out->at("y") : FloatTensor{};
}

TEST(ReferenceExecutorTest, ResizeNearest) {
  // Asymmetric: x_original = 0, 0.5, 1, 1.5; halves round down by default.
  FloatTensor y = ResizeOf({.scales = {1, 1, 2, 2}, .transform = "asymmetric"});
  EXPECT_THAT(y.dims, ElementsAre(1, 1, 4, 4));
  EXPECT_THAT(y.values, ElementsAre(1, 1, 2, 2, 1, 1, 2, 2, 3, 3, 4, 4, 3, 3, 4, 4));
  // ... and up with round_prefer_ceil (1.5 -> 2, clamped to 1).
  y = ResizeOf(
      {.scales = {1, 1, 2, 2}, .transform = "asymmetric", .nearest_mode = "round_prefer_ceil"});
  EXPECT_THAT(y.values, ElementsAre(1, 2, 2, 2, 3, 4, 4, 4, 3, 4, 4, 4, 3, 4, 4, 4));
  // The operator docs' resize_upsample_scales_nearest: half_pixel, x3 on W
  // (x_original -0.33, 0, 0.33, 0.67, 1, 1.33).
  y = ResizeOf({.scales = {1, 1, 2, 3}});
  EXPECT_THAT(y.dims, ElementsAre(1, 1, 4, 6));
  EXPECT_THAT(y.values,
              ElementsAre(1, 1, 1, 2, 2, 2, 1, 1, 1, 2, 2, 2, 3, 3, 3, 4, 4, 4, 3, 3, 3, 4, 4, 4));
}

TEST(ReferenceExecutorTest, ResizeLinear) {
  // The operator docs' resize_upsample_scales_linear (half_pixel):
  // x_original -0.25 (clamped to 0), 0.25, 0.75, 1.25 (clamped to 1).
  const std::vector<float> half_pixel = {1,   1.25, 1.75, 2,   1.5, 1.75, 2.25, 2.5,
                                         2.5, 2.75, 3.25, 3.5, 3,   3.25, 3.75, 4};
  FloatTensor y = ResizeOf({.scales = {1, 1, 2, 2}, .mode = "linear"});
  EXPECT_THAT(y.dims, ElementsAre(1, 1, 4, 4));
  EXPECT_THAT(y.values, ElementsAreArray(half_pixel));
  // The same through `sizes`.
  y = ResizeOf({.mode = "linear", .sizes = {1, 1, 4, 4}});
  EXPECT_THAT(y.values, ElementsAreArray(half_pixel));
  // Asymmetric: x_original 0, 0.5, 1, 1.5 (clamped to 1).
  y = ResizeOf({.scales = {1, 1, 2, 2}, .mode = "linear", .transform = "asymmetric"});
  EXPECT_THAT(y.values, ElementsAre(1, 1.5, 2, 2, 2, 2.5, 3, 3, 3, 3.5, 4, 4, 3, 3.5, 4, 4));
  // align_corners: x_original = o / 3 (the docs' ..._linear_align_corners).
  y = ResizeOf({.scales = {1, 1, 2, 2}, .mode = "linear", .transform = "align_corners"});
  const float t = 1.0f / 3;
  EXPECT_THAT(y.values, ElementsAre(FloatEq(1), FloatEq(1 + t), FloatEq(2 - t), FloatEq(2),
                                    FloatEq(1 + 2 * t), FloatEq(2), FloatEq(2 + t), FloatEq(3 - t),
                                    FloatEq(3 - 2 * t), FloatEq(3 - t), FloatEq(3), FloatEq(3 + t),
                                    FloatEq(3), FloatEq(3 + t), FloatEq(4 - t), FloatEq(4)));
}

TEST(ReferenceExecutorTest, ResizeRefusesWhatItDoesNotKnow) {
  EXPECT_THAT(RunResize({.scales = {1, 1, 2, 2}, .mode = "cubic"}),
              StatusIs(absl::StatusCode::kUnimplemented, HasSubstr("mode \"cubic\"")));
  EXPECT_THAT(RunResize({.scales = {1, 1, 2, 2}, .transform = "tf_crop_and_resize"}),
              StatusIs(absl::StatusCode::kUnimplemented,
                       HasSubstr("coordinate_transformation_mode \"tf_crop_and_resize\"")));
  EXPECT_THAT(RunResize({.scales = {1, 2, 2}}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("rank")));
  OnnxTestModel ten;
  ten.Input("x", {1, 1, 2, 2});
  ten.FloatWeight("scales", {1, 1, 2, 2});
  ten.Node("Resize", {"x", "scales"}, {"y"});
  ten.Output("y");
  EXPECT_THAT(RunReference(ten.model(), {{"x", {{1, 1, 2, 2}, {1, 2, 3, 4}}}}),
              StatusIs(absl::StatusCode::kUnimplemented, HasSubstr("opset-10")));
}

TEST(ReferenceExecutorTest, RefusesWhatItDoesNotKnow) {
  OnnxTestModel m = OneNode("Upsample", {"x"}, nullptr);
  EXPECT_THAT(RunReference(m.model(), {{"x", Nine()}}),
              StatusIs(absl::StatusCode::kUnimplemented, HasSubstr("Upsample")));
  OnnxTestModel unsorted = OneNode("Relu", {"z"}, nullptr);
  EXPECT_THAT(RunReference(unsorted.model(), {{"x", Nine()}}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"z\"")));
}

}  // namespace
}  // namespace ordo
