#include "bench/latency_summary.h"

#include "gtest/gtest.h"

namespace ordo::bench {
namespace {

TEST(LatencySummaryTest, NearestRankOfOneToHundred) {
  std::vector<absl::Duration> samples;
  for (int i = 100; i >= 1; --i) samples.push_back(absl::Milliseconds(i));
  const LatencySummary s = Summarize(samples);
  EXPECT_EQ(s.count, 100);
  EXPECT_EQ(s.p50, absl::Milliseconds(50));
  EXPECT_EQ(s.p90, absl::Milliseconds(90));
  EXPECT_EQ(s.p99, absl::Milliseconds(99));
  EXPECT_EQ(s.max, absl::Milliseconds(100));
  EXPECT_EQ(s.mean, absl::Microseconds(50500));
}

TEST(LatencySummaryTest, OneSampleIsEveryPercentile) {
  const LatencySummary s = Summarize({absl::Milliseconds(7)});
  EXPECT_EQ(s.p50, absl::Milliseconds(7));
  EXPECT_EQ(s.p99, absl::Milliseconds(7));
  EXPECT_EQ(s.max, absl::Milliseconds(7));
}

TEST(LatencySummaryTest, EmptyIsZero) {
  const LatencySummary s = Summarize({});
  EXPECT_EQ(s.count, 0);
  EXPECT_EQ(s.p99, absl::ZeroDuration());
}

}  // namespace
}  // namespace ordo::bench
