#include "core/rewrite/pareto_front.h"

#include <random>
#include <set>

#include "core/testing/trials.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

ParetoPoint Point(int64_t peak, double latency, int rewrites = 0) {
  ParetoPoint p;
  p.peak_bytes = peak;
  p.latency_overhead = latency;
  p.rewrites.assign(rewrites, "r");
  return p;
}

std::vector<std::pair<int64_t, double>> PeaksAndCosts(const std::vector<ParetoPoint>& points) {
  std::vector<std::pair<int64_t, double>> out;
  for (const ParetoPoint& p : points) out.emplace_back(p.peak_bytes, p.latency_overhead);
  return out;
}

TEST(ParetoFrontTest, KeepsTheTradeOffAndDropsDominatedPoints) {
  // (90, 0.02) is beaten by (80, 0.01); (60, 0.3) by (50, 0.2).
  std::vector<ParetoPoint> front = NonDominated({Point(100, 0), Point(90, 0.02), Point(80, 0.01),
                                                 Point(50, 0.2), Point(60, 0.3)});
  EXPECT_THAT(PeaksAndCosts(front),
              ::testing::ElementsAre(std::pair<int64_t, double>{100, 0},
                                     std::pair<int64_t, double>{80, 0.01},
                                     std::pair<int64_t, double>{50, 0.2}));
}

TEST(ParetoFrontTest, EqualPointsKeepTheShorterRoute) {
  std::vector<ParetoPoint> front = NonDominated({Point(70, 0.1, 3), Point(70, 0.1, 1)});
  ASSERT_EQ(front.size(), 1u);
  EXPECT_EQ(front[0].rewrites.size(), 1u);
}

// Against the definition on random points (many ties, small ranges).
TEST(ParetoFrontTest, MatchesBruteForceOnRandomPoints) {
  std::mt19937_64 rng(18);
  for (int trial = 0; trial < ::ordo::testing::Trials(300); ++trial) {
    std::vector<ParetoPoint> points;
    const int n = 1 + trial % 12;
    for (int i = 0; i < n; ++i) {
      points.push_back(Point(static_cast<int64_t>(rng() % 6), static_cast<double>(rng() % 5) / 10));
    }
    std::set<std::pair<int64_t, double>> expected;
    for (const ParetoPoint& p : points) {
      bool dominated = false;
      for (const ParetoPoint& q : points) {
        dominated |= q.peak_bytes <= p.peak_bytes && q.latency_overhead <= p.latency_overhead &&
                     (q.peak_bytes < p.peak_bytes || q.latency_overhead < p.latency_overhead);
      }
      if (!dominated) expected.emplace(p.peak_bytes, p.latency_overhead);
    }
    const std::vector<ParetoPoint> front = NonDominated(points);
    const auto got = PeaksAndCosts(front);
    using PointSet = std::set<std::pair<int64_t, double>>;
    EXPECT_EQ(PointSet(got.begin(), got.end()), expected);
    EXPECT_EQ(got.size(), expected.size()) << "a point twice";
    for (size_t i = 1; i < front.size(); ++i) {
      EXPECT_LT(front[i - 1].latency_overhead, front[i].latency_overhead);
      EXPECT_GT(front[i - 1].peak_bytes, front[i].peak_bytes);
    }
  }
}

}  // namespace
}  // namespace ordo
