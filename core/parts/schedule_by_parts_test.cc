#include "core/parts/schedule_by_parts.h"

#include <atomic>
#include <cstdio>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "core/cache/lru_schedule_cache.h"
#include "core/memory/simulator.h"
#include "core/parts/part_key.h"
#include "core/schedule/hmcos_scheduler.h"
#include "core/schedule/op_dag.h"
#include "core/schedule/topological_orders.h"
#include "core/testing/fake_clock.h"
#include "core/testing/status_matchers.h"
#include "core/testing/test_graph.h"
#include "core/testing/trials.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::kTwoCellsGraph;
using ::ordo::testing::TestModel;

// Three parts: the stem, then two identical cells.
MemoryModel Model() { return TestModel(kTwoCellsGraph); }

PartScheduleOptions Options() {
  PartScheduleOptions options;
  options.scheduler = "dp";
  options.time_limit = absl::Seconds(5);
  options.partition.merge_up_to_ops = 1;  // keep every cell its own part
  return options;
}

// Counts tasks, runs them locally; or fails them all.
class CountingRunner final : public PartRunner {
 public:
  explicit CountingRunner(bool fail = false, int32_t parallel = 1 << 30)
      : fail_(fail), parallel_(parallel) {}
  int32_t max_parallel_tasks() const override { return parallel_; }
  std::vector<PartOutcome> RunAll(absl::Span<const PartTask> tasks,
                                  const ScheduleLimits& limits) override {
    tasks_ += static_cast<int>(tasks.size());
    if (!fail_) return ThreadPartRunner(2).RunAll(tasks, limits);
    std::vector<PartOutcome> outcomes(tasks.size());
    for (PartOutcome& outcome : outcomes) {
      outcome.result = absl::UnavailableError("no worker");
      outcome.retries = 1;
    }
    return outcomes;
  }
  int tasks() const { return tasks_; }

 private:
  bool fail_;
  int32_t parallel_;
  std::atomic<int> tasks_{0};
};

// Returns every entry with its peak off by one unit: a corrupt cache.
class CorruptingCache final : public ScheduleCache {
 public:
  absl::StatusOr<std::optional<CachedSchedule>> Lookup(absl::string_view key) override {
    auto entry = inner_.Lookup(key);
    if (entry.ok() && entry->has_value()) ++(*entry)->peak_units;
    return entry;
  }
  absl::Status Insert(absl::string_view key, const CachedSchedule& entry) override {
    return inner_.Insert(key, entry);
  }
  absl::string_view kind() const override { return "corrupt"; }

 private:
  LruScheduleCache inner_{1 << 20};
};

TEST(ScheduleByPartsTest, SecondRunIsAllHitsWithTheSamePeak) {
  const MemoryModel model = Model();
  LruScheduleCache cache(1 << 20);
  CountingRunner runner;
  ORDO_ASSERT_OK_AND_ASSIGN(PartScheduleResult first,
                            ScheduleByParts(model, Options(), {}, runner, &cache));
  EXPECT_EQ(first.stats.parts, 3);
  EXPECT_EQ(first.stats.cache_misses, 3);
  EXPECT_EQ(first.stats.deduplicated_parts, 1);  // the two cells share a key
  EXPECT_EQ(runner.tasks(), 2);
  EXPECT_EQ(first.schedule.status, ScheduleStatus::kOptimal);
  ORDO_ASSERT_OK_AND_ASSIGN(int64_t peak, SimulatePeak(model, first.schedule.order));
  EXPECT_EQ(first.schedule.peak_bytes, peak);

  ORDO_ASSERT_OK_AND_ASSIGN(PartScheduleResult second,
                            ScheduleByParts(model, Options(), {}, runner, &cache));
  EXPECT_EQ(second.stats.cache_hits, 3);
  EXPECT_EQ(second.stats.cache_misses, 0);
  EXPECT_EQ(runner.tasks(), 2);  // nothing ran
  EXPECT_EQ(second.schedule.order, first.schedule.order);
  EXPECT_EQ(second.schedule.peak_bytes, first.schedule.peak_bytes);
  EXPECT_THAT(second.part_cached, ::testing::ElementsAre(true, true, true));

  const CachedPeak cached = LookupCachedPeak(model, Options(), cache);
  EXPECT_EQ(cached.cached_parts, 3);
  EXPECT_EQ(cached.peak_bytes, first.schedule.peak_bytes);
}

TEST(ScheduleByPartsTest, CorruptEntriesAreRejectedAndRecomputed) {
  const MemoryModel model = Model();
  CorruptingCache cache;
  CountingRunner runner;
  ORDO_ASSERT_OK(ScheduleByParts(model, Options(), {}, runner, &cache));
  ORDO_ASSERT_OK_AND_ASSIGN(PartScheduleResult again,
                            ScheduleByParts(model, Options(), {}, runner, &cache));
  EXPECT_EQ(again.stats.cache_hits, 0);
  EXPECT_EQ(again.stats.cache_rejected, 3);
  EXPECT_EQ(runner.tasks(), 4);
}

// Answers every lookup as a cache that holds undecodable bytes (Redis with
// a planted or truncated value) or that cannot be reached.
class FailingLookupCache final : public ScheduleCache {
 public:
  explicit FailingLookupCache(absl::Status error) : error_(std::move(error)) {}
  absl::StatusOr<std::optional<CachedSchedule>> Lookup(absl::string_view) override {
    return error_;
  }
  absl::Status Insert(absl::string_view, const CachedSchedule&) override {
    ++inserts_;
    return absl::OkStatus();
  }
  absl::string_view kind() const override { return "failing"; }
  int inserts() const { return inserts_; }

 private:
  const absl::Status error_;
  int inserts_ = 0;
};

TEST(ScheduleByPartsTest, UndecodableEntriesCountAsRejectedAndAreOverwritten) {
  const MemoryModel model = Model();
  FailingLookupCache cache(absl::DataLossError("entry does not decode"));
  CountingRunner runner;
  ORDO_ASSERT_OK_AND_ASSIGN(PartScheduleResult result,
                            ScheduleByParts(model, Options(), {}, runner, &cache));
  EXPECT_EQ(result.stats.cache_rejected, 3);
  EXPECT_EQ(result.stats.cache_errors, 0);
  EXPECT_EQ(result.stats.cache_misses, 3);
  EXPECT_EQ(cache.inserts(), 2);  // the two distinct parts, replacing the bad bytes
}

TEST(ScheduleByPartsTest, UnreachableCacheCountsAsErrors) {
  const MemoryModel model = Model();
  FailingLookupCache cache(absl::UnavailableError("redis: timeout"));
  CountingRunner runner;
  ORDO_ASSERT_OK_AND_ASSIGN(PartScheduleResult result,
                            ScheduleByParts(model, Options(), {}, runner, &cache));
  EXPECT_EQ(result.stats.cache_errors, 3);
  EXPECT_EQ(result.stats.cache_rejected, 0);
}

TEST(ScheduleByPartsTest, FailedTasksFallBackToGreedyAndAreNotCached) {
  const MemoryModel model = Model();
  LruScheduleCache cache(1 << 20);
  CountingRunner failing(/*fail=*/true);
  ORDO_ASSERT_OK_AND_ASSIGN(PartScheduleResult result,
                            ScheduleByParts(model, Options(), {}, failing, &cache));
  EXPECT_EQ(result.stats.fallback_parts, 3);
  EXPECT_EQ(result.stats.task_retries, 2);
  ORDO_ASSERT_OK_AND_ASSIGN(int64_t peak, SimulatePeak(model, result.schedule.order));
  EXPECT_EQ(result.schedule.peak_bytes, peak);
  EXPECT_EQ(cache.size(), 0);
}

// Runs tasks locally and labels task i's outcome as `labels[i]` says:
// its runner, and whether it was a fallback after worker failures.
class LabellingRunner final : public PartRunner {
 public:
  explicit LabellingRunner(std::vector<std::pair<std::string, bool>> labels)
      : labels_(std::move(labels)) {}
  std::vector<PartOutcome> RunAll(absl::Span<const PartTask> tasks,
                                  const ScheduleLimits& limits) override {
    std::vector<PartOutcome> outcomes = ThreadPartRunner(1).RunAll(tasks, limits);
    for (size_t i = 0; i < outcomes.size() && i < labels_.size(); ++i) {
      outcomes[i].runner = labels_[i].first;
      outcomes[i].fallback = labels_[i].second;
    }
    return outcomes;
  }

 private:
  std::vector<std::pair<std::string, bool>> labels_;
};

TEST(ScheduleByPartsTest, InProcessTasksAreNotCountedAsWorkers) {
  const MemoryModel model = Model();  // two tasks: the stem and one cell
  LabellingRunner proved_here({{kInProcessRunner, false}, {"10.0.0.1:50052", false}});
  ORDO_ASSERT_OK_AND_ASSIGN(PartScheduleResult mixed,
                            ScheduleByParts(model, Options(), {}, proved_here, nullptr));
  EXPECT_EQ(mixed.stats.runners_used, 1);
  EXPECT_EQ(mixed.stats.in_process_tasks, 1);

  // A fallback after worker failures is neither a worker nor a part the
  // process chose to keep.
  LabellingRunner fallback({{kInProcessRunner, true}, {kInProcessRunner, false}});
  ORDO_ASSERT_OK_AND_ASSIGN(PartScheduleResult local,
                            ScheduleByParts(model, Options(), {}, fallback, nullptr));
  EXPECT_EQ(local.stats.runners_used, 0);
  EXPECT_EQ(local.stats.in_process_tasks, 1);
}

TEST(ScheduleByPartsTest, UnknownSchedulerIsInvalidArgument) {
  CountingRunner runner;
  PartScheduleOptions options = Options();
  options.scheduler = "nope";
  EXPECT_THAT(ScheduleByParts(Model(), options, {}, runner, nullptr),
              ::ordo::testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                        ::testing::HasSubstr("nope")));
  EXPECT_EQ(runner.tasks(), 0);
}

// Searching only the parts that can lower the whole peak loses nothing:
// against brute force on random hourglass graphs, through one cache shared
// by every trial (so parts settled unsearched by one model, stored as
// heuristic, meet later models where they may hold the peak), and a second
// run of each model is all hits with the same peak.
TEST(ScheduleByPartsTest, SearchingOnlyPeakPartsMatchesBruteForce) {
  std::mt19937_64 rng(7);
  LruScheduleCache cache(16 << 20);
  int searched_fewer = 0, ran = 0;
  for (int trial = 0; trial < ::ordo::testing::Trials(600); ++trial) {
    testing::RandomHourglassOptions graph_options;
    graph_options.num_cells = 2 + static_cast<int32_t>(rng() % 3);
    graph_options.max_cell_ops = 3;
    graph_options.skip_chance = 0;
    graph_options.max_bytes = 8;  // few distinct parts: the cache is shared
    absl::StatusOr<MemoryModel> model =
        BuildMemoryModel(testing::RandomHourglass(rng, graph_options), {});
    ASSERT_TRUE(model.ok());
    if (model->num_ops() > 10) continue;
    ++ran;
    PartScheduleOptions options = Options();
    options.scheduler = "best";
    options.search_only_peak_parts = true;
    CountingRunner runner;
    ORDO_ASSERT_OK_AND_ASSIGN(PartScheduleResult first,
                              ScheduleByParts(*model, options, {}, runner, &cache));
    const int64_t optimum = testing::BruteForceMinPeak(*model).peak_bytes;
    ASSERT_EQ(first.schedule.peak_bytes, optimum) << "trial " << trial;
    EXPECT_EQ(SimulatePeak(*model, first.schedule.order).value_or(-1), optimum);
    searched_fewer += runner.tasks() < first.stats.cache_misses;
    CountingRunner again_runner;
    ORDO_ASSERT_OK_AND_ASSIGN(PartScheduleResult again,
                              ScheduleByParts(*model, options, {}, again_runner, &cache));
    EXPECT_EQ(again.schedule.peak_bytes, optimum);
    EXPECT_EQ(again.stats.cache_hits, again.stats.parts) << "trial " << trial;
    EXPECT_EQ(again_runner.tasks(), 0);
  }
  EXPECT_GT(ran, ::ordo::testing::Trials(600) / 3);
  EXPECT_GT(searched_fewer, 0) << "no part was ever settled without a search";
  std::printf("%d graphs, %d with parts settled without a search\n", ran, searched_fewer);
}

// A runner of one task at a time gets rounds of one part, highest cheap
// peak first; each solved part raises the floor that settles the others,
// so it never runs more tasks than one round of all parts, and the answer
// is the same optimum.
TEST(ScheduleByPartsTest, RoundsOfOneTaskSettleWhatEarlierRoundsMadeIrrelevant) {
  std::mt19937_64 rng(11);
  int fewer = 0;
  for (int trial = 0; trial < ::ordo::testing::Trials(200); ++trial) {
    testing::RandomHourglassOptions graph_options;
    graph_options.num_cells = 3 + static_cast<int32_t>(rng() % 4);
    graph_options.max_cell_ops = 7;
    graph_options.skip_chance = 0;
    absl::StatusOr<MemoryModel> model =
        BuildMemoryModel(testing::RandomHourglass(rng, graph_options), {});
    ASSERT_TRUE(model.ok());
    PartScheduleOptions options = Options();
    options.scheduler = "best";
    options.search_only_peak_parts = true;
    CountingRunner one_round;
    CountingRunner one_at_a_time(/*fail=*/false, /*parallel=*/1);
    ORDO_ASSERT_OK_AND_ASSIGN(PartScheduleResult all,
                              ScheduleByParts(*model, options, {}, one_round, nullptr));
    ORDO_ASSERT_OK_AND_ASSIGN(PartScheduleResult rounds,
                              ScheduleByParts(*model, options, {}, one_at_a_time, nullptr));
    ASSERT_EQ(all.schedule.status, ScheduleStatus::kOptimal) << "trial " << trial;
    ASSERT_EQ(rounds.schedule.status, ScheduleStatus::kOptimal) << "trial " << trial;
    ASSERT_EQ(rounds.schedule.peak_bytes, all.schedule.peak_bytes) << "trial " << trial;
    EXPECT_EQ(SimulatePeak(*model, rounds.schedule.order).value_or(-1),
              rounds.schedule.peak_bytes);
    EXPECT_LE(one_at_a_time.tasks(), one_round.tasks()) << "trial " << trial;
    fewer += one_at_a_time.tasks() < one_round.tasks();
  }
  EXPECT_GT(fewer, 0) << "no round ever settled a part a later round would have searched";
}

// Runs each task of a call on a thread of its own, as workers do. The task
// whose part has the highest optimum (brute force; the whole model's, by
// the partition theorem) answers at once, proved optimal; the others, like
// searches that take long, first wait for their `stop` (at most `wait`):
// stopped, they end CANCELLED, else they answer their optimum. Calls
// `on_done`. With `proved` false the answers claim no optimality.
class StallingRunner final : public PartRunner {
 public:
  explicit StallingRunner(absl::Duration wait, bool proved = true) : wait_(wait), proved_(proved) {}
  std::vector<PartOutcome> RunAll(absl::Span<const PartTask> tasks,
                                  const ScheduleLimits& limits) override {
    std::vector<testing::BruteForceResult> optima;
    int64_t highest = 0;
    for (const PartTask& task : tasks) {
      optima.push_back(testing::BruteForceMinPeak(*task.model));
      highest = std::max(highest, optima.back().peak_bytes);
    }
    std::vector<PartOutcome> outcomes(tasks.size());
    std::vector<std::thread> threads;
    for (size_t t = 0; t < tasks.size(); ++t) {
      threads.emplace_back([&, t] {
        const PartTask& task = tasks[t];
        const absl::Time give_up = absl::Now() + wait_;
        bool stopped = false;
        while (optima[t].peak_bytes < highest && !stopped && absl::Now() < give_up) {
          absl::SleepFor(absl::Milliseconds(1));
          stopped = task.stop != nullptr && task.stop->load();
        }
        outcomes[t].runner = kInProcessRunner;
        if (stopped) {
          ++stopped_;
          outcomes[t].result = absl::CancelledError("part no longer needed");
        } else {
          // Proved optimal, as the brute force proves it.
          outcomes[t].result =
              FinishSchedule(*task.model, optima[t].order, "scripted", absl::Now(), limits);
          if (outcomes[t].result.ok() && proved_) {
            ApplyLowerBound(optima[t].peak_bytes, MemoryLowerBound(*task.model),
                            *outcomes[t].result);
          }
        }
        if (task.on_done) task.on_done(outcomes[t]);
      });
    }
    for (std::thread& thread : threads) thread.join();
    return outcomes;
  }
  int stopped() const { return stopped_; }

 private:
  const absl::Duration wait_;
  const bool proved_;
  std::atomic<int> stopped_{0};
};

// `best` on the parts that can lower the whole peak, as the server runs it.
PartScheduleOptions PeakPartsOptions() {
  PartScheduleOptions options = Options();
  options.scheduler = "best";
  options.search_only_peak_parts = true;
  return options;
}

// A random hourglass of 3-6 cells, or nullopt past 24 ops (for the brute
// force).
std::optional<MemoryModel> SmallHourglass(std::mt19937_64& rng) {
  testing::RandomHourglassOptions graph_options;
  graph_options.num_cells = 3 + static_cast<int32_t>(rng() % 4);
  graph_options.max_cell_ops = 6;
  graph_options.skip_chance = 0;
  absl::StatusOr<MemoryModel> model =
      BuildMemoryModel(testing::RandomHourglass(rng, graph_options), {});
  if (!model.ok() || model->num_ops() > 24) return std::nullopt;
  return *std::move(model);
}

// A task running beside the one that holds the peak is stopped as soon as
// that one's answer settles its part (its cheap order peaks no higher), not
// waited for; the answer is still the optimum.
TEST(ScheduleByPartsTest, TasksThatOtherAnswersSettleAreStoppedInFlight) {
  std::mt19937_64 rng(23);
  int stopped = 0;
  for (int trial = 0; trial < ::ordo::testing::Trials(150); ++trial) {
    const std::optional<MemoryModel> model = SmallHourglass(rng);
    if (!model) continue;
    StallingRunner runner(absl::Milliseconds(300));
    ORDO_ASSERT_OK_AND_ASSIGN(PartScheduleResult result,
                              ScheduleByParts(*model, PeakPartsOptions(), {}, runner, nullptr));
    ASSERT_EQ(result.schedule.peak_bytes, testing::BruteForceMinPeak(*model).peak_bytes)
        << "trial " << trial;
    EXPECT_EQ(SimulatePeak(*model, result.schedule.order).value_or(-1), result.schedule.peak_bytes);
    EXPECT_EQ(result.stats.stopped_tasks, runner.stopped()) << "trial " << trial;
    EXPECT_EQ(result.stats.fallback_parts, 0) << "trial " << trial;
    stopped += runner.stopped();
  }
  EXPECT_GT(stopped, 0) << "no task was ever stopped in flight";
  std::printf("%d tasks stopped in flight\n", stopped);
}

// An answer not proved optimal may still be lowered by a later search
// (SearchPeakPartsAgain), so it stops nothing: a part stopped below it
// could end up holding the whole peak unsearched.
TEST(ScheduleByPartsTest, AnswersNotProvedOptimalStopNoTask) {
  std::mt19937_64 rng(23);
  for (int trial = 0; trial < ::ordo::testing::Trials(40); ++trial) {
    const std::optional<MemoryModel> model = SmallHourglass(rng);
    if (!model) continue;
    StallingRunner runner(absl::Milliseconds(20), /*proved=*/false);
    ORDO_ASSERT_OK_AND_ASSIGN(PartScheduleResult result,
                              ScheduleByParts(*model, PeakPartsOptions(), {}, runner, nullptr));
    EXPECT_EQ(result.stats.stopped_tasks, 0) << "trial " << trial;
    EXPECT_EQ(runner.stopped(), 0) << "trial " << trial;
  }
}

// One task at a time on its own fake clock, scripted like a search that
// runs out of time: a task given at least `enough` returns its part's
// optimum (brute force), one given less its model order; with
// `uses_all_time` each task takes all the time it is given, else none.
// Logs the time given to each part key.
class TimedRunner final : public PartRunner {
 public:
  TimedRunner(absl::Duration limit, absl::Duration enough, bool uses_all_time)
      : enough_(enough), uses_all_time_(uses_all_time) {
    limits_.clock = &clock_;
    limits_.deadline = clock_.Now() + limit;
  }
  int32_t max_parallel_tasks() const override { return 1; }
  // A call's limits: `limit` from the runner's creation, on its clock.
  const ScheduleLimits& limits() const { return limits_; }
  std::vector<PartOutcome> RunAll(absl::Span<const PartTask> tasks,
                                  const ScheduleLimits& limits) override {
    std::vector<PartOutcome> outcomes(tasks.size());
    for (size_t t = 0; t < tasks.size(); ++t) {
      const MemoryModel& part = *tasks[t].model;
      const absl::Time start = clock_.Now();
      const absl::Duration given = std::min(limits.deadline, start + tasks[t].time_limit) - start;
      given_[CanonicalPartKey(part, "best").key].push_back(given);
      std::vector<int32_t> order =
          given >= enough_ ? testing::BruteForceMinPeak(part).order : ModelOrder(OpDag(part));
      if (uses_all_time_) clock_.Advance(given);
      outcomes[t].runner = kInProcessRunner;
      outcomes[t].result = FinishSchedule(part, std::move(order), "scripted", start, limits);
    }
    return outcomes;
  }
  // Per part key, the time each of its tasks was given.
  const absl::flat_hash_map<std::string, std::vector<absl::Duration>>& given() const {
    return given_;
  }

 private:
  testing::FakeClock clock_;
  ScheduleLimits limits_;
  const absl::Duration enough_;
  const bool uses_all_time_;
  absl::flat_hash_map<std::string, std::vector<absl::Duration>> given_;
};

// Three to six cells of up to 7 ops: parts small enough to brute-force.
Graph RandomCells(std::mt19937_64& rng) {
  testing::RandomHourglassOptions graph_options;
  graph_options.num_cells = 3 + static_cast<int32_t>(rng() % 4);
  graph_options.max_cell_ops = 7;
  graph_options.skip_chance = 0;
  return testing::RandomHourglass(rng, graph_options);
}

PartScheduleOptions BestWithin(absl::Duration limit) {
  PartScheduleOptions options = Options();
  options.scheduler = "best";
  options.search_only_peak_parts = true;
  options.time_limit = limit;
  return options;
}

// Rounds of one task split the time evenly among the parts left to search;
// when the first round's part holds the peak and settles the others, its
// share was all it searched with. The time left goes to it again: the
// scripted runner finds the optimum with half the limit, which no round of
// three or more parts gives.
TEST(ScheduleByPartsTest, TimeTheRoundsLeftGoesToThePartsHoldingThePeak) {
  std::mt19937_64 rng(5);
  int searched_again = 0, rescued = 0;
  const absl::Duration limit = absl::Seconds(12);
  // Most random parts' cheap orders are optimal already (no search); a few
  // percent of the graphs search a peak part again.
  for (int trial = 0; trial < 5000 && searched_again < 8; ++trial) {
    absl::StatusOr<MemoryModel> model = BuildMemoryModel(RandomCells(rng), {});
    ASSERT_TRUE(model.ok());
    const PartScheduleOptions options = BestWithin(limit);
    TimedRunner runner(limit, limit / 2, /*uses_all_time=*/true);
    const ScheduleLimits& limits = runner.limits();
    ORDO_ASSERT_OK_AND_ASSIGN(PartScheduleResult result,
                              ScheduleByParts(*model, options, limits, runner, nullptr));
    EXPECT_EQ(SimulatePeak(*model, result.schedule.order).value_or(-1),
              result.schedule.peak_bytes);
    EXPECT_LE(limits.Now(), limits.deadline) << "trial " << trial;
    bool again = false;
    for (const auto& [key, given] : runner.given()) {
      ASSERT_LE(given.size(), 2u) << "trial " << trial;
      if (given.size() < 2) continue;
      again = true;
      EXPECT_GE(given[1], given[0] * 1.5) << "trial " << trial;
    }
    searched_again += again;
    int64_t optimum = 0;
    for (const Part& part : HourglassPartitioner(options.partition).Split(*model).parts) {
      optimum = std::max(optimum, testing::BruteForceMinPeak(part.model).peak_bytes);
    }
    ASSERT_GE(result.schedule.peak_bytes, optimum);
    rescued += again && result.schedule.peak_bytes == optimum;
  }
  EXPECT_EQ(searched_again, 8) << "too few parts were searched again";
  EXPECT_GT(rescued, 0) << "no second search reached the optimum";
  std::printf("%d searched a peak part again, %d of them to the optimum\n", searched_again,
              rescued);
}

// A search that ended well before its share ran out (at its state bytes,
// say) would end the same way again: never repeated, however much time is
// left.
TEST(ScheduleByPartsTest, ASearchThatEndedEarlyIsNotRepeated) {
  std::mt19937_64 rng(5);
  const absl::Duration limit = absl::Seconds(12);
  for (int trial = 0; trial < ::ordo::testing::Trials(100); ++trial) {
    absl::StatusOr<MemoryModel> model = BuildMemoryModel(RandomCells(rng), {});
    ASSERT_TRUE(model.ok());
    const PartScheduleOptions options = BestWithin(limit);
    TimedRunner runner(limit, limit / 2, /*uses_all_time=*/false);
    ORDO_ASSERT_OK(ScheduleByParts(*model, options, runner.limits(), runner, nullptr).status());
    for (const auto& [key, given] : runner.given()) {
      EXPECT_EQ(given.size(), 1u) << "trial " << trial;
    }
  }
}

// Combine's one rule for HMCOS's iteration counts: summed over the parts
// (each part counts what its schedule cost, a shared task in every part it
// serves).
TEST(ScheduleByPartsTest, IterationCountsAreSummedOverParts) {
  const MemoryModel model = Model();
  PartScheduleOptions options = Options();
  options.scheduler = "hmcos";
  CountingRunner runner;
  ORDO_ASSERT_OK_AND_ASSIGN(PartScheduleResult result,
                            ScheduleByParts(model, options, {}, runner, nullptr));
  IterativeStats expected;
  for (const Part& part : HourglassPartitioner(options.partition).Split(model).parts) {
    ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult alone, HmcosScheduler().Schedule(part.model, {}));
    expected.Add(alone.stats.iterative);
  }
  EXPECT_GT(expected.iterations, 0);
  EXPECT_EQ(result.schedule.stats.iterative.iterations, expected.iterations);
  EXPECT_EQ(result.schedule.stats.iterative.groups, expected.groups);
  EXPECT_EQ(result.schedule.stats.iterative.sequences, expected.sequences);
}

// With keep_best_when_cancelled (a Scheduler's promise), a cancelled call
// still returns a schedule: the cheap orders, nothing searched.
TEST(ScheduleByPartsTest, CancelledCallKeepsTheCheapOrdersWhenAsked) {
  std::atomic<bool> cancelled{true};
  ScheduleLimits limits;
  limits.cancelled = &cancelled;
  PartScheduleOptions options = Options();
  options.scheduler = "best";
  options.search_only_peak_parts = true;
  CountingRunner runner;
  EXPECT_THAT(ScheduleByParts(Model(), options, limits, runner, nullptr),
              ::ordo::testing::StatusIs(absl::StatusCode::kCancelled, ::testing::_));
  options.keep_best_when_cancelled = true;
  ORDO_ASSERT_OK_AND_ASSIGN(PartScheduleResult kept,
                            ScheduleByParts(Model(), options, limits, runner, nullptr));
  EXPECT_EQ(SimulatePeak(Model(), kept.schedule.order).value_or(-1), kept.schedule.peak_bytes);
  EXPECT_EQ(kept.schedule.stats.states_expanded, 0);
}

}  // namespace
}  // namespace ordo
