#include "server/compile_admission.h"

#include <optional>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rpc/grpc_status.h"

namespace ordo::server {
namespace {

using ::ordo::testing::StatusIs;
using ::testing::HasSubstr;

TEST(CompileAdmissionTest, AdmitsUpToCapacityThenRefuses) {
  CompileAdmission admission(2);
  absl::StatusOr<CompileAdmission::Slot> a = admission.Admit();
  absl::StatusOr<CompileAdmission::Slot> b = admission.Admit();
  ORDO_ASSERT_OK(a.status());
  ORDO_ASSERT_OK(b.status());
  EXPECT_EQ(admission.running(), 2);
  EXPECT_THAT(admission.Admit().status(),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("2 compiles running")));
  // A refusal holds nothing.
  EXPECT_EQ(admission.running(), 2);
}

// The refusal says when to come back (the pushback trailer's value), and
// the refused do not all come back at once.
TEST(CompileAdmissionTest, ARefusalCarriesAJitteredPushback) {
  CompileAdmission admission(0);
  absl::flat_hash_set<int64_t> seen_ms;
  for (int i = 0; i < 50; ++i) {
    const absl::Status refused = admission.Admit().status();
    const std::optional<absl::Duration> after = rpc::RetryPushback(refused);
    ASSERT_TRUE(after.has_value()) << refused;
    EXPECT_GE(*after, kMinBusyPushback);
    EXPECT_LT(*after, kMaxBusyPushback);
    EXPECT_THAT(refused.message(),
                HasSubstr(absl::StrCat("retry after ", absl::ToInt64Milliseconds(*after), " ms")));
    seen_ms.insert(absl::ToInt64Milliseconds(*after));
  }
  EXPECT_GT(seen_ms.size(), 10u);
}

TEST(CompileAdmissionTest, ASlotIsFreedWhenItsHolderEnds) {
  CompileAdmission admission(1);
  {
    absl::StatusOr<CompileAdmission::Slot> slot = admission.Admit();
    ORDO_ASSERT_OK(slot.status());
    // Moving the slot keeps one hold, not two.
    CompileAdmission::Slot moved = *std::move(slot);
    EXPECT_EQ(admission.running(), 1);
  }
  EXPECT_EQ(admission.running(), 0);
  ORDO_EXPECT_OK(admission.Admit().status());
}

TEST(CompileAdmissionTest, ZeroCapacityAdmitsNothing) {
  CompileAdmission admission(0);
  EXPECT_THAT(admission.Admit().status(),
              StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("0 compiles")));
  EXPECT_EQ(admission.running(), 0);
}

TEST(CompileAdmissionTest, RacingCallersNeverExceedCapacity) {
  constexpr int kCapacity = 3;
  CompileAdmission admission(kCapacity);
  std::atomic<int> admitted{0};
  std::atomic<int> most{0};
  std::vector<std::thread> threads;
  threads.reserve(8);
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 2000; ++i) {
        absl::StatusOr<CompileAdmission::Slot> slot = admission.Admit();
        if (!slot.ok()) continue;
        const int now = admitted.fetch_add(1) + 1;
        int seen = most.load();
        while (now > seen && !most.compare_exchange_weak(seen, now)) {
        }
        admitted.fetch_sub(1);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_LE(most.load(), kCapacity);
  EXPECT_GE(most.load(), 1);
  EXPECT_EQ(admission.running(), 0);
}

}  // namespace
}  // namespace ordo::server
