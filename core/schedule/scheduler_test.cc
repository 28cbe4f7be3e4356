#include "core/schedule/scheduler.h"

#include "core/memory/simulator.h"
#include "core/testing/status_matchers.h"
#include "core/testing/test_graph.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::StatusIs;
using ::ordo::testing::kTwoBranchesGraph;
using ::ordo::testing::TestModel;
using ::testing::HasSubstr;

ScheduleResult Claim(std::vector<int32_t> order, int64_t peak, int64_t bound,
                     ScheduleStatus status) {
  ScheduleResult claim;
  claim.order = std::move(order);
  claim.peak_bytes = peak;
  claim.lower_bound_bytes = bound;
  claim.status = status;
  claim.algorithm = "dp";
  return claim;
}

TEST(CheckClaimedScheduleTest, AcceptsATrueClaimAndKeepsItsProvenBound) {
  const MemoryModel model = TestModel(kTwoBranchesGraph);
  ASSERT_EQ(*SimulatePeak(model, {0, 2, 1, 3, 4}), 52);
  ORDO_ASSERT_OK_AND_ASSIGN(
      ScheduleResult checked,
      CheckClaimedSchedule(model, Claim({0, 2, 1, 3, 4}, 52, 52, ScheduleStatus::kOptimal)));
  EXPECT_EQ(checked.peak_bytes, 52);
  EXPECT_EQ(checked.lower_bound_bytes, 52);
  EXPECT_EQ(checked.status, ScheduleStatus::kOptimal);
  EXPECT_EQ(checked.algorithm, "dp");
}

TEST(CheckClaimedScheduleTest, CapsTheBoundAndDowngradesAnUnsupportedOptimalClaim) {
  const MemoryModel model = TestModel(kTwoBranchesGraph);
  // A bound above the peak is capped at it.
  ORDO_ASSERT_OK_AND_ASSIGN(
      ScheduleResult capped,
      CheckClaimedSchedule(model, Claim({0, 2, 1, 3, 4}, 52, 1000, ScheduleStatus::kBounded)));
  EXPECT_EQ(capped.lower_bound_bytes, 52);
  // "Optimal" with a bound below the peak: at most bounded; the spec's bound
  // replaces a lower claim.
  ORDO_ASSERT_OK_AND_ASSIGN(
      ScheduleResult downgraded,
      CheckClaimedSchedule(model, Claim({0, 1, 2, 3, 4}, 101, 0, ScheduleStatus::kOptimal)));
  EXPECT_EQ(downgraded.status, ScheduleStatus::kBounded);
  EXPECT_EQ(downgraded.lower_bound_bytes, MemoryLowerBound(model));
}

TEST(CheckClaimedScheduleTest, RejectsAnOrderThatBreaksADependency) {
  // What ordo-fake-worker sends: the ops reversed, claimed optimal at 1 B.
  EXPECT_THAT(CheckClaimedSchedule(TestModel(kTwoBranchesGraph),
                                   Claim({4, 3, 2, 1, 0}, 1, 1, ScheduleStatus::kOptimal)),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("not an order of the part's 5 ops")));
}

TEST(CheckClaimedScheduleTest, RejectsAForeignOrderOfAnotherLength) {
  EXPECT_THAT(CheckClaimedSchedule(TestModel(kTwoBranchesGraph),
                                   Claim({0, 1, 2}, 52, 52, ScheduleStatus::kOptimal)),
              StatusIs(absl::StatusCode::kDataLoss, HasSubstr("not an order")));
}

TEST(CheckClaimedScheduleTest, RejectsAValidOrderWithAMisreportedPeak) {
  // A valid order is still a lie when its peak is not the simulator's.
  EXPECT_THAT(CheckClaimedSchedule(TestModel(kTwoBranchesGraph),
                                   Claim({0, 1, 2, 3, 4}, 52, 52, ScheduleStatus::kOptimal)),
              StatusIs(absl::StatusCode::kDataLoss,
                       HasSubstr("claims peak 52 B; the simulator says 101 B")));
}

}  // namespace
}  // namespace ordo
