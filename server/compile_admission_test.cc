#include "server/compile_admission.h"

#include <thread>
#include <vector>

#include "core/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

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
