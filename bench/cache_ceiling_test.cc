#include "bench/cache_ceiling.h"

#include <vector>

#include "gtest/gtest.h"

namespace ordo::bench {
namespace {

TEST(CacheCeilingTest, RepeatsAndSchedulingBoundTheSpeedUp) {
  // Two first sends of 10 ms with 4 ms of scheduling each, one repeat of
  // 10 ms: a perfect cache leaves 2 x 6 ms of the 30 ms.
  const std::vector<ServedCall> calls = {
      {absl::Milliseconds(10), absl::Milliseconds(4), false},
      {absl::Milliseconds(10), absl::Milliseconds(4), false},
      {absl::Milliseconds(10), absl::Milliseconds(4), true},
  };
  const CacheCeiling ceiling = CacheCeilingOf(calls);
  EXPECT_EQ(ceiling.calls, 3);
  EXPECT_EQ(ceiling.repeats, 1);
  EXPECT_DOUBLE_EQ(ceiling.schedule_share, 0.4);
  EXPECT_DOUBLE_EQ(ceiling.speedup, 30.0 / 12.0);
}

TEST(CacheCeilingTest, SchedulingLongerThanTheCallCountsAsTheCall) {
  const std::vector<ServedCall> calls = {
      {absl::Milliseconds(10), absl::Milliseconds(12), false},
      {absl::Milliseconds(10), absl::Milliseconds(5), false},
  };
  const CacheCeiling ceiling = CacheCeilingOf(calls);
  EXPECT_DOUBLE_EQ(ceiling.schedule_share, 0.75);
  EXPECT_DOUBLE_EQ(ceiling.speedup, 4.0);
}

TEST(CacheCeilingTest, NothingLeftToTimeGivesNoBound) {
  EXPECT_EQ(CacheCeilingOf({}).speedup, 0);
  const std::vector<ServedCall> only_repeats = {{absl::Milliseconds(3), absl::ZeroDuration(), true}};
  EXPECT_EQ(CacheCeilingOf(only_repeats).speedup, 0);
  EXPECT_EQ(CacheCeilingOf(only_repeats).repeats, 1);
}

}  // namespace
}  // namespace ordo::bench
