// Regression (found by tests/fuzz/graph_proto_fuzzer: std::length_error
// from absl::StrCat, an out-of-bounds read): an op listing the same output
// tensor twice made GraphBuilder name "both producers" of the tensor by
// indexing the op list at the op being built, which is not in it yet.
// It is now refused as `op "split" writes tensor "y" twice`.
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

TEST(DuplicateOutputTest, OpWritingOneTensorTwiceIsRefused) {
  constexpr absl::string_view kJson = R"({
    "tensors": [{"name": "x", "sizeBytes": 64}, {"name": "y", "sizeBytes": 32}],
    "ops": [{"name": "split", "type": "Split", "inputs": ["x"], "outputs": ["y", "y"]}],
    "inputs": ["x"], "outputs": ["y"]})";
  EXPECT_THAT(ImportModel(kJson, ModelFormat::kGraphJson).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("op \"split\" writes tensor \"y\" twice")));
}

TEST(DuplicateOutputTest, FuzzerInputIsRefused) {
  // The input libFuzzer saved (a mutation of the seed valid_cell.pb): its
  // third op, named "\x12\x04R\n", lists output "x" twice.
  const std::string bytes = absl::HexStringToBytes(
      "0a0463656c6c120b0a017810011a040108040412080a01772080022803120b0a016110021a040108"
      "040412060a016220800412080a017920805d28041a280a04636f6e7612045369676e1a01781a0177"
      "2201612a110a0773747269646573120622040a0201011a120a0472656c7512045a656c751a017822"
      "01621a370a036311110a041204520a75ff1a01622201782a120a05616c706861120911000000000000"
      "e03f2a0b0a046d6f646512031a01782201782a0179");
  ASSERT_EQ(bytes.size(), 182u);
  EXPECT_THAT(ImportModel(bytes, ModelFormat::kGraphProto).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("twice")));
}

}  // namespace
}  // namespace ordo
