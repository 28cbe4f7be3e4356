#include "client/cli/byte_size.h"

#include "core/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo::cli {
namespace {

using ::ordo::testing::StatusIs;
using ::testing::HasSubstr;

TEST(ByteSizeTest, ParsesUnits) {
  EXPECT_EQ(*ParseByteSize("1048576"), 1048576);
  EXPECT_EQ(*ParseByteSizeFlag("--on-chip", "1KiB"), 1024);
  EXPECT_EQ(*ParseByteSize("512KiB"), 512 * 1024);
  EXPECT_EQ(*ParseByteSize("2 MiB"), 2 * 1024 * 1024);
  EXPECT_EQ(*ParseByteSize("1.5MB"), 1536 * 1024);
  EXPECT_EQ(*ParseByteSize("1g"), int64_t{1} << 30);
  // Whole numbers are exact past a double's 2^53.
  EXPECT_EQ(*ParseByteSize("4611686018427387903"), int64_t{4611686018427387903});
}

TEST(ByteSizeTest, RejectsGarbage) {
  EXPECT_THAT(ParseByteSize("lots").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("lots")));
  EXPECT_THAT(ParseByteSize("3 parsecs").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unknown unit")));
  EXPECT_THAT(ParseByteSize("-5").status(), StatusIs(absl::StatusCode::kInvalidArgument,
                                                      HasSubstr("not a byte size")));
  EXPECT_THAT(ParseByteSize("99999999999GiB").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("out of range")));
  EXPECT_THAT(ParseByteSize("0.5").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not a whole number")));
  // A flag's value: the error names the flag.
  EXPECT_THAT(ParseByteSizeFlag("--memory-limit", "lots").status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--memory-limit: not a byte size: \"lots\"")));
}

}  // namespace
}  // namespace ordo::cli
