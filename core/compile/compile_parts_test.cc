// One divide-and-conquer: the CLI's `best` (no runner: DivideAndConquerScheduler,
// ScheduleByParts on one thread, no cache) and the server's (Compile with a
// runner and a cache) are one code path, so they agree on everything but
// wall time.
#include <random>

#include "core/cache/lru_schedule_cache.h"
#include "core/compile/compile.h"
#include "core/parts/part_runner.h"
#include "core/testing/status_matchers.h"
#include "core/testing/test_graph.h"
#include "core/testing/trials.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

void ExpectSameSchedule(const CompileResult& cli, const CompileResult& service) {
  EXPECT_EQ(cli.schedule, service.schedule);
  EXPECT_EQ(cli.peak_bytes, service.peak_bytes);
  EXPECT_EQ(cli.lower_bound_bytes, service.lower_bound_bytes);
  EXPECT_EQ(cli.status, service.status);
  EXPECT_EQ(cli.algorithm, service.algorithm);
  EXPECT_EQ(cli.stats.states_expanded, service.stats.states_expanded);
  EXPECT_EQ(cli.stats.states_stored, service.stats.states_stored);
  ASSERT_EQ(cli.parts.size(), service.parts.size());
  for (size_t p = 0; p < cli.parts.size(); ++p) {
    EXPECT_EQ(cli.parts[p].ops, service.parts[p].ops) << "part " << p;
    EXPECT_EQ(cli.parts[p].peak_bytes, service.parts[p].peak_bytes) << "part " << p;
    EXPECT_EQ(cli.parts[p].lower_bound_bytes, service.parts[p].lower_bound_bytes) << "part " << p;
    EXPECT_EQ(cli.parts[p].status, service.parts[p].status) << "part " << p;
    EXPECT_EQ(cli.parts[p].algorithm, service.parts[p].algorithm) << "part " << p;
    EXPECT_EQ(cli.parts[p].states_expanded, service.parts[p].states_expanded) << "part " << p;
  }
}

TEST(CompilePartsTest, CliAndServicePathsGiveTheSameScheduleAndStatistics) {
  std::mt19937_64 rng(15);
  RealClock clock;
  int searched = 0;
  for (int trial = 0; trial < ::ordo::testing::Trials(60); ++trial) {
    ::ordo::testing::RandomHourglassOptions cells;
    cells.num_cells = 2 + static_cast<int32_t>(rng() % 4);
    cells.max_cell_ops = 8;
    const Graph graph = ::ordo::testing::RandomHourglass(rng, cells);
    CompileOptions options;  // scheduler "best"
    options.arena_planner = kNoArenaPlanner;
    ORDO_ASSERT_OK_AND_ASSIGN(CompileResult cli, Compile(graph, options, clock));

    // The server's services, with as many threads as the CLI's one, so the
    // rounds of tasks are the same.
    ThreadPartRunner runner(1);
    LruScheduleCache cache(1 << 20);
    CompileServices services;
    services.runner = &runner;
    services.cache = &cache;
    ORDO_ASSERT_OK_AND_ASSIGN(CompileResult service, Compile(graph, options, services, clock));
    SCOPED_TRACE(::testing::Message() << "trial " << trial);
    ExpectSameSchedule(cli, service);
    ASSERT_TRUE(service.part_stats.has_value());
    EXPECT_EQ(service.part_stats->parts, static_cast<int32_t>(cli.parts.size()));
    searched += cli.stats.states_expanded > 0;
  }
  EXPECT_GT(searched, 0) << "no model needed the exact search";
}

}  // namespace
}  // namespace ordo
