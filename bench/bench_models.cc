// ordo-bench: every .onnx model of a folder through the baselines (model
// order, Kahn, RPO, greedy) and `best`, re-checked by the simulator.
// Prints a table and writes CSV and JSON. When the folder has a README.md
// with the peers' table (../shared/models/README.md), the peer's peak is
// shown beside ours.
//
//   ordo-bench [--dir=DIR] [--time_limit_s=10] [--max_state_mib=1024]
//              [--only=SUBSTRING] [--csv=FILE] [--json=FILE] [--parts]
//              [--inplace=false] [--activation_element_bytes=N]
//              [--schedulers] [--ablation]
//
// --schedulers: HMCOS Table 1 for ordo instead: per model the peaks of the
// model order, RPO, hmcos, hierarchical and best, the times of the last
// three (and the peer's, from the README), and each one's reduction
// against the model order and RPO. Default limits (no deadline) unless
// --time_limit_s is given.
// --ablation: HMCOS Table 3 for ordo: HierarchicalScheduler without ordo's
// additions (= hmcos) under the paper's configurations 1-7 (no hierarchy,
// sequences, sequences + cells, complete; complete without budget, without
// strategy selection, without memoization), then ordo's complete
// scheduler; peak and time of each, within --time_limit_s per run.
//
// Peer numbers are only comparable under the default memory options.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"
#include "core/memory/memory_model.h"
#include "core/memory/simulator.h"
#include "core/onnx/onnx_import.h"
#include "core/schedule/hierarchical_scheduler.h"
#include "core/schedule/scheduler_registry.h"
#include "core/testing/test_paths.h"
#include "nlohmann/json.hpp"

namespace ordo {
namespace {

struct Options {
  std::string dir = ordo::testing::SharedModelsDir();
  double time_limit_s = 10;
  int64_t max_state_mib = 1024;
  std::string only;
  std::string csv = "ordo-bench.csv";
  std::string json = "ordo-bench.json";
  bool parts = false;
  bool schedulers = false;
  bool ablation = false;
  bool time_limit_given = false;
  MemoryOptions memory;
};

struct Row {
  std::string model;
  int32_t ops = 0;
  int32_t parts = 0;
  int64_t model_order_peak = 0;
  int64_t baseline_peak = 0;
  std::string baseline;
  int64_t peak = 0;
  int64_t lower_bound = 0;
  std::string status;
  std::string algorithm;
  double seconds = 0;
  int64_t states_expanded = 0;
  std::string peer_peak;  // from the README, as written there
  std::string error;
  std::vector<PartStats> part_stats;
};

bool ParseArgs(int argc, char** argv, Options& options) {
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    std::vector<std::string> kv = absl::StrSplit(arg, absl::MaxSplits('=', 1));
    const std::string value = kv.size() > 1 ? kv[1] : "";
    if (kv[0] == "--dir") {
      options.dir = value;
    } else if (kv[0] == "--time_limit_s") {
      if (!absl::SimpleAtod(value, &options.time_limit_s)) return false;
      options.time_limit_given = true;
    } else if (kv[0] == "--max_state_mib") {
      if (!absl::SimpleAtoi(value, &options.max_state_mib)) return false;
    } else if (kv[0] == "--only") {
      options.only = value;
    } else if (kv[0] == "--csv") {
      options.csv = value;
    } else if (kv[0] == "--json") {
      options.json = value;
    } else if (kv[0] == "--parts") {
      options.parts = true;
    } else if (kv[0] == "--schedulers") {
      options.schedulers = true;
    } else if (kv[0] == "--ablation") {
      options.ablation = true;
    } else if (kv[0] == "--inplace") {
      options.memory.inplace = value != "false";
    } else if (kv[0] == "--activation_element_bytes") {
      if (!absl::SimpleAtoi(value, &options.memory.activation_element_bytes)) return false;
    } else {
      return false;
    }
  }
  return true;
}

// A column of the README's table ("peer peak" = 4, "peer time" = 6), by
// model name.
std::map<std::string, std::string> PeerColumn(const std::string& dir, size_t column) {
  std::map<std::string, std::string> peaks;
  std::ifstream in(std::filesystem::path(dir) / "README.md");
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cells = absl::StrSplit(line, '|');
    if (cells.size() <= column + 1) continue;
    const std::string name(absl::StripAsciiWhitespace(cells[1]));
    int64_t ops;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(cells[2]), &ops)) continue;
    peaks[name] = std::string(absl::StripAsciiWhitespace(cells[column]));
  }
  return peaks;
}

absl::StatusOr<int64_t> PeakOf(const SchedulerRegistry& registry, absl::string_view name,
                               const MemoryModel& model) {
  absl::StatusOr<std::unique_ptr<Scheduler>> scheduler = registry.Create(name);
  if (!scheduler.ok()) return scheduler.status();
  absl::StatusOr<ScheduleResult> result = (*scheduler)->Schedule(model, {});
  if (!result.ok()) return result.status();
  return result->peak_bytes;
}

absl::StatusOr<MemoryModel> LoadModel(const std::filesystem::path& path, const Options& options) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  absl::StatusOr<Graph> graph = ImportOnnx(bytes.str());
  if (!graph.ok()) return graph.status();
  return BuildMemoryModel(*graph, options.memory);
}

absl::Status RunModel(const std::filesystem::path& path, const Options& options, Row& row) {
  absl::StatusOr<MemoryModel> model = LoadModel(path, options);
  if (!model.ok()) return model.status();
  row.ops = model->num_ops();
  const SchedulerRegistry registry = BuiltinSchedulers();
  row.baseline_peak = INT64_MAX;
  for (absl::string_view name : {"model", "kahn", "rpo", "greedy"}) {
    absl::StatusOr<int64_t> peak = PeakOf(registry, name, *model);
    if (!peak.ok()) return peak.status();
    if (name == "model") row.model_order_peak = *peak;
    if (*peak < row.baseline_peak) {
      row.baseline_peak = *peak;
      row.baseline = std::string(name);
    }
  }
  absl::StatusOr<std::unique_ptr<Scheduler>> best = registry.Create("best");
  if (!best.ok()) return best.status();
  ScheduleLimits limits;
  const absl::Time start = absl::Now();
  limits.deadline = start + absl::Seconds(options.time_limit_s);
  limits.max_state_bytes = options.max_state_mib << 20;
  absl::StatusOr<ScheduleResult> result = (*best)->Schedule(*model, limits);
  row.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  if (!result.ok()) return result.status();
  // Trust nothing: the simulator re-checks the order that would ship.
  absl::StatusOr<int64_t> peak = SimulatePeak(*model, result->order);
  if (!peak.ok()) return peak.status();
  if (*peak != result->peak_bytes) {
    return absl::InternalError(
        absl::StrCat("best reported ", result->peak_bytes, ", simulator says ", *peak));
  }
  row.peak = result->peak_bytes;
  row.lower_bound = result->lower_bound_bytes;
  row.status = std::string(ScheduleStatusName(result->status));
  row.algorithm = result->algorithm;
  row.states_expanded = result->stats.states_expanded;
  row.parts = static_cast<int32_t>(result->parts.size());
  row.part_stats = result->parts;
  return absl::OkStatus();
}

// One scheduler's run on one model, for --schedulers and --ablation.
struct Timed {
  int64_t peak = 0;
  double seconds = 0;
  std::string status;
  bool limit_hit = false;
  int32_t iterations = 0;
};

ScheduleLimits LimitsOf(const Options& options, bool always_deadline) {
  ScheduleLimits limits;
  if (options.time_limit_given || always_deadline) {
    limits.deadline = absl::Now() + absl::Seconds(options.time_limit_s);
  }
  limits.max_state_bytes = options.max_state_mib << 20;
  return limits;
}

// Runs `scheduler` and re-checks its order with the simulator.
absl::StatusOr<Timed> TimeScheduler(const Scheduler& scheduler, const MemoryModel& model,
                                    const ScheduleLimits& limits) {
  const absl::Time start = absl::Now();
  absl::StatusOr<ScheduleResult> result = scheduler.Schedule(model, limits);
  Timed timed;
  timed.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  if (!result.ok()) return result.status();
  absl::StatusOr<int64_t> peak = SimulatePeak(model, result->order);
  if (!peak.ok()) return peak.status();
  if (*peak != result->peak_bytes) {
    return absl::InternalError(absl::StrCat(scheduler.name(), " reported ", result->peak_bytes,
                                            ", simulator says ", *peak));
  }
  timed.peak = *peak;
  timed.status = std::string(ScheduleStatusName(result->status));
  return timed;
}

std::vector<std::filesystem::path> ModelPaths(const Options& options, std::error_code& error) {
  std::vector<std::filesystem::path> paths;
  for (const auto& entry : std::filesystem::directory_iterator(options.dir, error)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() == ".onnx" && absl::StrContains(name, options.only)) {
      paths.push_back(entry.path());
    }
  }
  std::sort(paths.begin(), paths.end());
  return paths;
}

// printf into a string (Debian's abseil has StrFormat, but ordo-bench does
// not link it).
template <typename... Args>
std::string Format(const char* format, Args... args) {
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), format, args...);
  return buffer;
}

std::string Reduction(int64_t base, int64_t peak) {
  if (base <= 0) return "-";
  return Format("%.1f%%", 100.0 * static_cast<double>(base - peak) /
                                       static_cast<double>(base));
}

std::string Seconds(const Timed& timed) {
  return absl::StrCat(timed.limit_hit ? ">" : "", Format("%.3f", timed.seconds));
}

// --schedulers: HMCOS Table 1 for ordo.
int RunSchedulers(const Options& options, const std::vector<std::filesystem::path>& paths) {
  const std::map<std::string, std::string> peer_peaks = PeerColumn(options.dir, 4);
  const std::map<std::string, std::string> peer_times = PeerColumn(options.dir, 6);
  const SchedulerRegistry registry = BuiltinSchedulers();
  const char* const kNames[] = {"model", "rpo", "hmcos", "hierarchical", "best"};
  std::printf(
      "| model | ops | model order | rpo | hmcos | s | hierarchical | s | best | s | status |"
      " peer peak | peer s | hmcos vs model | vs rpo | hierarchical vs model | vs rpo |"
      " best vs model | vs rpo |\n");
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::ofstream csv(options.csv);
  csv << "model,ops,scheduler,peak,time_s,status\n";
  for (const std::filesystem::path& path : paths) {
    const std::string name = path.stem().string();
    absl::StatusOr<MemoryModel> model = LoadModel(path, options);
    if (!model.ok()) {
      std::printf("| %s | error: %s |\n", name.c_str(), model.status().ToString().c_str());
      continue;
    }
    std::map<std::string, Timed> runs;
    std::string error;
    for (const char* scheduler_name : kNames) {
      std::unique_ptr<Scheduler> scheduler = *registry.Create(scheduler_name);
      absl::StatusOr<Timed> timed =
          TimeScheduler(*scheduler, *model, LimitsOf(options, /*always_deadline=*/false));
      if (!timed.ok()) {
        error = absl::StrCat(scheduler_name, ": ", timed.status().ToString());
        break;
      }
      runs[scheduler_name] = *timed;
      csv << name << ',' << model->num_ops() << ',' << scheduler_name << ',' << timed->peak << ','
          << timed->seconds << ',' << timed->status << '\n';
    }
    if (!error.empty()) {
      std::printf("| %s | error: %s |\n", name.c_str(), error.c_str());
      continue;
    }
    const int64_t base = runs["model"].peak, rpo = runs["rpo"].peak;
    auto peer = [&](const std::map<std::string, std::string>& column) {
      auto it = column.find(name);
      return it == column.end() ? std::string("-") : it->second;
    };
    std::printf("| %s | %d | %lld | %lld | %lld | %s | %lld | %s | %lld | %s | %s | %s | %s |"
                " %s | %s | %s | %s | %s | %s |\n",
                name.c_str(), model->num_ops(), static_cast<long long>(base),
                static_cast<long long>(rpo), static_cast<long long>(runs["hmcos"].peak),
                Seconds(runs["hmcos"]).c_str(), static_cast<long long>(runs["hierarchical"].peak),
                Seconds(runs["hierarchical"]).c_str(), static_cast<long long>(runs["best"].peak),
                Seconds(runs["best"]).c_str(), runs["best"].status.c_str(),
                peer(peer_peaks).c_str(), peer(peer_times).c_str(),
                Reduction(base, runs["hmcos"].peak).c_str(),
                Reduction(rpo, runs["hmcos"].peak).c_str(),
                Reduction(base, runs["hierarchical"].peak).c_str(),
                Reduction(rpo, runs["hierarchical"].peak).c_str(),
                Reduction(base, runs["best"].peak).c_str(),
                Reduction(rpo, runs["best"].peak).c_str());
    std::fflush(stdout);
  }
  return 0;
}

// The configurations of HMCOS Table 3, then ordo's complete scheduler.
std::vector<std::pair<std::string, HierarchicalOptions>> AblationConfigs() {
  std::vector<std::pair<std::string, HierarchicalOptions>> configs =
      HmcosAblationConfigurations();
  configs.push_back({"ordo", HierarchicalOptions{}});
  return configs;
}

double GeoMean(const std::vector<double>& ratios) {
  if (ratios.empty()) return 0;
  double log_sum = 0;
  for (double r : ratios) log_sum += std::log(r);
  return std::exp(log_sum / static_cast<double>(ratios.size()));
}

// --ablation: HMCOS Table 3 for ordo (times), with the peaks beside.
int RunAblation(const Options& options, const std::vector<std::filesystem::path>& paths) {
  const auto configs = AblationConfigs();
  std::vector<std::string> names;
  std::vector<std::vector<Timed>> table;
  for (const std::filesystem::path& path : paths) {
    absl::StatusOr<MemoryModel> model = LoadModel(path, options);
    if (!model.ok()) {
      std::fprintf(stderr, "%s: %s\n", path.c_str(), model.status().ToString().c_str());
      continue;
    }
    std::vector<Timed> row;
    for (const auto& [config, hierarchical_options] : configs) {
      const HierarchicalScheduler scheduler(hierarchical_options);
      const ScheduleLimits limits = LimitsOf(options, /*always_deadline=*/true);
      const absl::Time start = absl::Now();
      absl::StatusOr<ScheduleResult> result = scheduler.Schedule(*model, limits);
      Timed timed;
      timed.seconds = absl::ToDoubleSeconds(absl::Now() - start);
      if (result.ok()) {
        timed.peak = result->peak_bytes;
        timed.status = std::string(ScheduleStatusName(result->status));
        timed.iterations = result->stats.iterative.iterations;
      }
      timed.limit_hit = (result.ok() && result->stats.iterative.limit_hit) || limits.Expired();
      row.push_back(timed);
      std::fprintf(stderr, "%s %s: %lld in %.3f s (%d iterations%s)\n",
                   path.stem().c_str(), config.c_str(), static_cast<long long>(timed.peak),
                   timed.seconds, timed.iterations, timed.limit_hit ? ", limit" : "");
    }
    names.push_back(path.stem().string());
    table.push_back(std::move(row));
  }
  // Times, with HMCOS Table 3's ratios: 3 and 4 as speedups over the
  // configuration before, 5-7 as slowdowns against 4.
  std::printf("| model | 1 s | 2 s | 3 s | 3 up | 4 s | 4 up | 5 s | 5 down | 6 s | 6 down |"
              " 7 s | 7 down | ordo s |\n"
              "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  std::vector<std::vector<double>> ratios(5);
  for (size_t m = 0; m < names.size(); ++m) {
    const std::vector<Timed>& r = table[m];
    auto ratio = [&](size_t a, size_t b, size_t slot) {
      const double value = r[a].seconds / std::max(r[b].seconds, 1e-6);
      ratios[slot].push_back(value);
      return Format("%.2fx", value);
    };
    std::printf("| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
                names[m].c_str(), Seconds(r[0]).c_str(), Seconds(r[1]).c_str(),
                Seconds(r[2]).c_str(), ratio(1, 2, 0).c_str(), Seconds(r[3]).c_str(),
                ratio(2, 3, 1).c_str(), Seconds(r[4]).c_str(), ratio(4, 3, 2).c_str(),
                Seconds(r[5]).c_str(), ratio(5, 3, 3).c_str(), Seconds(r[6]).c_str(),
                ratio(6, 3, 4).c_str(), Seconds(r[7]).c_str());
  }
  std::printf("| geomean | | | | %.2fx | | %.2fx | | %.2fx | | %.2fx | | %.2fx | |\n\n",
              GeoMean(ratios[0]), GeoMean(ratios[1]), GeoMean(ratios[2]), GeoMean(ratios[3]),
              GeoMean(ratios[4]));
  std::printf("| model | 1 peak | 2 peak | 3 peak | 4 peak | 5 peak | 6 peak | 7 peak | ordo peak |"
              "\n|---|---|---|---|---|---|---|---|---|\n");
  for (size_t m = 0; m < names.size(); ++m) {
    std::printf("| %s |", names[m].c_str());
    for (const Timed& timed : table[m]) {
      std::printf(" %lld%s |", static_cast<long long>(timed.peak), timed.limit_hit ? "*" : "");
    }
    std::printf("\n");
  }
  std::printf("\n* = stopped by the time limit (%.0f s): best schedule so far.\n",
              options.time_limit_s);
  return 0;
}

void PrintTable(const std::vector<Row>& rows, bool parts) {
  std::printf("%-20s %5s %5s %12s %12s %-6s %12s %12s %12s %-9s %8s %11s\n", "model", "ops",
              "parts", "model_order", "baseline", "(by)", "ordo_peak", "lower_bound", "peer_peak",
              "status", "time_s", "states");
  for (const Row& row : rows) {
    if (!row.error.empty()) {
      std::printf("%-20s error: %s\n", row.model.c_str(), row.error.c_str());
      continue;
    }
    std::printf("%-20s %5d %5d %12lld %12lld %-6s %12lld %12lld %12s %-9s %8.2f %11lld\n",
                row.model.c_str(), row.ops, row.parts, static_cast<long long>(row.model_order_peak),
                static_cast<long long>(row.baseline_peak), row.baseline.c_str(),
                static_cast<long long>(row.peak), static_cast<long long>(row.lower_bound),
                row.peer_peak.c_str(), row.status.c_str(), row.seconds,
                static_cast<long long>(row.states_expanded));
    if (!parts) continue;
    for (size_t p = 0; p < row.part_stats.size(); ++p) {
      const PartStats& s = row.part_stats[p];
      if (s.ops < 8 && s.status == ScheduleStatus::kOptimal) continue;
      std::printf("    part %3zu: %4d ops peak %10lld bound %10lld %-9s %-8s %8.3f s %lld states\n",
                  p, s.ops, static_cast<long long>(s.peak_bytes),
                  static_cast<long long>(s.lower_bound_bytes),
                  std::string(ScheduleStatusName(s.status)).c_str(), s.algorithm.c_str(),
                  absl::ToDoubleSeconds(s.time), static_cast<long long>(s.states_expanded));
    }
  }
}

void WriteCsv(const std::vector<Row>& rows, const std::string& path) {
  std::ofstream out(path);
  out << "model,ops,parts,model_order_peak,baseline_peak,baseline,ordo_peak,lower_bound,"
         "status,algorithm,time_s,states_expanded,peer_peak,error\n";
  for (const Row& r : rows) {
    out << r.model << ',' << r.ops << ',' << r.parts << ',' << r.model_order_peak << ','
        << r.baseline_peak << ',' << r.baseline << ',' << r.peak << ',' << r.lower_bound << ','
        << r.status << ',' << r.algorithm << ',' << r.seconds << ',' << r.states_expanded << ",\""
        << r.peer_peak << "\",\"" << r.error << "\"\n";
  }
}

void WriteJson(const std::vector<Row>& rows, const std::string& path) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const Row& r : rows) {
    out.push_back({{"model", r.model},
                   {"ops", r.ops},
                   {"parts", r.parts},
                   {"model_order_peak", r.model_order_peak},
                   {"baseline_peak", r.baseline_peak},
                   {"baseline", r.baseline},
                   {"ordo_peak", r.peak},
                   {"lower_bound", r.lower_bound},
                   {"status", r.status},
                   {"algorithm", r.algorithm},
                   {"time_s", r.seconds},
                   {"states_expanded", r.states_expanded},
                   {"peer_peak", r.peer_peak},
                   {"error", r.error}});
  }
  std::ofstream(path) << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                      << "\n";
}

int Main(int argc, char** argv) {
  Options options;
  if (!ParseArgs(argc, argv, options)) {
    std::fprintf(stderr,
                 "usage: ordo-bench [--dir=DIR] [--time_limit_s=S] [--max_state_mib=M] "
                 "[--only=SUBSTRING] [--csv=FILE] [--json=FILE] [--parts] [--inplace=false] "
                 "[--activation_element_bytes=N] [--schedulers] [--ablation]\n");
    return 2;
  }
  std::error_code error;
  const std::vector<std::filesystem::path> paths = ModelPaths(options, error);
  if (error) {
    std::fprintf(stderr, "ordo-bench: %s: %s\n", options.dir.c_str(), error.message().c_str());
    return 1;
  }
  if (options.schedulers) return RunSchedulers(options, paths);
  if (options.ablation) return RunAblation(options, paths);
  const std::map<std::string, std::string> peers = PeerColumn(options.dir, 4);
  std::vector<Row> rows;
  for (const std::filesystem::path& path : paths) {
    Row row;
    row.model = path.stem().string();
    if (auto it = peers.find(row.model); it != peers.end()) row.peer_peak = it->second;
    if (absl::Status status = RunModel(path, options, row); !status.ok()) {
      row.error = status.ToString();
    }
    rows.push_back(std::move(row));
    std::fprintf(stderr, "%s done (%.2f s)\n", rows.back().model.c_str(), rows.back().seconds);
  }
  PrintTable(rows, options.parts);
  WriteCsv(rows, options.csv);
  WriteJson(rows, options.json);
  return 0;
}

}  // namespace
}  // namespace ordo

int main(int argc, char** argv) { return ordo::Main(argc, argv); }
