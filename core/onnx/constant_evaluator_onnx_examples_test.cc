// The constant evaluator against the examples of the ONNX operator
// documentation (onnx/docs/Operators.md, the deterministic ones and the
// backend test cases they name: broadcasting, negative axes and indices,
// mixed signs). One test per op of the shape-computation list of issue 14.
#include <cstdint>
#include <initializer_list>
#include <numeric>
#include <optional>
#include <string>
#include <vector>

#include "core/onnx/constant_evaluator.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo::onnx_import {
namespace {

using ::testing::DoubleNear;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::Pointwise;

using Dims = std::vector<int64_t>;

ConstantTensor Ints(Dims dims, std::vector<int64_t> values,
                    int32_t elem_type = onnx::TensorProto::INT64) {
  ConstantTensor t;
  t.elem_type = elem_type;
  t.dims = std::move(dims);
  t.ints = std::move(values);
  return t;
}
ConstantTensor Bools(Dims dims, std::vector<int64_t> values) {
  return Ints(std::move(dims), std::move(values), onnx::TensorProto::BOOL);
}
ConstantTensor Floats(Dims dims, std::vector<double> values) {
  ConstantTensor t;
  t.elem_type = onnx::TensorProto::FLOAT;
  t.dims = std::move(dims);
  t.reals = std::move(values);
  for (double& v : t.reals) v = static_cast<float>(v);
  return t;
}
// 0, 1, ..., n-1 as int64 of `dims`.
ConstantTensor Arange(Dims dims) {
  int64_t n = 1;
  for (int64_t d : dims) n *= d;
  std::vector<int64_t> values(n);
  std::iota(values.begin(), values.end(), 0);
  return Ints(std::move(dims), std::move(values));
}

class Op {
 public:
  explicit Op(const std::string& type) { node_.set_op_type(type); }
  Op& Int(const std::string& name, int64_t v) {
    auto& a = *node_.add_attribute();
    a.set_name(name);
    a.set_type(onnx::AttributeProto::INT);
    a.set_i(v);
    return *this;
  }
  Op& Ints(const std::string& name, std::initializer_list<int64_t> v) {
    auto& a = *node_.add_attribute();
    a.set_name(name);
    a.set_type(onnx::AttributeProto::INTS);
    for (int64_t x : v) a.add_ints(x);
    return *this;
  }
  Op& Outputs(int n) {
    outputs_ = n;
    return *this;
  }
  // Evaluates on `inputs` (nullptr = omitted optional input); first output.
  ConstantTensor operator()(std::vector<const ConstantTensor*> inputs) {
    onnx::NodeProto node = node_;
    for (size_t i = 0; i < inputs.size(); ++i) {
      node.add_input(inputs[i] == nullptr ? "" : "in" + std::to_string(i));
    }
    for (int i = 0; i < outputs_; ++i) node.add_output("out" + std::to_string(i));
    auto result = EvaluateConstantNode(node, inputs);
    EXPECT_TRUE(result.has_value()) << node.op_type() << " declined";
    all_ = result.value_or(std::vector<ConstantTensor>(outputs_));
    return all_[0];
  }
  const std::vector<ConstantTensor>& all() const { return all_; }

 private:
  onnx::NodeProto node_;
  int outputs_ = 1;
  std::vector<ConstantTensor> all_;
};

TEST(OnnxExamplesTest, ShapeAndSize) {
  onnx::NodeProto shape;
  shape.set_op_type("Shape");
  EXPECT_THAT(EvaluateShapeOf(shape, {3, 4, 5})->ints, ElementsAre(3, 4, 5));
  auto* start = shape.add_attribute();  // shape_start_negative_1: [5]
  start->set_name("start");
  start->set_type(onnx::AttributeProto::INT);
  start->set_i(-1);
  EXPECT_THAT(EvaluateShapeOf(shape, {3, 4, 5})->ints, ElementsAre(5));
  onnx::NodeProto size;
  size.set_op_type("Size");
  EXPECT_THAT(EvaluateShapeOf(size, {3, 4, 5})->ints, ElementsAre(60));
}

TEST(OnnxExamplesTest, Gather) {
  // gather_0: data [[1.0, 1.2], [2.3, 3.4], [4.5, 5.7]], indices [[0, 1], [1, 2]].
  ConstantTensor data = Floats({3, 2}, {1.0, 1.2, 2.3, 3.4, 4.5, 5.7});
  ConstantTensor indices = Ints({2, 2}, {0, 1, 1, 2});
  ConstantTensor out = Op("Gather")({&data, &indices});
  EXPECT_EQ(out.dims, (Dims{2, 2, 2}));
  EXPECT_THAT(out.reals, Pointwise(DoubleNear(1e-6), Floats({8}, {1.0, 1.2, 2.3, 3.4, 2.3, 3.4,
                                                                   4.5, 5.7}).reals));
  // gather_1 (axis 1): [[1.0, 1.2, 1.9], [2.3, 3.4, 3.9], [4.5, 5.7, 5.9]], [[0, 2]].
  ConstantTensor wide = Floats({3, 3}, {1.0, 1.2, 1.9, 2.3, 3.4, 3.9, 4.5, 5.7, 5.9});
  ConstantTensor columns = Ints({1, 2}, {0, 2});
  out = Op("Gather").Int("axis", 1)({&wide, &columns});
  EXPECT_EQ(out.dims, (Dims{3, 1, 2}));
  EXPECT_THAT(out.reals, Pointwise(DoubleNear(1e-6),
                                   Floats({6}, {1.0, 1.9, 2.3, 3.9, 4.5, 5.9}).reals));
  // gather_negative_indices: arange(10)[[0, -9, -10]] = [0, 1, 0].
  ConstantTensor ten = Arange({10});
  ConstantTensor negative = Ints({3}, {0, -9, -10});
  EXPECT_THAT(Op("Gather")({&ten, &negative}).ints, ElementsAre(0, 1, 0));
}

TEST(OnnxExamplesTest, Slice) {
  ConstantTensor x = Arange({20, 10, 5});
  // slice: x[0:3, 0:10].
  ConstantTensor starts = Ints({2}, {0, 0}), ends = Ints({2}, {3, 10}), axes = Ints({2}, {0, 1}),
                 steps = Ints({2}, {1, 1});
  EXPECT_EQ(Op("Slice")({&x, &starts, &ends, &axes, &steps}).dims, (Dims{3, 10, 5}));
  // slice_neg: x[:, 0:-1].
  ConstantTensor s = Ints({1}, {0}), e = Ints({1}, {-1}), a = Ints({1}, {1}), st = Ints({1}, {1});
  EXPECT_EQ(Op("Slice")({&x, &s, &e, &a, &st}).dims, (Dims{20, 9, 5}));
  // slice_negative_axes: x[:, :, 3:4] with axes [0, -2, -1].
  ConstantTensor s3 = Ints({3}, {0, 0, 3}), e3 = Ints({3}, {20, 10, 4}),
                 a3 = Ints({3}, {0, -2, -1});
  ConstantTensor out = Op("Slice")({&x, &s3, &e3, &a3});
  EXPECT_EQ(out.dims, (Dims{20, 10, 1}));
  EXPECT_EQ(out.ints[1], 8);  // x[0, 1, 3]
  // slice_neg_steps: x[20:0:-1, 10:0:-3, 5:0:-2] -> (19, 3, 2).
  ConstantTensor sn = Ints({3}, {20, 10, 4}), en = Ints({3}, {0, 0, 1}), an = Ints({3}, {0, 1, 2}),
                 stn = Ints({3}, {-1, -3, -2});
  EXPECT_EQ(Op("Slice")({&x, &sn, &en, &an, &stn}).dims, (Dims{19, 3, 2}));
  // slice_end_out_of_bounds: x[:, 1:1000] -> (20, 9, 5).
  ConstantTensor sb = Ints({1}, {1}), eb = Ints({1}, {1000});
  EXPECT_EQ(Op("Slice")({&x, &sb, &eb, &a, &st}).dims, (Dims{20, 9, 5}));
}

TEST(OnnxExamplesTest, Concat) {
  ConstantTensor a = Ints({2, 2}, {1, 2, 3, 4}), b = Ints({2, 2}, {5, 6, 7, 8});
  EXPECT_THAT(Op("Concat").Int("axis", 0)({&a, &b}).ints, ElementsAre(1, 2, 3, 4, 5, 6, 7, 8));
  EXPECT_THAT(Op("Concat").Int("axis", 1)({&a, &b}).ints, ElementsAre(1, 2, 5, 6, 3, 4, 7, 8));
  ConstantTensor out = Op("Concat").Int("axis", -1)({&a, &b});
  EXPECT_EQ(out.dims, (Dims{2, 4}));
  EXPECT_THAT(out.ints, ElementsAre(1, 2, 5, 6, 3, 4, 7, 8));
}

TEST(OnnxExamplesTest, UnsqueezeAndSqueeze) {
  ConstantTensor x = Arange({3, 4, 5});
  ConstantTensor two_axes = Ints({2}, {1, 4});  // unsqueeze_two_axes
  EXPECT_EQ(Op("Unsqueeze")({&x, &two_axes}).dims, (Dims{3, 1, 4, 5, 1}));
  ConstantTensor negative = Ints({1}, {-2});  // unsqueeze_negative_axes on (1, 3, 1, 5)
  ConstantTensor y = Arange({1, 3, 1, 5});
  EXPECT_EQ(Op("Unsqueeze")({&y, &negative}).dims, (Dims{1, 3, 1, 1, 5}));
  EXPECT_EQ(Op("Unsqueeze").Ints("axes", {0})({&x}).dims, (Dims{1, 3, 4, 5}));  // opset < 13
  ConstantTensor zero = Ints({1}, {0});  // squeeze: (1, 3, 4, 5) axes [0]
  ConstantTensor z = Arange({1, 3, 4, 5});
  EXPECT_EQ(Op("Squeeze")({&z, &zero}).dims, (Dims{3, 4, 5}));
  EXPECT_EQ(Op("Squeeze")({&y, &negative}).dims, (Dims{1, 3, 5}));  // squeeze_negative_axes
  EXPECT_EQ(Op("Squeeze")({&y}).dims, (Dims{3, 5}));                // no axes: every 1
}

TEST(OnnxExamplesTest, Reshape) {
  ConstantTensor data = Arange({2, 3, 4});
  auto reshaped = [&](std::vector<int64_t> shape, int allowzero = 0) {
    ConstantTensor target = Ints({static_cast<int64_t>(shape.size())}, shape);
    return Op("Reshape").Int("allowzero", allowzero)({&data, &target}).dims;
  };
  EXPECT_EQ(reshaped({4, 2, 3}), (Dims{4, 2, 3}));           // reordered_all_dims
  EXPECT_EQ(reshaped({2, 12}), (Dims{2, 12}));               // reduced_dims
  EXPECT_EQ(reshaped({2, 3, 2, 2}), (Dims{2, 3, 2, 2}));     // extended_dims
  EXPECT_EQ(reshaped({24}), (Dims{24}));                     // one_dim
  EXPECT_EQ(reshaped({2, -1, 2}), (Dims{2, 6, 2}));          // negative_dim
  EXPECT_EQ(reshaped({-1, 2, 3, 4}), (Dims{1, 2, 3, 4}));    // negative_extended_dims
  EXPECT_EQ(reshaped({2, 0, 4, 1}), (Dims{2, 3, 4, 1}));     // zero_dim
  EXPECT_EQ(reshaped({6, -1, 0}), (Dims{6, 1, 4}));  // zero_and_negative_dim: 0 copies dim 2
}

TEST(OnnxExamplesTest, Cast) {
  ConstantTensor f = Floats({3}, {0.47892547, -1.5, 2.75});
  EXPECT_THAT(Op("Cast").Int("to", onnx::TensorProto::INT64)({&f}).ints, ElementsAre(0, -1, 2));
  ConstantTensor i = Ints({2}, {3, -7});
  ConstantTensor as_float = Op("Cast").Int("to", onnx::TensorProto::FLOAT)({&i});
  EXPECT_THAT(as_float.reals, ElementsAre(3.0, -7.0));
  EXPECT_THAT(Op("Cast").Int("to", onnx::TensorProto::BOOL)({&i}).ints, ElementsAre(1, 1));
  ConstantTensor big = Ints({1}, {300});
  EXPECT_THAT(Op("Cast").Int("to", onnx::TensorProto::INT8)({&big}).ints,
              ElementsAre(44));  // wraps like a runtime's int8
}

TEST(OnnxExamplesTest, ConstantOfShape) {
  // constantofshape_float_ones: shape [4, 3, 2], value 1.0.
  ConstantTensor shape = Ints({3}, {4, 3, 2});
  onnx::NodeProto node;
  node.set_op_type("ConstantOfShape");
  node.add_input("shape");
  node.add_output("out");
  auto& value = *node.add_attribute();
  value.set_name("value");
  value.set_type(onnx::AttributeProto::TENSOR);
  value.mutable_t()->set_data_type(onnx::TensorProto::INT32);
  value.mutable_t()->add_dims(1);
  value.mutable_t()->add_int32_data(0);  // constantofshape_int_zeros
  auto out = EvaluateConstantNode(node, {&shape});
  ASSERT_TRUE(out.has_value());
  EXPECT_EQ((*out)[0].dims, (Dims{4, 3, 2}));
  EXPECT_EQ((*out)[0].elem_type, onnx::TensorProto::INT32);
  EXPECT_THAT((*out)[0].ints, ElementsAreArray(std::vector<int64_t>(24, 0)));
}

TEST(OnnxExamplesTest, Range) {
  ConstantTensor start = Floats({}, {1}), limit = Floats({}, {5}), delta = Floats({}, {2});
  EXPECT_THAT(Op("Range")({&start, &limit, &delta}).reals, ElementsAre(1.0, 3.0));
  ConstantTensor s = Ints({}, {10}), l = Ints({}, {6}), d = Ints({}, {-3});
  EXPECT_THAT(Op("Range")({&s, &l, &d}).ints, ElementsAre(10, 7));  // range_int32_type_negative_delta
}

TEST(OnnxExamplesTest, Expand) {
  // expand_dim_changed: [[1], [2], [3]] to [2, 1, 6] -> (2, 3, 6).
  ConstantTensor data = Ints({3, 1}, {1, 2, 3});
  ConstantTensor shape = Ints({3}, {2, 1, 6});
  ConstantTensor out = Op("Expand")({&data, &shape});
  EXPECT_EQ(out.dims, (Dims{2, 3, 6}));
  EXPECT_EQ(out.ints[6], 2);
  // expand_dim_unchanged: shape [3, 4] -> (3, 4).
  ConstantTensor same = Ints({2}, {3, 4});
  EXPECT_EQ(Op("Expand")({&data, &same}).dims, (Dims{3, 4}));
}

TEST(OnnxExamplesTest, Where) {
  ConstantTensor c = Bools({2, 2}, {1, 0, 1, 1});
  ConstantTensor x = Floats({2, 2}, {1, 2, 3, 4}), y = Floats({2, 2}, {9, 8, 7, 6});
  EXPECT_THAT(Op("Where")({&c, &x, &y}).reals, ElementsAre(1, 8, 3, 4));
  // where_long_example broadcasting: condition (3,) against (2, 3).
  ConstantTensor c1 = Bools({3}, {1, 0, 1});
  ConstantTensor a = Ints({2, 3}, {1, 2, 3, 4, 5, 6}), b = Ints({}, {0});
  EXPECT_THAT(Op("Where")({&c1, &a, &b}).ints, ElementsAre(1, 0, 3, 4, 0, 6));
}

TEST(OnnxExamplesTest, ComparisonsAndLogic) {
  ConstantTensor x = Ints({3}, {1, 2, 3}), y = Ints({3}, {3, 2, 1});
  EXPECT_THAT(Op("Equal")({&x, &y}).ints, ElementsAre(0, 1, 0));
  EXPECT_THAT(Op("Less")({&x, &y}).ints, ElementsAre(1, 0, 0));
  EXPECT_THAT(Op("Greater")({&x, &y}).ints, ElementsAre(0, 0, 1));
  ConstantTensor two = Ints({}, {2});  // *_bcast
  EXPECT_THAT(Op("Equal")({&x, &two}).ints, ElementsAre(0, 1, 0));
  ConstantTensor p = Bools({4}, {1, 1, 0, 0}), q = Bools({4}, {1, 0, 1, 0});
  EXPECT_THAT(Op("And")({&p, &q}).ints, ElementsAre(1, 0, 0, 0));
  EXPECT_THAT(Op("Or")({&p, &q}).ints, ElementsAre(1, 1, 1, 0));
  EXPECT_THAT(Op("Not")({&p}).ints, ElementsAre(0, 0, 1, 1));
  ConstantTensor row = Bools({2, 1}, {1, 0});  // and_bcast: (2, 1) with (4,)
  EXPECT_EQ(Op("And")({&row, &q}).dims, (Dims{2, 4}));
}

TEST(OnnxExamplesTest, Mod) {
  // mod_mixed_sign_int64: the divisor's sign.
  ConstantTensor x = Ints({6}, {-4, 7, 5, 4, -7, 8}), y = Ints({6}, {2, -3, 8, -2, 3, 5});
  EXPECT_THAT(Op("Mod")({&x, &y}).ints, ElementsAre(0, -2, 5, 0, 2, 3));
  // mod_int64_fmod: the dividend's sign.
  EXPECT_THAT(Op("Mod").Int("fmod", 1)({&x, &y}).ints, ElementsAre(0, 1, 5, 0, -1, 3));
  // mod_mixed_sign_float32 (fmod=1).
  ConstantTensor fx = Floats({3}, {-4.3, 7.2, 5.0}), fy = Floats({3}, {2.1, -3.4, 8.0});
  EXPECT_THAT(Op("Mod").Int("fmod", 1)({&fx, &fy}).reals,
              Pointwise(DoubleNear(1e-5), std::vector<double>{-0.1, 0.4, 5.0}));
  // mod_broadcast: arange(3*3*5) % 7.
  ConstantTensor a = Arange({3, 3, 5}), seven = Ints({}, {7});
  EXPECT_EQ(Op("Mod")({&a, &seven}).ints[10], 3);
}

TEST(OnnxExamplesTest, Pow) {
  // pow: [1, 2, 3] ** [4, 5, 6].
  ConstantTensor x = Floats({3}, {1, 2, 3}), y = Floats({3}, {4, 5, 6});
  EXPECT_THAT(Op("Pow")({&x, &y}).reals, ElementsAre(1, 32, 729));
  // pow_bcast_scalar and pow_bcast_array.
  ConstantTensor two = Floats({}, {2});
  EXPECT_THAT(Op("Pow")({&x, &two}).reals, ElementsAre(1, 4, 9));
  ConstantTensor m = Floats({2, 3}, {1, 2, 3, 4, 5, 6}), row = Floats({3}, {1, 2, 3});
  EXPECT_THAT(Op("Pow")({&m, &row}).reals, ElementsAre(1, 4, 27, 4, 25, 216));
  // pow_types_int64_int64, pow_types_int64_float32, pow_types_float32_int64:
  // the output has the base's type.
  ConstantTensor xi = Ints({3}, {1, 2, 3}), yi = Ints({3}, {4, 5, 6});
  ConstantTensor int_int = Op("Pow")({&xi, &yi});
  EXPECT_EQ(int_int.elem_type, onnx::TensorProto::INT64);
  EXPECT_THAT(int_int.ints, ElementsAre(1, 32, 729));
  ConstantTensor int_float = Op("Pow")({&xi, &y});
  EXPECT_EQ(int_float.elem_type, onnx::TensorProto::INT64);
  EXPECT_THAT(int_float.ints, ElementsAre(1, 32, 729));
  ConstantTensor float_int = Op("Pow")({&x, &yi});
  EXPECT_EQ(float_int.elem_type, onnx::TensorProto::FLOAT);
  EXPECT_THAT(float_int.reals, ElementsAre(1, 32, 729));
  // Swin's attention scale, head_dim ** -0.5.
  ConstantTensor head_dim = Floats({}, {32}), minus_half = Floats({}, {-0.5});
  EXPECT_THAT(Op("Pow")({&head_dim, &minus_half}).reals,
              ElementsAre(DoubleNear(0.1767767, 1e-6)));
  // Overflow and negative integer exponents are not folded.
  ConstantTensor big = Ints({}, {1 << 20}), four = Ints({}, {4}), minus_one = Ints({}, {-1});
  onnx::NodeProto pow;
  pow.set_op_type("Pow");
  pow.add_input("base");
  pow.add_input("exponent");
  pow.add_output("out");
  EXPECT_EQ(EvaluateConstantNode(pow, {&big, &four}), std::nullopt);
  EXPECT_EQ(EvaluateConstantNode(pow, {&xi, &minus_one}), std::nullopt);
}

TEST(OnnxExamplesTest, Arithmetic) {
  ConstantTensor x = Ints({3}, {1, 2, 3}), y = Ints({3}, {4, 5, 6});
  EXPECT_THAT(Op("Add")({&x, &y}).ints, ElementsAre(5, 7, 9));
  EXPECT_THAT(Op("Sub")({&x, &y}).ints, ElementsAre(-3, -3, -3));
  EXPECT_THAT(Op("Mul")({&x, &y}).ints, ElementsAre(4, 10, 18));
  ConstantTensor three_four = Floats({2}, {3, 4}), one_two = Floats({2}, {1, 2});
  EXPECT_THAT(Op("Div")({&three_four, &one_two}).reals, ElementsAre(3, 2));
  ConstantTensor m = Arange({3, 4}), row = Ints({4}, {1, 1, 1, 1});  // add_bcast
  EXPECT_EQ(Op("Add")({&m, &row}).ints[11], 12);
  ConstantTensor neg = Ints({2}, {-4, 2});
  EXPECT_THAT(Op("Neg")({&neg}).ints, ElementsAre(4, -2));
  EXPECT_THAT(Op("Abs")({&neg}).ints, ElementsAre(4, 2));
  ConstantTensor f = Floats({3}, {-1.5, 1.2, 2});
  EXPECT_THAT(Op("Floor")({&f}).reals, ElementsAre(-2, 1, 2));
  EXPECT_THAT(Op("Ceil")({&f}).reals, ElementsAre(-1, 2, 2));
  // min / max: data_0 [3, 2, 1], data_1 [1, 4, 4], data_2 [2, 5, 3].
  ConstantTensor d0 = Ints({3}, {3, 2, 1}), d1 = Ints({3}, {1, 4, 4}), d2 = Ints({3}, {2, 5, 3});
  EXPECT_THAT(Op("Max")({&d0, &d1, &d2}).ints, ElementsAre(3, 5, 4));
  EXPECT_THAT(Op("Min")({&d0, &d1, &d2}).ints, ElementsAre(1, 2, 1));
  ConstantTensor one = Ints({}, {1});
  EXPECT_THAT(Op("Max")({&d0, &one}).ints, ElementsAre(3, 2, 1));  // max_one_input/bcast
}

TEST(OnnxExamplesTest, IntegerFloatMixesGoThroughCast) {
  // PyTorch's floor(h / window) on a shape: Cast(int64 -> float), Div,
  // Floor, Cast(float -> int64).
  ConstantTensor h = Ints({}, {56});
  ConstantTensor hf = Op("Cast").Int("to", onnx::TensorProto::FLOAT)({&h});
  ConstantTensor window = Floats({}, {7});
  ConstantTensor q = Op("Div")({&hf, &window});
  ConstantTensor ceil = Op("Ceil")({&q});
  EXPECT_THAT(Op("Cast").Int("to", onnx::TensorProto::INT64)({&ceil}).ints, ElementsAre(8));
}

TEST(OnnxExamplesTest, ScatterND) {
  // scatternd: the 1-D example.
  ConstantTensor data = Ints({8}, {1, 2, 3, 4, 5, 6, 7, 8});
  ConstantTensor indices = Ints({4, 1}, {4, 3, 1, 7});
  ConstantTensor updates = Ints({4}, {9, 10, 11, 12});
  EXPECT_THAT(Op("ScatterND")({&data, &indices, &updates}).ints,
              ElementsAre(1, 11, 3, 10, 9, 6, 7, 12));
  // Slices: data (4, 4, 4) at [[0], [2]] with (2, 4, 4) updates; and a
  // negative index (-4 is 0).
  ConstantTensor cube = Arange({4, 4, 4});
  ConstantTensor rows = Ints({2, 1}, {-4, 2});
  ConstantTensor fives = Ints({2, 4, 4}, std::vector<int64_t>(32, 5));
  ConstantTensor out = Op("ScatterND")({&cube, &rows, &fives});
  EXPECT_EQ(out.ints[0], 5);
  EXPECT_EQ(out.ints[16], 16);
  EXPECT_EQ(out.ints[47], 5);
}

TEST(OnnxExamplesTest, Tile) {
  ConstantTensor x = Ints({2, 2}, {0, 1, 2, 3}), repeats = Ints({2}, {2, 2});
  ConstantTensor out = Op("Tile")({&x, &repeats});
  EXPECT_EQ(out.dims, (Dims{4, 4}));
  EXPECT_THAT(out.ints, ElementsAre(0, 1, 0, 1, 2, 3, 2, 3, 0, 1, 0, 1, 2, 3, 2, 3));
}

TEST(OnnxExamplesTest, ReduceProd) {
  ConstantTensor data = Ints({3, 2, 2}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12});
  ConstantTensor axes = Ints({1}, {1});  // do_not_keepdims / keepdims
  EXPECT_THAT(Op("ReduceProd").Int("keepdims", 0)({&data, &axes}).ints,
              ElementsAre(3, 8, 35, 48, 99, 120));
  ConstantTensor negative = Ints({1}, {-2});  // negative_axes_keepdims
  ConstantTensor kept = Op("ReduceProd")({&data, &negative});
  EXPECT_EQ(kept.dims, (Dims{3, 1, 2}));
  EXPECT_THAT(kept.ints, ElementsAre(3, 8, 35, 48, 99, 120));
  EXPECT_THAT(Op("ReduceProd").Ints("axes", {1})({&data}).ints,  // attribute form, opset < 18
              ElementsAre(3, 8, 35, 48, 99, 120));
  EXPECT_THAT(Op("ReduceProd").Int("keepdims", 0)({&data}).ints, ElementsAre(479001600));
}

TEST(OnnxExamplesTest, IdentityAndDropout) {
  ConstantTensor x = Floats({2, 2}, {1, 2, 3, 4});
  EXPECT_THAT(Op("Identity")({&x}).reals, ElementsAre(1, 2, 3, 4));
  // At inference Dropout is the identity, ratio and training_mode aside.
  ConstantTensor ratio = Floats({}, {0.5});
  ConstantTensor training = Bools({}, {1});
  Op dropout = Op("Dropout").Outputs(2);
  EXPECT_THAT(dropout({&x, &ratio, &training}).reals, ElementsAre(1, 2, 3, 4));
  EXPECT_THAT(dropout.all()[1].ints, ElementsAre(1, 1, 1, 1));
  EXPECT_EQ(dropout.all()[1].elem_type, onnx::TensorProto::BOOL);
}

}  // namespace
}  // namespace ordo::onnx_import
