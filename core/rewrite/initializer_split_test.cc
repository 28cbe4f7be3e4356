#include "core/rewrite/initializer_split.h"

#include <string>
#include <vector>

#include "core/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

onnx::TensorProto FloatTensor(const std::vector<int64_t>& dims, int count) {
  onnx::TensorProto t;
  t.set_name("w");
  t.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) t.add_dims(d);
  for (int i = 0; i < count; ++i) t.add_float_data(static_cast<float>(i));
  return t;
}

TEST(InitializerSplitTest, SplitsFloatDataAlongAnInnerAxis) {
  // [[0 1 2] [3 4 5]] split along axis 1 into 1 + 2 columns.
  const onnx::TensorProto t = FloatTensor({2, 3}, 6);
  ORDO_ASSERT_OK_AND_ASSIGN(auto parts, SplitInitializer(t, 1, {1, 2}, {"a", "b"}));
  ASSERT_EQ(parts.size(), 2u);
  EXPECT_EQ(parts[0].name(), "a");
  EXPECT_THAT(parts[0].dims(), ElementsAre(2, 1));
  EXPECT_THAT(parts[0].float_data(), ElementsAre(0, 3));
  EXPECT_THAT(parts[1].dims(), ElementsAre(2, 2));
  EXPECT_THAT(parts[1].float_data(), ElementsAre(1, 2, 4, 5));
}

TEST(InitializerSplitTest, SplitsRawData) {
  onnx::TensorProto t;
  t.set_name("w");
  t.set_data_type(onnx::TensorProto::INT16);
  t.add_dims(3);
  t.set_raw_data(std::string("\x01\x00\x02\x00\x03\x00", 6));
  ORDO_ASSERT_OK_AND_ASSIGN(auto parts, SplitInitializer(t, 0, {2, 1}, {"a", "b"}));
  EXPECT_EQ(parts[0].raw_data(), std::string("\x01\x00\x02\x00", 4));
  EXPECT_EQ(parts[1].raw_data(), std::string("\x03\x00", 2));
}

// int8 weights in int32_data (one per entry, as ONNX stores them) split
// as raw_data; a string tensor or data of the wrong length is refused.
TEST(InitializerSplitTest, SplitsTheOtherTypedFieldsAsRawData) {
  onnx::TensorProto t;
  t.set_name("w");
  t.set_data_type(onnx::TensorProto::INT8);
  t.add_dims(3);
  for (int v : {-1, 2, 3}) t.add_int32_data(v);
  ORDO_ASSERT_OK_AND_ASSIGN(auto parts, SplitInitializer(t, 0, {1, 2}, {"a", "b"}));
  EXPECT_EQ(parts[0].raw_data(), std::string("\xff", 1));
  EXPECT_EQ(parts[1].raw_data(), std::string("\x02\x03", 2));

  t.add_int32_data(4);
  EXPECT_THAT(SplitInitializer(t, 0, {1, 2}, {"a", "b"}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("initializer \"w\": its data does not match")));
  t.clear_int32_data();
  t.set_data_type(onnx::TensorProto::STRING);
  for (const char* v : {"x", "y", "z"}) t.add_string_data(v);
  EXPECT_THAT(SplitInitializer(t, 0, {1, 2}, {"a", "b"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("does not match")));
}

TEST(InitializerSplitTest, WeightlessStaysWeightless) {
  onnx::TensorProto t;
  t.set_name("w");
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(4);
  t.add_dims(2);
  t.set_data_location(onnx::TensorProto::EXTERNAL);
  auto* location = t.add_external_data();
  location->set_key("location");
  location->set_value("weights-not-shipped.bin");
  auto* offset = t.add_external_data();
  offset->set_key("offset");
  offset->set_value("128");
  ORDO_ASSERT_OK_AND_ASSIGN(auto parts, SplitInitializer(t, 0, {1, 3}, {"a", "b"}));
  for (const auto& part : parts) {
    EXPECT_EQ(part.data_location(), onnx::TensorProto::EXTERNAL);
    EXPECT_FALSE(part.has_raw_data());
    EXPECT_EQ(part.float_data_size(), 0);
    ASSERT_EQ(part.external_data_size(), 1);  // no offset into a file it is not in
    EXPECT_EQ(part.external_data(0).value(), "weights-not-shipped.bin");
  }
  EXPECT_THAT(parts[1].dims(), ElementsAre(3, 2));
}

TEST(InitializerSplitTest, RejectsSizesThatDoNotAddUp) {
  EXPECT_THAT(SplitInitializer(FloatTensor({2, 3}, 6), 1, {1, 1}, {"a", "b"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("add up to 2")));
}

}  // namespace
}  // namespace ordo
