#include "core/schedule/scheduler_registry.h"

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

TEST(SchedulerRegistryTest, UnknownNameListsKnownOnes) {
  SchedulerRegistry registry = BuiltinSchedulers();
  EXPECT_THAT(registry.Create("magic").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("greedy")));
}

TEST(SchedulerRegistryTest, EveryBuiltinReturnsASimulatedValidSchedule) {
  const MemoryModel model = TestModel(kTwoBranchesGraph);
  SchedulerRegistry registry = BuiltinSchedulers();
  for (const SchedulerInfo& info : registry.schedulers()) {
    ORDO_ASSERT_OK_AND_ASSIGN(auto scheduler, registry.Create(info.name));
    ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult result, scheduler->Schedule(model, {}));
    EXPECT_EQ(result.peak_bytes, *SimulatePeak(model, result.order)) << info.name;
    EXPECT_LE(result.lower_bound_bytes, result.peak_bytes) << info.name;
  }
}

TEST(SchedulerRegistryTest, BestKeepsTheLowestPeakAndNamesTheWinner) {
  const MemoryModel model = TestModel(kTwoBranchesGraph);
  ORDO_ASSERT_OK_AND_ASSIGN(auto best, BuiltinSchedulers().Create("best"));
  ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult result, best->Schedule(model, {}));
  EXPECT_EQ(result.peak_bytes, 52);
  EXPECT_EQ(result.algorithm, "greedy");
}

}  // namespace
}  // namespace ordo
