#include "server/compile_budget.h"

#include "core/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo::server {
namespace {

using ::ordo::testing::StatusIs;
using ::testing::HasSubstr;

const absl::Time kNow = absl::FromUnixSeconds(1'000'000);

TEST(CallDeadlineTest, NoDeadlineGetsTheDefault) {
  CompilerLimits limits;
  limits.default_deadline = absl::Seconds(60);
  EXPECT_EQ(CallDeadline(absl::InfiniteFuture(), kNow, limits), kNow + absl::Seconds(60));
}

TEST(CallDeadlineTest, LongDeadlinesAreCappedShortOnesKept) {
  CompilerLimits limits;
  limits.max_deadline = absl::Minutes(10);
  EXPECT_EQ(CallDeadline(kNow + absl::Hours(5), kNow, limits), kNow + absl::Minutes(10));
  EXPECT_EQ(CallDeadline(kNow + absl::Seconds(3), kNow, limits), kNow + absl::Seconds(3));
  // Already passed: kept as it is (the compile then has no time left).
  EXPECT_EQ(CallDeadline(kNow - absl::Seconds(1), kNow, limits), kNow - absl::Seconds(1));
}

TEST(SplitDeadlineTest, AFifthIsKeptForTheStagesAfterTheSearch) {
  const CompileBudget budget = SplitDeadline(absl::Seconds(60), kNow + absl::Seconds(10), kNow);
  EXPECT_EQ(budget.search_time, absl::Seconds(8));
  EXPECT_EQ(budget.stages_deadline, kNow + absl::Seconds(8));
}

TEST(SplitDeadlineTest, AShorterRequestedTimeIsKept) {
  const CompileBudget budget = SplitDeadline(absl::Seconds(2), kNow + absl::Seconds(10), kNow);
  EXPECT_EQ(budget.search_time, absl::Seconds(2));
  // Rewriting's stages still share the whole window.
  EXPECT_EQ(budget.stages_deadline, kNow + absl::Seconds(8));
}

TEST(SplitDeadlineTest, TinyDeadlinesKeepTheFloorAndSearchNotAtAll) {
  // 300 ms: a fifth is 60 ms, below the floor; the search gets 200 ms.
  CompileBudget budget = SplitDeadline(absl::Seconds(10), kNow + absl::Milliseconds(300), kNow);
  EXPECT_EQ(budget.search_time, absl::Milliseconds(200));
  EXPECT_EQ(budget.stages_deadline, kNow + absl::Milliseconds(200));
  // 50 ms: less than the floor itself; the search gets nothing.
  budget = SplitDeadline(absl::Seconds(10), kNow + absl::Milliseconds(50), kNow);
  EXPECT_EQ(budget.search_time, absl::ZeroDuration());
  EXPECT_EQ(budget.stages_deadline, kNow - absl::Milliseconds(50));
}

TEST(SplitDeadlineTest, APassedDeadlineLeavesNoSearchTime) {
  const CompileBudget budget = SplitDeadline(absl::Seconds(10), kNow - absl::Seconds(1), kNow);
  EXPECT_EQ(budget.search_time, absl::ZeroDuration());
  EXPECT_LT(budget.stages_deadline, kNow);
}

TEST(SplitDeadlineTest, NoDeadlineKeepsTheRequestedTime) {
  const CompileBudget budget = SplitDeadline(absl::Seconds(7), absl::InfiniteFuture(), kNow);
  EXPECT_EQ(budget.search_time, absl::Seconds(7));
  EXPECT_EQ(budget.stages_deadline, absl::InfiniteFuture());
}

TEST(StateBudgetTest, TheServersLimitUnlessLessIsAsked) {
  CompilerLimits limits;
  limits.max_state_bytes = 1000;
  EXPECT_EQ(*StateBudget(0, limits), 1000);
  EXPECT_EQ(*StateBudget(10, limits), 10);
  EXPECT_EQ(*StateBudget(5000, limits), 1000);
  EXPECT_THAT(StateBudget(-1, limits),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("options.max_state_bytes")));
}

}  // namespace
}  // namespace ordo::server
