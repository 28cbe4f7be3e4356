// ordo-pool-bench: memory-pool placement of every .onnx model in a folder on
// each device preset (core/pools/device_presets.cc), int8 activations. For
// each model and preset: does ordo's placement fit, do the baselines
// (internal_first = ESP-DL, usmp_greedy = TVM USMP greedy_by_size,
// single_pool = one bank of the summed capacity), modelled memory time of
// ordo and of each baseline, ordo's gap to the lower bound, and the time the
// place stage took (on the chosen schedule, and over every schedule it
// placed) against the rest of the compile. Prints Markdown tables and a
// summary per preset.
//
//   ordo-pool-bench [DIR] [--only=SUBSTRING] [--device=NAME]
//                   [--schedule_time_limit_s=2]

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "bench/model_folder.h"
#include "core/compile/compile.h"
#include "core/onnx/onnx_import.h"
#include "core/pools/device_presets.h"
#include "core/util/clock.h"

namespace ordo {
namespace {

struct Options {
  std::string dir = ORDO_SHARED_MODELS_DIR;
  std::string only;
  std::string device;
  double schedule_time_limit_s = 2;
};

bool ParseArgs(int argc, char** argv, Options& options) {
  return bench::ParseBenchArgs(
      argc, argv, options.dir,
      {bench::StringFlag("only", options.only), bench::StringFlag("device", options.device),
       bench::DoubleFlag("schedule_time_limit_s", options.schedule_time_limit_s)});
}

struct Cell {
  std::string model;
  std::string error;
  int64_t peak = 0;
  bool fits = false;
  bool proved_impossible = false;  // PoolInfeasibility: no order fits
  double seconds = 0;
  double lower_bound = 0;
  bool internal_fits = false, usmp_fits = false, single_fits = false;
  double internal_seconds = 0, usmp_seconds = 0;
  // The place stage on the chosen schedule, on every schedule it placed,
  // the whole compile with pools (import excluded), and without pools.
  double place_s = 0, place_stage_s = 0, compile_s = 0, compile_without_pools_s = 0;
};

CompileOptions BaseOptions(const Options& options) {
  CompileOptions compile;
  compile.memory.activation_element_bytes = 1;  // int8 deployment
  compile.time_limit = absl::Seconds(options.schedule_time_limit_s);
  return compile;
}

Cell RunOne(const std::string& name, const Graph& graph, const DevicePreset& preset,
            const Options& options, double without_pools_s) {
  const RealClock clock;
  Cell cell;
  cell.model = name;
  cell.compile_without_pools_s = without_pools_s;
  CompileOptions compile = BaseOptions(options);
  compile.pools.pools = preset.pools;
  absl::StatusOr<CompileResult> result = Compile(graph, compile, clock);
  if (!result.ok()) {
    const std::string message(result.status().message());
    const size_t larger = message.find(" is larger than every");
    cell.error = larger == std::string::npos
                     ? message.substr(0, 100)
                     : "a tensor is larger than every bank: " +
                           message.substr(0, std::min<size_t>(larger, 90));
    return cell;
  }
  const PoolReport& report = *result->placement;
  cell.peak = result->peak_bytes;
  cell.fits = report.fits();
  cell.proved_impossible = !report.no_order_fits.empty();
  cell.seconds = report.placement.evaluation.modelled_seconds;
  cell.lower_bound = report.lower_bound_seconds;
  for (const PoolBaseline& baseline : report.baselines) {
    if (baseline.name == "internal_first") {
      cell.internal_fits = baseline.fits;
      cell.internal_seconds = baseline.modelled_seconds;
    } else if (baseline.name == "usmp_greedy") {
      cell.usmp_fits = baseline.fits;
      cell.usmp_seconds = baseline.modelled_seconds;
    } else {
      cell.single_fits = baseline.fits;
    }
  }
  cell.place_s = absl::ToDoubleSeconds(report.time);
  cell.place_stage_s = absl::ToDoubleSeconds(report.stage_time);
  cell.compile_s = absl::ToDoubleSeconds(result->time);
  return cell;
}

std::string Ms(bool fits, double seconds) {
  return fits ? absl::StrFormat("%.3f", 1e3 * seconds) : "-";
}

// The NAS cells of the target (amoeba, darts, nasnet, pnas).
bool IsNasModel(const std::string& name) {
  for (const char* family : {"amoeba", "darts", "nasnet", "pnas"}) {
    if (name.rfind(family, 0) == 0) return true;
  }
  return false;
}

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

void PrintPreset(const DevicePreset& preset, const std::vector<Cell>& cells) {
  std::printf("\n### %s\n\n", preset.description.c_str());
  std::printf(
      "| model | peak (int8) | fits: ordo / internal_first / usmp_greedy / single_pool |"
      " ordo ms | internal_first ms | usmp_greedy ms | ordo / internal_first |"
      " bound / internal_first | gap to bound | place ms | place stage ms |"
      " compile ms (pools / none) | placement adds |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::vector<double> ratios, nas_adds;
  int worse = 0, only_ordo = 0, missed = 0, missed_proved = 0;
  for (const Cell& cell : cells) {
    if (!cell.error.empty()) {
      // A tensor larger than every bank: no placement exists (INVALID_ARGUMENT).
      std::printf("| %s | - | no / no / no / - (%s) |\n", cell.model.c_str(), cell.error.c_str());
      continue;
    }
    auto yn = [](bool b) { return b ? "yes" : "no"; };
    std::string ratio = "-";
    if (cell.fits && cell.internal_fits && cell.internal_seconds > 0) {
      ratios.push_back(cell.seconds / cell.internal_seconds);
      ratio = absl::StrFormat("%.3f", ratios.back());
    }
    const double eps = 1e-12;
    if ((cell.internal_fits && (!cell.fits || cell.seconds > cell.internal_seconds * (1 + eps))) ||
        (cell.usmp_fits && (!cell.fits || cell.seconds > cell.usmp_seconds * (1 + eps)))) {
      ++worse;
    }
    if (cell.fits && !cell.internal_fits && !cell.usmp_fits) ++only_ordo;
    if (!cell.fits && cell.single_fits) ++missed;
    if (!cell.fits && cell.single_fits && cell.proved_impossible) ++missed_proved;
    const std::string bound_ratio =
        cell.internal_fits ? absl::StrFormat("%.3f", cell.lower_bound / cell.internal_seconds)
                           : "-";
    // What pools add to this compile: the place stage over the rest of it.
    const double rest_s = cell.compile_s - cell.place_stage_s;
    const std::string adds =
        rest_s > 0 ? absl::StrFormat("%.0f%%", 100 * cell.place_stage_s / rest_s) : "-";
    if (rest_s > 0 && IsNasModel(cell.model)) nas_adds.push_back(cell.place_stage_s / rest_s);
    std::printf("| %s | %lld | %s / %s / %s / %s | %s | %s | %s | %s | %s | %s | %.1f | %.1f | "
                "%.1f / %.1f | %s |\n",
                cell.model.c_str(), static_cast<long long>(cell.peak),
                cell.proved_impossible ? "no (no order fits)" : yn(cell.fits),
                yn(cell.internal_fits), yn(cell.usmp_fits), yn(cell.single_fits),
                Ms(cell.fits, cell.seconds).c_str(),
                Ms(cell.internal_fits, cell.internal_seconds).c_str(),
                Ms(cell.usmp_fits, cell.usmp_seconds).c_str(), ratio.c_str(), bound_ratio.c_str(),
                cell.fits ? absl::StrFormat("%.1f%%", 100 * (cell.seconds / cell.lower_bound - 1))
                                .c_str()
                          : "-",
                1e3 * cell.place_s, 1e3 * cell.place_stage_s, 1e3 * cell.compile_s,
                1e3 * cell.compile_without_pools_s, adds.c_str());
  }
  std::printf(
      "\n%s: median ordo / internal_first over %zu models both fit: %.3f (%.1f%% lower); "
      "models where ordo is worse than a baseline: %d; fit only with ordo: %d; "
      "single_pool fits but ordo does not: %d (proved for every order: %d)\n",
      preset.name.c_str(), ratios.size(), Median(ratios), 100 * (1 - Median(ratios)), worse,
      only_ordo, missed, missed_proved);
  if (!nas_adds.empty()) {
    std::printf("%s: the place stage adds to the compile of the %zu NAS models: median %.0f%%, "
                "max %.0f%%\n",
                preset.name.c_str(), nas_adds.size(), 100 * Median(nas_adds),
                100 * *std::max_element(nas_adds.begin(), nas_adds.end()));
  }
}

}  // namespace
}  // namespace ordo

int main(int argc, char** argv) {
  using namespace ordo;
  Options options;
  if (!ParseArgs(argc, argv, options)) {
    std::fprintf(stderr,
                 "usage: ordo-pool-bench [DIR] [--only=SUBSTRING] [--device=NAME] "
                 "[--schedule_time_limit_s=2]\n");
    return 2;
  }
  if (!std::filesystem::is_directory(options.dir)) {
    std::fprintf(stderr, "ordo-pool-bench: no model folder %s; skipping\n", options.dir.c_str());
    return 0;
  }
  absl::StatusOr<std::vector<std::filesystem::path>> paths =
      bench::OnnxModelsIn(options.dir, options.only);
  if (!paths.ok()) {
    std::fprintf(stderr, "ordo-pool-bench: %s\n", std::string(paths.status().message()).c_str());
    return 1;
  }
  std::vector<DevicePreset> presets = BuiltinDevicePresets();
  if (!options.device.empty()) {
    absl::StatusOr<DevicePreset> preset = FindDevicePreset(options.device);
    if (!preset.ok()) {
      std::fprintf(stderr, "ordo-pool-bench: %s\n", std::string(preset.status().message()).c_str());
      return 2;
    }
    presets = {*preset};
  }
  std::vector<std::vector<Cell>> cells(presets.size());
  const RealClock clock;
  for (const auto& path : *paths) {
    const std::string name = path.stem().string();
    absl::StatusOr<std::string> bytes = bench::ReadFile(path);
    absl::StatusOr<Graph> graph =
        bytes.ok() ? ImportOnnx(*bytes) : absl::StatusOr<Graph>(bytes.status());
    if (!graph.ok()) {
      for (auto& column : cells) {
        column.push_back({name, std::string(graph.status().message().substr(0, 100))});
      }
      continue;
    }
    absl::StatusOr<CompileResult> plain = Compile(*graph, BaseOptions(options), clock);
    const double without = plain.ok() ? absl::ToDoubleSeconds(plain->time) : 0;
    for (size_t p = 0; p < presets.size(); ++p) {
      cells[p].push_back(RunOne(name, *graph, presets[p], options, without));
      std::fprintf(stderr, "%s on %s done\n", name.c_str(), presets[p].name.c_str());
    }
  }
  for (size_t p = 0; p < presets.size(); ++p) PrintPreset(presets[p], cells[p]);
  return 0;
}
