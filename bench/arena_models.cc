// ordo-arena-bench: arena layouts and off-chip traffic of every .onnx model
// in a folder. Each model is scheduled by ordo (the `best` scheduler) and
// kept in model order; the arena of ordo's schedule is planned by every
// planner, and the model order's bound, TFLite arena and best arena are shown
// as the baseline.
// Then Belady traffic at several on-chip sizes, ordo's schedule against
// model order. Prints two Markdown tables.
//
//   ordo-arena-bench [DIR] [--only=SUBSTRING] [--schedule_time_limit_s=10]
//                    [--arena_time_limit_s=2] [--alignment=64]

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "bench/model_folder.h"
#include "core/arena/arena_planner_registry.h"
#include "core/compile/compile.h"
#include "core/memory/memory_model.h"
#include "core/memory/simulator.h"
#include "core/onnx/onnx_import.h"
#include "core/schedule/scheduler_registry.h"
#include "core/testing/test_paths.h"
#include "core/traffic/traffic.h"
#include "core/util/clock.h"

namespace ordo {
namespace {

constexpr int64_t kOnChipKiB[] = {64, 128, 256, 512};

struct Options {
  std::string dir = ordo::testing::SharedModelsDir();
  std::string only;
  double schedule_time_limit_s = 10;
  double arena_time_limit_s = 2;
  int64_t alignment = 64;
};

struct ArenaCell {
  int64_t arena_bytes = 0;
  double seconds = 0;
  std::string algorithm;
  bool optimal = false;
};

struct Row {
  std::string model;
  int32_t ops = 0;
  int64_t peak = 0;
  int64_t lower_bound = 0;        // aligned peak of ordo's schedule
  std::vector<ArenaCell> arenas;  // per planner, registry order
  int64_t tflite_model_order = 0;
  int64_t best_model_order = 0;
  int64_t bound_model_order = 0;
  // Per on-chip size: total traffic of ordo's schedule and of model order.
  std::vector<int64_t> traffic_ordo, traffic_model;
  int64_t fixed_bytes = 0;
  std::string error;
};

bool ParseArgs(int argc, char** argv, Options& options) {
  return bench::ParseBenchArgs(
      argc, argv, options.dir,
      {bench::StringFlag("only", options.only),
       bench::DoubleFlag("schedule_time_limit_s", options.schedule_time_limit_s),
       bench::DoubleFlag("arena_time_limit_s", options.arena_time_limit_s),
       bench::Int64Flag("alignment", options.alignment)});
}

// What `ordo compile --on-chip C` returns: Compile keeps, among schedules of
// the best peak, the one with the least traffic, and reports the model
// order's beside it.
absl::Status Traffic(const Graph& graph, const Options& options, Row& row) {
  const RealClock clock;
  for (int64_t kib : kOnChipKiB) {
    CompileOptions compile;
    compile.on_chip_bytes = kib * 1024;
    compile.alignment = options.alignment;
    compile.time_limit = absl::Seconds(options.schedule_time_limit_s);
    absl::StatusOr<CompileResult> result = Compile(graph, compile, clock);
    if (!result.ok()) return result.status();
    row.traffic_ordo.push_back(result->traffic->total_bytes);
    row.traffic_model.push_back(result->model_order_traffic->total_bytes);
    row.fixed_bytes = result->traffic->fixed_read_bytes + result->traffic->fixed_write_bytes;
  }
  return absl::OkStatus();
}

absl::Status RunModel(const std::filesystem::path& path, const Options& options, Row& row) {
  const RealClock clock;
  absl::StatusOr<std::string> bytes = bench::ReadFile(path);
  if (!bytes.ok()) return bytes.status();
  absl::StatusOr<Graph> graph = ImportOnnx(*bytes);
  if (!graph.ok()) return graph.status();
  absl::StatusOr<MemoryModel> model = BuildMemoryModel(*graph, MemoryOptions{});
  if (!model.ok()) return model.status();
  row.ops = model->num_ops();

  absl::StatusOr<std::unique_ptr<Scheduler>> scheduler = BuiltinSchedulers().Create("best");
  if (!scheduler.ok()) return scheduler.status();
  ScheduleLimits limits;
  limits.deadline = absl::Now() + absl::Seconds(options.schedule_time_limit_s);
  absl::StatusOr<ScheduleResult> scheduled = (*scheduler)->Schedule(*model, limits);
  if (!scheduled.ok()) return scheduled.status();
  std::vector<int32_t> model_order(model->num_ops());
  for (int32_t op = 0; op < model->num_ops(); ++op) model_order[op] = op;

  absl::StatusOr<SimulationResult> ours = Simulate(*model, scheduled->order);
  if (!ours.ok()) return ours.status();
  absl::StatusOr<SimulationResult> base = Simulate(*model, model_order);
  if (!base.ok()) return base.status();
  row.peak = ours->peak_bytes;

  ArenaOptions arena_options;
  arena_options.alignment = options.alignment;
  arena_options.time_limit = absl::Seconds(options.arena_time_limit_s);
  const ArenaPlannerRegistry registry = BuiltinArenaPlanners();
  for (const ArenaPlannerInfo& info : registry.planners()) {
    arena_options.planner = info.name;
    const absl::Time start = absl::Now();
    absl::StatusOr<ArenaPlan> plan = PlanArena(*model, *ours, arena_options, clock);
    if (!plan.ok()) return plan.status();
    row.lower_bound = plan->lower_bound_bytes;
    row.arenas.push_back({plan->arena_bytes, absl::ToDoubleSeconds(absl::Now() - start),
                          plan->algorithm, plan->optimal});
  }
  arena_options.planner = "tflite";
  absl::StatusOr<ArenaPlan> tflite_base = PlanArena(*model, *base, arena_options, clock);
  if (!tflite_base.ok()) return tflite_base.status();
  row.tflite_model_order = tflite_base->arena_bytes;
  row.bound_model_order = tflite_base->lower_bound_bytes;
  arena_options.planner = "best";
  absl::StatusOr<ArenaPlan> best_base = PlanArena(*model, *base, arena_options, clock);
  if (!best_base.ok()) return best_base.status();
  row.best_model_order = best_base->arena_bytes;
  return Traffic(*graph, options, row);
}

std::string Ratio(int64_t a, int64_t b) {
  return b == 0 ? "-" : absl::StrFormat("%.4f", static_cast<double>(a) / b);
}

void PrintArenaTable(const std::vector<Row>& rows) {
  const ArenaPlannerRegistry registry = BuiltinArenaPlanners();
  const std::vector<ArenaPlannerInfo>& planners = registry.planners();
  std::string header = "| model | ops | peak | lower bound (aligned) |";
  std::string rule = "|---|---|---|---|";
  for (const ArenaPlannerInfo& info : planners) {
    absl::StrAppend(&header, " ", info.name, " |");
    absl::StrAppend(&rule, "---|");
  }
  absl::StrAppend(&header,
                  " best / bound | best winner | best time s | best <= tflite |"
                  " model order: bound | tflite | best |");
  absl::StrAppend(&rule, "---|---|---|---|---|---|---|");
  std::printf("%s\n%s\n", header.c_str(), rule.c_str());
  for (const Row& row : rows) {
    if (!row.error.empty()) {
      std::printf("| %s | error: %s |\n", row.model.c_str(), row.error.c_str());
      continue;
    }
    std::string line = absl::StrCat("| ", row.model, " | ", row.ops, " | ", row.peak, " | ",
                                    row.lower_bound, " |");
    for (const ArenaCell& cell : row.arenas) absl::StrAppend(&line, " ", cell.arena_bytes, " |");
    const ArenaCell& best = row.arenas[0];
    const ArenaCell& tflite = row.arenas[1];
    absl::StrAppend(&line, " ", Ratio(best.arena_bytes, row.lower_bound), " | ", best.algorithm,
                    best.optimal ? " (optimal)" : "", " | ", absl::StrFormat("%.2f", best.seconds),
                    " | ", best.arena_bytes <= tflite.arena_bytes ? "yes" : "NO", " | ",
                    row.bound_model_order, " | ", row.tflite_model_order, " | ",
                    row.best_model_order, " |");
    std::printf("%s\n", line.c_str());
  }
}

void PrintTrafficTable(const std::vector<Row>& rows) {
  std::string header = "| model | fixed |";
  std::string rule = "|---|---|";
  for (int64_t kib : kOnChipKiB) {
    absl::StrAppend(&header, " ", kib, " KiB ordo | ", kib, " KiB model order | ", kib,
                    " KiB reduction |");
    absl::StrAppend(&rule, "---|---|---|");
  }
  std::printf("\n%s\n%s\n", header.c_str(), rule.c_str());
  std::vector<double> sum(std::size(kOnChipKiB), 0);
  std::vector<int> count(std::size(kOnChipKiB), 0);
  for (const Row& row : rows) {
    if (!row.error.empty()) continue;
    std::string line = absl::StrCat("| ", row.model, " | ", row.fixed_bytes, " |");
    for (size_t c = 0; c < std::size(kOnChipKiB); ++c) {
      const int64_t ours = row.traffic_ordo[c], base = row.traffic_model[c];
      std::string reduction = "-";
      if (base > 0) {
        const double r = 1.0 - static_cast<double>(ours) / base;
        sum[c] += r;
        ++count[c];
        reduction = absl::StrFormat("%.1f%%", 100 * r);
      }
      absl::StrAppend(&line, " ", ours, " | ", base, " | ", reduction, " |");
    }
    std::printf("%s\n", line.c_str());
  }
  std::string average = "| average reduction | |";
  for (size_t c = 0; c < std::size(kOnChipKiB); ++c) {
    absl::StrAppend(&average, " | | ",
                    count[c] ? absl::StrFormat("%.1f%%", 100 * sum[c] / count[c]) : "-", " |");
  }
  std::printf("%s\n", average.c_str());
}

int Main(int argc, char** argv) {
  Options options;
  if (!ParseArgs(argc, argv, options)) {
    std::fprintf(stderr,
                 "usage: ordo-arena-bench [DIR] [--only=S] [--schedule_time_limit_s=10] "
                 "[--arena_time_limit_s=2] [--alignment=64]\n");
    return 2;
  }
  absl::StatusOr<std::vector<std::filesystem::path>> files =
      bench::OnnxModelsIn(options.dir, options.only);
  if (!files.ok()) {
    std::fprintf(stderr, "%s\n", std::string(files.status().message()).c_str());
    return 1;
  }
  std::vector<Row> rows;
  for (const std::filesystem::path& path : *files) {
    Row row;
    row.model = path.stem().string();
    if (absl::Status status = RunModel(path, options, row); !status.ok()) {
      row.error = std::string(status.message());
    }
    std::fprintf(stderr, "%s done\n", row.model.c_str());
    rows.push_back(std::move(row));
  }
  PrintArenaTable(rows);
  PrintTrafficTable(rows);
  return 0;
}

}  // namespace
}  // namespace ordo

int main(int argc, char** argv) { return ordo::Main(argc, argv); }
