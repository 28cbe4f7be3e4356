#include "core/parts/local_first_part_runner.h"

#include <time.h>

#include <memory>
#include <string>
#include <vector>

#include "absl/synchronization/mutex.h"
#include "core/memory/simulator.h"
#include "core/testing/test_graph.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::kGreedyTrapGraph;
using ::ordo::testing::kTwoBranchesGraph;
using ::ordo::testing::TestModel;
using ::testing::ElementsAre;
using ::testing::IsEmpty;
using ::testing::UnorderedElementsAre;

// Stands for the workers: records the ops of every task it is sent and
// schedules it on a thread, answering as "worker".
class RecordingRunner final : public PartRunner {
 public:
  std::vector<PartOutcome> RunAll(absl::Span<const PartTask> tasks,
                                  const ScheduleLimits& limits) override {
    {
      absl::MutexLock lock(&mu_);
      for (const PartTask& task : tasks) ops_.push_back(task.model->num_ops());
    }
    std::vector<PartOutcome> outcomes = ThreadPartRunner(1).RunAll(tasks, limits);
    for (PartOutcome& outcome : outcomes) outcome.runner = "worker";
    return outcomes;
  }
  std::vector<int32_t> ops() {
    absl::MutexLock lock(&mu_);
    return ops_;
  }

 private:
  absl::Mutex mu_;
  std::vector<int32_t> ops_ ABSL_GUARDED_BY(mu_);
};

LocalFirstPartRunner::Options Budget(absl::Duration budget, int32_t max_ops = 1000) {
  LocalFirstPartRunner::Options options;
  options.budget = budget;
  options.total_budget = 10 * budget;
  options.max_ops = max_ops;
  return options;
}

TEST(LocalFirstPartRunnerTest, ASmallPartProvedHereNeverReachesTheRemoteRunner) {
  const MemoryModel model = TestModel(kGreedyTrapGraph);
  RecordingRunner workers;
  LocalFirstPartRunner runner(&workers, Budget(absl::Seconds(10)));
  const std::vector<PartOutcome> outcomes =
      runner.RunAll({PartTask{&model, "dp", absl::Seconds(10), "r"}}, ScheduleLimits{});
  ASSERT_EQ(outcomes.size(), 1u);
  ASSERT_TRUE(outcomes[0].result.ok()) << outcomes[0].result.status();
  EXPECT_EQ(outcomes[0].runner, "local");
  EXPECT_EQ(outcomes[0].result->status, ScheduleStatus::kOptimal);
  EXPECT_EQ(outcomes[0].result->peak_bytes, Simulate(model, outcomes[0].result->order)->peak_bytes);
  EXPECT_THAT(workers.ops(), IsEmpty());
}

TEST(LocalFirstPartRunnerTest, BigPartsAndUnprovedPartsGoToTheRemoteRunner) {
  const MemoryModel trap = TestModel(kGreedyTrapGraph);        // 5 ops
  const MemoryModel branches = TestModel(R"(
    input x 1
    op a1 Conv x -> a:50
    op b1 Conv x -> b:50
    op a2 Conv a -> a_small:1
    op b2 Conv b -> b_small:1
    op j Add a_small b_small -> y:1
    op k Relu y -> z:1
    output z
  )");  // 6 ops: kTwoBranchesGraph and a Relu
  const MemoryModel chain = TestModel(R"(
    input x 1
    op a Conv x -> y:4
    op b Conv y -> z:1
    output z
  )");
  RecordingRunner workers;
  std::vector<bool> attempts;
  LocalFirstPartRunner::Options options = Budget(absl::Seconds(10), /*max_ops=*/5);
  options.on_attempt = [&](bool kept) { attempts.push_back(kept); };
  LocalFirstPartRunner runner(&workers, options);
  // Greedy's order on the trap is not optimal, so the attempt proves
  // nothing; the 6-op branches exceed max_ops; the chain is proved here.
  const std::vector<PartOutcome> outcomes = runner.RunAll(
      {PartTask{&trap, "greedy", absl::Seconds(10), "r"},
       PartTask{&branches, "dp", absl::Seconds(10), "r"},
       PartTask{&chain, "dp", absl::Seconds(10), "r"}},
      ScheduleLimits{});
  ASSERT_EQ(outcomes.size(), 3u);
  for (const PartOutcome& outcome : outcomes) ASSERT_TRUE(outcome.result.ok());
  EXPECT_EQ(outcomes[0].runner, "worker");  // greedy: tried here, not proved
  EXPECT_EQ(outcomes[1].runner, "worker");  // too big to try
  EXPECT_EQ(outcomes[2].runner, "local");
  EXPECT_THAT(workers.ops(), UnorderedElementsAre(5, 6));
  EXPECT_THAT(attempts, UnorderedElementsAre(false, true));
  // Each outcome answers its own task.
  EXPECT_EQ(outcomes[1].result->peak_bytes, 52);
  EXPECT_EQ(outcomes[0].result->order.size(), 5u);
  EXPECT_EQ(outcomes[1].result->order.size(), 6u);
  EXPECT_EQ(outcomes[2].result->order.size(), 2u);
}

TEST(LocalFirstPartRunnerTest, AZeroBudgetSendsEveryPartToTheRemoteRunner) {
  const MemoryModel model = TestModel(kTwoBranchesGraph);
  RecordingRunner workers;
  LocalFirstPartRunner runner(&workers, Budget(absl::ZeroDuration()));
  const std::vector<PartOutcome> outcomes =
      runner.RunAll({PartTask{&model, "dp", absl::Seconds(10), "r"}}, ScheduleLimits{});
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0].runner, "worker");
  EXPECT_THAT(workers.ops(), ElementsAre(5));
}

absl::Duration ThreadCpuTime() {
  timespec now{};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return absl::DurationFromTimespec(now);
}

// Spends 20 ms of its thread's CPU time, whatever its deadline, then claims
// the model order optimal (true on a chain: it has one order).
class SlowChainScheduler final : public Scheduler {
 public:
  absl::string_view name() const override { return "slow"; }
  absl::StatusOr<ScheduleResult> Schedule(const MemoryModel& model,
                                          const ScheduleLimits& limits) const override {
    const absl::Time start = limits.Now();
    for (const absl::Duration begin = ThreadCpuTime();
         ThreadCpuTime() - begin < absl::Milliseconds(20);) {
    }
    std::vector<int32_t> order(model.num_ops());
    for (int32_t op = 0; op < model.num_ops(); ++op) order[op] = op;
    absl::StatusOr<ScheduleResult> result = FinishSchedule(model, order, "slow", start, limits);
    if (!result.ok()) return result;
    result->status = ScheduleStatus::kOptimal;
    result->lower_bound_bytes = result->peak_bytes;
    return result;
  }
};

TEST(LocalFirstPartRunnerTest, PartsLeftWhenTheCallsAttemptTimeIsSpentGoUntried) {
  const MemoryModel chain = TestModel(R"(
    input x 1
    op a Conv x -> y:4
    op b Conv y -> z:1
    output z
  )");
  SchedulerRegistry schedulers;
  schedulers.Register({"slow", "20 ms of CPU, then the model order", true,
                       [] { return std::make_unique<SlowChainScheduler>(); }});
  RecordingRunner workers;
  LocalFirstPartRunner::Options options = Budget(absl::Seconds(10));
  // The first attempt spends 20 ms, the second starts with 10 ms left (and
  // overruns it: this scheduler ignores its deadline), the rest are sent on.
  options.total_budget = absl::Milliseconds(30);
  int attempts = 0;
  options.on_attempt = [&](bool kept) {
    ++attempts;
    EXPECT_TRUE(kept);
  };
  LocalFirstPartRunner runner(&workers, options, std::move(schedulers));
  const std::vector<PartTask> tasks(4, PartTask{&chain, "slow", absl::Seconds(10), "r"});
  const std::vector<PartOutcome> outcomes = runner.RunAll(tasks, ScheduleLimits{});
  ASSERT_EQ(outcomes.size(), 4u);
  EXPECT_EQ(attempts, 2);
  EXPECT_EQ(outcomes[0].runner, kInProcessRunner);
  EXPECT_EQ(outcomes[1].runner, kInProcessRunner);
  EXPECT_EQ(outcomes[2].runner, "worker");
  EXPECT_EQ(outcomes[3].runner, "worker");
  EXPECT_THAT(workers.ops(), ElementsAre(2, 2));
}

TEST(LocalFirstPartRunnerTest, AZeroTotalBudgetSendsEveryPartUntried) {
  const MemoryModel model = TestModel(kTwoBranchesGraph);
  RecordingRunner workers;
  LocalFirstPartRunner::Options options = Budget(absl::Seconds(10));
  options.total_budget = absl::ZeroDuration();
  int attempts = 0;
  options.on_attempt = [&](bool) { ++attempts; };
  LocalFirstPartRunner runner(&workers, options);
  const std::vector<PartOutcome> outcomes =
      runner.RunAll({PartTask{&model, "dp", absl::Seconds(10), "r"}}, ScheduleLimits{});
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0].runner, "worker");
  EXPECT_EQ(attempts, 0);
  EXPECT_THAT(workers.ops(), ElementsAre(5));
}

// Claims `dp`'s optimal order with a peak one byte lower than it is.
class LyingScheduler final : public Scheduler {
 public:
  absl::string_view name() const override { return "liar"; }
  absl::StatusOr<ScheduleResult> Schedule(const MemoryModel& model,
                                          const ScheduleLimits& limits) const override {
    absl::StatusOr<ScheduleResult> result = (*PartSchedulers().Create("dp"))->Schedule(
        model, limits);
    if (!result.ok()) return result;
    --result->peak_bytes;
    result->lower_bound_bytes = result->peak_bytes;
    return result;
  }
};

TEST(LocalFirstPartRunnerTest, ARefusedOptimalClaimIsReportedAndTheTaskSentOn) {
  const MemoryModel model = TestModel(kGreedyTrapGraph);
  SchedulerRegistry schedulers;
  // Under dp's name: the attempt runs the liar, the workers the real dp.
  schedulers.Register({"dp", "dp's order, peak understated", true,
                       [] { return std::make_unique<LyingScheduler>(); }});
  RecordingRunner workers;
  LocalFirstPartRunner::Options options = Budget(absl::Seconds(10));
  std::vector<std::string> refused;
  options.on_refused_claim = [&](const PartTask& task, const absl::Status& error) {
    EXPECT_EQ(task.model, &model);
    refused.push_back(std::string(error.message()));
  };
  LocalFirstPartRunner runner(&workers, options, std::move(schedulers));
  const std::vector<PartOutcome> outcomes =
      runner.RunAll({PartTask{&model, "dp", absl::Seconds(10), "r"}}, ScheduleLimits{});
  ASSERT_EQ(outcomes.size(), 1u);
  EXPECT_EQ(outcomes[0].runner, "worker");
  ASSERT_TRUE(outcomes[0].result.ok()) << outcomes[0].result.status();
  EXPECT_EQ(outcomes[0].result->peak_bytes, Simulate(model, outcomes[0].result->order)->peak_bytes);
  EXPECT_THAT(refused, ElementsAre(::testing::HasSubstr("the simulator says")));
  EXPECT_THAT(workers.ops(), ElementsAre(5));
}

}  // namespace
}  // namespace ordo
