// onnx_import_bench: Google Benchmark of the ONNX import hot path (parse,
// constant folding, graph build) on the shared NAS models, the per-candidate
// cost that Estimate and a cold Compile pay before any scheduling.
// Skips with a message when ../shared/models is absent.
//   build/bench/onnx_import_bench [--benchmark_filter=nasnet]

#include <fstream>
#include <sstream>
#include <string>

#include "benchmark/benchmark.h"
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

BENCHMARK_CAPTURE(BM_ImportOnnx, nasnet_cifar, "nasnet_cifar.onnx")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ImportOnnx, darts_cifar, "darts_cifar.onnx")->Unit(benchmark::kMillisecond);
BENCHMARK_CAPTURE(BM_ImportOnnx, resnet50, "resnet50.onnx")->Unit(benchmark::kMillisecond);

}  // namespace
}  // namespace ordo

BENCHMARK_MAIN();
