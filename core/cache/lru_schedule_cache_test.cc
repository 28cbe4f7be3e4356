#include "core/cache/lru_schedule_cache.h"

#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ordo {
namespace {

CachedSchedule Entry(int32_t ops, int64_t peak) {
  CachedSchedule entry;
  for (int32_t i = 0; i < ops; ++i) entry.order.push_back(i);
  entry.peak_units = peak;
  entry.status = ScheduleStatus::kOptimal;
  entry.algorithm = "dp";
  return entry;
}

std::optional<int64_t> PeakOf(LruScheduleCache& cache, absl::string_view key) {
  absl::StatusOr<std::optional<CachedSchedule>> entry = cache.Lookup(key);
  EXPECT_TRUE(entry.ok());
  if (!entry.ok() || !entry->has_value()) return std::nullopt;
  return (*entry)->peak_units;
}

TEST(LruScheduleCacheTest, MissThenHit) {
  LruScheduleCache cache(1 << 20);
  EXPECT_EQ(PeakOf(cache, "k"), std::nullopt);
  ASSERT_TRUE(cache.Insert("k", Entry(3, 7)).ok());
  EXPECT_EQ(PeakOf(cache, "k"), 7);
  ASSERT_TRUE(cache.Insert("k", Entry(3, 5)).ok());  // replaces
  EXPECT_EQ(PeakOf(cache, "k"), 5);
  EXPECT_EQ(cache.size(), 1);
}

TEST(LruScheduleCacheTest, EvictsLeastRecentlyUsed) {
  // Each entry charges 128 + 1 (key) + 2 ("dp") + 40 (10 ops) = 171 bytes.
  LruScheduleCache cache(3 * 171);
  ASSERT_TRUE(cache.Insert("a", Entry(10, 1)).ok());
  ASSERT_TRUE(cache.Insert("b", Entry(10, 2)).ok());
  ASSERT_TRUE(cache.Insert("c", Entry(10, 3)).ok());
  EXPECT_EQ(PeakOf(cache, "a"), 1);  // a is now the most recent
  ASSERT_TRUE(cache.Insert("d", Entry(10, 4)).ok());
  EXPECT_EQ(PeakOf(cache, "b"), std::nullopt);  // evicted
  EXPECT_EQ(PeakOf(cache, "a"), 1);
  EXPECT_EQ(PeakOf(cache, "c"), 3);
  EXPECT_EQ(PeakOf(cache, "d"), 4);
  EXPECT_EQ(cache.size(), 3);
  EXPECT_EQ(cache.charge_bytes(), 3 * 171);
}

TEST(LruScheduleCacheTest, EntryBiggerThanTheBudgetIsNotStored) {
  LruScheduleCache cache(200);
  ASSERT_TRUE(cache.Insert("small", Entry(1, 1)).ok());
  ASSERT_TRUE(cache.Insert("huge", Entry(1000, 1)).ok());
  EXPECT_EQ(PeakOf(cache, "huge"), std::nullopt);
  EXPECT_EQ(PeakOf(cache, "small"), 1);
}

TEST(LruScheduleCacheTest, TellsTheListenerWhichKeysItEvicts) {
  std::vector<std::string> evicted;
  LruScheduleCache cache(3 * 171, [&](absl::string_view key) { evicted.emplace_back(key); });
  for (const char* key : {"a", "b", "c"}) ASSERT_TRUE(cache.Insert(key, Entry(10, 1)).ok());
  ASSERT_TRUE(cache.Insert("b", Entry(10, 2)).ok());  // replaced: not an eviction
  EXPECT_TRUE(evicted.empty());
  ASSERT_TRUE(cache.Insert("huge", Entry(1000, 1)).ok());  // never stored: nothing evicted
  EXPECT_TRUE(evicted.empty());
  ASSERT_TRUE(cache.Insert("d", Entry(10, 4)).ok());  // a is the least recent
  EXPECT_EQ(evicted, std::vector<std::string>{"a"});
}

// The listener runs after the cache's lock is released, so it may use the
// cache (with the lock held this would deadlock: absl::Mutex is not
// reentrant).
TEST(LruScheduleCacheTest, TheListenerMayCallBackIntoTheCache) {
  std::vector<int64_t> sizes_seen;
  std::vector<bool> evicted_still_there;
  LruScheduleCache* cache_ptr = nullptr;
  LruScheduleCache cache(2 * 171, [&](absl::string_view key) {
    sizes_seen.push_back(cache_ptr->size());
    evicted_still_there.push_back(PeakOf(*cache_ptr, key).has_value());
  });
  cache_ptr = &cache;
  for (const char* key : {"a", "b", "c"}) ASSERT_TRUE(cache.Insert(key, Entry(10, 1)).ok());
  EXPECT_EQ(sizes_seen, std::vector<int64_t>{2});
  EXPECT_EQ(evicted_still_there, std::vector<bool>{false});
}

}  // namespace
}  // namespace ordo
