// onnx_import_bench: Google Benchmark of the ONNX import hot path (parse,
// constant folding, graph build) on the shared NAS models, the per-candidate
// cost that Estimate and a cold Compile pay before any scheduling; and on
// real PyTorch exports of tests/data/exports, whose shape computations take
// the folding path (the ModelProto parsed, shape inference run), static and
// with a dynamic batch fixed as --batch 1 does; and the graph build of a
// model listing many constants as outputs.
// Skips with a message when ../shared/models is absent.
//   build/bench/onnx_import_bench [--benchmark_filter=nasnet]

#include <fstream>
#include <sstream>
#include <string>

#include "benchmark/benchmark.h"
#include "core/cache/lru_schedule_cache.h"
#include "core/compile/compile.h"
#include "core/graph/graph.h"
#include "core/memory/memory_model.h"
#include "core/onnx/onnx_import.h"
#include "core/onnx/prepare_model.h"
#include "core/testing/test_graph.h"
#include "core/testing/test_paths.h"

namespace ordo {
namespace {

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

std::string ReadModel(const std::string& name) {
  return ReadFile(ordo::testing::SharedModelsDir() + "/" + name);
}

// ImportOnnx of `bytes` per iteration; the op count as a counter.
void ImportLoop(benchmark::State& state, const std::string& bytes) {
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

void BM_ImportOnnx(benchmark::State& state, const std::string& name) {
  const std::string bytes = ReadModel(name);
  if (bytes.empty()) {
    state.SkipWithError(
        ("model " + name + " not found under " + ordo::testing::SharedModelsDir()).c_str());
    return;
  }
  ImportLoop(state, bytes);
}

// A dynamic export is imported as the service imports it after --batch 1:
// PrepareOnnxModel (outside the timed loop) first.
void BM_ImportExport(benchmark::State& state, const std::string& name, bool dynamic) {
  std::string bytes = ReadFile(ordo::testing::ExportsDir() + "/" + name);
  if (bytes.empty()) {
    state.SkipWithError(
        ("model " + name + " not found under " + ordo::testing::ExportsDir()).c_str());
    return;
  }
  if (dynamic) {
    InputShapes batch;
    batch.batch = 1;
    absl::StatusOr<std::string> shaped = PreparedOnnxBytes(bytes, batch);
    if (!shaped.ok()) {
      state.SkipWithError(std::string(shaped.status().message()).c_str());
      return;
    }
    bytes = *std::move(shaped);
  }
  ImportLoop(state, bytes);
}


// The stages of Estimate after import (memory model, model and greedy
// orders, bound, part-cache lookup with an empty cache), then the whole of
// what the service's Estimate runs: import plus these.
void BM_Estimate(benchmark::State& state, const std::string& name, bool with_import) {
  const std::string bytes = ReadModel(name);
  absl::StatusOr<Graph> graph = ImportOnnx(bytes, GraphLimits{});
  if (!graph.ok()) {
    state.SkipWithError(
        ("model " + name + " not importable from " + ordo::testing::SharedModelsDir()).c_str());
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

// Build() of a graph whose outputs list `state.range(0)` constants (a
// detection export's anchors; a hostile file's hundreds of thousands): the
// builder leaves them out with one note. Linear in the count (the first
// version was quadratic).
void BM_BuildManyConstantOutputs(benchmark::State& state) {
  const int64_t constants = state.range(0);
  for (auto _ : state) {
    state.PauseTiming();
    GraphBuilder builder = testing::ManyConstantOutputs(constants);
    state.ResumeTiming();
    absl::StatusOr<Graph> graph = std::move(builder).Build();
    if (!graph.ok()) {
      state.SkipWithError(std::string(graph.status().message()).c_str());
      return;
    }
    benchmark::DoNotOptimize(graph);
  }
}
BENCHMARK(BM_BuildManyConstantOutputs)->Arg(10000)->Arg(100000)->Unit(benchmark::kMillisecond);

BENCHMARK_CAPTURE(BM_Estimate, stages_nasnet_cifar, "nasnet_cifar.onnx", false)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_Estimate, with_import_nasnet_cifar, "nasnet_cifar.onnx", true)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ImportOnnx, nasnet_cifar, "nasnet_cifar.onnx")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ImportOnnx, darts_cifar, "darts_cifar.onnx")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ImportOnnx, resnet50, "resnet50.onnx")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ImportExport, resnet18_op17_static, "resnet18_op17_static.onnx", false)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ImportExport, resnet18_op17_dynamic, "resnet18_op17_dynamic.onnx", true)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ImportExport, swin_t_op17_static, "swin_t_op17_static.onnx", false)
    ->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ImportExport, mobilenet_v3_small_op17_dynamic,
                  "mobilenet_v3_small_op17_dynamic.onnx", true)
    ->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ordo

BENCHMARK_MAIN();
