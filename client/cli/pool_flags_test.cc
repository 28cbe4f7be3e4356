#include "client/cli/pool_flags.h"

#include "core/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo::cli {
namespace {

using ::ordo::testing::StatusIs;
using ::testing::HasSubstr;

TEST(PoolFlagsTest, BandwidthsArePlainOrSi) {
  EXPECT_DOUBLE_EQ(*ParseBandwidth("1600000000"), 1.6e9);
  EXPECT_DOUBLE_EQ(*ParseBandwidth("1.6GB/s"), 1.6e9);
  EXPECT_DOUBLE_EQ(*ParseBandwidth("200MB/s"), 2e8);
  EXPECT_DOUBLE_EQ(*ParseBandwidth("3.2G"), 3.2e9);
  EXPECT_THAT(ParseBandwidth("fast"), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("")));
  EXPECT_THAT(ParseBandwidth("-1GB/s"), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("")));
  EXPECT_DOUBLE_EQ(*ParseBandwidth("1.5GiB/s"), 1.5 * 1024 * 1024 * 1024);
  EXPECT_DOUBLE_EQ(*ParseBandwidth("200MBps"), 2e8);
  EXPECT_DOUBLE_EQ(*ParseBandwidth("1e9"), 1e9);
  // Bits are not bytes: refused rather than read 8 times too fast.
  for (const char* bits : {"1.6Gbps", "1.6Gb/s", "8bps", "100mb/s"}) {
    EXPECT_THAT(ParseBandwidth(bits),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("lowercase b is bits")))
        << bits;
  }
  for (const char* odd : {"0x10", "0x1p30", "inf", "1.6XiB/s", "GB/s"}) {
    EXPECT_THAT(ParseBandwidth(odd),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not a positive bandwidth")))
        << odd;
  }
}

TEST(PoolFlagsTest, PoolFlagHasDefaultsForMissingBandwidths) {
  const MemoryPool dtcm = *ParsePoolFlag("dtcm:128KiB:3.2GB/s");
  EXPECT_EQ(dtcm.name, "dtcm");
  EXPECT_EQ(dtcm.capacity_bytes, 128 * 1024);
  EXPECT_DOUBLE_EQ(dtcm.read_bytes_per_second, 3.2e9);
  EXPECT_DOUBLE_EQ(dtcm.write_bytes_per_second, 3.2e9);
  const MemoryPool sdram = *ParsePoolFlag("sdram:32MiB:0.2GB/s:0.1GB/s");
  EXPECT_DOUBLE_EQ(sdram.write_bytes_per_second, 1e8);
  EXPECT_FALSE(sdram.off_chip);
  const MemoryPool psram = *ParsePoolFlag("psram:8MiB:160MB/s:off-chip");
  EXPECT_TRUE(psram.off_chip);
  EXPECT_DOUBLE_EQ(psram.write_bytes_per_second, 1.6e8);
  const MemoryPool plain = *ParsePoolFlag("sram:4096");
  EXPECT_DOUBLE_EQ(plain.read_bytes_per_second, kDefaultPoolBytesPerSecond);
  EXPECT_THAT(ParsePoolFlag("sram:0"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("pool \"sram\"")));
  EXPECT_THAT(ParsePoolFlag("sram"), StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("")));
  // A capacity the byte-size parser refuses says why.
  EXPECT_THAT(ParsePoolFlag("psram:8EiB"),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("capacity of pool \"psram\": unknown unit \"eib\"")));
  EXPECT_THAT(ParsePoolFlag("psram:9223372036854775807"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("out of range")));
  EXPECT_THAT(ParsePoolFlag("sram:1KiB:slow"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"slow\"")));
}

TEST(PoolFlagsTest, DevicePoolsAndPins) {
  const std::string device = "STM32H743";
  const PoolOptions preset = *PoolOptionsFromFlags(&device, {}, {"input:dtcm"});
  EXPECT_EQ(preset.pools.size(), 4u);
  EXPECT_EQ(preset.pinned.at("input"), "dtcm");
  const std::string unknown = "z80";
  EXPECT_THAT(PoolOptionsFromFlags(&unknown, {}, {}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unknown device \"z80\"")));
  EXPECT_THAT(PoolOptionsFromFlags(&device, {"a:1KiB"}, {}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("not both")));
  EXPECT_THAT(PoolOptionsFromFlags(nullptr, {"a:1KiB", "a:2KiB"}, {}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"a\" is given twice")));
  EXPECT_THAT(
      PoolOptionsFromFlags(&device, {}, {"input:dtcm", "input:axi_sram"}),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("tensor \"input\" is pinned twice")));
  EXPECT_THAT(PoolOptionsFromFlags(nullptr, {"a:1KiB"}, {"x:b"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unknown memory pool \"b\"")));
}

}  // namespace
}  // namespace ordo::cli
