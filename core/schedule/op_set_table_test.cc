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

}  // namespace
}  // namespace ordo
