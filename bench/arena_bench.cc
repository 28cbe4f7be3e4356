// arena_bench: Google Benchmark of the arena planners on a synthetic large
// graph (RandomDag, 2000 ops, model order), and of the traffic estimate.
// The arena size each planner reaches is reported as a counter beside its time.
// BM_PlaceInOrder times PlaceInOrder's two scans of the placed blocks on
// that graph (most blocks co-live: the full scan wins), on a 100,000-block
// ladder (each block live three steps: the index by time wins) and on the
// model order of every model in ../shared/models (skipped, saying so, when
// it is absent), and the choice between them (kCheaper), which should be
// the faster or close to it on each.

#include <cstdint>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "benchmark/benchmark.h"
#include "core/arena/arena_planner_registry.h"
#include "core/arena/arena_problem.h"
#include "core/arena/greedy_by_size_planners.h"
#include "core/arena/greedy_placement.h"
#include "core/memory/memory_model.h"
#include "core/memory/simulator.h"
#include "core/onnx/onnx_import.h"
#include "core/testing/test_graph.h"
#include "core/testing/test_paths.h"
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

// Blocks i = 0..n-1 live at steps i-1..i+1 (an op reads the two outputs
// before its own), of 64-512 bytes.
const ArenaProblem& Ladder() {
  static const ArenaProblem* ladder = [] {
    auto* problem = new ArenaProblem;
    constexpr int32_t kBlocks = 100000;
    problem->num_steps = kBlocks + 1;
    std::mt19937_64 rng(27);
    for (int32_t i = 0; i < kBlocks; ++i) {
      ArenaBlock block;
      block.size = block.raw_bytes = 64 * std::uniform_int_distribution<int64_t>(1, 8)(rng);
      block.first = i - 1;
      block.last = i + 1;
      block.tensors = {i};
      problem->blocks.push_back(block);
    }
    return problem;
  }();
  return *ladder;
}

// The arena problem of `path`'s model order; nullopt when it does not import.
std::optional<ArenaProblem> ModelOrderProblem(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream bytes;
  bytes << file.rdbuf();
  absl::StatusOr<Graph> graph = ImportOnnx(bytes.str());
  if (!graph.ok()) return std::nullopt;
  absl::StatusOr<MemoryModel> model = BuildMemoryModel(*graph, MemoryOptions{});
  if (!model.ok()) return std::nullopt;
  std::vector<int32_t> order(model->num_ops());
  for (int32_t op = 0; op < model->num_ops(); ++op) order[op] = op;
  absl::StatusOr<SimulationResult> simulation = Simulate(*model, order);
  if (!simulation.ok()) return std::nullopt;
  absl::StatusOr<ArenaProblem> problem = BuildArenaProblem(*model, *simulation, 64);
  if (!problem.ok()) return std::nullopt;
  return *std::move(problem);
}

void BM_PlaceInOrder(benchmark::State& state, const ArenaProblem* problem, PlacementScan scan) {
  const std::vector<int32_t> order = SizeOrder(*problem);
  for (auto _ : state) {
    benchmark::DoNotOptimize(PlaceInOrder(*problem, order, FitRule::kBestFit, scan));
  }
  state.counters["blocks"] = static_cast<double>(problem->blocks.size());
  state.counters["by_time"] = IndexByTimePays(*problem, order) ? 1 : 0;
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
  std::vector<std::pair<std::string, const ArenaProblem*>> problems = {
      {"dag", &LargeInstance().problem}, {"ladder", &Ladder()}};
  const std::filesystem::path shared = testing::SharedModelsDir();
  if (std::filesystem::is_directory(shared)) {
    std::vector<std::filesystem::path> models;
    for (const auto& entry : std::filesystem::directory_iterator(shared)) {
      if (entry.path().extension() == ".onnx") models.push_back(entry.path());
    }
    std::sort(models.begin(), models.end());
    for (const std::filesystem::path& path : models) {
      if (std::optional<ArenaProblem> problem = ModelOrderProblem(path)) {
        problems.emplace_back(path.stem().string(), new ArenaProblem(*std::move(problem)));
      }
    }
  } else {
    std::cerr << "arena_bench: " << shared
              << " is absent: BM_PlaceInOrder on real models skipped\n";
  }
  for (const auto& [name, problem] : problems) {
    for (const auto& [scan, scan_name] :
         {std::pair{PlacementScan::kAll, "all"}, std::pair{PlacementScan::kByTime, "by_time"},
          std::pair{PlacementScan::kCheaper, "cheaper"}}) {
      const std::string id = "BM_PlaceInOrder/" + name + "/" + scan_name;
      auto* bench = benchmark::RegisterBenchmark(id.c_str(), BM_PlaceInOrder, problem, scan)
                        ->Unit(benchmark::kMicrosecond);
      if (name == "ladder" && scan == PlacementScan::kAll) bench->Iterations(1);  // seconds each
    }
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
