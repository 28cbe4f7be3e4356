// The place stage for a runtime with one arena (PlaceOneArenaInPools),
// checked tensor by tensor from the spec and the arena plan, not from the
// pool model's own per-block figures.

#include "core/pools/place_pools.h"

#include <cstdint>
#include <limits>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "core/arena/arena_planner_registry.h"
#include "core/testing/status_matchers.h"
#include "core/testing/test_graph.h"
#include "core/testing/trials.h"
#include "core/util/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::StatusIs;
using ::testing::HasSubstr;

constexpr int64_t kAlignment = 16;

struct Scheduled {
  MemoryModel model;
  SimulationResult simulation;
  ArenaPlan arena;
};

Scheduled ScheduleInOrder(const Graph& graph, const std::string& planner = "best") {
  Scheduled s;
  s.model = *BuildMemoryModel(graph, {});
  std::vector<int32_t> order(s.model.num_ops());
  for (int32_t i = 0; i < s.model.num_ops(); ++i) order[i] = i;
  s.simulation = *Simulate(s.model, order);
  ArenaOptions options;
  options.alignment = kAlignment;
  options.planner = planner;
  RealClock clock;
  s.arena = *PlanArena(s.model, s.simulation, options, clock);
  return s;
}

// A random graph of `min_ops` to `min_ops + spread - 1` ops, tensors of at
// most 256 bytes, and its model-order schedule.
struct RandomCase {
  Graph graph;
  Scheduled s;
};
RandomCase RandomScheduled(std::mt19937_64& rng, int32_t min_ops, int32_t spread) {
  ordo::testing::RandomDagOptions dag;
  dag.num_ops = min_ops + static_cast<int32_t>(rng() % spread);
  dag.max_bytes = 256;
  RandomCase random{ordo::testing::RandomDag(rng, dag), {}};
  random.s = ScheduleInOrder(random.graph);
  return random;
}

// The spec's modelled time of every activation tensor in `pool`, from the
// model's producers and consumers.
double EverythingIn(const Scheduled& s, const MemoryPool& pool) {
  double seconds = 0;
  for (const TensorPlacement& t : s.arena.tensors) {
    const double writes = s.model.tensors[t.tensor].producer == kNoId ? 0 : 1;
    seconds += writes * t.size / pool.write_bytes_per_second +
               static_cast<double>(s.model.tensors[t.tensor].consumers.size()) * t.size /
                   pool.read_bytes_per_second;
  }
  return seconds;
}

// Every tensor in pool `pool` at its offset in the one-arena plan.
void ExpectTheArenaIn(const Scheduled& s, const PoolReport& report, int32_t pool) {
  for (const TensorPlacement& t : s.arena.tensors) {
    EXPECT_EQ(report.pool_of_tensor[t.tensor], pool) << "tensor " << t.tensor;
    EXPECT_EQ(report.offset_of_tensor[t.tensor], t.offset) << "tensor " << t.tensor;
  }
}

constexpr char kChain[] = R"(
  input x 256
  op a Conv x -> y:256
  op b Conv y -> z:512
  op c Conv y z -> out:256
  output out
)";

TEST(PlaceOneArenaTest, TheArenaGoesWholeIntoTheFastestPoolThatHoldsIt) {
  const Graph graph = ordo::testing::TestGraph(kChain);
  const Scheduled s = ScheduleInOrder(graph);
  PoolOptions options;
  // tcm holds y alone (a placement across pools would use it) but not the
  // arena; sram does, and is faster than psram.
  options.pools = {{"tcm", 512, 8e9, 8e9}, {"psram", 1 << 20, 1e8, 1e8}, {"sram", 4096, 1e9, 1e9}};
  options.one_arena = true;
  ORDO_ASSERT_OK_AND_ASSIGN(PoolReport report,
                            PlaceOneArenaInPools(graph, s.model, s.simulation, kAlignment, options,
                                                 s.arena, ArenaLimits{}));
  ASSERT_TRUE(report.fits());
  EXPECT_EQ(report.placement.algorithm, "one arena in \"sram\"");
  ExpectTheArenaIn(s, report, 2);
  EXPECT_DOUBLE_EQ(report.placement.evaluation.modelled_seconds, EverythingIn(s, options.pools[2]));
  EXPECT_EQ(report.placement.evaluation.pools[2].used_bytes, s.arena.arena_bytes);
  // sram is the fastest pool that holds the peak: the bound is its time.
  EXPECT_DOUBLE_EQ(report.lower_bound_seconds, report.placement.evaluation.modelled_seconds);
  // The baselines come apart, for the placement a caller keeps.
  EXPECT_TRUE(report.baselines.empty());
  ORDO_ASSERT_OK_AND_ASSIGN(const ScoredPoolProblem scored,
                            ScorePoolProblem(graph, s.model, s.simulation, kAlignment, options));
  AddPoolBaselines(scored, s.arena.arena_bytes, report);
  ASSERT_EQ(report.baselines.size(), 3u);
  EXPECT_EQ(report.baselines[0].name, "internal_first");
  EXPECT_EQ(report.baselines[1].name, "usmp_greedy");
  EXPECT_EQ(report.baselines[2].name, "single_pool");

  // A pin is the user's rule: the arena follows the pinned tensor.
  options.pinned["y"] = "psram";
  ORDO_ASSERT_OK_AND_ASSIGN(PoolReport pinned,
                            PlaceOneArenaInPools(graph, s.model, s.simulation, kAlignment, options,
                                                 s.arena, ArenaLimits{}));
  EXPECT_EQ(pinned.placement.algorithm, "one arena in \"psram\"");
  ExpectTheArenaIn(s, pinned, 1);
}

TEST(PlaceOneArenaTest, AnArenaNoPoolHoldsOverflowsTheLeastAndSaysWhy) {
  const Graph graph = ordo::testing::TestGraph(kChain);
  const Scheduled s = ScheduleInOrder(graph);
  PoolOptions options;
  // Each tensor fits either bank; the arena fits neither.
  options.pools = {{"a", 768, 8e9, 8e9}, {"b", 960, 1e9, 1e9}};
  options.one_arena = true;
  ASSERT_GT(s.arena.arena_bytes, 960);
  ORDO_ASSERT_OK_AND_ASSIGN(PoolReport report,
                            PlaceOneArenaInPools(graph, s.model, s.simulation, kAlignment, options,
                                                 s.arena, ArenaLimits{}));
  EXPECT_FALSE(report.fits());
  EXPECT_EQ(report.placement.algorithm, "one arena in \"b\"");
  EXPECT_THAT(report.overflow, HasSubstr("pool \"b\" overflows by"));
  EXPECT_THAT(report.overflow, HasSubstr("fits no single pool it may use"));
}

TEST(PlaceOneArenaTest, PinsToTwoPoolsLeaveNoPoolForTheArena) {
  const Graph graph = ordo::testing::TestGraph(kChain);
  const Scheduled s = ScheduleInOrder(graph);
  PoolOptions options;
  options.pools = {{"a", 4096, 8e9, 8e9}, {"b", 4096, 1e9, 1e9}};
  options.pinned = {{"y", "a"}, {"z", "b"}};
  options.one_arena = true;
  EXPECT_THAT(
      PlaceOneArenaInPools(graph, s.model, s.simulation, kAlignment, options, s.arena,
                           ArenaLimits{}),
      StatusIs(absl::StatusCode::kInvalidArgument,
               ::testing::AllOf(HasSubstr("no memory pool may hold every activation"),
                                HasSubstr("pool \"a\": tensor \"z\" is pinned elsewhere"),
                                HasSubstr("pool \"b\": tensor \"y\" is pinned elsewhere"))));
  // The baseline's figures (OneArenaPlacement): no pool, so it does not fit.
  ORDO_ASSERT_OK_AND_ASSIGN(
      const PoolProblem problem,
      BuildPoolProblem(graph, s.model, s.simulation, kAlignment, options));
  EXPECT_FALSE(OneArenaPlacement(problem, s.arena).has_value());
}

// A pool that holds the schedule's aligned peak but not its arena (the
// layout is fragmented): the arena goes to the next pool, and the bound is
// the first pool's time, the gap being what fragmentation costs.
TEST(PlaceOneArenaTest, TheBoundIsAPoolThatHoldsThePeakWhenTheArenaIsFragmented) {
  std::mt19937_64 rng(11);
  for (int attempt = 0; attempt < 2000; ++attempt) {
    ordo::testing::RandomDagOptions dag;
    dag.num_ops = 8 + static_cast<int32_t>(rng() % 8);
    dag.max_bytes = 512;
    const Graph graph = ordo::testing::RandomDag(rng, dag);
    // A greedy planner leaves gaps where the exact one would not.
    const Scheduled s = ScheduleInOrder(graph, "greedy-by-breadth");
    if (s.arena.arena_bytes == s.arena.lower_bound_bytes) continue;
    PoolOptions options;
    options.pools = {{"tight", s.arena.lower_bound_bytes, 8e9, 8e9}, {"roomy", 1 << 20, 1e9, 1e9}};
    options.one_arena = true;
    ORDO_ASSERT_OK_AND_ASSIGN(
        PoolReport report, PlaceOneArenaInPools(graph, s.model, s.simulation, kAlignment, options,
                                                s.arena, ArenaLimits{}));
    ASSERT_TRUE(report.fits());
    EXPECT_EQ(report.placement.algorithm, "one arena in \"roomy\"");
    EXPECT_DOUBLE_EQ(report.lower_bound_seconds, EverythingIn(s, options.pools[0]));
    EXPECT_LT(report.lower_bound_seconds, report.placement.evaluation.modelled_seconds);
    // With no pool that holds the arena, the bound stays the tight pool's.
    options.pools[1].capacity_bytes = s.arena.lower_bound_bytes;
    ORDO_ASSERT_OK_AND_ASSIGN(
        PoolReport neither, PlaceOneArenaInPools(graph, s.model, s.simulation, kAlignment, options,
                                                 s.arena, ArenaLimits{}));
    EXPECT_FALSE(neither.fits());
    EXPECT_DOUBLE_EQ(neither.lower_bound_seconds, EverythingIn(s, options.pools[0]));
    return;
  }
  FAIL() << "no random graph with a fragmented arena";
}

// A placement that does not fit is reported with the bound of every
// assignment, capacities ignored (every tensor in its cheapest pool that
// can hold it), never above its own time: the capacity arguments bound
// valid placements only, and the relaxation of an infeasible problem grows
// without limit. The pools' speeds are in one order for reads and writes,
// so the cheapest pool of an in-place chain is each of its tensors'.
TEST(PlaceInPoolsTest, APlacementThatDoesNotFitIsBoundedByTheCheapestPools) {
  std::mt19937_64 rng(17);
  int overflowing = 0;
  for (int trial = 0; trial < ordo::testing::Trials(100); ++trial) {
    const RandomCase random = RandomScheduled(rng, 6, 10);
    const Graph& graph = random.graph;
    const Scheduled& s = random.s;
    PoolOptions options;
    // Together less than the peak: nothing fits.
    const int64_t room = s.arena.lower_bound_bytes / 2;
    if (room < 2 * kAlignment) continue;
    options.pools = {{"fast", room / 2, 8e9, 8e9}, {"slow", room - room / 2, 1e9, 1e9}};
    absl::StatusOr<PoolReport> report =
        PlaceInPools(graph, s.model, s.simulation, kAlignment, options, s.arena.arena_bytes,
                     ArenaLimits{});
    if (!report.ok()) continue;  // a tensor larger than both pools
    ASSERT_FALSE(report->fits()) << "trial " << trial;
    ++overflowing;
    double cheapest = 0;
    for (const TensorPlacement& t : s.arena.tensors) {
      const MemoryPool& pool = t.size <= options.pools[0].capacity_bytes ? options.pools[0]
                                                                         : options.pools[1];
      const double writes = s.model.tensors[t.tensor].producer == kNoId ? 0 : 1;
      cheapest += writes * t.size / pool.write_bytes_per_second +
                  static_cast<double>(s.model.tensors[t.tensor].consumers.size()) * t.size /
                      pool.read_bytes_per_second;
    }
    EXPECT_NEAR(report->lower_bound_seconds, cheapest, cheapest * 1e-12) << "trial " << trial;
    EXPECT_LE(report->lower_bound_seconds,
              report->placement.evaluation.modelled_seconds * (1 + 1e-12))
        << "trial " << trial;
  }
  EXPECT_GT(overflowing, 0);
}

// A client re-checks a server's placement: one arena asked, one pool given.
TEST(PlaceOneArenaTest, TheRecheckRefusesPoolsSpannedWhereOneArenaWasAsked) {
  const Graph graph = ordo::testing::TestGraph(kChain);
  const Scheduled s = ScheduleInOrder(graph);
  PoolOptions options;
  options.pools = {{"tcm", 512, 8e9, 8e9}, {"sram", 4096, 1e9, 1e9}};
  ORDO_ASSERT_OK_AND_ASSIGN(PoolReport spread,
                            PlaceInPools(graph, s.model, s.simulation, kAlignment, options,
                                         s.arena.arena_bytes, ArenaLimits{}));
  const ArenaPlan spread_plan = PoolArenaPlan(spread, s.arena);
  ORDO_EXPECT_OK(
      RecheckPoolPlacement(graph, s.model, s.simulation, kAlignment, options, spread_plan)
          .status());
  options.one_arena = true;
  EXPECT_THAT(RecheckPoolPlacement(graph, s.model, s.simulation, kAlignment, options, spread_plan),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("asks for one arena")));
  ORDO_ASSERT_OK_AND_ASSIGN(PoolReport one,
                            PlaceOneArenaInPools(graph, s.model, s.simulation, kAlignment, options,
                                                 s.arena, ArenaLimits{}));
  ORDO_EXPECT_OK(RecheckPoolPlacement(graph, s.model, s.simulation, kAlignment, options,
                                      PoolArenaPlan(one, s.arena))
                     .status());
}

// Against brute force over the pools on random graphs: the pool of least
// time among those that hold the whole arena, recomputed from the spec;
// overflowing only when no pool holds it; never below its bound.
TEST(PlaceOneArenaTest, ChoosesTheFastestPoolThatHoldsTheArenaOnRandomGraphs) {
  std::mt19937_64 rng(5);
  const int trials = ordo::testing::Trials(200);
  int fitting = 0;
  for (int trial = 0; trial < trials; ++trial) {
    const RandomCase random = RandomScheduled(rng, 4, 12);
    const Graph& graph = random.graph;
    const Scheduled& s = random.s;
    PoolOptions options;
    options.one_arena = true;
    for (int p = 0; p < 3; ++p) {
      const int64_t capacity = 256 + static_cast<int64_t>(rng() % 2048);
      const double bandwidth = 1e8 * static_cast<double>(1 + rng() % 80);
      options.pools.push_back({"p" + std::to_string(p), capacity, bandwidth, bandwidth / 2});
    }
    absl::StatusOr<PoolReport> report = PlaceOneArenaInPools(
        graph, s.model, s.simulation, kAlignment, options, s.arena, ArenaLimits{});
    if (!report.ok()) {
      // Only when some tensor is larger than every pool.
      EXPECT_THAT(report.status().message(), HasSubstr("larger than")) << report.status();
      continue;
    }
    int32_t fastest = kNoId;
    double least = std::numeric_limits<double>::infinity();
    for (int32_t p = 0; p < 3; ++p) {
      if (s.arena.arena_bytes > options.pools[p].capacity_bytes) continue;
      const double seconds = EverythingIn(s, options.pools[p]);
      if (seconds < least) least = seconds, fastest = p;
    }
    EXPECT_EQ(report->fits(), fastest != kNoId) << "trial " << trial;
    EXPECT_LE(report->lower_bound_seconds,
              report->placement.evaluation.modelled_seconds * (1 + 1e-12))
        << "trial " << trial;
    if (fastest == kNoId) continue;
    ++fitting;
    EXPECT_NEAR(report->placement.evaluation.modelled_seconds, least, least * 1e-12);
    ExpectTheArenaIn(s, *report, report->placement.assignment.pool.front());
    EXPECT_LE(report->lower_bound_seconds,
              report->placement.evaluation.modelled_seconds * (1 + 1e-12));
    // A baseline's figures come from the same placement, without the report.
    ORDO_ASSERT_OK_AND_ASSIGN(
        const PoolProblem problem,
        BuildPoolProblem(graph, s.model, s.simulation, kAlignment, options));
    const std::optional<PoolPlacement> alone = OneArenaPlacement(problem, s.arena);
    ASSERT_TRUE(alone.has_value()) << "trial " << trial;
    EXPECT_EQ(alone->algorithm, report->placement.algorithm);
    EXPECT_EQ(alone->assignment.pool, report->placement.assignment.pool);
    EXPECT_EQ(alone->assignment.offset, report->placement.assignment.offset);
    EXPECT_EQ(alone->evaluation.modelled_seconds, report->placement.evaluation.modelled_seconds);
  }
  EXPECT_GT(fitting, trials / 4);
}

}  // namespace
}  // namespace ordo
