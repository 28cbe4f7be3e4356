#include "server/single_flight.h"

#include <atomic>
#include <functional>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/synchronization/notification.h"
#include "gtest/gtest.h"

namespace ordo::server {
namespace {

const absl::Time kNoDeadline = absl::InfiniteFuture();

// Polls `condition` (no sleeps as synchronisation: a bounded wait).
bool Eventually(const std::function<bool()>& condition) {
  const absl::Time deadline = absl::Now() + absl::Seconds(10);
  while (absl::Now() < deadline) {
    if (condition()) return true;
    std::this_thread::yield();
  }
  return condition();
}

// A leader of key "k" on its own thread whose compute returns 7 once
// `release` is notified; returns when the flight is open.
std::thread HeldLeader(SingleFlight<int>& flight, absl::Notification& release) {
  std::thread leader([&flight, &release] {
    auto outcome = flight.Do("k", kNoDeadline, [&] {
      release.WaitForNotification();
      return 7;
    });
    EXPECT_EQ(outcome->value, 7);
  });
  EXPECT_TRUE(Eventually([&] { return flight.InFlight() == 1; }));
  return leader;
}

TEST(SingleFlightTest, ALoneCallComputesAndTheKeyIsForgottenAfter) {
  SingleFlight<int> flight;
  int runs = 0;
  auto first = flight.Do("k", kNoDeadline, [&] { return ++runs; });
  ASSERT_TRUE(first.has_value());
  EXPECT_EQ(first->value, 1);
  EXPECT_FALSE(first->shared);
  EXPECT_EQ(flight.InFlight(), 0);
  auto second = flight.Do("k", kNoDeadline, [&] { return ++runs; });
  EXPECT_EQ(second->value, 2);  // not a cache: computed again
  EXPECT_EQ(flight.FollowersTotal(), 0);
}

// A value that counts its copies (a compile's whole response is large).
struct CopyCounted {
  static inline std::atomic<int> copies{0};
  int payload = 0;
  CopyCounted() = default;
  explicit CopyCounted(int p) : payload(p) {}
  CopyCounted(const CopyCounted& other) : payload(other.payload) { ++copies; }
  CopyCounted& operator=(const CopyCounted& other) {
    payload = other.payload;
    ++copies;
    return *this;
  }
  CopyCounted(CopyCounted&&) = default;
  CopyCounted& operator=(CopyCounted&&) = default;
};

TEST(SingleFlightTest, ALoneLeaderGetsItsValueWithoutACopy) {
  SingleFlight<CopyCounted> flight;
  CopyCounted::copies = 0;
  auto outcome = flight.Do("k", kNoDeadline, [] { return CopyCounted(7); });
  ASSERT_TRUE(outcome.has_value());
  EXPECT_EQ(outcome->value.payload, 7);
  EXPECT_EQ(CopyCounted::copies, 0);
}

TEST(SingleFlightTest, ConcurrentCallsOfOneKeyComputeOnceAndAllGetTheValue) {
  constexpr int kCalls = 32;
  SingleFlight<std::string> flight;
  std::atomic<int> runs{0};
  absl::Notification leader_running;
  std::vector<std::optional<SingleFlight<std::string>::Outcome>> outcomes(kCalls);
  std::vector<std::thread> threads;
  // The leader holds its flight open until every other call has joined it.
  threads.emplace_back([&] {
    outcomes[0] = flight.Do("model", kNoDeadline, [&] {
      ++runs;
      leader_running.Notify();
      EXPECT_TRUE(Eventually([&] { return flight.FollowersTotal() == kCalls - 1; }));
      return std::string("schedule");
    });
  });
  leader_running.WaitForNotification();
  for (int i = 1; i < kCalls; ++i) {
    threads.emplace_back([&, i] {
      outcomes[i] = flight.Do("model", kNoDeadline, [&] {
        ++runs;
        return std::string("recomputed");
      });
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(runs.load(), 1);
  int shared = 0;
  for (const auto& outcome : outcomes) {
    ASSERT_TRUE(outcome.has_value());
    EXPECT_EQ(outcome->value, "schedule");
    shared += outcome->shared;
  }
  EXPECT_EQ(shared, kCalls - 1);
  EXPECT_EQ(flight.InFlight(), 0);
}

TEST(SingleFlightTest, DifferentKeysDoNotWaitForEachOther) {
  SingleFlight<int> flight;
  absl::Notification release;
  std::thread slow([&] {
    flight.Do("a", kNoDeadline, [&] {
      release.WaitForNotification();
      return 1;
    });
  });
  ASSERT_TRUE(Eventually([&] { return flight.InFlight() == 1; }));
  auto other = flight.Do("b", kNoDeadline, [] { return 2; });
  EXPECT_EQ(other->value, 2);
  EXPECT_FALSE(other->shared);
  release.Notify();
  slow.join();
}

TEST(SingleFlightTest, AFollowerGivesUpAtItsDeadlineAndTheLeaderStillFinishes) {
  SingleFlight<int> flight;
  absl::Notification release;
  std::thread leader = HeldLeader(flight, release);
  bool ran = false;
  auto late = flight.Do("k", absl::Now() + absl::Milliseconds(20), [&] {
    ran = true;
    return 0;
  });
  EXPECT_FALSE(late.has_value());
  EXPECT_FALSE(ran);
  release.Notify();
  leader.join();
}

TEST(SingleFlightTest, AFollowerSeesTheLeadersProgressAsItJoinsAndAfter) {
  SingleFlight<int, int> flight;
  std::atomic<int> follower_saw{0};
  std::thread leader([&] {
    SingleFlight<int, int>::Wait wait;
    auto outcome = flight.Do("k", wait, [&](const SingleFlight<int, int>::ReportFn& report) {
      report(1);  // before anyone joined: the follower sees it as it joins
      EXPECT_TRUE(Eventually([&] { return follower_saw.load() == 1; }));
      report(2);
      EXPECT_TRUE(Eventually([&] { return follower_saw.load() == 2; }));
      return 7;
    });
    ASSERT_TRUE(outcome.ok());
    EXPECT_FALSE(outcome->shared);
  });
  ASSERT_TRUE(Eventually([&] { return flight.InFlight() == 1; }));
  std::vector<int> seen;
  SingleFlight<int, int>::Wait wait;
  wait.on_progress = [&](const int& progress) {
    seen.push_back(progress);
    follower_saw = progress;
  };
  auto outcome = flight.Do("k", wait, [](const SingleFlight<int, int>::ReportFn&) { return 0; });
  leader.join();
  ASSERT_TRUE(outcome.ok()) << outcome.status();
  EXPECT_TRUE(outcome->shared);
  EXPECT_EQ(outcome->value, 7);
  EXPECT_EQ(seen, (std::vector<int>{1, 2}));
}

TEST(SingleFlightTest, AFollowerWhoseCallIsCancelledStopsWaiting) {
  SingleFlight<int> flight;
  absl::Notification release;
  std::thread leader = HeldLeader(flight, release);
  std::atomic<bool> cancelled{false};
  SingleFlight<int>::Wait wait;
  wait.cancelled = &cancelled;
  absl::StatusOr<SingleFlight<int>::Outcome> outcome;
  std::thread follower([&] {
    outcome = flight.Do("k", wait, [](const SingleFlight<int>::ReportFn&) { return 0; });
  });
  ASSERT_TRUE(Eventually([&] { return flight.FollowersTotal() == 1; }));
  cancelled = true;
  follower.join();  // while the leader still runs
  EXPECT_EQ(outcome.status().code(), absl::StatusCode::kCancelled);
  release.Notify();
  leader.join();
}

}  // namespace
}  // namespace ordo::server
