#include "core/schedule/scheduler_registry.h"

#include "core/memory/simulator.h"
#include "core/testing/status_matchers.h"
#include "core/testing/test_graph.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::StatusIs;
using ::ordo::testing::TestGraph;
using ::testing::HasSubstr;

TEST(SchedulerRegistryTest, UnknownNameListsKnownOnes) {
  SchedulerRegistry registry = BuiltinSchedulers();
  EXPECT_THAT(registry.Create("magic").status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("greedy")));
}

TEST(SchedulerRegistryTest, EveryBuiltinReturnsASimulatedValidSchedule) {
  Graph g = TestGraph(R"(
    input x 1
    op a1 Conv x -> a:50
    op b1 Conv x -> b:50
    op a2 Conv a -> a_small:1
    op b2 Conv b -> b_small:1
    op j Add a_small b_small -> y:1
    output y
  )");
  MemoryModel model = *BuildMemoryModel(g, {});
  SchedulerRegistry registry = BuiltinSchedulers();
  for (const SchedulerInfo& info : registry.schedulers()) {
    ORDO_ASSERT_OK_AND_ASSIGN(auto scheduler, registry.Create(info.name));
    ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult result, scheduler->Schedule(model, {}));
    EXPECT_EQ(result.peak_bytes, *SimulatePeak(model, result.order)) << info.name;
    EXPECT_LE(result.lower_bound_bytes, result.peak_bytes) << info.name;
  }
}

TEST(SchedulerRegistryTest, BestKeepsTheLowestPeakAndNamesTheWinner) {
  Graph g = TestGraph(R"(
    input x 1
    op a1 Conv x -> a:50
    op b1 Conv x -> b:50
    op a2 Conv a -> a_small:1
    op b2 Conv b -> b_small:1
    op j Add a_small b_small -> y:1
    output y
  )");
  MemoryModel model = *BuildMemoryModel(g, {});
  ORDO_ASSERT_OK_AND_ASSIGN(auto best, BuiltinSchedulers().Create("best"));
  ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult result, best->Schedule(model, {}));
  EXPECT_EQ(result.peak_bytes, 52);
  EXPECT_EQ(result.algorithm, "greedy");
}

}  // namespace
}  // namespace ordo
