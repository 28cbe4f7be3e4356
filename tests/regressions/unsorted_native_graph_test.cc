// Regression (found by tests/fuzz/graph_proto_fuzzer): a native ordo.v1.Graph
// listing an op before the producer of its input was accepted, so OpId order
// (the model-order baseline) did not run: `ordo compile` exited 1 with
// "scheduler model produced an invalid order". GraphBuilder::Build now
// refuses it with INVALID_ARGUMENT naming both ops.
#include <string>

#include "absl/strings/escaping.h"
#include "core/compile/import_model.h"
#include "core/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::StatusIs;
using ::testing::HasSubstr;

TEST(UnsortedNativeGraphTest, JsonConsumerBeforeProducerIsRefused) {
  constexpr absl::string_view kJson = R"({
    "tensors": [{"name": "x", "sizeBytes": 64}, {"name": "a", "sizeBytes": 64},
                {"name": "y", "sizeBytes": 64}],
    "ops": [{"name": "second", "type": "Relu", "inputs": ["a"], "outputs": ["y"]},
            {"name": "first", "type": "Relu", "inputs": ["x"], "outputs": ["a"]}],
    "inputs": ["x"], "outputs": ["y"]})";
  EXPECT_THAT(ImportModel(kJson, ModelFormat::kGraphJson).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("op \"second\" reads tensor \"a\" before op \"first\" writes "
                                 "it")));
}

TEST(UnsortedNativeGraphTest, FuzzerInputIsRefused) {
  // The input libFuzzer saved (182 bytes, a mutation of the seed
  // valid_cell.pb): the first op reads "x", which the third op writes.
  const std::string bytes = absl::HexStringToBytes(
      "0a0463656c6c120b0a017810011a040108040412080a01772080022803120b0a016110021a040108"
      "040412060a016220800412080a017920805d28041a280a04636f6e7612045369676e1a01781a0177"
      "2201612a110a0773747269646573120622040a0201011a120a0472656c7512045a656c751a017822"
      "01621a370a036311110a041204520a75ff1a01622201792a120a05616c706861120911000000000000"
      "e03f2a0b0a046d6f646512031a01782201782a0179");
  ASSERT_EQ(bytes.size(), 182u);
  EXPECT_THAT(ImportModel(bytes, ModelFormat::kGraphProto).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("ops must be listed in an order that runs")));
}

TEST(UnsortedNativeGraphTest, SortedGraphStillImports) {
  constexpr absl::string_view kJson = R"({
    "tensors": [{"name": "x", "sizeBytes": 64}, {"name": "a", "sizeBytes": 64},
                {"name": "y", "sizeBytes": 64}],
    "ops": [{"name": "first", "type": "Relu", "inputs": ["x"], "outputs": ["a"]},
            {"name": "second", "type": "Relu", "inputs": ["a"], "outputs": ["y"]}],
    "inputs": ["x"], "outputs": ["y"]})";
  EXPECT_TRUE(ImportModel(kJson, ModelFormat::kGraphJson).ok());
}

}  // namespace
}  // namespace ordo
