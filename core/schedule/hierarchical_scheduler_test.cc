#include "core/schedule/hierarchical_scheduler.h"

#include <atomic>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/memory/simulator.h"
#include "core/schedule/divide_and_conquer_scheduler.h"
#include "core/schedule/hmcos_scheduler.h"
#include "core/testing/fake_clock.h"
#include "core/testing/status_matchers.h"
#include "core/testing/schedule_checks.h"
#include "core/testing/test_graph.h"
#include "core/testing/trials.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::ExpectValidSchedule;
using ::ordo::testing::TestModel;

using ::ordo::testing::BruteForceMinPeak;
using ::ordo::testing::ManyBranches;
using ::ordo::testing::RandomDag;
using ::ordo::testing::RandomHourglass;
using ::ordo::testing::TestGraph;
using ::ordo::testing::TickingClock;
using ::testing::AnyOf;
using ::testing::HasSubstr;

// The property of a heuristic with bounds: never below the optimum (the
// schedule is real), its lower bound never above it (the bound is honest),
// kOptimal only when it is the optimum; and in practice at the optimum on
// nearly every small graph.
TEST(HierarchicalSchedulerTest, BoundsAreHonestAndPeaksUsuallyOptimalOnRandomDags) {
  std::mt19937_64 rng(31);
  const HmcosScheduler hmcos;
  const HierarchicalScheduler hierarchical;
  const int kTrials = ::ordo::testing::Trials(3000);
  int hmcos_optimal = 0, hierarchical_optimal = 0;
  for (int trial = 0; trial < kTrials; ++trial) {
    testing::RandomDagOptions options;
    options.num_ops = 1 + static_cast<int32_t>(rng() % 10);
    options.num_inputs = 1 + static_cast<int32_t>(rng() % 3);
    options.max_inputs = 1 + static_cast<int32_t>(rng() % 3);
    options.second_output_chance = (trial % 3) * 0.2;
    options.inplace_chance = (trial % 4) * 0.25;
    MemoryModel model = TestModel(RandomDag(rng, options));
    if (trial % 11 == 0) model.constant_bytes = 7;
    const int64_t optimum = BruteForceMinPeak(model).peak_bytes;
    for (const Scheduler* scheduler :
         {static_cast<const Scheduler*>(&hmcos), static_cast<const Scheduler*>(&hierarchical)}) {
      ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult result, scheduler->Schedule(model, {}));
      ExpectValidSchedule(model, result);
      const std::string where = absl::StrCat(scheduler->name(), " trial ", trial);
      ASSERT_GE(result.peak_bytes, optimum) << where;
      ASSERT_LE(result.lower_bound_bytes, optimum) << where;
      if (result.status == ScheduleStatus::kOptimal) {
        ASSERT_EQ(result.peak_bytes, optimum) << where;
      }
      if (result.peak_bytes == optimum) {
        ++(scheduler == &hmcos ? hmcos_optimal : hierarchical_optimal);
      }
    }
  }
  RecordProperty("hmcos_optimal", hmcos_optimal);
  RecordProperty("hierarchical_optimal", hierarchical_optimal);
  EXPECT_GE(hmcos_optimal, kTrials * 95 / 100);
  EXPECT_GE(hierarchical_optimal, kTrials * 99 / 100);
}

// HMCOS's configurations (its Table 3: no hierarchy, sequences, sequences
// and cells, complete, then without the budget, strategy selection or
// memoization) and ordo's additions on top: each is a real schedule with
// an honest bound on every small DAG, and finds the optimum on most.
TEST(HierarchicalSchedulerTest, EveryAblationConfigurationIsHonestAndMostlyOptimal) {
  const HierarchicalOptions paper = HmcosPaperOptions();
  std::vector<std::pair<std::string, HierarchicalOptions>> configs =
      HmcosAblationConfigurations();
  HierarchicalOptions all_peaks = paper;
  all_peaks.iterative.all_peak_steps = true;
  all_peaks.iterative.disassemble_readers = true;
  configs.push_back({"+ all peak steps", all_peaks});
  HierarchicalOptions windows = all_peaks;
  windows.refine_windows = true;
  configs.push_back({"+ windows", windows});
  configs.push_back({"ordo", HierarchicalOptions{}});

  std::mt19937_64 rng(35);
  const int kTrials = ::ordo::testing::Trials(1000);
  std::vector<int> optimal(configs.size(), 0);
  for (int trial = 0; trial < kTrials; ++trial) {
    testing::RandomDagOptions options;
    options.num_ops = 1 + static_cast<int32_t>(rng() % 10);
    options.num_inputs = 1 + static_cast<int32_t>(rng() % 3);
    options.max_inputs = 1 + static_cast<int32_t>(rng() % 3);
    options.second_output_chance = (trial % 3) * 0.2;
    options.inplace_chance = (trial % 4) * 0.25;
    MemoryModel model = TestModel(RandomDag(rng, options));
    const int64_t optimum = BruteForceMinPeak(model).peak_bytes;
    for (size_t c = 0; c < configs.size(); ++c) {
      ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult result,
                                HierarchicalScheduler(configs[c].second).Schedule(model, {}));
      ExpectValidSchedule(model, result);
      const std::string where = absl::StrCat(configs[c].first, " trial ", trial);
      ASSERT_GE(result.peak_bytes, optimum) << where;
      ASSERT_LE(result.lower_bound_bytes, optimum) << where;
      if (result.status == ScheduleStatus::kOptimal) {
        ASSERT_EQ(result.peak_bytes, optimum) << where;
      }
      if (result.peak_bytes == optimum) ++optimal[c];
    }
  }
  for (size_t c = 0; c < configs.size(); ++c) {
    RecordProperty(absl::StrCat("optimal ", configs[c].first), optimal[c]);
    EXPECT_GT(optimal[c], kTrials / 2) << configs[c].first;
  }
  EXPECT_GE(optimal.back(), kTrials * 99 / 100);
}

// Optimization 3 must change nothing but the time: the whole scheduler, the
// paper's and ordo's, returns the same order with group schedules memoized
// and recomputed, on small DAGs and on hourglasses of cells with many
// groups to reuse.
TEST(HierarchicalSchedulerTest, MemoizationOnOrOffReturnsTheSameSchedule) {
  std::mt19937_64 rng(36);
  int64_t hits = 0;
  for (bool paper : {true, false}) {
    HierarchicalOptions with_memo;
    if (paper) {
      with_memo.heuristic_incumbent = false;
      with_memo.refine_windows = false;
      with_memo.iterative.all_peak_steps = false;
      with_memo.iterative.disassemble_readers = false;
    }
    with_memo.iterative.search.strategy_selection = false;  // more group searches to reuse
    HierarchicalOptions without_memo = with_memo;
    without_memo.iterative.search.memoization = false;
    for (int trial = 0; trial < ::ordo::testing::Trials(600); ++trial) {
      MemoryModel model;
      if (trial % 2 == 0) {
        testing::RandomDagOptions options;
        options.num_ops = 1 + static_cast<int32_t>(rng() % 10);
        options.num_inputs = 1 + static_cast<int32_t>(rng() % 3);
        options.inplace_chance = 0.3;
        model = TestModel(RandomDag(rng, options));
      } else {
        testing::RandomHourglassOptions options;
        options.num_cells = 2 + static_cast<int32_t>(rng() % 5);
        options.skip_chance = 0.3;
        options.inplace_chance = 0.5;
        model = TestModel(RandomHourglass(rng, options));
      }
      ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult a,
                                HierarchicalScheduler(with_memo).Schedule(model, {}));
      ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult b,
                                HierarchicalScheduler(without_memo).Schedule(model, {}));
      const std::string where = absl::StrCat(paper ? "paper" : "ordo", " trial ", trial);
      ASSERT_EQ(a.order, b.order) << where;
      ASSERT_EQ(a.peak_bytes, b.peak_bytes) << where;
      ASSERT_EQ(a.lower_bound_bytes, b.lower_bound_bytes) << where;
      ASSERT_EQ(b.stats.iterative.memo_hits, 0) << where;
      hits += a.stats.iterative.memo_hits;
    }
  }
  RecordProperty("memo_hits", static_cast<int>(hits));
  EXPECT_GT(hits, 0);
}

// Hourglass graphs split into parts: the part-wise bound must stay honest.
TEST(HierarchicalSchedulerTest, PartwiseLowerBoundIsHonestOnSmallHourglasses) {
  std::mt19937_64 rng(32);
  for (int trial = 0; trial < ::ordo::testing::Trials(1000); ++trial) {
    testing::RandomHourglassOptions options;
    options.num_cells = 2 + static_cast<int32_t>(rng() % 2);
    options.max_cell_ops = 3;
    options.skip_chance = 0.3;
    options.output_chance = 0.1;
    options.inplace_chance = 0.5;
    MemoryModel model = TestModel(RandomHourglass(rng, options));
    const int64_t bound = PartwiseLowerBound(model);
    ASSERT_GE(bound, MemoryLowerBound(model));
    ASSERT_LE(bound, BruteForceMinPeak(model).peak_bytes) << "trial " << trial;
  }
}

// Never worse than the cheap orders it starts from, on graphs too big for
// brute force.
TEST(HierarchicalSchedulerTest, NeverWorseThanItsIncumbentOnMediumGraphs) {
  std::mt19937_64 rng(33);
  HierarchicalOptions no_windows;
  no_windows.refine_windows = false;
  for (int trial = 0; trial < ::ordo::testing::Trials(200); ++trial) {
    testing::RandomHourglassOptions options;
    options.num_cells = 3 + static_cast<int32_t>(rng() % 5);
    options.max_cell_ops = 8;
    options.skip_chance = 0.3;
    options.inplace_chance = 0.5;
    MemoryModel model = TestModel(RandomHourglass(rng, options));
    ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult plain,
                              HierarchicalScheduler(no_windows).Schedule(model, {}));
    ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult full, HierarchicalScheduler().Schedule(model, {}));
    ExpectValidSchedule(model, full);
    ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult greedy,
                              HierarchicalScheduler(HierarchicalOptions{
                                                        .iterative = {.budget = false},
                                                        .refine_windows = false,
                                                    })
                                  .Schedule(model, {}));
    ASSERT_LE(full.peak_bytes, plain.peak_bytes) << "trial " << trial;
    ASSERT_LE(plain.peak_bytes, greedy.peak_bytes) << "trial " << trial;
  }
}

// Three NASNet-like cells (hierarchy/groups_test.cc): the cheap orders run
// cell 2's branches while c1 (40) waits for cell 3; HMCOS's groups keep
// the cells together.
TEST(HierarchicalSchedulerTest, SchedulesCellsAndNamesItself) {
  MemoryModel model = TestModel(TestGraph(R"(
    input x 10
    op stem Conv x -> s:10
    op stem2 Conv s -> s2:10
    op p1 Conv s2 -> p1:10
    op q1 Conv s -> q1:10
    op a1 Add p1 q1 -> a1:10
    op b1 Conv s2 -> b1:10
    op cat1 Concat a1 b1 -> c1:40
    op p2 Conv c1 -> p2:5
    op r2 Conv p2 -> r2:5
    op q2 Conv s2 -> q2:5
    op a2 Add r2 q2 -> a2:5
    op b2 Conv c1 -> b2:5
    op cat2 Concat a2 b2 -> c2:40
    op p3 Conv c2 -> p3:5
    op q3 Conv c1 -> q3:5
    op a3 Add p3 q3 -> a3:5
    op cat3 Concat a3 p3 -> c3:10
    op head Conv c3 -> y:1
    output y
  )"));
  ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult hmcos, HmcosScheduler().Schedule(model, {}));
  ExpectValidSchedule(model, hmcos);
  EXPECT_EQ(hmcos.algorithm, "hmcos");
  EXPECT_GT(hmcos.stats.iterative.groups, 0);
  EXPECT_GT(hmcos.stats.iterative.iterations, 0);
  ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult hierarchical,
                            HierarchicalScheduler().Schedule(model, {}));
  ExpectValidSchedule(model, hierarchical);
  EXPECT_LE(hierarchical.peak_bytes, hmcos.peak_bytes);
}

TEST(HierarchicalSchedulerTest, TinyModels) {
  MemoryModel empty;  // graphs need ops; a part of one may not
  empty.tensors.push_back({.bytes = 4, .live_at_end = true});
  for (const MemoryModel& model :
       {empty, TestModel(TestGraph("input x 4\nop a Relu x -> y:4\noutput y\n"))}) {
    ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult hmcos, HmcosScheduler().Schedule(model, {}));
    ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult hierarchical,
                              HierarchicalScheduler().Schedule(model, {}));
    ExpectValidSchedule(model, hmcos);
    ExpectValidSchedule(model, hierarchical);
    EXPECT_EQ(hmcos.status, ScheduleStatus::kOptimal);
    EXPECT_EQ(hierarchical.status, ScheduleStatus::kOptimal);
  }
}

TEST(HierarchicalSchedulerTest, DeadlineOnFakeClockIsHonoured) {
  testing::RandomDagOptions options;
  options.num_ops = 300;
  options.num_inputs = 4;
  std::mt19937_64 rng(34);
  MemoryModel model = TestModel(RandomDag(rng, options));
  for (bool paper : {true, false}) {
    TickingClock clock(absl::Milliseconds(1));
    ScheduleLimits limits;
    limits.clock = &clock;
    limits.deadline = clock.Now() + absl::Milliseconds(20);
    absl::StatusOr<ScheduleResult> result = paper ? HmcosScheduler().Schedule(model, limits)
                                                  : HierarchicalScheduler().Schedule(model, limits);
    ORDO_ASSERT_OK(result);
    ExpectValidSchedule(model, *result);
    // A handful of reads past the deadline: each stage checks before it
    // starts work, and a search every check_every expansions.
    EXPECT_LT(clock.Now() - limits.deadline, absl::Milliseconds(20)) << paper;
  }
}

// A tiny work cap still gives a valid order (the last finished
// iteration's, else reverse post-order), the same on every call.
TEST(HierarchicalSchedulerTest, TinyStateCapReturnsAValidOrderEveryTime) {
  testing::RandomDagOptions options;
  options.num_ops = 120;
  options.num_inputs = 3;
  std::mt19937_64 rng(35);
  MemoryModel model = TestModel(RandomDag(rng, options));
  for (int64_t cap : {1, 50, 5000}) {
    IterativeSchedulingOptions capped;
    capped.search.max_states_expanded = cap;
    ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult once, HmcosScheduler(capped).Schedule(model, {}));
    ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult again, HmcosScheduler(capped).Schedule(model, {}));
    ExpectValidSchedule(model, once);
    EXPECT_EQ(once.order, again.order) << cap;
    EXPECT_LE(once.stats.states_expanded, cap + 2) << cap;
  }
}

TEST(HierarchicalSchedulerTest, CancelledCallReturnsAValidSchedule) {
  MemoryModel model = TestModel(ManyBranches(60));
  std::atomic<bool> cancelled{true};
  ScheduleLimits limits;
  limits.cancelled = &cancelled;
  for (bool paper : {true, false}) {
    absl::StatusOr<ScheduleResult> result = paper ? HmcosScheduler().Schedule(model, limits)
                                                  : HierarchicalScheduler().Schedule(model, limits);
    ORDO_ASSERT_OK(result);
    ExpectValidSchedule(model, *result);
    EXPECT_THAT(result->algorithm, AnyOf("rpo", "greedy", "model", "kahn"));
  }
}

// `best` with the hierarchical scheduler as the fallback for parts the
// exact search cannot prove quickly: twenty branches (2^20 sets to prove
// anything; branch i has i in-place Relus, which cost nothing, so that no
// two are alike and the search's symmetry edges do not apply) beside a
// branch pair where greedy goes wrong (dp_scheduler_test), all in one part,
// with a search too small to prove it. The hierarchical order wins (72
// bytes against 77), and every bound is honest.
TEST(HierarchicalSchedulerTest, BestFallsBackToItWhenTheSearchCannotProveAPart) {
  std::string text = R"(
    input x 1
    op t1 Conv x -> a:40
    op t2 Conv a -> a_small:30
    op t3 Conv x -> b:45
    op t4 Conv b -> b_small:1
  )";
  std::string join = "op j Concat a_small b_small";
  for (int i = 0; i < 20; ++i) {
    absl::StrAppend(&text, "op p", i, " Conv x -> p", i, "_0:10\n");
    for (int k = 1; k <= i; ++k) {
      absl::StrAppend(&text, "op q", i, "_", k, " Relu p", i, "_", k - 1, " -> p", i, "_", k,
                      ":10\n");
    }
    absl::StrAppend(&text, "op r", i, " Conv p", i, "_", i, " -> r", i, ":1\n");
    absl::StrAppend(&join, " r", i);
  }
  absl::StrAppend(&text, join, " -> y:1\noutput y\n");
  MemoryModel model = TestModel(TestGraph(text));
  ScheduleLimits limits;
  limits.max_state_bytes = 4 << 20;
  DivideAndConquerOptions with;
  with.part.quick_search_max_state_bytes = 64 << 10;
  DivideAndConquerOptions without = with;
  without.part.hierarchical = false;
  ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult helped,
                            DivideAndConquerScheduler("best", with).Schedule(model, limits));
  ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult alone,
                            DivideAndConquerScheduler("best", without).Schedule(model, limits));
  ExpectValidSchedule(model, helped);
  ExpectValidSchedule(model, alone);
  EXPECT_LT(helped.peak_bytes, alone.peak_bytes);
  EXPECT_THAT(helped.algorithm, HasSubstr("hierarchical"));
  ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult hierarchical,
                            HierarchicalScheduler().Schedule(model, {}));
  EXPECT_LE(helped.peak_bytes, hierarchical.peak_bytes);
  EXPECT_LE(helped.lower_bound_bytes, hierarchical.peak_bytes);
  // The hierarchical scheduler's time is its share of what the quick
  // attempt left: with none, its order is the cheap one it starts from.
  ScheduleLimits timed = limits;
  timed.deadline = absl::Now() + absl::Seconds(60);
  DivideAndConquerOptions no_time = with;
  no_time.part.hierarchical_share = 0;
  ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult hurried,
                            DivideAndConquerScheduler("best", no_time).Schedule(model, timed));
  ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult given,
                            DivideAndConquerScheduler("best", with).Schedule(model, timed));
  EXPECT_EQ(hurried.peak_bytes, alone.peak_bytes);
  EXPECT_EQ(given.peak_bytes, helped.peak_bytes);
}

}  // namespace
}  // namespace ordo
