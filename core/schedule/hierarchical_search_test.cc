#include "core/schedule/hierarchical_search.h"

#include <atomic>
#include <random>
#include <vector>

#include "core/hierarchy/hierarchical_graph.h"
#include "core/memory/simulator.h"
#include "core/schedule/iterative_scheduling.h"
#include "core/testing/fake_clock.h"
#include "core/testing/status_matchers.h"
#include "core/testing/schedule_checks.h"
#include "core/testing/test_graph.h"
#include "core/testing/trials.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::TestModel;

using ::ordo::testing::BruteForceMinPeak;
using ::ordo::testing::ManyBranches;
using ::ordo::testing::RandomDag;
using ::ordo::testing::RandomHourglass;
using ::ordo::testing::TickingClock;

MemoryModel RandomSmallModel(std::mt19937_64& rng, int trial) {
  testing::RandomDagOptions options;
  options.num_ops = 1 + static_cast<int32_t>(rng() % 10);
  options.num_inputs = 1 + static_cast<int32_t>(rng() % 3);
  options.max_inputs = 1 + static_cast<int32_t>(rng() % 3);
  options.second_output_chance = (trial % 3) * 0.2;
  options.inplace_chance = (trial % 4) * 0.25;
  MemoryModel model = TestModel(RandomDag(rng, options));
  if (trial % 11 == 0) model.constant_bytes = 7;
  return model;
}

MemoryModel RandomMediumModel(std::mt19937_64& rng, int trial) {
  if (trial % 2 == 0) {
    testing::RandomHourglassOptions options;
    options.num_cells = 2 + static_cast<int32_t>(rng() % 4);
    options.skip_chance = 0.3;
    options.output_chance = 0.05;
    options.inplace_chance = 0.5;
    return TestModel(RandomHourglass(rng, options));
  }
  testing::RandomDagOptions options;
  options.num_ops = 12 + static_cast<int32_t>(rng() % 20);
  options.num_inputs = 1 + static_cast<int32_t>(rng() % 2);
  options.inplace_chance = 0.5;
  return TestModel(RandomDag(rng, options));
}

HierarchicalSearchOptions Exhaustive() {
  HierarchicalSearchOptions options;
  options.max_level_states = 0;
  return options;
}

// Without groups and without the level cap the search is SERENITY's exact
// dynamic program over sequences; sequences lose nothing (FormSequences),
// so it must find the brute-force optimum, and a budget just below it must
// leave nothing.
TEST(HierarchicalSearchTest, ExhaustiveOverSequencesMatchesBruteForce) {
  std::mt19937_64 rng(5);
  HierarchyOptions no_groups;
  no_groups.groups.cell_groups = false;
  no_groups.groups.dominator_groups = false;
  for (int trial = 0; trial < ::ordo::testing::Trials(3000); ++trial) {
    MemoryModel model = RandomSmallModel(rng, trial);
    const int64_t optimum = BruteForceMinPeak(model).peak_bytes;
    HierarchyOptions hierarchy = no_groups;
    hierarchy.sequences = trial % 5 != 0;
    const HierarchicalGraph graph = HierarchicalGraph::Build(model, hierarchy);
    HierarchicalSearch search(model, graph, Exhaustive());
    HierarchicalSearchResult found = search.Schedule(INT64_MAX, {});
    ASSERT_EQ(found.outcome, SearchOutcome::kFound);
    ASSERT_TRUE(found.exhaustive);
    ASSERT_EQ(found.peak_bytes, optimum) << "trial " << trial;
    ASSERT_EQ(*SimulatePeak(model, found.order), optimum);
    ASSERT_EQ(search.Schedule(optimum - 1, {}).outcome, SearchOutcome::kOverBudget);
    ASSERT_EQ(search.Schedule(optimum, {}).peak_bytes, optimum);
  }
}

// Groups only remove orders: never below the optimum, and with every group
// disassembled the exact optimum again.
TEST(HierarchicalSearchTest, GroupsNeverGoBelowTheOptimumAndDisassemblyRestoresIt) {
  std::mt19937_64 rng(6);
  for (int trial = 0; trial < ::ordo::testing::Trials(1000); ++trial) {
    MemoryModel model = RandomSmallModel(rng, trial);
    const int64_t optimum = BruteForceMinPeak(model).peak_bytes;
    HierarchicalGraph graph = HierarchicalGraph::Build(model, {});
    HierarchicalSearch search(model, graph, Exhaustive());
    HierarchicalSearchResult grouped = search.Schedule(INT64_MAX, {});
    ASSERT_EQ(grouped.outcome, SearchOutcome::kFound);
    ASSERT_GE(grouped.peak_bytes, optimum);
    ASSERT_EQ(*SimulatePeak(model, grouped.order), grouped.peak_bytes);
    for (int32_t g = 0; g < graph.num_groups(); ++g) graph.Disassemble(g);
    ASSERT_EQ(search.Schedule(INT64_MAX, {}).peak_bytes, optimum) << "trial " << trial;
  }
}

// Optimization 2 is lossless for the program: the group's order only
// matters when it lifts the partial peak, and then the search runs.
TEST(HierarchicalSearchTest, StrategySelectionKeepsTheExactPeak) {
  std::mt19937_64 rng(7);
  HierarchicalSearchOptions without = Exhaustive();
  without.strategy_selection = false;
  int64_t simple = 0;
  for (int trial = 0; trial < ::ordo::testing::Trials(300); ++trial) {
    MemoryModel model = RandomMediumModel(rng, trial);
    const HierarchicalGraph graph = HierarchicalGraph::Build(model, {});
    HierarchicalSearch with_selection(model, graph, Exhaustive());
    HierarchicalSearch without_selection(model, graph, without);
    const HierarchicalSearchResult a = with_selection.Schedule(INT64_MAX, {});
    const HierarchicalSearchResult b = without_selection.Schedule(INT64_MAX, {});
    ASSERT_EQ(a.outcome, SearchOutcome::kFound);
    ASSERT_EQ(a.peak_bytes, b.peak_bytes) << "trial " << trial;
    simple += with_selection.stats().simple_schedules;
  }
  EXPECT_GT(simple, 0);
}

// Optimization 3 reuses group schedules by value context; the whole
// iterative schedule must be the same order with and without it, capped
// levels included.
TEST(HierarchicalSearchTest, MemoizationReturnsTheSameScheduleAsRecomputation) {
  std::mt19937_64 rng(8);
  IterativeSchedulingOptions with_memo;
  with_memo.search.max_level_states = 16;       // the cap must not break it either
  with_memo.search.strategy_selection = false;  // more group searches to reuse
  IterativeSchedulingOptions without_memo = with_memo;
  without_memo.search.memoization = false;
  int64_t hits = 0;
  for (int trial = 0; trial < ::ordo::testing::Trials(300); ++trial) {
    MemoryModel model = RandomMediumModel(rng, trial);
    ORDO_ASSERT_OK_AND_ASSIGN(IterativeSchedulingResult a,
                              ScheduleIteratively(model, with_memo, {}, {}));
    ORDO_ASSERT_OK_AND_ASSIGN(IterativeSchedulingResult b,
                              ScheduleIteratively(model, without_memo, {}, {}));
    ASSERT_EQ(a.order, b.order) << "trial " << trial;
    ASSERT_EQ(a.peak_bytes, b.peak_bytes);
    ASSERT_EQ(b.search.memo_hits, 0);
    ASSERT_LE(a.search.group_searches, b.search.group_searches);
    hits += a.search.memo_hits;
  }
  EXPECT_GT(hits, 0);
}

TEST(HierarchicalSearchTest, DeadlineOnFakeClockStopsTheSearch) {
  MemoryModel model = TestModel(ManyBranches(40));
  const HierarchicalGraph graph = HierarchicalGraph::Build(model, {});
  HierarchicalSearch search(model, graph, Exhaustive());
  TickingClock clock(absl::Milliseconds(1));
  ScheduleLimits limits;
  limits.clock = &clock;
  limits.deadline = clock.Now() + absl::Milliseconds(50);
  EXPECT_EQ(search.Schedule(INT64_MAX, limits).outcome, SearchOutcome::kLimit);
  EXPECT_LE(search.stats().states_expanded, 51 * HierarchicalSearchOptions().check_every);
}

// The work cap cuts at the same state whatever the clock says: two searches
// with the same cap stop after the same expansions, one of them on a clock
// far past any deadline it could have had.
TEST(HierarchicalSearchTest, StateCapStopsTheSearchAtTheSameStateOnAnyClock) {
  MemoryModel model = TestModel(ManyBranches(40));
  const HierarchicalGraph graph = HierarchicalGraph::Build(model, {});
  HierarchicalSearchOptions capped = Exhaustive();
  capped.max_states_expanded = 300;
  HierarchicalSearch first(model, graph, capped);
  EXPECT_EQ(first.Schedule(INT64_MAX, {}).outcome, SearchOutcome::kLimit);
  EXPECT_EQ(first.stats().states_expanded, 301);
  // Every later call stops at once: the cap counts over all calls.
  EXPECT_EQ(first.Schedule(INT64_MAX, {}).outcome, SearchOutcome::kLimit);
  EXPECT_EQ(first.stats().states_expanded, 302);
  HierarchicalSearch second(model, graph, capped);
  // A clock that runs a second per reading, against a finite deadline: the
  // search reads it, and still stops where the cap says.
  TickingClock slow(absl::Seconds(1));
  ScheduleLimits limits;
  limits.clock = &slow;
  limits.deadline = slow.Now() + absl::Seconds(10);
  EXPECT_EQ(second.Schedule(INT64_MAX, limits).outcome, SearchOutcome::kLimit);
  EXPECT_EQ(second.stats().states_expanded, 301);
}

TEST(HierarchicalSearchTest, CancellationAndStateBytesStopTheSearch) {
  MemoryModel model = TestModel(ManyBranches(40));
  const HierarchicalGraph graph = HierarchicalGraph::Build(model, {});
  {
    HierarchicalSearch search(model, graph, Exhaustive());
    std::atomic<bool> cancelled{true};
    ScheduleLimits limits;
    limits.cancelled = &cancelled;
    EXPECT_EQ(search.Schedule(INT64_MAX, limits).outcome, SearchOutcome::kLimit);
    EXPECT_LE(search.stats().states_expanded, HierarchicalSearchOptions().check_every);
  }
  {
    HierarchicalSearch search(model, graph, Exhaustive());
    ScheduleLimits limits;
    limits.max_state_bytes = 1 << 20;
    EXPECT_EQ(search.Schedule(INT64_MAX, limits).outcome, SearchOutcome::kLimit);
    EXPECT_LT(search.stats().states_stored, 100000);
  }
}

}  // namespace
}  // namespace ordo
