#include "server/byte_bounded_lru.h"

#include <string>
#include <string_view>
#include <vector>

#include "absl/strings/string_view.h"
#include "gtest/gtest.h"

namespace ordo::server {
namespace {

TEST(ByteBoundedLruTest, EvictsTheLeastRecentlyUsedBeyondTheBudget) {
  ByteBoundedLru<std::string> lru(100);  // entries of 1 + 19 = 20 bytes
  for (char c : std::string("abcde")) lru.Insert(std::string(1, c), std::string(1, c), 19);
  ASSERT_EQ(lru.Lookup("a"), "a");  // now the most recent
  lru.Insert("f", "f", 19);          // 120 bytes: the oldest, "b", goes
  EXPECT_FALSE(lru.Lookup("b").has_value());
  EXPECT_EQ(lru.Lookup("a"), "a");
  EXPECT_EQ(lru.Lookup("f"), "f");
}

TEST(ByteBoundedLruTest, KeepsTheFirstValueAndRefusesOversizedOrEmptyKeys) {
  ByteBoundedLru<int> lru(100);
  lru.Insert("k", 1, 10);
  lru.Insert("k", 2, 10);
  EXPECT_EQ(lru.Lookup("k"), 1);
  lru.Insert("big", 3, 30);  // over a quarter of the budget
  EXPECT_FALSE(lru.Lookup("big").has_value());
  lru.Insert("", 4, 1);
  EXPECT_FALSE(lru.Lookup("").has_value());
  ByteBoundedLru<int> off(0);
  off.Insert("k", 1, 0);
  EXPECT_FALSE(off.Lookup("k").has_value());
}

TEST(ByteBoundedLruTest, TellsTheListenerEachEvictedKey) {
  std::vector<std::string> evicted;
  ByteBoundedLru<std::string> lru(60, [&](absl::string_view key) { evicted.emplace_back(key); });
  for (char c : std::string("abcde")) lru.Insert(std::string(1, c), std::string(1, c), 14);
  EXPECT_EQ(evicted, std::vector<std::string>{"a"});  // 4 x 15 bytes fit in 60, not a fifth
}

// The listener runs after the lock is released: it may use the cache
// (absl::Mutex is not reentrant, so under the lock this would deadlock).
TEST(ByteBoundedLruTest, TheListenerMayCallBackIntoTheCache) {
  std::vector<bool> evicted_still_there;
  ByteBoundedLru<std::string>* lru_ptr = nullptr;
  ByteBoundedLru<std::string> lru(60, [&](absl::string_view key) {
    evicted_still_there.push_back(
        lru_ptr->Lookup(std::string_view(key.data(), key.size())).has_value());
  });
  lru_ptr = &lru;
  for (char c : std::string("abcde")) lru.Insert(std::string(1, c), std::string(1, c), 14);
  EXPECT_EQ(evicted_still_there, std::vector<bool>{false});
  EXPECT_EQ(lru.Lookup("e"), "e");
}

TEST(ByteBoundedLruTest, EraseFreesTheEntryAndItsBytesWithoutTellingTheListener) {
  std::vector<std::string> evicted;
  ByteBoundedLru<std::string> lru(60, [&](absl::string_view key) { evicted.emplace_back(key); });
  for (char c : std::string("abcd")) lru.Insert(std::string(1, c), std::string(1, c), 14);
  lru.Erase("b");
  lru.Erase("absent");
  EXPECT_FALSE(lru.Lookup("b").has_value());
  lru.Insert("b", "new", 14);  // a new value under the erased key
  EXPECT_EQ(lru.Lookup("b"), "new");
  EXPECT_TRUE(evicted.empty());  // 4 x 15 bytes again: nothing evicted
  EXPECT_EQ(lru.Lookup("a"), "a");
}

}  // namespace
}  // namespace ordo::server
