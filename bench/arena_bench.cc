// arena_bench: Google Benchmark of the arena planners on a synthetic large
// graph (RandomDag, 2000 ops, model order), and of the traffic estimate.
// The arena size each planner reaches is reported as a counter beside its time.

#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "benchmark/benchmark.h"
#include "core/arena/arena_planner_registry.h"
#include "core/arena/arena_problem.h"
#include "core/memory/memory_model.h"
#include "core/memory/simulator.h"
#include "core/testing/test_graph.h"
#include "core/traffic/traffic.h"
#include "core/util/check.h"

namespace ordo {
namespace {

struct Instance {
  MemoryModel model;
  std::vector<int32_t> order;
  SimulationResult simulation;
  ArenaProblem problem;
};

const Instance& LargeInstance() {
  static const Instance* instance = [] {
    std::mt19937_64 rng(20240601);
    testing::RandomDagOptions options;
    options.num_ops = 2000;
    options.num_inputs = 4;
    options.max_bytes = 1 << 20;
    options.min_bytes = 1 << 10;
    const Graph graph = testing::RandomDag(rng, options);
    auto* result = new Instance;
    absl::StatusOr<MemoryModel> model = BuildMemoryModel(graph, MemoryOptions{});
    ORDO_CHECK(model.ok());
    result->model = *std::move(model);
    for (int32_t op = 0; op < result->model.num_ops(); ++op) result->order.push_back(op);
    absl::StatusOr<SimulationResult> simulation = Simulate(result->model, result->order);
    ORDO_CHECK(simulation.ok());
    result->simulation = *std::move(simulation);
    absl::StatusOr<ArenaProblem> problem = BuildArenaProblem(result->model, result->simulation, 64);
    ORDO_CHECK(problem.ok());
    result->problem = *std::move(problem);
    return result;
  }();
  return *instance;
}

void BM_Planner(benchmark::State& state, const std::string& name) {
  const Instance& instance = LargeInstance();
  absl::StatusOr<std::unique_ptr<ArenaPlanner>> planner = BuiltinArenaPlanners().Create(name);
  ORDO_CHECK(planner.ok());
  ArenaLimits limits;
  limits.max_search_nodes = 20000;
  int64_t arena = 0;
  for (auto _ : state) {
    ArenaPlacement placement = (*planner)->Place(instance.problem, limits);
    arena = ArenaBytes(instance.problem, placement.offsets);
    benchmark::DoNotOptimize(arena);
  }
  state.counters["arena_over_bound"] =
      static_cast<double>(arena) / instance.problem.lower_bound_bytes;
  state.counters["blocks"] = static_cast<double>(instance.problem.blocks.size());
}

void BM_Traffic(benchmark::State& state) {
  const Instance& instance = LargeInstance();
  TrafficOptions options;
  options.on_chip_bytes = state.range(0) << 10;
  for (auto _ : state) {
    absl::StatusOr<TrafficResult> traffic =
        EstimateTraffic(instance.model, instance.order, options);
    ORDO_CHECK(traffic.ok());
    benchmark::DoNotOptimize(traffic->total_bytes);
  }
}

void RegisterAll() {
  const ArenaPlannerRegistry registry = BuiltinArenaPlanners();
  for (const ArenaPlannerInfo& info : registry.planners()) {
    benchmark::RegisterBenchmark(("BM_Planner/" + info.name).c_str(), BM_Planner, info.name)
        ->Unit(benchmark::kMillisecond);
  }
  benchmark::RegisterBenchmark("BM_Traffic", BM_Traffic)
      ->Arg(256)
      ->Arg(4096)
      ->Unit(benchmark::kMillisecond);
}

}  // namespace
}  // namespace ordo

int main(int argc, char** argv) {
  ordo::RegisterAll();
  benchmark::Initialize(&argc, argv);
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
