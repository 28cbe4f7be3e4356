// pool_placer_bench: Google Benchmark of the place stage's hot paths on the
// shared NAS models (and densenet121) on the i.MX RT1170 preset (another with
// ORDO_BENCH_DEVICE=stm32h743, esp32s3, ...), int8
// activations: the pool problem, the placer's greedy starts (how a candidate
// schedule is scored; each start's modelled time as a counter),
// the fast effort's placement and its lower bound, the full placer, the competing schedulers,
// and the whole compile without pools and with them at each placement
// effort (what issue 17's "placement adds at most 10%" compares), with the
// place stage's own time as a counter.
// Skips with a message when ../shared/models is absent.
//   build/bench/pool_placer_bench [--benchmark_filter=darts_cifar]

#include <cstdlib>
#include <fstream>
#include <map>
#include <memory>
#include <optional>
#include <sstream>
#include <string>
#include <utility>

#include "benchmark/benchmark.h"
#include "core/compile/compile.h"
#include "core/memory/simulator.h"
#include "core/onnx/onnx_import.h"
#include "core/pools/device_presets.h"
#include "core/pools/pool_placer.h"
#include "core/schedule/scheduler_registry.h"
#include "core/testing/test_paths.h"
#include "core/util/check.h"
#include "core/util/clock.h"

namespace ordo {
namespace {

struct Instance {
  std::string error;
  Graph graph;
  MemoryModel model;
  CompileOptions options;
  SimulationResult simulation;  // of the compile's schedule without pools
  PoolProblem problem;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// Imported, compiled without pools once, its pool problem built; cached per
// model for every benchmark of it.
const Instance& Load(const std::string& name) {
  static auto* instances = new std::map<std::string, std::unique_ptr<Instance>>;
  std::unique_ptr<Instance>& slot = (*instances)[name];
  if (slot) return *slot;
  slot = std::make_unique<Instance>();
  Instance& instance = *slot;
  const std::string path = ordo::testing::SharedModelsDir() + "/" + name + ".onnx";
  const std::string bytes = ReadFile(path);
  if (bytes.empty()) {
    instance.error = "model " + path + " not found (../shared/models absent?)";
    return instance;
  }
  absl::StatusOr<Graph> graph = ImportOnnx(bytes, GraphLimits{});
  ORDO_CHECK(graph.ok());
  instance.graph = *std::move(graph);
  instance.options.memory.activation_element_bytes = 1;
  instance.options.time_limit = absl::Seconds(2);
  absl::StatusOr<MemoryModel> model = BuildMemoryModel(instance.graph, instance.options.memory);
  ORDO_CHECK(model.ok());
  instance.model = *std::move(model);
  const RealClock clock;
  absl::StatusOr<CompileResult> plain = Compile(instance.graph, instance.options, clock);
  ORDO_CHECK(plain.ok());
  instance.simulation = plain->simulation;
  // The i.MX RT1170 unless ORDO_BENCH_DEVICE names another preset.
  const char* device = std::getenv("ORDO_BENCH_DEVICE");
  absl::StatusOr<DevicePreset> preset = FindDevicePreset(device ? device : "imxrt1170");
  if (!preset.ok()) {
    instance.error = "ORDO_BENCH_DEVICE: " + std::string(preset.status().message());
    return instance;
  }
  instance.options.pools.pools = preset->pools;
  // A model the device refuses (e.g. a tensor larger than every bank of the
  // STM32H743) is skipped with the reason, not a crash of the whole run.
  absl::StatusOr<PoolProblem> problem =
      BuildPoolProblem(instance.graph, instance.model, instance.simulation,
                       instance.options.alignment, instance.options.pools);
  if (!problem.ok()) {
    instance.error = name + " on " + preset->name + ": " + std::string(problem.status().message());
    return instance;
  }
  instance.problem = *std::move(problem);
  return instance;
}

#define ORDO_LOAD_OR_SKIP(state, name)             \
  const Instance& instance = Load(name);           \
  if (!instance.error.empty()) {                   \
    (state).SkipWithError(instance.error.c_str()); \
    return;                                        \
  }

void BM_BuildPoolProblem(benchmark::State& state, const std::string& name) {
  ORDO_LOAD_OR_SKIP(state, name);
  for (auto _ : state) {
    absl::StatusOr<PoolProblem> problem =
        BuildPoolProblem(instance.graph, instance.model, instance.simulation,
                         instance.options.alignment, instance.options.pools);
    benchmark::DoNotOptimize(problem);
  }
  state.counters["blocks"] = static_cast<double>(instance.problem.num_blocks());
  // The first fit steps over a block's co-live blocks: their mean count.
  const std::vector<ArenaBlock>& blocks = instance.problem.arena.blocks;
  int64_t pairs = 0;
  for (const ArenaBlock& a : blocks) {
    for (const ArenaBlock& b : blocks) {
      pairs += &a != &b && a.size > 0 && b.size > 0 && a.first <= b.last && b.first <= a.last;
    }
  }
  state.counters["co_live"] = static_cast<double>(pairs) / std::max<size_t>(1, blocks.size());
}

void BM_GreedyStarts(benchmark::State& state, const std::string& name) {
  ORDO_LOAD_OR_SKIP(state, name);
  PoolGreedyStarts starts;
  for (auto _ : state) {
    starts = PlacePoolsGreedyStarts(instance.problem);
    benchmark::DoNotOptimize(starts);
  }
  state.counters["modelled_ms"] = 1e3 * starts.best().evaluation.modelled_seconds;
  // Each start's own time: what the fast effort's choice of starts keeps.
  for (const PoolPlacement& start : starts.starts) {
    state.counters[start.algorithm + "_ms"] =
        start.fits() ? 1e3 * start.evaluation.modelled_seconds : -1;
  }
}

// The fast effort's placement: its four starts and one pass of moves.
void BM_FastPlacer(benchmark::State& state, const std::string& name) {
  ORDO_LOAD_OR_SKIP(state, name);
  double seconds = 0;
  for (auto _ : state) {
    FastPoolPlacement placed = PlacePoolsFast(instance.problem);
    seconds = placed.result.placement.evaluation.modelled_seconds;
    benchmark::DoNotOptimize(placed);
  }
  state.counters["modelled_ms"] = 1e3 * seconds;
}

// The fast placer's lower bound (the one-step eviction) alone.
void BM_PeakStepBound(benchmark::State& state, const std::string& name) {
  ORDO_LOAD_OR_SKIP(state, name);
  double seconds = 0;
  for (auto _ : state) {
    seconds = PoolPeakStepBoundSeconds(instance.problem);
    benchmark::DoNotOptimize(seconds);
  }
  state.counters["bound_ms"] = 1e3 * seconds;
}

void BM_FullPlacer(benchmark::State& state, const std::string& name) {
  ORDO_LOAD_OR_SKIP(state, name);
  double seconds = 0;
  for (auto _ : state) {
    HeuristicPoolResult placed = PlacePoolsHeuristic(instance.problem, ArenaLimits{});
    seconds = placed.placement.evaluation.modelled_seconds;
    benchmark::DoNotOptimize(placed);
  }
  state.counters["modelled_ms"] = 1e3 * seconds;
}

void BM_Scheduler(benchmark::State& state, const std::string& name, const std::string& scheduler) {
  ORDO_LOAD_OR_SKIP(state, name);
  absl::StatusOr<std::unique_ptr<Scheduler>> created = BuiltinSchedulers().Create(scheduler);
  ORDO_CHECK(created.ok());
  for (auto _ : state) {
    ScheduleLimits limits;
    absl::StatusOr<ScheduleResult> result = (*created)->Schedule(instance.model, limits);
    benchmark::DoNotOptimize(result);
  }
}

// The whole compile (import excluded): without pools (`effort` nullopt),
// or with the preset's pools at `effort`.
void BM_Compile(benchmark::State& state, const std::string& name,
                std::optional<PlacementEffort> effort) {
  ORDO_LOAD_OR_SKIP(state, name);
  CompileOptions options = instance.options;
  const bool pools = effort.has_value();
  if (pools) {
    options.pools.effort = *effort;
  } else {
    options.pools = {};
  }
  const RealClock clock;
  double place_stage_s = 0;
  for (auto _ : state) {
    absl::StatusOr<CompileResult> result = Compile(instance.graph, options, clock);
    ORDO_CHECK(result.ok());
    if (result->placement) place_stage_s += absl::ToDoubleSeconds(result->placement->stage_time);
    benchmark::DoNotOptimize(result);
  }
  if (pools) {
    state.counters["place_stage_ms"] =
        benchmark::Counter(1e3 * place_stage_s, benchmark::Counter::kAvgIterations);
  }
}

void RegisterAll() {
  // The NAS models, and densenet121, where the start by time saved wins.
  for (const char* name : {"amoeba_cifar", "darts_cifar", "darts_imagenet", "nasnet_cifar",
                           "pnas_cifar", "amoeba_imagenet", "nasnet_imagenet", "densenet121"}) {
    const std::string model = name;
    benchmark::RegisterBenchmark(("BM_BuildPoolProblem/" + model).c_str(), BM_BuildPoolProblem,
                                 model)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("BM_GreedyStarts/" + model).c_str(), BM_GreedyStarts, model)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("BM_FastPlacer/" + model).c_str(), BM_FastPlacer, model)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("BM_PeakStepBound/" + model).c_str(), BM_PeakStepBound, model)
        ->Unit(benchmark::kMillisecond);
    benchmark::RegisterBenchmark(("BM_FullPlacer/" + model).c_str(), BM_FullPlacer, model)
        ->Unit(benchmark::kMillisecond);
    for (const char* scheduler : {"greedy", "hmcos"}) {
      benchmark::RegisterBenchmark(("BM_Scheduler/" + model + "/" + scheduler).c_str(),
                                   BM_Scheduler, model, std::string(scheduler))
          ->Unit(benchmark::kMillisecond);
    }
    const std::pair<const char*, std::optional<PlacementEffort>> compiles[] = {
        {"none", std::nullopt},
        {"fast", PlacementEffort::kFast},
        {"thorough", PlacementEffort::kThorough}};
    for (const auto& [label, effort] : compiles) {
      benchmark::RegisterBenchmark(("BM_Compile/" + model + "/" + label).c_str(), BM_Compile,
                                   model, effort)
          ->Unit(benchmark::kMillisecond);
    }
  }
}

}  // namespace
}  // namespace ordo

int main(int argc, char** argv) {
  benchmark::Initialize(&argc, argv);
  ordo::RegisterAll();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
