#include "core/onnx/constant_tensor.h"

#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <string>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo::onnx_import {
namespace {

using ::testing::ElementsAre;

TEST(ConstantTensorTest, ReadsRawData) {
  onnx::TensorProto proto;
  proto.set_data_type(onnx::TensorProto::INT64);
  proto.add_dims(2);
  const int64_t values[] = {-3, int64_t{1} << 40};
  proto.set_raw_data(std::string(reinterpret_cast<const char*>(values), sizeof(values)));
  std::optional<ConstantTensor> t = ConstantFromProto(proto);
  ASSERT_TRUE(t.has_value());
  EXPECT_THAT(t->dims, ElementsAre(2));
  EXPECT_THAT(t->ints, ElementsAre(-3, int64_t{1} << 40));
}

TEST(ConstantTensorTest, ReadsTypedDataOfNarrowTypes) {
  onnx::TensorProto proto;
  proto.set_data_type(onnx::TensorProto::UINT8);
  proto.add_dims(3);
  for (int32_t v : {1, 255, 256}) proto.add_int32_data(v);
  std::optional<ConstantTensor> t = ConstantFromProto(proto);
  ASSERT_TRUE(t.has_value());
  EXPECT_THAT(t->ints, ElementsAre(1, 255, 0));  // wrapped to uint8
}

TEST(ConstantTensorTest, RefusesMissingMismatchedOrLargeData) {
  onnx::TensorProto external;
  external.set_data_type(onnx::TensorProto::FLOAT);
  external.add_dims(4);
  external.set_data_location(onnx::TensorProto::EXTERNAL);
  EXPECT_EQ(ConstantFromProto(external), std::nullopt);

  onnx::TensorProto no_data = external;
  no_data.clear_data_location();
  EXPECT_EQ(ConstantFromProto(no_data), std::nullopt);  // 4 dims, 0 values

  onnx::TensorProto short_raw = no_data;
  short_raw.set_raw_data(std::string(12, '\0'));
  EXPECT_EQ(ConstantFromProto(short_raw), std::nullopt);

  onnx::TensorProto large;
  large.set_data_type(onnx::TensorProto::FLOAT);
  large.add_dims(kMaxConstantElements + 1);
  large.set_raw_data(std::string((kMaxConstantElements + 1) * 4, '\0'));
  EXPECT_EQ(ConstantFromProto(large), std::nullopt);

  onnx::TensorProto strings;
  strings.set_data_type(onnx::TensorProto::STRING);
  strings.add_string_data("a");
  EXPECT_EQ(ConstantFromProto(strings), std::nullopt);
}

TEST(ConstantTensorTest, RoundTripsThroughProto) {
  ConstantTensor t;
  t.elem_type = onnx::TensorProto::INT32;
  t.dims = {2, 2};
  t.ints = {1, -2, 3, -4};
  onnx::TensorProto proto = ConstantToProto(t, "t");
  EXPECT_EQ(proto.name(), "t");
  std::optional<ConstantTensor> back = ConstantFromProto(proto);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->elem_type, onnx::TensorProto::INT32);
  EXPECT_THAT(back->dims, ElementsAre(2, 2));
  EXPECT_THAT(back->ints, ElementsAre(1, -2, 3, -4));
}

// Every float16 reads back as itself; values between round to nearest,
// ties to even, and past 65504 (from 65520) to infinity, as Cast does.
TEST(ConstantTensorTest, Float16RoundsToNearestEvenAndEveryValueRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const double value = HalfToDouble(static_cast<uint16_t>(bits));
    if (std::isnan(value)) continue;
    EXPECT_EQ(HalfFromDouble(value), bits) << std::hex << bits;
  }
  EXPECT_EQ(HalfToDouble(0x3c00), 1.0);
  EXPECT_EQ(HalfToDouble(0x7bff), 65504.0);
  EXPECT_EQ(HalfToDouble(0x0001), std::ldexp(1.0, -24));  // smallest subnormal
  EXPECT_EQ(RoundToHalf(2049), 2048);                     // a tie: to the even 2048
  EXPECT_EQ(RoundToHalf(2051), 2052);                     // a tie: to the even 2052
  EXPECT_EQ(RoundToHalf(2050.5), 2050);
  EXPECT_EQ(RoundToHalf(1.0 / 3), 0.333251953125);
  EXPECT_EQ(RoundToHalf(65519), 65504);
  EXPECT_EQ(RoundToHalf(-65520), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(RoundToHalf(std::ldexp(1.0, -25)), 0.0);  // half the smallest: to even 0
  EXPECT_EQ(RoundToHalf(std::ldexp(3.0, -25)), std::ldexp(1.0, -23));
  EXPECT_TRUE(std::isnan(RoundToHalf(std::numeric_limits<double>::quiet_NaN())));
}

// float16 initializers hold their 16 bits in raw_data or in int32_data.
TEST(ConstantTensorTest, ReadsAndWritesFloat16) {
  onnx::TensorProto raw;
  raw.set_data_type(onnx::TensorProto::FLOAT16);
  raw.add_dims(3);
  const uint16_t values[] = {0x3c00, 0xc000, 0x3555};  // 1, -2, 0.333251953125
  raw.set_raw_data(std::string(reinterpret_cast<const char*>(values), sizeof(values)));
  std::optional<ConstantTensor> t = ConstantFromProto(raw);
  ASSERT_TRUE(t.has_value());
  EXPECT_TRUE(t->is_real());
  EXPECT_THAT(t->reals, ElementsAre(1.0, -2.0, 0.333251953125));
  const onnx::TensorProto typed = ConstantToProto(*t, "t");
  EXPECT_THAT(typed.int32_data(), ElementsAre(0x3c00, 0xc000, 0x3555));
  std::optional<ConstantTensor> back = ConstantFromProto(typed);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->elem_type, onnx::TensorProto::FLOAT16);
  EXPECT_EQ(back->reals, t->reals);
}

// Every bfloat16 is float32's top 16 bits and reads back as itself; values
// between round to nearest, ties to even (not truncation), and past the
// largest finite value to infinity, as Cast does.
TEST(ConstantTensorTest, BFloat16RoundsToNearestEvenAndEveryValueRoundTrips) {
  for (uint32_t bits = 0; bits <= 0xffff; ++bits) {
    const double value = BFloat16ToDouble(static_cast<uint16_t>(bits));
    const uint32_t float_bits = bits << 16;
    float as_float;
    std::memcpy(&as_float, &float_bits, sizeof(as_float));
    if (std::isnan(value)) {
      EXPECT_TRUE(std::isnan(as_float)) << std::hex << bits;
      continue;
    }
    EXPECT_EQ(value, static_cast<double>(as_float)) << std::hex << bits;
    EXPECT_EQ(BFloat16FromDouble(value), bits) << std::hex << bits;
  }
  EXPECT_EQ(BFloat16ToDouble(0x3f80), 1.0);
  EXPECT_EQ(RoundToBFloat16(257), 256);  // a tie: to the even 256
  EXPECT_EQ(RoundToBFloat16(259), 260);  // a tie: to the even 260
  EXPECT_EQ(RoundToBFloat16(257.5), 258);
  EXPECT_EQ(RoundToBFloat16(1.0 / 3), 0.333984375);  // rounded up; truncation gives 0.33203125
  const double largest = BFloat16ToDouble(0x7f7f);   // (2 - 2^-7) x 2^127
  EXPECT_EQ(largest, std::ldexp(2.0 - std::ldexp(1.0, -7), 127));
  // Halfway from it to 2^128: infinity from there on (float's max too).
  const double halfway = std::ldexp(2.0 - std::ldexp(1.0, -8), 127);
  EXPECT_EQ(RoundToBFloat16(halfway - std::ldexp(1.0, 100)), largest);
  EXPECT_EQ(RoundToBFloat16(-halfway), -std::numeric_limits<double>::infinity());
  EXPECT_EQ(RoundToBFloat16(std::numeric_limits<float>::max()),
            std::numeric_limits<double>::infinity());
  EXPECT_EQ(BFloat16ToDouble(0x0001), std::ldexp(1.0, -133));  // smallest subnormal
  EXPECT_EQ(RoundToBFloat16(std::ldexp(1.0, -134)), 0.0);      // half the smallest: to even 0
  EXPECT_TRUE(std::isnan(RoundToBFloat16(std::numeric_limits<double>::quiet_NaN())));
}

// bfloat16 initializers hold their 16 bits as float16's do.
TEST(ConstantTensorTest, ReadsAndWritesBFloat16) {
  onnx::TensorProto raw;
  raw.set_data_type(onnx::TensorProto::BFLOAT16);
  raw.add_dims(3);
  const uint16_t values[] = {0x3f80, 0xc000, 0x3eab};  // 1, -2, 0.333984375
  raw.set_raw_data(std::string(reinterpret_cast<const char*>(values), sizeof(values)));
  std::optional<ConstantTensor> t = ConstantFromProto(raw);
  ASSERT_TRUE(t.has_value());
  EXPECT_TRUE(t->is_real());
  EXPECT_THAT(t->reals, ElementsAre(1.0, -2.0, 0.333984375));
  const onnx::TensorProto typed = ConstantToProto(*t, "t");
  EXPECT_THAT(typed.int32_data(), ElementsAre(0x3f80, 0xc000, 0x3eab));
  std::optional<ConstantTensor> back = ConstantFromProto(typed);
  ASSERT_TRUE(back.has_value());
  EXPECT_EQ(back->elem_type, onnx::TensorProto::BFLOAT16);
  EXPECT_EQ(back->reals, t->reals);
}

TEST(ConstantTensorTest, DropsOnlyBulkInitializerData) {
  onnx::GraphProto graph;
  onnx::TensorProto& small = *graph.add_initializer();
  small.set_data_type(onnx::TensorProto::INT64);
  small.add_dims(2);
  small.add_int64_data(4);
  small.add_int64_data(5);
  onnx::TensorProto& bulk = *graph.add_initializer();
  bulk.set_data_type(onnx::TensorProto::FLOAT);
  bulk.add_dims(kMaxConstantElements + 1);
  bulk.set_raw_data(std::string((kMaxConstantElements + 1) * 4, '\1'));
  DropBulkInitializerData(graph);
  EXPECT_EQ(graph.initializer(0).int64_data_size(), 2);
  EXPECT_FALSE(graph.initializer(1).has_raw_data());
  EXPECT_THAT(graph.initializer(1).dims(), ElementsAre(kMaxConstantElements + 1));
}

}  // namespace
}  // namespace ordo::onnx_import
