// Properties of every registered planner on random graphs and random valid
// schedules, through the PlanArena stage (which verifies every plan).

#include <random>

#include "core/arena/arena_planner_registry.h"
#include "core/arena/arena_problem.h"
#include "core/arena/best_arena_planner.h"
#include "core/testing/status_matchers.h"
#include "core/testing/test_graph.h"
#include "core/testing/trials.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::RandomTopologicalOrder;

using ::ordo::testing::StatusIs;
using ::testing::HasSubstr;


class FixedClock final : public Clock {
 public:
  absl::Time Now() const override { return absl::UnixEpoch(); }
};

TEST(ArenaPlannersTest, EveryPlannerGivesAVerifiedAlignedPlanOnRandomSchedules) {
  const ArenaPlannerRegistry& registry = BuiltinArenaPlanners();
  const FixedClock clock;  // deterministic: only node budgets limit the search
  std::mt19937_64 rng(2024);
  for (int iteration = 0; iteration < ::ordo::testing::Trials(150); ++iteration) {
    testing::RandomDagOptions options;
    options.num_ops = 2 + iteration % 25;
    options.num_inputs = 1 + iteration % 3;
    options.max_bytes = 1000;
    const Graph graph = testing::RandomDag(rng, options);
    const MemoryModel model = *BuildMemoryModel(graph, {});
    const std::vector<int32_t> order = RandomTopologicalOrder(model, rng);
    const SimulationResult simulation = *Simulate(model, order);
    const int64_t alignment = iteration % 2 == 0 ? 64 : 16;
    int64_t best = 0;
    std::vector<PlannerArena> best_members;
    for (const ArenaPlannerInfo& info : registry.planners()) {
      ArenaOptions arena_options;
      arena_options.planner = info.name;
      arena_options.alignment = alignment;
      arena_options.max_search_nodes = 20000;
      absl::StatusOr<ArenaPlan> plan = PlanArena(model, simulation, arena_options, clock);
      ASSERT_TRUE(plan.ok()) << info.name << ": " << plan.status();
      EXPECT_EQ(plan->planner, info.name);
      // Given the problem it builds (as the place stage shares its own),
      // the same plan.
      const ArenaProblem built = *BuildArenaProblem(model, simulation, alignment);
      absl::StatusOr<ArenaPlan> from_built =
          PlanArena(model, simulation, arena_options, clock, &built);
      ASSERT_TRUE(from_built.ok()) << info.name << ": " << from_built.status();
      EXPECT_EQ(from_built->arena_bytes, plan->arena_bytes) << info.name;
      EXPECT_EQ(from_built->algorithm, plan->algorithm) << info.name;
      ASSERT_EQ(from_built->tensors.size(), plan->tensors.size()) << info.name;
      for (size_t i = 0; i < plan->tensors.size(); ++i) {
        EXPECT_EQ(from_built->tensors[i].tensor, plan->tensors[i].tensor) << info.name;
        EXPECT_EQ(from_built->tensors[i].offset, plan->tensors[i].offset) << info.name;
      }
      EXPECT_GE(plan->arena_bytes, plan->lower_bound_bytes);
      std::vector<int64_t> offset_of(model.num_tensors(), -1);
      for (const TensorPlacement& p : plan->tensors) {
        EXPECT_EQ(p.offset % alignment, 0) << info.name;
        offset_of[p.tensor] = p.offset;
      }
      for (int32_t t = 0; t < model.num_tensors(); ++t) {
        if (simulation.inplace_source[t] != kNoId) {
          EXPECT_EQ(offset_of[t], offset_of[simulation.inplace_source[t]]) << info.name;
        }
      }
      // Each plan names its own planner's figure; best's members' figures are
      // what each member gives when asked on its own.
      EXPECT_EQ(PlannedArenaBytes(*plan, info.name), plan->arena_bytes) << info.name;
      if (info.name == "best") {
        best = plan->arena_bytes;
        best_members = plan->arenas_by_planner;
        ASSERT_EQ(best_members.size(), 5u);  // four members, then best itself
      } else {
        ASSERT_EQ(plan->arenas_by_planner.size(), 1u) << info.name;
        EXPECT_LE(best, plan->arena_bytes) << info.name << " beats best, iteration " << iteration;
        bool reported = false;
        for (const PlannerArena& member : best_members) {
          if (member.planner != info.name) continue;
          EXPECT_EQ(member.arena_bytes, plan->arena_bytes) << info.name << ", iteration " << iteration;
          reported = true;
        }
        EXPECT_TRUE(reported) << info.name << " is not among best's members";
      }
    }
  }
}

TEST(ArenaPlannersTest, PlanArenaRejectsUnknownPlannersAndBadAlignment) {
  const Graph graph = testing::TestGraph(R"(
    input x 64
    op a Conv x -> y:64
    output y
  )");
  const MemoryModel model = *BuildMemoryModel(graph, {});
  const SimulationResult simulation = *Simulate(model, {0});
  const FixedClock clock;
  ArenaOptions options;
  options.planner = "first-come";
  EXPECT_THAT(PlanArena(model, simulation, options, clock),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("best|tflite|tflm|greedy-by-size|greedy-by-breadth")));
  options.planner = "tflite";
  options.alignment = -8;
  EXPECT_THAT(PlanArena(model, simulation, options, clock),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("alignment")));
}

TEST(ArenaPlannersTest, BestReportsTheWinnerAndOptimality) {
  const Graph graph = testing::TestGraph(R"(
    input x 64
    op a Conv x -> t:128
    op b Relu t -> r:128
    op c Conv r -> y:64
    output y
  )");
  const MemoryModel model = *BuildMemoryModel(graph, {});
  const SimulationResult simulation = *Simulate(model, {0, 1, 2});
  const FixedClock clock;
  ORDO_ASSERT_OK_AND_ASSIGN(ArenaPlan plan, PlanArena(model, simulation, {}, clock));
  EXPECT_EQ(plan.planner, "best");
  EXPECT_EQ(plan.algorithm, "tflite");  // ties keep the first strategy
  EXPECT_TRUE(plan.optimal);
  EXPECT_EQ(plan.arena_bytes, plan.lower_bound_bytes);
  EXPECT_EQ(plan.gap_bytes, 0);
}

TEST(ArenaPlannersTest, BestSearchBudgetScalesWithTheProblem) {
  ArenaProblem problem;
  ArenaLimits limits;  // 4M nodes
  EXPECT_EQ(BestArenaSearchBudget(problem, limits), 4096);  // the floor
  problem.blocks.resize(250);  // a DARTS candidate
  EXPECT_EQ(BestArenaSearchBudget(problem, limits), 250 * 64);
  problem.blocks.resize(100'000);
  EXPECT_EQ(BestArenaSearchBudget(problem, limits), limits.max_search_nodes);  // the cap
  limits.max_search_nodes = 1000;
  EXPECT_EQ(BestArenaSearchBudget(problem, limits), 1000);
}

}  // namespace
}  // namespace ordo
