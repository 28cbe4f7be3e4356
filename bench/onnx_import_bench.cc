// onnx_import_bench: Google Benchmark of the ONNX import hot path (parse,
// constant folding, graph build) on the shared NAS models, the per-candidate
// cost that Estimate and a cold Compile pay before any scheduling.
// Skips with a message when ../shared/models is absent.
//   build/bench/onnx_import_bench [--benchmark_filter=nasnet]

#include <fstream>
#include <sstream>
#include <string>

#include "benchmark/benchmark.h"
#include "core/cache/lru_schedule_cache.h"
#include "core/compile/compile.h"
#include "core/memory/memory_model.h"
#include "core/onnx/onnx_import.h"

namespace ordo {
namespace {

std::string ReadModel(const std::string& name) {
  std::ifstream in(std::string(ORDO_SHARED_MODELS_DIR) + "/" + name, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

void BM_ImportOnnx(benchmark::State& state, const std::string& name) {
  const std::string bytes = ReadModel(name);
  if (bytes.empty()) {
    state.SkipWithError(("model " + name + " not found under " ORDO_SHARED_MODELS_DIR).c_str());
    return;
  }
  int64_t ops = 0;
  for (auto _ : state) {
    absl::StatusOr<Graph> graph = ImportOnnx(bytes, GraphLimits{});
    if (!graph.ok()) {
      state.SkipWithError(std::string(graph.status().message()).c_str());
      return;
    }
    ops = graph->num_ops();
    benchmark::DoNotOptimize(graph);
  }
  state.counters["ops"] = static_cast<double>(ops);
}

// The stages of Estimate after import (memory model, model and greedy
// orders, bound, part-cache lookup with an empty cache), then the whole of
// what the service's Estimate runs: import plus these.
void BM_Estimate(benchmark::State& state, const std::string& name, bool with_import) {
  const std::string bytes = ReadModel(name);
  absl::StatusOr<Graph> graph = ImportOnnx(bytes, GraphLimits{});
  if (!graph.ok()) {
    state.SkipWithError(("model " + name + " not importable from " ORDO_SHARED_MODELS_DIR).c_str());
    return;
  }
  LruScheduleCache cache(int64_t{16} << 20);
  for (auto _ : state) {
    absl::StatusOr<Graph> imported = with_import ? ImportOnnx(bytes, GraphLimits{}) : Graph();
    absl::StatusOr<EstimateResult> estimate =
        Estimate(with_import ? *imported : *graph, CompileOptions{}, &cache);
    if (!estimate.ok()) {
      state.SkipWithError(std::string(estimate.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(estimate);
  }
}

BENCHMARK_CAPTURE(BM_Estimate, stages_nasnet_cifar, "nasnet_cifar.onnx", false)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Estimate, with_import_nasnet_cifar, "nasnet_cifar.onnx", true)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ImportOnnx, nasnet_cifar, "nasnet_cifar.onnx")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ImportOnnx, darts_cifar, "darts_cifar.onnx")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ImportOnnx, resnet50, "resnet50.onnx")->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ordo

BENCHMARK_MAIN();
