#include "core/onnx/constant_tensor.h"

#include <cstdint>
#include <cstring>
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
