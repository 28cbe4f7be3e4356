#include "core/onnx/constant_evaluator.h"

#include <cstdint>
#include <initializer_list>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo::onnx_import {
namespace {

using ::testing::Optional;

ConstantTensor Ints(std::vector<int64_t> dims, std::vector<int64_t> values,
                    int32_t elem_type = onnx::TensorProto::INT64) {
  ConstantTensor t;
  t.elem_type = elem_type;
  t.dims = std::move(dims);
  t.ints = std::move(values);
  return t;
}

ConstantTensor Floats(std::vector<int64_t> dims, std::vector<double> values) {
  ConstantTensor t;
  t.elem_type = onnx::TensorProto::FLOAT;
  t.dims = std::move(dims);
  t.reals = std::move(values);
  return t;
}

onnx::NodeProto Node(const std::string& op, int num_inputs) {
  onnx::NodeProto node;
  node.set_op_type(op);
  for (int i = 0; i < num_inputs; ++i) node.add_input("i" + std::to_string(i));
  node.add_output("out");
  return node;
}

void SetInt(onnx::NodeProto& node, const std::string& name, int64_t value) {
  onnx::AttributeProto& a = *node.add_attribute();
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(value);
}

void SetInts(onnx::NodeProto& node, const std::string& name,
             std::initializer_list<int64_t> values) {
  onnx::AttributeProto& a = *node.add_attribute();
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a.add_ints(v);
}

// Evaluates a single-output node; nullopt when the evaluator declines.
std::optional<ConstantTensor> Eval(const onnx::NodeProto& node,
                                   const std::vector<const ConstantTensor*>& inputs) {
  auto outputs = EvaluateConstantNode(node, inputs);
  if (!outputs) return std::nullopt;
  return (*outputs)[0];
}

MATCHER_P2(IntTensor, dims, values, "") {
  return !arg.is_real() && arg.dims == std::vector<int64_t>(dims) &&
         arg.ints == std::vector<int64_t>(values);
}

TEST(ConstantEvaluatorTest, ChannelSplitBounds) {
  // Shape -> Gather(1) -> Div(2) -> Unsqueeze([0]).
  onnx::NodeProto shape = Node("Shape", 1);
  std::optional<ConstantTensor> dims = EvaluateShapeOf(shape, {1, 16, 8, 8});
  ASSERT_TRUE(dims.has_value());
  ConstantTensor one = Ints({}, {1});
  std::optional<ConstantTensor> channels = Eval(Node("Gather", 2), {&*dims, &one});
  EXPECT_THAT(channels, Optional(IntTensor(std::vector<int64_t>{}, std::vector<int64_t>{16})));
  ConstantTensor two = Ints({}, {2});
  std::optional<ConstantTensor> half = Eval(Node("Div", 2), {&*channels, &two});
  ConstantTensor axes = Ints({1}, {0});
  EXPECT_THAT(Eval(Node("Unsqueeze", 2), {&*half, &axes}),
              Optional(IntTensor(std::vector<int64_t>{1}, std::vector<int64_t>{8})));
}

// Add-1..6 with broadcast=1 and an axis align B with A's dims from the axis
// (a Model Zoo-era file's legacy rule), not with A's last dims; without an
// axis B matches A's last dims, as numpy does. Concat-1 defaults to axis 1.
TEST(ConstantEvaluatorTest, LegacyBroadcastAndConcatOneFollowTheirOpset) {
  const ConstantTensor a = Ints({2, 2}, {1, 1, 2, 1});
  const ConstantTensor b = Ints({2}, {0, 1});
  onnx::NodeProto add = Node("Add", 2);
  SetInt(add, "broadcast", 1);
  onnx::NodeProto suffix = add;
  SetInt(add, "axis", 0);
  EXPECT_THAT(Eval(add, {&a, &b}),
              Optional(IntTensor(std::vector<int64_t>{2, 2}, std::vector<int64_t>{1, 1, 3, 2})));
  EXPECT_THAT(Eval(suffix, {&a, &b}),
              Optional(IntTensor(std::vector<int64_t>{2, 2}, std::vector<int64_t>{1, 2, 2, 2})));
  const ConstantTensor too_long = Ints({3}, {0, 1, 2});
  EXPECT_EQ(Eval(add, {&a, &too_long}), std::nullopt);

  const ConstantTensor x = Ints({1, 2}, {1, 2});
  const ConstantTensor y = Ints({1, 1}, {3});
  EXPECT_THAT(Eval(Node("Concat", 2), {&x, &y}),
              Optional(IntTensor(std::vector<int64_t>{1, 3}, std::vector<int64_t>{1, 2, 3})));
}

TEST(ConstantEvaluatorTest, ShapeHonorsStartAndEnd) {
  onnx::NodeProto shape = Node("Shape", 1);
  SetInt(shape, "start", 1);
  SetInt(shape, "end", -1);
  EXPECT_THAT(EvaluateShapeOf(shape, {2, 3, 4, 5}),
              Optional(IntTensor(std::vector<int64_t>{2}, std::vector<int64_t>{3, 4})));
  EXPECT_THAT(EvaluateShapeOf(Node("Size", 1), {2, 3, 4}),
              Optional(IntTensor(std::vector<int64_t>{}, std::vector<int64_t>{24})));
}

TEST(ConstantEvaluatorTest, SliceWithNegativeStepReverses) {
  ConstantTensor pairs = Ints({4, 2}, {1, 2, 0, 1, 0, 0, 0, 0});
  ConstantTensor starts = Ints({1}, {-1});
  ConstantTensor ends = Ints({1}, {-std::numeric_limits<int64_t>::max()});
  ConstantTensor axes = Ints({1}, {0});
  ConstantTensor steps = Ints({1}, {-1});
  EXPECT_THAT(Eval(Node("Slice", 5), {&pairs, &starts, &ends, &axes, &steps}),
              Optional(IntTensor(std::vector<int64_t>{4, 2},
                                 std::vector<int64_t>{0, 0, 0, 0, 0, 1, 1, 2})));
}

TEST(ConstantEvaluatorTest, SliceClampsEnds) {
  ConstantTensor data = Ints({5}, {10, 11, 12, 13, 14});
  ConstantTensor starts = Ints({1}, {3});
  ConstantTensor ends = Ints({1}, {std::numeric_limits<int64_t>::max()});
  EXPECT_THAT(Eval(Node("Slice", 3), {&data, &starts, &ends}),
              Optional(IntTensor(std::vector<int64_t>{2}, std::vector<int64_t>{13, 14})));
}

TEST(ConstantEvaluatorTest, ReshapeTransposeConcat) {
  ConstantTensor values = Ints({6}, {0, 1, 2, 3, 4, 5});
  ConstantTensor target = Ints({2}, {-1, 3});
  std::optional<ConstantTensor> matrix = Eval(Node("Reshape", 2), {&values, &target});
  ASSERT_THAT(matrix, Optional(IntTensor(std::vector<int64_t>{2, 3},
                                         std::vector<int64_t>{0, 1, 2, 3, 4, 5})));
  onnx::NodeProto transpose = Node("Transpose", 1);
  SetInts(transpose, "perm", {1, 0});
  std::optional<ConstantTensor> t = Eval(transpose, {&*matrix});
  EXPECT_THAT(
      t, Optional(IntTensor(std::vector<int64_t>{3, 2}, std::vector<int64_t>{0, 3, 1, 4, 2, 5})));
  onnx::NodeProto concat = Node("Concat", 2);
  SetInt(concat, "axis", 1);
  EXPECT_THAT(Eval(concat, {&*matrix, &*matrix}),
              Optional(IntTensor(std::vector<int64_t>{2, 6},
                                 std::vector<int64_t>{0, 1, 2, 0, 1, 2, 3, 4, 5, 3, 4, 5})));
}

TEST(ConstantEvaluatorTest, ConstantOfShapeAndCast) {
  ConstantTensor shape = Ints({1}, {3});
  std::optional<ConstantTensor> zeros = Eval(Node("ConstantOfShape", 1), {&shape});
  ASSERT_TRUE(zeros.has_value());
  EXPECT_TRUE(zeros->is_real());  // the default fill is float 0
  onnx::NodeProto cast = Node("Cast", 1);
  SetInt(cast, "to", onnx::TensorProto::INT32);
  ConstantTensor reals = Floats({3}, {1.9, -1.9, 3.0});
  EXPECT_THAT(Eval(cast, {&reals}),
              Optional(IntTensor(std::vector<int64_t>{3}, std::vector<int64_t>{1, -1, 3})));
}

TEST(ConstantEvaluatorTest, BroadcastingArithmeticAndWhere) {
  ConstantTensor a = Ints({2, 1}, {10, 20});
  ConstantTensor b = Ints({3}, {1, 2, 3});
  EXPECT_THAT(
      Eval(Node("Sub", 2), {&a, &b}),
      Optional(IntTensor(std::vector<int64_t>{2, 3}, std::vector<int64_t>{9, 8, 7, 19, 18, 17})));
  ConstantTensor minus_seven = Ints({}, {-7});
  ConstantTensor two = Ints({}, {2});
  // Integer division truncates toward zero, as runtimes do.
  EXPECT_THAT(Eval(Node("Div", 2), {&minus_seven, &two}),
              Optional(IntTensor(std::vector<int64_t>{}, std::vector<int64_t>{-3})));
  ConstantTensor cond = Ints({3}, {1, 0, 1}, onnx::TensorProto::BOOL);
  ConstantTensor y = Ints({}, {-1});
  EXPECT_THAT(Eval(Node("Where", 3), {&cond, &b, &y}),
              Optional(IntTensor(std::vector<int64_t>{3}, std::vector<int64_t>{1, -1, 3})));
}

ConstantTensor Halves(std::vector<int64_t> dims, std::vector<double> values) {
  ConstantTensor t = Floats(std::move(dims), std::move(values));
  t.elem_type = onnx::TensorProto::FLOAT16;
  return t;
}

// Shape arithmetic a float16 conversion left in float16 (Shape -> Cast to
// FLOAT16 -> Mul -> Cast to INT64) folds, each result rounded to float16
// as a runtime stores it.
TEST(ConstantEvaluatorTest, Float16ShapeArithmeticFoldsRoundedToFloat16) {
  onnx::NodeProto to_half = Node("Cast", 1);
  SetInt(to_half, "to", onnx::TensorProto::FLOAT16);
  onnx::NodeProto to_int = Node("Cast", 1);
  SetInt(to_int, "to", onnx::TensorProto::INT64);
  ConstantTensor shape = Ints({4}, {1, 3, 8, 2049});
  std::optional<ConstantTensor> half = Eval(to_half, {&shape});
  ASSERT_TRUE(half.has_value());
  EXPECT_EQ(half->elem_type, onnx::TensorProto::FLOAT16);
  EXPECT_EQ(half->reals, (std::vector<double>{1, 3, 8, 2048}));  // 2049: a tie, to even
  ConstantTensor scale = Halves({4}, {1, 1, 8, 0.125});
  std::optional<ConstantTensor> scaled = Eval(Node("Mul", 2), {&*half, &scale});
  ASSERT_TRUE(scaled.has_value());
  EXPECT_THAT(Eval(to_int, {&*scaled}),
              Optional(IntTensor(std::vector<int64_t>{4}, std::vector<int64_t>{1, 3, 64, 256})));
  ConstantTensor one = Halves({}, {1});
  ConstantTensor three = Halves({}, {3});
  std::optional<ConstantTensor> third = Eval(Node("Div", 2), {&one, &three});
  ASSERT_TRUE(third.has_value());
  EXPECT_EQ(third->reals, std::vector<double>{0.333251953125});  // float16's 1/3
  // No one runtime answer: Range rounds twice per element, reductions
  // accumulate in float16 or float, std::pow is not correctly rounded.
  ConstantTensor zero = Halves({}, {0});
  EXPECT_EQ(Eval(Node("Range", 3), {&zero, &three, &one}), std::nullopt);
  EXPECT_EQ(Eval(Node("ReduceSum", 1), {&scale}), std::nullopt);
  EXPECT_EQ(Eval(Node("Pow", 2), {&three, &three}), std::nullopt);
}

// The same in bfloat16 (float32's top half: 8 significant bits), each
// result rounded to nearest even as a runtime's Cast stores it, not
// truncated.
TEST(ConstantEvaluatorTest, BFloat16ShapeArithmeticFoldsRoundedToBFloat16) {
  onnx::NodeProto to_bfloat16 = Node("Cast", 1);
  SetInt(to_bfloat16, "to", onnx::TensorProto::BFLOAT16);
  onnx::NodeProto to_int = Node("Cast", 1);
  SetInt(to_int, "to", onnx::TensorProto::INT64);
  ConstantTensor shape = Ints({4}, {1, 3, 257, 259});
  std::optional<ConstantTensor> narrow = Eval(to_bfloat16, {&shape});
  ASSERT_TRUE(narrow.has_value());
  EXPECT_EQ(narrow->elem_type, onnx::TensorProto::BFLOAT16);
  EXPECT_EQ(narrow->reals, (std::vector<double>{1, 3, 256, 260}));  // ties, to even
  ConstantTensor scale = Floats({4}, {1, 1, 0.125, 0.5});
  scale.elem_type = onnx::TensorProto::BFLOAT16;
  std::optional<ConstantTensor> scaled = Eval(Node("Mul", 2), {&*narrow, &scale});
  ASSERT_TRUE(scaled.has_value());
  EXPECT_THAT(Eval(to_int, {&*scaled}),
              Optional(IntTensor(std::vector<int64_t>{4}, std::vector<int64_t>{1, 3, 32, 130})));
  ConstantTensor one = Floats({}, {1}), three = Floats({}, {3}), zero = Floats({}, {0});
  for (ConstantTensor* t : {&one, &three, &zero}) t->elem_type = onnx::TensorProto::BFLOAT16;
  std::optional<ConstantTensor> third = Eval(Node("Div", 2), {&one, &three});
  ASSERT_TRUE(third.has_value());
  EXPECT_EQ(third->reals, std::vector<double>{0.333984375});  // bfloat16's 1/3, rounded up
  EXPECT_EQ(Eval(Node("Range", 3), {&zero, &three, &one}), std::nullopt);
  EXPECT_EQ(Eval(Node("ReduceSum", 1), {&scale}), std::nullopt);
  EXPECT_EQ(Eval(Node("Pow", 2), {&three, &three}), std::nullopt);
}

TEST(ConstantEvaluatorTest, DeclinesWhatItCannotComputeExactly) {
  ConstantTensor zero = Ints({}, {0});
  ConstantTensor one = Ints({}, {1});
  ConstantTensor max = Ints({}, {std::numeric_limits<int64_t>::max()});
  EXPECT_EQ(Eval(Node("Div", 2), {&one, &zero}), std::nullopt);
  EXPECT_EQ(Eval(Node("Add", 2), {&max, &one}), std::nullopt);
  ConstantTensor real = Floats({}, {1.0});
  EXPECT_EQ(Eval(Node("Add", 2), {&one, &real}), std::nullopt);  // mixed types
  EXPECT_EQ(Eval(Node("Conv", 2), {&one, &one}), std::nullopt);  // not supported
  ConstantTensor huge_shape = Ints({2}, {1 << 20, 1 << 20});
  EXPECT_EQ(Eval(Node("ConstantOfShape", 1), {&huge_shape}), std::nullopt);
  ConstantTensor data = Ints({3}, {1, 2, 3});
  ConstantTensor index = Ints({}, {3});
  EXPECT_EQ(Eval(Node("Gather", 2), {&data, &index}), std::nullopt);
}

}  // namespace
}  // namespace ordo::onnx_import
