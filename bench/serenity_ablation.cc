// ordo-ablation: SERENITY's Table 2 (MLSys 2020, §4 "Speed up from
// divide-and-conquer and adaptive soft budgeting") for ordo's models. Each
// model is scheduled, side by side in one process, by
//
//   1          SERENITY's DP (Algorithm 1) on the whole graph, no budget,
//              one attempt;
//   1+2        the same DP per hourglass part (divide-and-conquer, §3.2);
//   1+2+3      the DP per part under adaptive soft budgeting (Algorithm 2);
//   ordo-dp    ordo's best-first exact search (DpScheduler) per part;
//   ordo-best  ordo's default scheduler (`best`).
//
// Every configuration has its own wall-clock limit and state-memory limit
// (ScheduleLimits); the parts of a divided configuration share its deadline,
// smallest part first. Every schedule is re-simulated (SimulatePeak) and a
// divided one must peak at the max of its parts' peaks. Status: optimal
// (proved), bounded / heuristic (a limit was hit; ordo returns its best
// schedule and a proven bound), N/A (SERENITY's DP hit a limit on some part
// without a schedule; the peak shown is then its greedy/Kahn fallback).
//
// Default models: randwire{1,2,3}.onnx of ../shared/models, plus
// "randwire1-cell", the largest hourglass part of randwire1 as a model of
// its own, and "swiftnet-like", a generated network of three random cells
// of 21, 19 and 22 ops (the sizes of SwiftNet's parts in Table 2);
// --swiftnet_cells gives other cell sizes (wider cells: harder DPs);
// --randwire=false leaves out the default RandWire models (with
// --cell_from="": the SwiftNet-like network alone).
//
//   ordo-ablation [MODEL.onnx ...] [--cell_from=MODEL.onnx|""]
//                 [--swiftnet_like=false] [--swiftnet_cells=21,19,22]
//                 [--randwire=false]
//                 [--time_limit_dp_s=60] [--time_limit_s=20]
//                 [--attempt_time_limit_s=1] [--max_state_mib=1024]
//                 [--csv=FILE] [--json=FILE] [--parts]

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <numeric>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/memory/memory_model.h"
#include "core/memory/simulator.h"
#include "core/onnx/onnx_import.h"
#include "core/partition/hourglass_partitioner.h"
#include "core/schedule/dp_scheduler.h"
#include "core/schedule/scheduler.h"
#include "core/schedule/scheduler_registry.h"
#include "core/schedule/serenity_scheduler.h"
#include "core/testing/test_paths.h"
#include "nlohmann/json.hpp"

namespace ordo {
namespace {

struct Options {
  std::vector<std::string> models;
  std::string cell_from;
  bool swiftnet_like = true;
  bool randwire = true;  // the default models when none are named
  std::vector<int32_t> swiftnet_cells = {21, 19, 22};
  double time_limit_dp_s = 60;  // configuration 1
  double time_limit_s = 20;     // the others
  double attempt_time_limit_s = absl::ToDoubleSeconds(SerenityOptions().attempt_time_limit);
  int64_t max_state_mib = 1024;
  std::string csv;
  std::string json;
  bool parts = false;
};

// A scheduling problem: a whole model, or one part of one.
struct Problem {
  std::string name;
  MemoryModel model;
};

struct Row {
  std::string model;
  int32_t ops = 0;
  std::string configuration;
  int32_t parts = 0;
  int32_t parts_solved = 0;  // by the configuration's own algorithm
  int64_t peak = 0;
  int64_t lower_bound = 0;
  std::string status;
  std::string algorithm;
  double seconds = 0;
  int64_t states_expanded = 0;
  int64_t states_stored = 0;  // the most held at once, for one part
  double limit_s = 0;
  std::string error;
  std::vector<PartStats> part_stats;
};

enum class Kind { kWhole, kPerPart };

struct Configuration {
  std::string name;
  Kind kind;
  // The scheduler run on the whole model or on each part.
  std::function<std::unique_ptr<Scheduler>()> create;
  // A part counts as solved when its result came from this algorithm.
  std::string algorithm;
  // SERENITY: a part not solved by the DP makes the row N/A.
  bool serenity = false;
  absl::Duration limit;
};

bool ParseArgs(int argc, char** argv, Options& options) {
  for (int i = 1; i < argc; ++i) {
    absl::string_view arg = argv[i];
    if (!absl::StartsWith(arg, "--")) {
      options.models.emplace_back(arg);
      continue;
    }
    std::vector<std::string> kv = absl::StrSplit(arg, absl::MaxSplits('=', 1));
    const std::string value = kv.size() > 1 ? kv[1] : "";
    if (kv[0] == "--cell_from") {
      options.cell_from = value;
    } else if (kv[0] == "--swiftnet_like") {
      options.swiftnet_like = value != "false";
    } else if (kv[0] == "--randwire") {
      options.randwire = value != "false";
    } else if (kv[0] == "--swiftnet_cells") {
      options.swiftnet_cells.clear();
      for (absl::string_view cell : absl::StrSplit(value, ',')) {
        int32_t ops;
        // A cell needs an op besides the one that joins it.
        if (!absl::SimpleAtoi(cell, &ops) || ops < 2) return false;
        options.swiftnet_cells.push_back(ops);
      }
      if (options.swiftnet_cells.empty()) return false;
    } else if (kv[0] == "--time_limit_dp_s") {
      if (!absl::SimpleAtod(value, &options.time_limit_dp_s)) return false;
    } else if (kv[0] == "--time_limit_s") {
      if (!absl::SimpleAtod(value, &options.time_limit_s)) return false;
    } else if (kv[0] == "--attempt_time_limit_s") {
      if (!absl::SimpleAtod(value, &options.attempt_time_limit_s)) return false;
    } else if (kv[0] == "--max_state_mib") {
      if (!absl::SimpleAtoi(value, &options.max_state_mib)) return false;
    } else if (kv[0] == "--csv") {
      options.csv = value;
    } else if (kv[0] == "--json") {
      options.json = value;
    } else if (kv[0] == "--parts") {
      options.parts = true;
    } else {
      return false;
    }
  }
  return true;
}

// A SwiftNet-like network (Table 2: 62 nodes in cells of {21, 19, 22}):
// cells of randomly wired ops, each op reading one or two earlier ops of its
// cell or (two times in five) the previous cell's output, each cell ending in a concatenation
// of the ops nobody else reads (the cut between cells). Tensor sizes are
// 1-4 units of 16 KiB; a concatenation's output is the sum of its inputs.
// Fixed seed: the same model every run.
MemoryModel SwiftNetLike(const std::vector<int32_t>& cell_ops, uint32_t seed) {
  std::mt19937 random(seed);
  auto uniform = [&](int32_t lo, int32_t hi) {
    return std::uniform_int_distribution<int32_t>(lo, hi)(random);
  };
  MemoryModel model;
  // Tensor t is produced by op t - 1; tensor 0 is the network's input.
  model.tensors.push_back({.bytes = 4 << 14});
  auto add_op = [&](std::vector<int32_t> inputs, int64_t bytes) {
    std::sort(inputs.begin(), inputs.end());
    inputs.erase(std::unique(inputs.begin(), inputs.end()), inputs.end());
    const int32_t op = model.num_ops();
    const int32_t tensor = model.num_tensors();
    for (int32_t input : inputs) model.tensors[input].consumers.push_back(op);
    model.ops.push_back({.inputs = std::move(inputs), .outputs = {tensor}});
    model.tensors.push_back({.bytes = bytes, .producer = op});
    return tensor;
  };
  int32_t cell_input = 0;
  for (int32_t size : cell_ops) {
    std::vector<int32_t> cell;  // tensors of this cell's ops
    for (int32_t i = 0; i + 1 < size; ++i) {
      std::vector<int32_t> inputs;
      const int32_t reads = i < 2 ? 1 : uniform(1, 2);
      for (int32_t r = 0; r < reads; ++r) {
        // The cell's input with probability 2/5: wide cells, as NAS cells are.
        const bool from_input = i < 2 || uniform(0, 4) < 2;
        inputs.push_back(from_input ? cell_input
                                    : cell[uniform(0, static_cast<int32_t>(cell.size()) - 1)]);
      }
      cell.push_back(add_op(std::move(inputs), int64_t{uniform(1, 4)} << 14));
    }
    std::vector<int32_t> sinks;
    int64_t bytes = 0;
    for (int32_t tensor : cell) {
      if (model.tensors[tensor].consumers.empty()) {
        sinks.push_back(tensor);
        bytes += model.tensors[tensor].bytes;
      }
    }
    cell_input = add_op(std::move(sinks), bytes);
  }
  model.tensors[cell_input].live_at_end = true;
  return model;
}

absl::StatusOr<MemoryModel> LoadModel(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat(path, ": cannot open"));
  std::stringstream bytes;
  bytes << in.rdbuf();
  absl::StatusOr<Graph> graph = ImportOnnx(bytes.str());
  if (!graph.ok()) return graph.status();
  return BuildMemoryModel(*graph, MemoryOptions());
}

// Verifies a result against the simulator and fills the row's peak, bound
// and status from it.
absl::Status CheckResult(const MemoryModel& model, const ScheduleResult& result,
                         absl::string_view what) {
  absl::StatusOr<int64_t> peak = SimulatePeak(model, result.order);
  if (!peak.ok()) return peak.status();
  if (*peak != result.peak_bytes) {
    return absl::InternalError(
        absl::StrCat(what, " reported ", result.peak_bytes, ", simulator says ", *peak));
  }
  return absl::OkStatus();
}

std::string StatusLabel(ScheduleStatus status, bool unsolved_serenity) {
  if (unsolved_serenity) return "N/A";
  return std::string(ScheduleStatusName(status));
}

absl::Status RunWhole(const Configuration& config, const MemoryModel& model,
                      const ScheduleLimits& limits, Row& row) {
  std::unique_ptr<Scheduler> scheduler = config.create();
  absl::StatusOr<ScheduleResult> result = scheduler->Schedule(model, limits);
  if (!result.ok()) return result.status();
  if (absl::Status status = CheckResult(model, *result, config.name); !status.ok()) return status;
  row.parts = result->parts.empty() ? 1 : static_cast<int32_t>(result->parts.size());
  row.part_stats = result->parts;
  if (result->parts.empty()) {
    row.parts_solved = result->algorithm == config.algorithm ? 1 : 0;
  } else {
    for (const PartStats& part : result->parts) {
      row.parts_solved += part.status == ScheduleStatus::kOptimal ? 1 : 0;
    }
  }
  row.peak = result->peak_bytes;
  row.lower_bound = result->lower_bound_bytes;
  row.status = StatusLabel(result->status, config.serenity && row.parts_solved < row.parts);
  row.algorithm = result->algorithm;
  row.states_expanded = result->stats.states_expanded;
  row.states_stored = result->stats.states_stored;
  return absl::OkStatus();
}

// Divide-and-conquer by hand: split, schedule each part (smallest first,
// all sharing `limits`), concatenate, verify.
absl::Status RunPerPart(const Configuration& config, const MemoryModel& model,
                        const ScheduleLimits& limits, Row& row) {
  const Partition partition = HourglassPartitioner().Split(model);
  const int32_t num_parts = static_cast<int32_t>(partition.parts.size());
  std::vector<int32_t> by_size(num_parts);
  std::iota(by_size.begin(), by_size.end(), 0);
  std::stable_sort(by_size.begin(), by_size.end(), [&](int32_t a, int32_t b) {
    return partition.parts[a].ops.size() < partition.parts[b].ops.size();
  });
  std::unique_ptr<Scheduler> scheduler = config.create();
  std::vector<std::vector<int32_t>> orders(num_parts);
  row.part_stats.resize(num_parts);
  row.parts = num_parts;
  int64_t max_part_peak = 0;
  int64_t lower_bound = MemoryLowerBound(model);
  bool all_optimal = true;
  for (int32_t k = 0; k < num_parts; ++k) {
    const int32_t p = by_size[k];
    const MemoryModel& part = partition.parts[p].model;
    const absl::Time start = absl::Now();
    // An equal share of the time left; what small parts leave goes to the
    // bigger ones after them.
    ScheduleLimits part_limits = limits;
    part_limits.deadline =
        std::min(limits.deadline, start + (limits.deadline - start) / (num_parts - k));
    absl::StatusOr<ScheduleResult> result = scheduler->Schedule(part, part_limits);
    if (!result.ok()) return result.status();
    const std::string what = absl::StrCat(config.name, " part ", p);
    if (absl::Status status = CheckResult(part, *result, what); !status.ok()) return status;
    PartStats& stats = row.part_stats[p];
    stats.ops = part.num_ops();
    stats.peak_bytes = result->peak_bytes;
    stats.lower_bound_bytes = result->lower_bound_bytes;
    stats.status = result->status;
    stats.algorithm = result->algorithm;
    stats.states_expanded = result->stats.states_expanded;
    stats.time = absl::Now() - start;
    // SERENITY's DP either solves a part or falls back to a heuristic order;
    // ordo's dp may prove a heuristic's order optimal (and then names it).
    const bool solved = config.serenity ? result->algorithm == config.algorithm
                                        : result->status == ScheduleStatus::kOptimal;
    row.parts_solved += solved ? 1 : 0;
    max_part_peak = std::max(max_part_peak, result->peak_bytes);
    lower_bound = std::max(lower_bound, result->lower_bound_bytes);
    all_optimal = all_optimal && result->status == ScheduleStatus::kOptimal;
    row.states_expanded += result->stats.states_expanded;
    row.states_stored = std::max(row.states_stored, result->stats.states_stored);
    orders[p] = std::move(result->order);
  }
  const std::vector<int32_t> order = ConcatenatePartOrders(partition, orders);
  absl::StatusOr<int64_t> peak = SimulatePeak(model, order);
  if (!peak.ok()) return peak.status();
  if (*peak != max_part_peak) {
    return absl::InternalError(absl::StrCat(config.name, ": parts peak at ", max_part_peak,
                                            ", the concatenation at ", *peak));
  }
  row.peak = *peak;
  row.lower_bound = std::min(lower_bound, *peak);
  ScheduleStatus status = ScheduleStatus::kHeuristic;
  if (all_optimal || row.lower_bound == *peak) {
    status = ScheduleStatus::kOptimal;
  } else if (row.lower_bound > MemoryLowerBound(model)) {
    status = ScheduleStatus::kBounded;
  }
  row.status = StatusLabel(status, config.serenity && row.parts_solved < num_parts);
  row.algorithm = config.algorithm;
  return absl::OkStatus();
}

std::vector<Configuration> Configurations(const Options& options) {
  SerenityOptions budgeted;
  budgeted.attempt_time_limit = absl::Seconds(options.attempt_time_limit_s);
  SerenityOptions unbudgeted = budgeted;
  unbudgeted.adaptive_soft_budget = false;
  const absl::Duration limit = absl::Seconds(options.time_limit_s);
  return {
      {"1: dp", Kind::kWhole,
       [=] { return std::make_unique<SerenityScheduler>(unbudgeted); }, "serenity", true,
       absl::Seconds(options.time_limit_dp_s)},
      {"1+2: dp+dc", Kind::kPerPart,
       [=] { return std::make_unique<SerenityScheduler>(unbudgeted); }, "serenity", true, limit},
      {"1+2+3: dp+dc+asb", Kind::kPerPart,
       [=] { return std::make_unique<SerenityScheduler>(budgeted); }, "serenity", true, limit},
      {"ordo dp per part", Kind::kPerPart, [] { return std::make_unique<DpScheduler>(); }, "dp",
       false, limit},
      {"ordo best", Kind::kWhole,
       [] {
         absl::StatusOr<std::unique_ptr<Scheduler>> best = BuiltinSchedulers().Create("best");
         return std::move(best).value();
       },
       "best", false, limit},
  };
}

void RunProblem(const Problem& problem, const Options& options, std::vector<Row>& rows) {
  for (const Configuration& config : Configurations(options)) {
    Row row;
    row.model = problem.name;
    row.ops = problem.model.num_ops();
    row.configuration = config.name;
    row.limit_s = absl::ToDoubleSeconds(config.limit);
    ScheduleLimits limits;
    const absl::Time start = absl::Now();
    limits.deadline = start + config.limit;
    limits.max_state_bytes = options.max_state_mib << 20;
    absl::Status status = config.kind == Kind::kWhole
                              ? RunWhole(config, problem.model, limits, row)
                              : RunPerPart(config, problem.model, limits, row);
    row.seconds = absl::ToDoubleSeconds(absl::Now() - start);
    if (!status.ok()) row.error = status.ToString();
    std::fprintf(stderr, "%s / %s: %.2f s\n", row.model.c_str(), row.configuration.c_str(),
                 row.seconds);
    rows.push_back(std::move(row));
  }
}

std::string PartSizes(const Row& row) {
  std::vector<int32_t> sizes;
  for (const PartStats& part : row.part_stats) sizes.push_back(part.ops);
  std::sort(sizes.rbegin(), sizes.rend());
  std::string out;
  for (size_t i = 0; i < sizes.size() && i < 4; ++i) absl::StrAppend(&out, i ? "," : "", sizes[i]);
  if (sizes.size() > 4) absl::StrAppend(&out, ",...");
  return out;
}

void PrintTable(const std::vector<Row>& rows, bool parts) {
  std::printf("%-15s %4s  %-17s %5s %6s %-16s %9s %9s %-9s %7s %11s\n", "model", "ops",
              "configuration", "parts", "solved", "largest parts", "peak", "bound", "status",
              "time_s", "states");
  std::string last_model;
  for (const Row& row : rows) {
    if (row.model != last_model && !last_model.empty()) std::printf("\n");
    last_model = row.model;
    if (!row.error.empty()) {
      std::printf("%-15s %4d  %-17s error: %s\n", row.model.c_str(), row.ops,
                  row.configuration.c_str(), row.error.c_str());
      continue;
    }
    const std::string sizes = row.part_stats.empty() ? std::to_string(row.ops) : PartSizes(row);
    std::printf("%-15s %4d  %-17s %5d %3d/%-2d %-16s %9lld %9lld %-9s %7.2f %11lld\n",
                row.model.c_str(), row.ops, row.configuration.c_str(), row.parts,
                row.parts_solved, row.parts, sizes.c_str(), static_cast<long long>(row.peak),
                static_cast<long long>(row.lower_bound), row.status.c_str(), row.seconds,
                static_cast<long long>(row.states_expanded));
    if (!parts) continue;
    for (size_t p = 0; p < row.part_stats.size(); ++p) {
      const PartStats& s = row.part_stats[p];
      if (s.ops < 8 && s.status == ScheduleStatus::kOptimal) continue;
      std::printf("    part %3zu: %4d ops peak %9lld bound %9lld %-9s %-9s %7.3f s %lld states\n",
                  p, s.ops, static_cast<long long>(s.peak_bytes),
                  static_cast<long long>(s.lower_bound_bytes),
                  std::string(ScheduleStatusName(s.status)).c_str(), s.algorithm.c_str(),
                  absl::ToDoubleSeconds(s.time), static_cast<long long>(s.states_expanded));
    }
  }
  std::printf(
      "\n1 = SERENITY DP (Algorithm 1), 2 = divide-and-conquer, 3 = adaptive soft budgeting "
      "(Algorithm 2).\nsolved = parts the configuration's algorithm solved exactly; N/A = the DP "
      "hit a limit on some part\nwithout a schedule (peak shown: the greedy/Kahn fallback). "
      "states = signatures expanded.\nordo best searches only the parts that can still lower the "
      "whole peak.\n");
}

void WriteCsv(const std::vector<Row>& rows, const std::string& path) {
  std::ofstream out(path);
  out << "model,ops,configuration,parts,parts_solved,part_ops,peak,lower_bound,status,algorithm,"
         "time_s,limit_s,states_expanded,states_stored,error\n";
  for (const Row& r : rows) {
    std::string part_ops;
    for (const PartStats& part : r.part_stats) {
      absl::StrAppend(&part_ops, part_ops.empty() ? "" : " ", part.ops);
    }
    out << r.model << ',' << r.ops << ",\"" << r.configuration << "\"," << r.parts << ','
        << r.parts_solved << ",\"" << part_ops << "\"," << r.peak << ',' << r.lower_bound << ','
        << r.status << ',' << r.algorithm << ',' << r.seconds << ',' << r.limit_s << ','
        << r.states_expanded << ',' << r.states_stored << ",\"" << r.error << "\"\n";
  }
}

void WriteJson(const std::vector<Row>& rows, const std::string& path) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const Row& r : rows) {
    nlohmann::ordered_json part_ops = nlohmann::ordered_json::array();
    for (const auto& part : r.part_stats) part_ops.push_back(part.ops);
    out.push_back({{"model", r.model},
                   {"ops", r.ops},
                   {"configuration", r.configuration},
                   {"parts", r.parts},
                   {"parts_solved", r.parts_solved},
                   {"part_ops", part_ops},
                   {"peak", r.peak},
                   {"lower_bound", r.lower_bound},
                   {"status", r.status},
                   {"algorithm", r.algorithm},
                   {"time_s", r.seconds},
                   {"limit_s", r.limit_s},
                   {"states_expanded", r.states_expanded},
                   {"states_stored", r.states_stored},
                   {"error", r.error}});
  }
  std::ofstream(path) << out.dump(2, ' ', false, nlohmann::json::error_handler_t::replace)
                      << "\n";
}

int Main(int argc, char** argv) {
  Options options;
  const std::filesystem::path shared = ordo::testing::SharedModelsDir();
  options.cell_from = (shared / "randwire1.onnx").string();
  if (!ParseArgs(argc, argv, options)) {
    std::fprintf(stderr,
                 "usage: ordo-ablation [MODEL.onnx ...] [--cell_from=MODEL.onnx|\"\"] "
                 "[--swiftnet_like=false] [--swiftnet_cells=N,N,...] [--randwire=false] "
                 "[--time_limit_dp_s=S] [--time_limit_s=S] [--attempt_time_limit_s=S] "
                 "[--max_state_mib=M] [--csv=FILE] [--json=FILE] [--parts]\n");
    return 2;
  }
  if (options.models.empty() && options.randwire) {
    for (const char* name : {"randwire1", "randwire2", "randwire3"}) {
      options.models.push_back((shared / absl::StrCat(name, ".onnx")).string());
    }
  }
  std::vector<Problem> problems;
  for (const std::string& path : options.models) {
    absl::StatusOr<MemoryModel> model = LoadModel(path);
    if (!model.ok()) {
      std::fprintf(stderr, "ordo-ablation: %s\n", model.status().ToString().c_str());
      return 1;
    }
    problems.push_back({std::filesystem::path(path).stem().string(), *std::move(model)});
  }
  if (!options.cell_from.empty()) {
    // The cell: the largest hourglass part, a self-contained model.
    absl::StatusOr<MemoryModel> model = LoadModel(options.cell_from);
    if (!model.ok()) {
      std::fprintf(stderr, "ordo-ablation: %s\n", model.status().ToString().c_str());
      return 1;
    }
    Partition partition = HourglassPartitioner().Split(*model);
    size_t largest = 0;
    for (size_t p = 1; p < partition.parts.size(); ++p) {
      if (partition.parts[p].ops.size() > partition.parts[largest].ops.size()) largest = p;
    }
    const std::string stem = std::filesystem::path(options.cell_from).stem().string();
    std::fprintf(stderr, "%s-cell = part %zu of %zu of %s: %zu ops\n", stem.c_str(), largest,
                 partition.parts.size(), stem.c_str(), partition.parts[largest].ops.size());
    problems.push_back({absl::StrCat(stem, "-cell"), std::move(partition.parts[largest].model)});
  }
  if (options.swiftnet_like) {
    problems.push_back({"swiftnet-like", SwiftNetLike(options.swiftnet_cells, /*seed=*/2020)});
  }
  std::vector<Row> rows;
  for (const Problem& problem : problems) RunProblem(problem, options, rows);
  PrintTable(rows, options.parts);
  if (!options.csv.empty()) WriteCsv(rows, options.csv);
  if (!options.json.empty()) WriteJson(rows, options.json);
  bool ok = true;
  for (const Row& row : rows) ok = ok && row.error.empty();
  return ok ? 0 : 1;
}

}  // namespace
}  // namespace ordo

int main(int argc, char** argv) { return ordo::Main(argc, argv); }
