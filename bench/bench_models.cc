// ordo-bench: every .onnx model of a folder through the baselines (model
// order, Kahn, RPO, greedy) and `best`, re-checked by the simulator.
// Prints a table and writes CSV and JSON. When the folder has a README.md
// with the peers' table (../shared/models/README.md), the peer's peak is
// shown beside ours.
//
//   ordo-bench [--dir=DIR] [--time_limit_s=10] [--max_state_mib=1024]
//              [--only=SUBSTRING] [--csv=FILE] [--json=FILE] [--parts]
//              [--inplace=false] [--activation_element_bytes=N]
//
// Peer numbers are only comparable under the default memory options.

#include <algorithm>
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
#include "core/schedule/scheduler_registry.h"

namespace ordo {
namespace {

struct Options {
  std::string dir = ORDO_SHARED_MODELS_DIR;
  double time_limit_s = 10;
  int64_t max_state_mib = 1024;
  std::string only;
  std::string csv = "ordo-bench.csv";
  std::string json = "ordo-bench.json";
  bool parts = false;
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

// The "peer peak" column of the README's table, by model name.
std::map<std::string, std::string> PeerPeaks(const std::string& dir) {
  std::map<std::string, std::string> peaks;
  std::ifstream in(std::filesystem::path(dir) / "README.md");
  std::string line;
  while (std::getline(in, line)) {
    std::vector<std::string> cells = absl::StrSplit(line, '|');
    if (cells.size() < 6) continue;
    const std::string name(absl::StripAsciiWhitespace(cells[1]));
    int64_t ops;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(cells[2]), &ops)) continue;
    peaks[name] = std::string(absl::StripAsciiWhitespace(cells[4]));
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

absl::Status RunModel(const std::filesystem::path& path, const Options& options, Row& row) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  absl::StatusOr<Graph> graph = ImportOnnx(bytes.str());
  if (!graph.ok()) return graph.status();
  absl::StatusOr<MemoryModel> model = BuildMemoryModel(*graph, options.memory);
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

std::string JsonString(absl::string_view s) {
  std::string out = "\"";
  for (char c : s) {
    if (c == '"' || c == '\\') out += '\\';
    if (static_cast<unsigned char>(c) >= 0x20) out += c;
  }
  return out + "\"";
}

void WriteJson(const std::vector<Row>& rows, const std::string& path) {
  std::ofstream out(path);
  out << "[\n";
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    out << "  {\"model\": " << JsonString(r.model) << ", \"ops\": " << r.ops
        << ", \"parts\": " << r.parts << ", \"model_order_peak\": " << r.model_order_peak
        << ", \"baseline_peak\": " << r.baseline_peak
        << ", \"baseline\": " << JsonString(r.baseline) << ", \"ordo_peak\": " << r.peak
        << ", \"lower_bound\": " << r.lower_bound << ", \"status\": " << JsonString(r.status)
        << ", \"algorithm\": " << JsonString(r.algorithm) << ", \"time_s\": " << r.seconds
        << ", \"states_expanded\": " << r.states_expanded
        << ", \"peer_peak\": " << JsonString(r.peer_peak) << ", \"error\": " << JsonString(r.error)
        << "}" << (i + 1 < rows.size() ? "," : "") << "\n";
  }
  out << "]\n";
}

int Main(int argc, char** argv) {
  Options options;
  if (!ParseArgs(argc, argv, options)) {
    std::fprintf(stderr,
                 "usage: ordo-bench [--dir=DIR] [--time_limit_s=S] [--max_state_mib=M] "
                 "[--only=SUBSTRING] [--csv=FILE] [--json=FILE] [--parts] [--inplace=false] "
                 "[--activation_element_bytes=N]\n");
    return 2;
  }
  std::vector<std::filesystem::path> paths;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(options.dir, error)) {
    const std::string name = entry.path().filename().string();
    if (entry.path().extension() == ".onnx" && absl::StrContains(name, options.only)) {
      paths.push_back(entry.path());
    }
  }
  if (error) {
    std::fprintf(stderr, "ordo-bench: %s: %s\n", options.dir.c_str(), error.message().c_str());
    return 1;
  }
  std::sort(paths.begin(), paths.end());
  const std::map<std::string, std::string> peers = PeerPeaks(options.dir);
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
