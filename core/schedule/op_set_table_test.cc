#include "core/schedule/op_set_table.h"

#include <random>
#include <set>
#include <vector>

#include "core/testing/trials.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

TEST(OpSetTableTest, FindsEqualSetsAndNumbersNewOnesInOrder) {
  OpSetTable table(2);
  const uint64_t a[] = {1, 2};
  const uint64_t b[] = {1, 3};
  EXPECT_EQ(table.FindOrInsert(a, 7), std::make_pair(0, true));
  EXPECT_EQ(table.FindOrInsert(b, 7), std::make_pair(1, true));  // same hash
  EXPECT_EQ(table.FindOrInsert(a, 7), std::make_pair(0, false));
  EXPECT_EQ(table.size(), 2);
  EXPECT_EQ(table.set(1)[1], 3u);
  EXPECT_EQ(table.hash(1), 7u);
}

TEST(OpSetTableTest, SurvivesGrowthWithManySets) {
  OpSetTable table(1);
  std::mt19937_64 rng(1);
  std::vector<uint64_t> values;
  std::set<uint64_t> distinct;
  for (int i = 0; i < 100000; ++i) {
    const uint64_t v = rng() % 50000;  // many repeats
    const auto [entry, inserted] = table.FindOrInsert(&v, v * 0x9E3779B97F4A7C15ull);
    EXPECT_EQ(inserted, distinct.insert(v).second);
    if (inserted) values.push_back(v);
    ASSERT_EQ(*table.set(entry), v);
  }
  EXPECT_EQ(table.size(), static_cast<int32_t>(values.size()));
  // Sets stay where they were put (the arena's chunks never move).
  for (int32_t entry = 0; entry < table.size(); ++entry) {
    ASSERT_EQ(*table.set(entry), values[entry]) << entry;
  }
  table.Clear();
  EXPECT_EQ(table.size(), 0);
  const uint64_t v = values[0];
  EXPECT_TRUE(table.FindOrInsert(&v, 5).second);
}

// Sets of several words across many chunks, and again after Clear (which
// keeps the chunks).
TEST(OpSetTableTest, KeepsMultiWordSetsAcrossChunksAndClear) {
  constexpr int32_t kWords = 13;
  OpSetTable table(kWords);
  for (int round = 0; round < 2; ++round) {
    for (uint64_t i = 0; i < 5000; ++i) {
      std::vector<uint64_t> set(kWords, i);
      set[kWords - 1] = i * 7 + round;
      ASSERT_EQ(table.FindOrInsert(set.data(), i * 0x9E3779B97F4A7C15ull),
                std::make_pair(static_cast<int32_t>(i), true));
    }
    for (int32_t entry = 0; entry < table.size(); ++entry) {
      ASSERT_EQ(table.set(entry)[0], static_cast<uint64_t>(entry));
      ASSERT_EQ(table.set(entry)[kWords - 1], static_cast<uint64_t>(entry) * 7 + round);
    }
    table.Clear();
  }
}

// A doubling that took a second of a check interval's time predicts two
// for the next: the search stops while that one is due and would end past
// the deadline, and goes on while it is not due or fits before it.
TEST(DoublingForecastTest, StopsBeforeADoublingThatWouldEndPastTheDeadline) {
  const absl::Time t0 = absl::UnixEpoch();
  const absl::Time deadline = t0 + absl::Seconds(100);
  DoublingForecast forecast;
  // Checks every 10 ms, 100 sets each, up to size 1000: the doubling at
  // 1024 is due, but intervals were short and it fits.
  int64_t size = 0;
  absl::Time now = t0;
  for (int i = 0; i < 10; ++i) {
    size += 100;
    now += absl::Milliseconds(10);
    EXPECT_FALSE(forecast.WouldOverrun(now, size, deadline)) << size;
  }
  // The interval that passed 1024 took 1 s: the next doubling (at 2048)
  // is forecast at 2 s.
  size = 1100;
  now += absl::Seconds(1);
  EXPECT_FALSE(forecast.WouldOverrun(now, size, deadline));  // 2048 not due yet
  // Due (within two intervals of 100) with 3 s left: goes on.
  now = deadline - absl::Seconds(3);
  size = 1900;
  EXPECT_FALSE(forecast.WouldOverrun(now, size, deadline));
  // Due with 1.5 s left: stop.
  now = deadline - absl::Milliseconds(1500);
  size = 1950;
  EXPECT_TRUE(forecast.WouldOverrun(now, size, deadline));
  // With no deadline in sight, never.
  EXPECT_FALSE(forecast.WouldOverrun(now, 1960, absl::InfiniteFuture()));
}

}  // namespace
}  // namespace ordo
