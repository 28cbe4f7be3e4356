// The exact search's hot path: expanding partial schedules of a wide,
// irregular graph (a RandWire-like random DAG, and a many-branch graph that
// no search can finish, stopped after a fixed number of clock reads), and
// the `best` scheduler on the realistic DARTS stream's candidates (the
// exact search on their cell stacks is most of a cold candidate's
// scheduling, docs/nas.md).
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "bench/darts_candidates.h"
#include "benchmark/benchmark.h"
#include "core/graph/graph_proto.h"
#include "core/memory/memory_model.h"
#include "core/schedule/chain_symmetry.h"
#include "core/schedule/dp_scheduler.h"
#include "core/schedule/schedule_state_space.h"
#include "core/schedule/scheduler_registry.h"
#include "core/schedule/serenity_scheduler.h"
#include "core/testing/fake_clock.h"
#include "core/testing/test_graph.h"

namespace ordo {
namespace {


MemoryModel RandomWired(int ops, uint64_t seed) {
  std::mt19937_64 rng(seed);
  testing::RandomDagOptions options;
  options.num_ops = ops;
  options.max_inputs = 3;
  options.inplace_chance = 0.3;
  options.second_output_chance = 0.1;
  options.min_bytes = 100;
  options.max_bytes = 1000;
  return *BuildMemoryModel(testing::RandomDag(rng, options), {});
}

MemoryModel ManyBranches(int branches) {
  std::string text = "input x 1\n";
  std::string join = "op join Concat";
  for (int i = 0; i < branches; ++i) {
    absl::StrAppend(&text, "op a", i, " Conv x -> p", i, ":", 10 + i % 7, "\n");
    absl::StrAppend(&text, "op b", i, " Conv p", i, " -> r", i, ":", 1 + i % 3, "\n");
    absl::StrAppend(&join, " r", i);
  }
  absl::StrAppend(&text, join, " -> y:1\noutput y\n");
  return *BuildMemoryModel(testing::TestGraph(text), {});
}

// Solves random DAGs of state.range(0) ops to optimality.
void BM_DpSolveRandomDag(benchmark::State& state) {
  const MemoryModel model = RandomWired(static_cast<int>(state.range(0)), 17);
  int64_t expanded = 0;
  for (auto _ : state) {
    absl::StatusOr<ScheduleResult> result = DpScheduler().Schedule(model, {});
    benchmark::DoNotOptimize(result);
    expanded += result->stats.states_expanded;
  }
  state.counters["states"] =
      benchmark::Counter(static_cast<double>(expanded), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_DpSolveRandomDag)->Arg(30)->Arg(60)->Unit(benchmark::kMillisecond);

// Expansions per second on a search that cannot finish.
void BM_DpExpandManyBranches(benchmark::State& state) {
  const MemoryModel model = ManyBranches(static_cast<int>(state.range(0)));
  int64_t expanded = 0;
  for (auto _ : state) {
    testing::TickingClock clock(absl::Milliseconds(1));
    ScheduleLimits limits;
    limits.clock = &clock;
    limits.deadline = clock.Now() + absl::Milliseconds(64);
    absl::StatusOr<ScheduleResult> result = DpScheduler().Schedule(model, limits);
    benchmark::DoNotOptimize(result);
    expanded += result->stats.states_expanded;
  }
  state.counters["states"] =
      benchmark::Counter(static_cast<double>(expanded), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_DpExpandManyBranches)->Arg(64)->Arg(200)->Unit(benchmark::kMillisecond);

// Proving the optimum of `state.range(0)` alike Conv-Relu-Conv branches
// summed by one op (testing::SummedBranches: the symmetry edges of
// chain_symmetry.h at work; without them this ends at the state limit).
void BM_DpSolveAlikeBranches(benchmark::State& state) {
  const MemoryModel model =
      *BuildMemoryModel(testing::SummedBranches(static_cast<int>(state.range(0))), {});
  for (auto _ : state) {
    absl::StatusOr<ScheduleResult> result = DpScheduler().Schedule(model, {});
    if (!result.ok() || result->status != ScheduleStatus::kOptimal) {
      return state.SkipWithError("the branches were not proved optimal");
    }
  }
}
BENCHMARK(BM_DpSolveAlikeBranches)->Arg(48)->Arg(128)->Unit(benchmark::kMillisecond);

// Finding the edges on a random DAG (few of its chains are alike).
void BM_InterchangeableChainEdges(benchmark::State& state) {
  const MemoryModel model = RandomWired(static_cast<int>(state.range(0)), 3);
  size_t edges = 0;
  for (auto _ : state) {
    std::vector<OrderEdge> found = InterchangeableChainEdges(model);
    edges = found.size();
    benchmark::DoNotOptimize(found);
  }
  state.counters["edges"] = static_cast<double>(edges);
}
BENCHMARK(BM_InterchangeableChainEdges)->Arg(800);

// Building the state space of one search, with the symmetry edges and
// without: what the edges add to every exact search of a part.
void BM_StateSpaceBuild(benchmark::State& state) {
  const MemoryModel model = RandomWired(static_cast<int>(state.range(0)), 3);
  for (auto _ : state) benchmark::DoNotOptimize(ScheduleStateSpace(model, state.range(1) != 0));
}
BENCHMARK(BM_StateSpaceBuild)->Args({800, 0})->Args({800, 1});

// SERENITY's level-by-level DP on the same random DAGs.
void BM_SerenitySolveRandomDag(benchmark::State& state) {
  const MemoryModel model = RandomWired(static_cast<int>(state.range(0)), 17);
  for (auto _ : state) {
    absl::StatusOr<ScheduleResult> result = SerenityScheduler().Schedule(model, {});
    benchmark::DoNotOptimize(result);
  }
}
BENCHMARK(BM_SerenitySolveRandomDag)->Arg(30)->Unit(benchmark::kMillisecond);

// `best` on the first state.range(0) candidates of the DARTS stream that
// `ordo-load --mode=darts` sends (seed 1, the defaults), each proved
// optimal; time per candidate, and the exact search's expansions.
void BM_BestDartsCandidates(benchmark::State& state) {
  bench::DartsCandidateStream stream(bench::DartsCandidateStream::Options{});
  std::vector<MemoryModel> models;
  for (int64_t i = 0; i < state.range(0); ++i) {
    absl::StatusOr<Graph> graph = GraphFromProto(stream.Next());
    if (!graph.ok()) return state.SkipWithError(std::string(graph.status().message()).c_str());
    models.push_back(*BuildMemoryModel(*graph, {}));
  }
  absl::StatusOr<std::unique_ptr<Scheduler>> best = BuiltinSchedulers().Create("best");
  int64_t expanded = 0;
  for (auto _ : state) {
    for (const MemoryModel& model : models) {
      absl::StatusOr<ScheduleResult> result = (*best)->Schedule(model, {});
      if (!result.ok() || result->status != ScheduleStatus::kOptimal) {
        return state.SkipWithError("a candidate was not scheduled to optimality");
      }
      expanded += result->stats.states_expanded;
    }
  }
  state.SetItemsProcessed(state.iterations() * state.range(0));
  state.counters["states"] =
      benchmark::Counter(static_cast<double>(expanded), benchmark::Counter::kIsRate);
}
BENCHMARK(BM_BestDartsCandidates)->Arg(40)->Unit(benchmark::kMillisecond);

// One step of the incremental count: ready ops and their footprints.
void BM_StateSpaceExpand(benchmark::State& state) {
  const MemoryModel model = RandomWired(static_cast<int>(state.range(0)), 3);
  const ScheduleStateSpace space(model, /*break_symmetry=*/true);
  std::vector<uint64_t> set(space.words(), 0);
  std::vector<int32_t> ready;
  // Half the ops scheduled, in id order (a topological order).
  for (int32_t op = 0; op < space.num_ops() / 2; ++op) ScheduleStateSpace::Add(set.data(), op);
  const int64_t live = ScheduleStateSpace::LiveBytes(model, set.data());
  for (auto _ : state) {
    space.ReadyOps(set.data(), ready);
    int64_t sum = 0;
    for (int32_t op : ready) sum += space.Run(set.data(), live, op).footprint;
    benchmark::DoNotOptimize(sum);
  }
}
BENCHMARK(BM_StateSpaceExpand)->Arg(160)->Arg(800);

}  // namespace
}  // namespace ordo

BENCHMARK_MAIN();
