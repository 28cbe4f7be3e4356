// ordo-pool-bench: memory-pool placement of every .onnx model in a folder on
// each device preset (core/pools/device_presets.cc), int8 activations. For
// each model and preset: does ordo's placement fit, do the baselines
// (internal_first = ESP-DL, usmp_greedy = TVM USMP greedy_by_size,
// single_pool = one bank of the summed capacity; "worse than a baseline"
// also counts one_arena, TFLite Micro's way), modelled memory time of
// ordo and of each baseline, ordo's gap to the lower bound, and the time the
// place stage took (on the chosen schedule, and over every schedule it
// placed) against the rest of the compile. Prints Markdown tables and a
// summary per preset.
//
//   ordo-pool-bench [DIR] [--only=SUBSTRING] [--device=NAME]
//                   [--schedule_time_limit_s=2] [--schedulers=best,model,...]
//                   [--rewrite=auto] [--runtime=tflm] [--effort=fast|thorough]
//                   [--repeat=1]
//
// --effort: the place stage's PlacementEffort (default fast, as `ordo
// compile`); the tables say which.
//
// --repeat=N: each compile, with pools and without, runs N times and the
// time columns are the medians (one run's times vary several-fold on a
// shared machine); every other column is the first run's (they do not
// depend on the run).
//
// With --schedulers, each model is compiled once per named scheduler and a
// table per preset says what the best of those schedules gives: the
// schedule whose placement is fastest (a pools-aware choice among them),
// the lowest bound / internal_first over them, and whether any of them fits
// with ordo but with neither baseline (docs/pools.md, the targets).
//
// With --rewrite=auto, each model is also compiled as `ordo compile
// --rewrite auto` does (CompileWithRewrite: rewritten in fit mode with the
// pools as the constraint when it does not fit as it is), and a table per
// preset says what fits with rewriting that fits with neither baseline on
// the model as given, and whether the baselines fit the rewritten schedule
// too (then the rewriting, not the placement, made the difference).
//
// With --runtime=tflm, a table per preset compares ordo's placement across
// the banks with what a runtime of one arena (TFLite Micro) can do on the
// same chip: the compile's one-arena layout whole in the fastest bank that
// holds it (PlaceOneArenaInPools, as `ordo compile --one-arena`).

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "bench/model_folder.h"
#include "core/compile/compile.h"
#include "core/compile/compile_request.h"
#include "core/memory/simulator.h"
#include "core/onnx/onnx_import.h"
#include "core/pools/device_presets.h"
#include "core/pools/place_pools.h"
#include "core/pools/pool_placer.h"
#include "core/testing/test_paths.h"
#include "core/util/clock.h"

namespace ordo {
namespace {

struct Options {
  std::string dir = ordo::testing::SharedModelsDir();
  std::string only;
  std::string device;
  double schedule_time_limit_s = 2;
  // Comma-separated scheduler names: the across-schedules tables.
  std::string schedulers;
  // "auto": the rewriting tables (CompileWithRewrite); empty: none.
  std::string rewrite;
  // "tflm": the one-arena tables; empty: none.
  std::string runtime;
  // PoolOptions::effort, spelt "fast" or "thorough".
  std::string effort = "fast";
  // Runs of each compile; the time columns are their medians.
  int64_t repeat = 1;
};

bool ParseArgs(int argc, char** argv, Options& options) {
  return bench::ParseBenchArgs(
      argc, argv, options.dir,
      {bench::StringFlag("only", options.only), bench::StringFlag("device", options.device),
       bench::DoubleFlag("schedule_time_limit_s", options.schedule_time_limit_s),
       bench::StringFlag("schedulers", options.schedulers),
       bench::StringFlag("rewrite", options.rewrite), bench::StringFlag("runtime", options.runtime),
       bench::StringFlag("effort", options.effort), bench::Int64Flag("repeat", options.repeat)});
}

struct Cell {
  std::string model;
  std::string scheduler;
  std::string error;
  int64_t peak = 0;
  bool fits = false;
  bool proved_impossible = false;  // PoolInfeasibility: no order fits
  double seconds = 0;
  double lower_bound = 0;
  bool internal_fits = false, usmp_fits = false, single_fits = false, one_arena_fits = false;
  double internal_seconds = 0, usmp_seconds = 0, one_arena_seconds = 0;
  // The schedule the compile chose (its algorithm) and internal_first on
  // the least-peak schedule (the compile without pools), the order a
  // TFLM-style deployment would run.
  std::string algorithm;
  bool internal_on_peak_fits = false;
  double internal_on_peak_seconds = 0;
  // The place stage on the chosen schedule, on every schedule it placed,
  // the whole compile with pools (import excluded), and without pools.
  double place_s = 0, place_stage_s = 0, compile_s = 0, compile_without_pools_s = 0;
  // --rewrite=auto: the compile with rewriting in front.
  struct Rewritten {
    bool ran = false;  // a rewrite search ran (the model did not fit as given)
    std::string error;
    bool fits = false;
    int32_t rewrites = 0;
    int64_t peak = 0;
    double latency_overhead = 0;
    bool internal_fits = false, usmp_fits = false;
    double seconds = 0, time_s = 0;
  } rewritten;
  // --runtime=tflm: the least-peak schedule's one arena in one bank.
  struct OneArena {
    bool ran = false;
    std::string error;
    int64_t peak = 0, arena_bytes = 0;
    bool fits = false;
    std::string pool;  // where the one arena went
    double seconds = 0;
  } one_arena;
};

double Median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 == 1 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

CompileOptions BaseOptions(const Options& options) {
  CompileOptions compile;
  compile.memory.activation_element_bytes = 1;  // int8 deployment
  compile.time_limit = absl::Seconds(options.schedule_time_limit_s);
  compile.pools.effort = ParsePlacementEffort(options.effort).value_or(PlacementEffort::kFast);
  return compile;
}

// internal_first's placement of `plain`'s schedule (the compile without
// pools: the least peak) on the preset's pools.
void PlaceInternalFirstOnPeakSchedule(const Graph& graph, const CompileOptions& compile,
                                      const CompileResult& plain, Cell& cell) {
  absl::StatusOr<MemoryModel> model = BuildMemoryModel(graph, compile.memory);
  if (!model.ok()) return;
  absl::StatusOr<SimulationResult> simulation = Simulate(*model, plain.schedule);
  if (!simulation.ok()) return;
  absl::StatusOr<PoolProblem> problem =
      BuildPoolProblem(graph, *model, *simulation, compile.alignment, compile.pools);
  if (!problem.ok()) return;
  const PoolPlacement placement = PlaceInternalFirst(*problem);
  cell.internal_on_peak_fits = placement.fits();
  cell.internal_on_peak_seconds = placement.evaluation.modelled_seconds;
}

Cell RunOne(const std::string& name, const Graph& graph, const DevicePreset& preset,
            const Options& options, double without_pools_s, const CompileResult* plain,
            const std::string& scheduler = "") {
  const RealClock clock;
  Cell cell;
  cell.model = name;
  cell.scheduler = scheduler;
  cell.compile_without_pools_s = without_pools_s;
  CompileOptions compile = BaseOptions(options);
  compile.pools.pools = preset.pools;
  if (!scheduler.empty()) compile.scheduler = scheduler;
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
  cell.algorithm = result->algorithm;
  if (plain != nullptr) PlaceInternalFirstOnPeakSchedule(graph, compile, *plain, cell);
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
    } else if (baseline.name == "single_pool") {
      cell.single_fits = baseline.fits;
    } else if (baseline.name == "one_arena") {
      cell.one_arena_fits = baseline.fits;
      cell.one_arena_seconds = baseline.modelled_seconds;
    }
  }
  std::vector<double> place_s = {absl::ToDoubleSeconds(report.time)};
  std::vector<double> place_stage_s = {absl::ToDoubleSeconds(report.stage_time)};
  std::vector<double> compile_s = {absl::ToDoubleSeconds(result->time)};
  for (int64_t run = 1; run < options.repeat; ++run) {
    absl::StatusOr<CompileResult> again = Compile(graph, compile, clock);
    if (!again.ok()) break;
    place_s.push_back(absl::ToDoubleSeconds(again->placement->time));
    place_stage_s.push_back(absl::ToDoubleSeconds(again->placement->stage_time));
    compile_s.push_back(absl::ToDoubleSeconds(again->time));
  }
  cell.place_s = Median(place_s);
  cell.place_stage_s = Median(place_stage_s);
  cell.compile_s = Median(compile_s);
  return cell;
}

std::string Ms(bool fits, double seconds) {
  return fits ? absl::StrFormat("%.3f", 1e3 * seconds) : "-";
}

// What --rewrite auto makes of the model on the preset, into cell.rewritten.
void RunRewrite(const std::string& bytes, const Graph& graph, const DevicePreset& preset,
                const Options& options, Cell& cell) {
  const RealClock clock;
  CompileRequest request;
  request.options = BaseOptions(options);
  request.options.pools.pools = preset.pools;
  if (absl::Status status = SetRewriteMode(options.rewrite, request.rewrite); !status.ok()) {
    cell.rewritten.error = std::string(status.message());
    return;
  }
  const absl::Time start = clock.Now();
  absl::StatusOr<RewriteCompileResult> result =
      CompileWithRewrite(request, bytes, graph, CompileServices{}, clock);
  cell.rewritten.time_s = absl::ToDoubleSeconds(clock.Now() - start);
  if (!result.ok()) {
    cell.rewritten.ran = true;
    cell.rewritten.error = std::string(result.status().message());
    return;
  }
  Cell::Rewritten& out = cell.rewritten;
  out.ran = result->rewrite.has_value();
  out.rewrites = out.ran ? static_cast<int32_t>(result->rewrite->rewrites.size()) : 0;
  out.latency_overhead = out.ran ? result->rewrite->latency_overhead : 0;
  out.peak = result->compile.peak_bytes;
  if (!result->compile.placement) return;
  const PoolReport& report = *result->compile.placement;
  out.fits = report.fits();
  out.seconds = report.placement.evaluation.modelled_seconds;
  for (const PoolBaseline& baseline : report.baselines) {
    if (baseline.name == "internal_first") out.internal_fits = baseline.fits;
    if (baseline.name == "usmp_greedy") out.usmp_fits = baseline.fits;
  }
}

// A table cell's worth of a refusal: what rewriting did, if it ran, else
// the refusal's own reason.
std::string ShortError(const std::string& message) {
  for (absl::string_view lead : {"could not make it fit: ", "a tensor is larger than every bank",
                                 "larger than every memory pool"}) {
    const size_t at = absl::string_view(message).find(lead);
    if (at == std::string::npos) continue;
    if (lead.back() != ' ') return "a tensor over every bank";
    return message.substr(at + lead.size(), 110);
  }
  return message.substr(0, 60);
}

// The least-peak compile's arena (`plain`, without pools) placed whole in
// one bank of the preset, into cell.one_arena.
void RunOneArena(const Graph& graph, const DevicePreset& preset, const Options& options,
                 const CompileResult& plain, Cell& cell) {
  Cell::OneArena& out = cell.one_arena;
  out.ran = true;
  out.peak = plain.peak_bytes;
  out.arena_bytes = plain.arena.arena_bytes;
  CompileOptions compile = BaseOptions(options);
  compile.pools.pools = preset.pools;
  compile.pools.one_arena = true;
  absl::StatusOr<MemoryModel> model = BuildMemoryModel(graph, compile.memory);
  absl::StatusOr<PoolReport> report =
      model.ok() ? PlaceOneArenaInPools(graph, *model, plain.simulation, compile.alignment,
                                        compile.pools, plain.arena, ArenaLimits{})
                 : absl::StatusOr<PoolReport>(model.status());
  if (!report.ok()) {
    out.error = ShortError(std::string(report.status().message()));
    return;
  }
  out.fits = report->fits();
  const std::vector<int32_t>& pools = report->placement.assignment.pool;
  if (!pools.empty()) out.pool = preset.pools[pools.front()].name;
  out.seconds = report->placement.evaluation.modelled_seconds;
}

// One row per model that did not fit as given (the others need no
// rewriting): what --rewrite auto made of it.
void PrintRewrite(const DevicePreset& preset, const std::vector<Cell>& cells) {
  std::printf("\n### %s, with --rewrite %s\n\n", preset.description.c_str(), "auto");
  std::printf(
      "| model | as given: ordo / internal_first / usmp_greedy | with rewriting: ordo fits |"
      " rewrites | latency | peak as given -> rewritten (int8) |"
      " rewritten schedule: internal_first / usmp_greedy | ordo ms | time s |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  auto yn = [](bool b) { return b ? "yes" : "no"; };
  std::vector<std::string> only_ordo, only_ordo_placement;
  int ran = 0;
  for (const Cell& cell : cells) {
    const Cell::Rewritten& r = cell.rewritten;
    if (!r.ran) continue;
    ++ran;
    const std::string as_given =
        cell.error.empty() ? absl::StrCat(yn(cell.fits), " / ", yn(cell.internal_fits), " / ",
                                          yn(cell.usmp_fits))
                           : absl::StrCat("no / no / no (", ShortError(cell.error), ")");
    if (!r.error.empty()) {
      std::printf("| %s | %s | no: %s | | | | | | %.1f |\n", cell.model.c_str(),
                  as_given.c_str(), ShortError(r.error).c_str(), r.time_s);
      continue;
    }
    if (r.fits && !cell.internal_fits && !cell.usmp_fits && !cell.fits) {
      only_ordo.push_back(cell.model);
      if (!r.internal_fits && !r.usmp_fits) only_ordo_placement.push_back(cell.model);
    }
    std::printf("| %s | %s | %s | %d | %+.1f%% | %s -> %lld | %s / %s | %s | %.1f |\n",
                cell.model.c_str(), as_given.c_str(), yn(r.fits), r.rewrites,
                100 * r.latency_overhead,
                cell.error.empty() ? absl::StrCat(cell.peak).c_str() : "-",
                static_cast<long long>(r.peak), yn(r.internal_fits), yn(r.usmp_fits),
                Ms(r.fits, r.seconds).c_str(), r.time_s);
  }
  std::printf(
      "\n%s with --rewrite auto: %d models did not fit as given; %zu fit with ordo's rewriting "
      "and placement and with neither baseline on the model as given (%s); of them, %zu with "
      "neither baseline on the rewritten schedule either (%s)\n",
      preset.name.c_str(), ran, only_ordo.size(), absl::StrJoin(only_ordo, ", ").c_str(),
      only_ordo_placement.size(), absl::StrJoin(only_ordo_placement, ", ").c_str());
}

// The NAS cells of the target (amoeba, darts, nasnet, pnas).
bool IsNasModel(const std::string& name) {
  for (const char* family : {"amoeba", "darts", "nasnet", "pnas"}) {
    if (name.rfind(family, 0) == 0) return true;
  }
  return false;
}

// "0.850 (15.0% lower)", or "- (no model)" for an empty set: a median over
// nothing is not a figure.
std::string MedianRatio(const std::vector<double>& ratios) {
  if (ratios.empty()) return "- (no model)";
  const double median = Median(ratios);
  return absl::StrFormat("%.3f (%.1f%% lower)", median, 100 * (1 - median));
}

// Per model: ordo's placement across the banks against the one arena a
// TFLite Micro build can use (the whole arena in one bank).
void PrintOneArena(const DevicePreset& preset, const std::vector<Cell>& cells) {
  std::printf("\n### %s, one arena (TFLite Micro) against ordo across the banks\n\n",
              preset.description.c_str());
  std::printf(
      "| model | least peak (int8) | one arena (B) | one arena: bank | one arena ms |"
      " ordo across banks ms | one arena / ordo |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  std::vector<std::string> only_across;
  std::vector<double> ratios;
  for (const Cell& cell : cells) {
    const Cell::OneArena& one = cell.one_arena;
    if (!one.ran) continue;
    const bool across = cell.error.empty() && cell.fits;
    if (across && !one.fits) only_across.push_back(cell.model);
    std::string ratio = "-";
    if (across && one.fits && cell.seconds > 0) {
      ratios.push_back(one.seconds / cell.seconds);
      ratio = absl::StrFormat("%.3f", ratios.back());
    }
    const std::string bank = !one.error.empty() ? absl::StrCat("none (", one.error, ")")
                             : one.fits         ? absl::StrCat("\"", one.pool, "\"")
                                                : "none holds it";
    std::printf("| %s | %lld | %lld | %s | %s | %s | %s |\n", cell.model.c_str(),
                static_cast<long long>(one.peak), static_cast<long long>(one.arena_bytes),
                bank.c_str(), Ms(one.fits, one.seconds).c_str(), Ms(across, cell.seconds).c_str(),
                ratio.c_str());
  }
  std::printf(
      "\n%s one arena: %zu models fit across the banks with ordo and in no single bank as one "
      "arena (%s); median one arena / ordo over %zu models both fit: %s\n",
      preset.name.c_str(), only_across.size(), absl::StrJoin(only_across, ", ").c_str(),
      ratios.size(), ratios.empty() ? "-" : absl::StrFormat("%.3f", Median(ratios)).c_str());
}

void PrintPreset(const DevicePreset& preset, const Options& options,
                 const std::vector<Cell>& cells) {
  std::printf(
      "\n### %s (placement effort %s%s)\n\n", preset.description.c_str(), options.effort.c_str(),
      options.repeat > 1 ? absl::StrFormat("; times: medians of %d runs", options.repeat).c_str()
                         : "");
  std::printf(
      "| model | peak (int8) | fits: ordo / internal_first / usmp_greedy / single_pool |"
      " ordo ms | internal_first ms | usmp_greedy ms | ordo / internal_first |"
      " bound / internal_first | gap to bound | place ms | place stage ms |"
      " compile ms (pools / none) | placement adds | schedule | ordo / internal_first on"
      " the least-peak schedule |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::vector<double> ratios, nas_adds, peak_ratios;
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
    std::string peak_ratio = "-";
    if (cell.fits && cell.internal_on_peak_fits && cell.internal_on_peak_seconds > 0) {
      peak_ratios.push_back(cell.seconds / cell.internal_on_peak_seconds);
      peak_ratio = absl::StrFormat("%.3f", peak_ratios.back());
    }
    const double eps = 1e-12;
    auto beaten_by = [&](bool fits, double seconds) {
      return fits && (!cell.fits || cell.seconds > seconds * (1 + eps));
    };
    if (beaten_by(cell.internal_fits, cell.internal_seconds) ||
        beaten_by(cell.usmp_fits, cell.usmp_seconds) ||
        beaten_by(cell.one_arena_fits, cell.one_arena_seconds)) {
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
        rest_s > 0 ? absl::StrFormat("%.1f%%", 100 * cell.place_stage_s / rest_s) : "-";
    if (rest_s > 0 && IsNasModel(cell.model)) nas_adds.push_back(cell.place_stage_s / rest_s);
    std::printf("| %s | %lld | %s / %s / %s / %s | %s | %s | %s | %s | %s | %s | %.1f | %.1f | "
                "%.1f / %.1f | %s | %s | %s |\n",
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
                1e3 * cell.compile_without_pools_s, adds.c_str(), cell.algorithm.c_str(),
                peak_ratio.c_str());
  }
  std::printf(
      "\n%s: median ordo / internal_first over %zu models both fit: %s; "
      "models where ordo is worse than a baseline: %d; fit only with ordo: %d; "
      "single_pool fits but ordo does not: %d (proved for every order: %d)\n",
      preset.name.c_str(), ratios.size(), MedianRatio(ratios).c_str(), worse, only_ordo, missed,
      missed_proved);
  std::printf("%s: median ordo / internal_first on the least-peak schedule over %zu models both "
              "fit: %s\n",
              preset.name.c_str(), peak_ratios.size(), MedianRatio(peak_ratios).c_str());
  if (!nas_adds.empty()) {
    std::printf("%s: the place stage adds to the compile of the %zu NAS models: median %.1f%%, "
                "max %.1f%%\n",
                preset.name.c_str(), nas_adds.size(), 100 * Median(nas_adds),
                100 * *std::max_element(nas_adds.begin(), nas_adds.end()));
  }
}

// One row per model: the cells of every scheduler's schedule on one preset.
// The pools-aware choice is the schedule whose ordo placement fits and is
// fastest; its ratio to internal_first is on that same schedule (as the
// issue defines the baselines). The bound ratio is the lowest over the
// schedules: no placement of any of them gets below it. The lowest ordo /
// internal_first over them is what choosing a schedule for the ratio would
// report; it may come from a schedule that is slower for ordo too, only
// slower still for internal_first.
void PrintAcrossSchedules(const DevicePreset& preset, const std::vector<std::vector<Cell>>& rows) {
  std::printf("\n### %s, across schedules\n\n", preset.description.c_str());
  std::printf(
      "| model | schedules | fits with some: ordo / internal_first / usmp_greedy | ordo only |"
      " fastest ordo ms (scheduler) | internal_first ms on it | ordo / internal_first |"
      " lowest bound / internal_first (scheduler) | lowest ordo / internal_first (scheduler) |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|\n");
  std::vector<double> ratios, bound_ratios, lowest_ratios;
  int only_ordo = 0;
  for (const std::vector<Cell>& row : rows) {
    int placed = 0;
    bool ordo = false, internal = false, usmp = false, ordo_only = false;
    const Cell* fastest = nullptr;
    const Cell* lowest_bound = nullptr;
    const Cell* lowest_ratio = nullptr;  // both fit, ordo / internal_first lowest
    for (const Cell& cell : row) {
      if (!cell.error.empty()) continue;
      ++placed;
      ordo = ordo || cell.fits;
      internal = internal || cell.internal_fits;
      usmp = usmp || cell.usmp_fits;
      ordo_only = ordo_only || (cell.fits && !cell.internal_fits && !cell.usmp_fits);
      if (cell.fits && (fastest == nullptr || cell.seconds < fastest->seconds)) fastest = &cell;
      if (cell.fits && cell.internal_fits &&
          (lowest_ratio == nullptr || cell.seconds / cell.internal_seconds <
                                          lowest_ratio->seconds / lowest_ratio->internal_seconds)) {
        lowest_ratio = &cell;
      }
      if (cell.internal_fits &&
          (lowest_bound == nullptr || cell.lower_bound / cell.internal_seconds <
                                          lowest_bound->lower_bound / lowest_bound->internal_seconds)) {
        lowest_bound = &cell;
      }
    }
    auto yn = [](bool b) { return b ? "yes" : "no"; };
    std::string fastest_text = "-", internal_text = "-", ratio_text = "-", bound_text = "-",
                lowest_text = "-";
    if (fastest != nullptr) {
      fastest_text = absl::StrFormat("%.3f (%s)", 1e3 * fastest->seconds, fastest->scheduler);
      if (fastest->internal_fits) {
        internal_text = absl::StrFormat("%.3f", 1e3 * fastest->internal_seconds);
        ratios.push_back(fastest->seconds / fastest->internal_seconds);
        ratio_text = absl::StrFormat("%.3f", ratios.back());
      }
    }
    if (lowest_bound != nullptr && fastest != nullptr && fastest->internal_fits) {
      bound_ratios.push_back(lowest_bound->lower_bound / lowest_bound->internal_seconds);
      bound_text = absl::StrFormat("%.3f (%s)", bound_ratios.back(), lowest_bound->scheduler);
    }
    if (lowest_ratio != nullptr && fastest != nullptr && fastest->internal_fits) {
      lowest_ratios.push_back(lowest_ratio->seconds / lowest_ratio->internal_seconds);
      lowest_text = absl::StrFormat("%.3f (%s)", lowest_ratios.back(), lowest_ratio->scheduler);
    }
    if (ordo_only) ++only_ordo;
    std::printf("| %s | %d | %s / %s / %s | %s | %s | %s | %s | %s | %s |\n",
                row.front().model.c_str(), placed, yn(ordo), yn(internal), yn(usmp),
                yn(ordo_only), fastest_text.c_str(), internal_text.c_str(), ratio_text.c_str(),
                bound_text.c_str(), lowest_text.c_str());
  }
  std::printf(
      "\n%s across schedules: median ordo / internal_first on the fastest schedule over %zu "
      "models: %s; median lowest bound / internal_first: %.3f; median lowest "
      "ordo / internal_first: %.3f; models some schedule fits with ordo and with neither "
      "baseline: %d\n",
      preset.name.c_str(), ratios.size(), MedianRatio(ratios).c_str(), Median(bound_ratios),
      Median(lowest_ratios), only_ordo);
}

}  // namespace
}  // namespace ordo

int main(int argc, char** argv) {
  using namespace ordo;
  Options options;
  if (!ParseArgs(argc, argv, options)) {
    std::fprintf(stderr,
                 "usage: ordo-pool-bench [DIR] [--only=SUBSTRING] [--device=NAME] "
                 "[--schedule_time_limit_s=2] [--schedulers=best,model,...] "
                 "[--rewrite=auto] [--runtime=tflm] [--effort=fast|thorough] [--repeat=1]\n");
    return 2;
  }
  if (options.repeat < 1) {
    std::fprintf(stderr, "ordo-pool-bench: --repeat: %lld runs; use 1 or more\n",
                 static_cast<long long>(options.repeat));
    return 2;
  }
  if (!ParsePlacementEffort(options.effort)) {
    std::fprintf(stderr,
                 "ordo-pool-bench: --effort: unknown effort \"%s\"; use fast or thorough\n",
                 options.effort.c_str());
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
  const std::vector<std::string> schedulers =
      absl::StrSplit(options.schedulers, ',', absl::SkipEmpty());
  // [preset][model][scheduler]
  std::vector<std::vector<std::vector<Cell>>> across(presets.size());
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
    double without = 0;
    absl::StatusOr<CompileResult> plain = absl::UnknownError("not compiled");
    if (schedulers.empty()) {
      plain = Compile(*graph, BaseOptions(options), clock);
      if (plain.ok()) {
        std::vector<double> times = {absl::ToDoubleSeconds(plain->time)};
        for (int64_t run = 1; run < options.repeat; ++run) {
          absl::StatusOr<CompileResult> again = Compile(*graph, BaseOptions(options), clock);
          if (again.ok()) times.push_back(absl::ToDoubleSeconds(again->time));
        }
        without = Median(times);
      }
    }
    for (size_t p = 0; p < presets.size(); ++p) {
      if (!schedulers.empty()) {
        across[p].emplace_back();
        for (const std::string& scheduler : schedulers) {
          across[p].back().push_back(RunOne(name, *graph, presets[p], options, 0, nullptr, scheduler));
        }
        std::fprintf(stderr, "%s on %s done\n", name.c_str(), presets[p].name.c_str());
        continue;
      }
      cells[p].push_back(
          RunOne(name, *graph, presets[p], options, without, plain.ok() ? &*plain : nullptr));
      if (!options.rewrite.empty()) RunRewrite(*bytes, *graph, presets[p], options, cells[p].back());
      if (options.runtime == "tflm" && plain.ok()) {
        RunOneArena(*graph, presets[p], options, *plain, cells[p].back());
      }
      std::fprintf(stderr, "%s on %s done\n", name.c_str(), presets[p].name.c_str());
    }
  }
  for (size_t p = 0; p < presets.size(); ++p) {
    if (schedulers.empty()) {
      PrintPreset(presets[p], options, cells[p]);
      if (!options.rewrite.empty()) PrintRewrite(presets[p], cells[p]);
      if (options.runtime == "tflm") PrintOneArena(presets[p], cells[p]);
    } else {
      PrintAcrossSchedules(presets[p], across[p]);
    }
  }
  return 0;
}
