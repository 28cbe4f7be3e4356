// ordo-rewrite-bench: the peak of the best schedule of each NAS model of
// ../shared/models, before and after SERENITY's identity rewrites (§3.3,
// core/rewrite), side by side in one process. Every result is checked
// before it is printed: the rewritten model re-imports, and the simulator's
// peak of the returned schedule on it is the reported one.
//
//   ordo-rewrite-bench [MODEL.onnx ...] [--dir=DIR] [--schedule_time_limit_s=5]
//                      [--time_limit_s=300] [--scheduler=best] [--rewrites]
//                      [--rewrite=identity|partition|all] [--max_latency_overhead=0.05]
//                      [--msf]
//
// Default models: amoeba, darts, nasnet (cifar and imagenet) and pnas_cifar
// from DIR (default: ../shared/models). --rewrites lists each kept rewrite.
//
// --rewrite=all|partition (issue 9): per model, the model-order peak, the
// best schedule's peak, + identity rewrites, + MOTES partitioning (channel
// splits and spatial tilings under the latency budget), the arena of the
// final schedule, extra MACs, modelled latency overhead and compile time;
// then the average reduction over the ImageNet-size models (every model
// whose name does not end in _cifar). Default models there: every model
// of DIR.
//
// --msf (issue 18): the three msf-CNN models of DIR/msf against msf-CNN's
// points, in both accountings (RunMsf).

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/arena/arena_plan.h"
#include "core/arena/arena_planner_registry.h"
#include "core/memory/memory_model.h"
#include "core/memory/simulator.h"
#include "core/onnx/onnx_import.h"
#include "core/rewrite/rewrite.h"
#include "core/testing/test_paths.h"
#include "core/util/clock.h"
#include "core/util/status_macros.h"
#include "onnx/onnx_pb.h"

namespace ordo {
namespace {

struct Args {
  std::vector<std::string> models;
  std::string dir = ordo::testing::SharedModelsDir();
  double schedule_time_limit_s = 5;
  double time_limit_s = 300;
  std::string scheduler = "best";
  bool list_rewrites = false;
  std::string rewrite = "identity";
  double max_latency_overhead = 0.05;
  bool msf = false;
};

bool ParseArgs(int argc, char** argv, Args& args) {
  for (int i = 1; i < argc; ++i) {
    const std::string arg = argv[i];
    auto value = [&arg](absl::string_view flag) -> std::optional<std::string> {
      if (!absl::StartsWith(arg, flag)) return std::nullopt;
      return arg.substr(flag.size());
    };
    if (auto v = value("--dir=")) {
      args.dir = *v;
    } else if (auto v = value("--schedule_time_limit_s=")) {
      if (!absl::SimpleAtod(*v, &args.schedule_time_limit_s)) return false;
    } else if (auto v = value("--time_limit_s=")) {
      if (!absl::SimpleAtod(*v, &args.time_limit_s)) return false;
    } else if (auto v = value("--scheduler=")) {
      args.scheduler = *v;
    } else if (auto v = value("--rewrite=")) {
      args.rewrite = *v;
    } else if (auto v = value("--max_latency_overhead=")) {
      if (!absl::SimpleAtod(*v, &args.max_latency_overhead)) return false;
    } else if (arg == "--msf") {
      args.msf = true;
    } else if (arg == "--rewrites") {
      args.list_rewrites = true;
    } else if (absl::StartsWith(arg, "--")) {
      return false;
    } else {
      args.models.push_back(arg);
    }
  }
  if (args.models.empty() && args.rewrite != "identity") {
    std::vector<std::string> all;
    for (const auto& entry : std::filesystem::directory_iterator(args.dir)) {
      if (entry.path().extension() == ".onnx") all.push_back(entry.path().string());
    }
    std::sort(all.begin(), all.end());
    args.models = all;
  }
  if (args.models.empty()) {
    for (const char* name : {"amoeba_cifar", "amoeba_imagenet", "darts_cifar", "darts_imagenet",
                             "nasnet_cifar", "nasnet_imagenet", "pnas_cifar"}) {
      args.models.push_back(absl::StrCat(args.dir, "/", name, ".onnx"));
    }
  }
  return true;
}

absl::StatusOr<onnx::ModelProto> ReadModel(const std::string& path, std::string& bytes) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return absl::NotFoundError(absl::StrCat(path, ": cannot read"));
  std::stringstream buffer;
  buffer << file.rdbuf();
  bytes = buffer.str();
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) {
    return absl::InvalidArgumentError(absl::StrCat(path, ": not an ONNX model"));
  }
  return model;
}

// The rewritten model re-imported, with its memory model and the simulation
// of the returned schedule on it; an error unless the simulated peak is the
// reported one. Nothing is printed that did not pass this.
struct VerifiedRewrite {
  Graph graph;
  MemoryModel memory;
  SimulationResult simulation;
};

absl::StatusOr<VerifiedRewrite> Verify(const RewriteResult& result, const MemoryOptions& options) {
  std::string bytes;
  result.model.SerializeToString(&bytes);
  VerifiedRewrite verified;
  ORDO_ASSIGN_OR_RETURN(verified.graph, ImportOnnx(bytes));
  ORDO_ASSIGN_OR_RETURN(verified.memory, BuildMemoryModel(verified.graph, options));
  ORDO_ASSIGN_OR_RETURN(verified.simulation, Simulate(verified.memory, result.schedule.order));
  if (verified.simulation.peak_bytes != result.schedule.peak_bytes) {
    return absl::InternalError(absl::StrCat("simulated peak ", verified.simulation.peak_bytes,
                                            " != reported ", result.schedule.peak_bytes));
  }
  return verified;
}

// The issue-9 table: one row per model, all rewrites.
int RunPartition(const Args& args, RewriteMode mode) {
  RewriteOptions options;
  options.mode = mode;
  options.scheduler = args.scheduler;
  options.schedule_time_limit = absl::Seconds(args.schedule_time_limit_s);
  options.time_limit = absl::Seconds(args.time_limit_s);
  options.max_latency_overhead = args.max_latency_overhead;
  std::printf(
      "| model | model order peak | `%s` peak | + identity | + partitioning | reduction | "
      "arena | extra MACs | latency overhead | rewrites | schedules | time |\n",
      args.scheduler.c_str());
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|---|\n");
  double reduction_sum = 0;
  int counted = 0;
  int failures = 0;
  for (const std::string& path : args.models) {
    const std::string name = std::filesystem::path(path).stem().string();
    std::string bytes;
    absl::StatusOr<onnx::ModelProto> model = ReadModel(path, bytes);
    if (!model.ok()) {
      std::fprintf(stderr, "%s\n", model.status().ToString().c_str());
      ++failures;
      continue;
    }
    int64_t model_order_peak = 0;
    if (absl::StatusOr<Graph> original = ImportOnnx(bytes); original.ok()) {
      if (absl::StatusOr<MemoryModel> m = BuildMemoryModel(*original, options.memory); m.ok()) {
        std::vector<int32_t> order(original->num_ops());
        for (int32_t i = 0; i < original->num_ops(); ++i) order[i] = i;
        model_order_peak = SimulatePeak(*m, order).value_or(0);
      }
    }
    const absl::Time start = absl::Now();
    absl::StatusOr<RewriteResult> result = RewriteForMemory(*model, options);
    const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
    if (!result.ok()) {
      std::fprintf(stderr, "%s: %s\n", name.c_str(), result.status().ToString().c_str());
      ++failures;
      continue;
    }
    absl::StatusOr<VerifiedRewrite> verified = Verify(*result, options.memory);
    if (!verified.ok()) {
      std::fprintf(stderr, "%s: verification failed: %s\n", name.c_str(),
                   verified.status().ToString().c_str());
      ++failures;
      continue;
    }
    absl::StatusOr<ArenaPlan> arena = PlanArena(verified->memory, verified->simulation, ArenaOptions{}, RealClock());
    int64_t identity_peak = result->original_peak_bytes;
    for (const AppliedRewrite& r : result->rewrites) {
      // Both kinds of identity rewrite: SERENITY's concat-conv and sums.
      if (r.kind == "identity" || r.kind == "reassociate") identity_peak = r.peak_after_bytes;
    }
    const int64_t final_peak = result->schedule.peak_bytes;
    const double reduction = 100.0 * (result->original_peak_bytes - final_peak) /
                             static_cast<double>(result->original_peak_bytes);
    const bool imagenet = !absl::EndsWith(name, "_cifar");
    if (imagenet) {
      reduction_sum += reduction;
      ++counted;
    }
    const double extra_macs = result->original_macs > 0
                                  ? 100.0 * (result->rewritten_macs - result->original_macs) /
                                        static_cast<double>(result->original_macs)
                                  : 0;
    std::printf(
        "| %s | %lld | %lld | %lld | **%lld** | %.1f%% | %s | %+.2f%% | %+.2f%% | %zu | %d | "
        "%.1f s%s |\n",
        name.c_str(), static_cast<long long>(model_order_peak),
        static_cast<long long>(result->original_peak_bytes), static_cast<long long>(identity_peak),
        static_cast<long long>(final_peak), reduction,
        arena.ok() ? absl::StrCat(arena->arena_bytes).c_str() : "error", extra_macs,
        100.0 * result->latency_overhead, result->rewrites.size(), result->schedules_run, seconds,
        result->time_limit_hit ? " (limit)" : "");
    if (args.list_rewrites) {
      for (const AppliedRewrite& r : result->rewrites) {
        std::printf("|   %s: %s | | %lld | %lld | | | | %+lld MACs, %+d ops | | | | |\n",
                    r.kind.c_str(), r.kind == "identity" ? r.concat.c_str() : r.description.c_str(),
                    static_cast<long long>(r.peak_before_bytes),
                    static_cast<long long>(r.peak_after_bytes),
                    static_cast<long long>(r.extra_macs), r.extra_ops);
      }
    }
    std::fflush(stdout);
  }
  if (counted > 0) {
    std::printf("\naverage peak reduction vs `%s` over %d ImageNet-size models: %.1f%%\n",
                args.scheduler.c_str(), counted, reduction_sum / counted);
  }
  return failures == 0 ? 0 : 1;
}

// msf-CNN's points (../shared/models/msf/README.md): least bytes at a MAC
// factor (fused MACs / original MACs), per accounting.
struct MsfPoint {
  int64_t bytes;
  double mac_factor;
};
struct MsfModel {
  const char* file;
  std::vector<MsfPoint> io_counted;    // their solver re-run, I/O counted
  std::vector<MsfPoint> io_outside;    // as published, I/O not counted
};

const std::vector<MsfModel>& MsfModels() {
  static const auto* models = new std::vector<MsfModel>{
      {"msf_mbv2_w035_r144",
       {{119232, 1.02}, {73243, 1.19}, {69311, 1.43}},
       {{67905, 1.10}, {19418, 1.38}, {15340, 1.38}, {7887, 1.68}}},
      {"msf_mcunet_320kb_r176",
       {{216832, 1.04}, {156672, 1.37}, {155103, 1.45}, {125875, 1.56}},
       {{190096, 1.04}, {156672, 1.37}, {154880, 1.45}, {66304, 1.66}, {42643, 2.69}}},
      {"msf_mcunetv2_vww_r80",
       {{44800, 1.02}, {26491, 1.11}},
       {{32792, 1.04}, {13376, 1.35}, {12000, 1.96}}},
  };
  return *models;
}

// ordo's lowest peak within `mac_factor`, from the Pareto front; 0 if none.
const ParetoPoint* BestWithin(const std::vector<ParetoPoint>& front, double mac_factor) {
  const ParetoPoint* best = nullptr;
  for (const ParetoPoint& point : front) {
    if (point.mac_overhead <= mac_factor - 1 + 1e-9 &&
        (best == nullptr || point.peak_bytes < best->peak_bytes)) {
      best = &point;
    }
  }
  return best;
}

// Issue 18: per msf-CNN model and accounting, one partition search up to
// the largest MAC factor of that accounting's points (int8 activations, op
// overhead 0, so latency overhead = MAC overhead), its Pareto front, and per
// msf-CNN point ordo's lowest peak within that factor and the ratio.
int RunMsf(const Args& args) {
  std::printf("| model | accounting | msf-CNN point | ordo (lowest peak within the factor) | "
              "ratio | ordo front | time |\n");
  std::printf("|---|---|---|---|---|---|---|\n");
  int failures = 0;
  int over = 0;
  int points = 0;
  for (const MsfModel& msf : MsfModels()) {
    const std::string path = absl::StrCat(args.dir, "/msf/", msf.file, ".onnx");
    std::string bytes;
    absl::StatusOr<onnx::ModelProto> model = ReadModel(path, bytes);
    if (!model.ok()) {
      std::fprintf(stderr, "%s\n", model.status().ToString().c_str());
      ++failures;
      continue;
    }
    for (const bool outside : {false, true}) {
      const std::vector<MsfPoint>& targets = outside ? msf.io_outside : msf.io_counted;
      double largest = 1;
      for (const MsfPoint& p : targets) largest = std::max(largest, p.mac_factor);
      RewriteOptions options;
      options.mode = RewriteMode::kPartition;
      options.scheduler = args.scheduler;
      options.schedule_time_limit = absl::Seconds(args.schedule_time_limit_s);
      options.time_limit = absl::Seconds(args.time_limit_s);
      options.max_latency_overhead = largest - 1;
      options.latency.op_overhead_seconds = 0;
      options.memory.activation_element_bytes = 1;
      options.memory.io_outside_arena = outside;
      const absl::Time start = absl::Now();
      absl::StatusOr<RewriteResult> result = RewriteForMemory(*model, options);
      const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
      if (!result.ok()) {
        std::fprintf(stderr, "%s: %s\n", msf.file, result.status().ToString().c_str());
        ++failures;
        continue;
      }
      if (absl::StatusOr<VerifiedRewrite> verified = Verify(*result, options.memory);
          !verified.ok()) {
        std::fprintf(stderr, "%s: verification failed: %s\n", msf.file,
                     verified.status().ToString().c_str());
        ++failures;
        continue;
      }
      std::vector<std::string> front;
      for (const ParetoPoint& p : result->pareto) {
        front.push_back(absl::StrFormat("%d @%.2f", p.peak_bytes, 1 + p.mac_overhead));
      }
      for (const MsfPoint& target : targets) {
        const ParetoPoint* ours = BestWithin(result->pareto, target.mac_factor);
        const double ratio =
            ours != nullptr ? static_cast<double>(ours->peak_bytes) / target.bytes : 0;
        ++points;
        if (ours == nullptr || ratio > 1.0) ++over;
        std::printf("| %s | %s | %lld @%.2f | %s | %s | %s | %.1f s%s |\n", msf.file,
                    outside ? "I/O outside (published)" : "I/O counted",
                    static_cast<long long>(target.bytes), target.mac_factor,
                    ours != nullptr ? absl::StrFormat("%d @%.2f", ours->peak_bytes,
                                                      1 + ours->mac_overhead)
                                          .c_str()
                                    : "-",
                    ours != nullptr ? absl::StrFormat("%.2f", ratio).c_str() : "-",
                    absl::StrJoin(front, "; ").c_str(), seconds,
                    result->time_limit_hit ? " (limit)" : "");
        front.clear();  // printed once per search
      }
      std::fflush(stdout);
    }
  }
  std::printf("\nmsf-CNN points ordo does not reach (ratio > 1.00): %d of %d\n", over, points);
  return failures == 0 ? 0 : 1;
}

int Run(const Args& args) {
  if (args.msf) return RunMsf(args);
  if (args.rewrite != "identity") {
    absl::StatusOr<RewriteMode> mode = ParseRewriteMode(args.rewrite);
    if (!mode.ok()) {
      std::fprintf(stderr, "%s\n", mode.status().ToString().c_str());
      return 2;
    }
    return RunPartition(args, *mode);
  }
  RewriteOptions options;
  options.scheduler = args.scheduler;
  options.schedule_time_limit = absl::Seconds(args.schedule_time_limit_s);
  options.time_limit = absl::Seconds(args.time_limit_s);
  std::printf(
      "| model | ops | ops after | sites | rewrites kept | `%s` peak | + identity rewrites | "
      "status after | reduction | schedules | time |\n",
      args.scheduler.c_str());
  std::printf("|---|---|---|---|---|---|---|---|---|---|---|\n");
  double reduction_sum = 0;
  int counted = 0;
  int failures = 0;
  for (const std::string& path : args.models) {
    const std::string name = std::filesystem::path(path).stem().string();
    std::string bytes;
    absl::StatusOr<onnx::ModelProto> model = ReadModel(path, bytes);
    if (!model.ok()) {
      std::fprintf(stderr, "%s\n", model.status().ToString().c_str());
      ++failures;
      continue;
    }
    const absl::Time start = absl::Now();
    absl::StatusOr<RewriteResult> result = RewriteForMemory(*model, options);
    const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
    if (!result.ok()) {
      std::fprintf(stderr, "%s: %s\n", name.c_str(), result.status().ToString().c_str());
      ++failures;
      continue;
    }
    absl::StatusOr<VerifiedRewrite> verified = Verify(*result, options.memory);
    if (!verified.ok()) {
      std::fprintf(stderr, "%s: verification failed: %s\n", name.c_str(),
                   verified.status().ToString().c_str());
      ++failures;
      continue;
    }
    int32_t original_ops = 0;
    if (absl::StatusOr<Graph> original = ImportOnnx(bytes); original.ok()) {
      original_ops = original->num_ops();
    }
    const double reduction = 100.0 * (result->original_peak_bytes - result->schedule.peak_bytes) /
                             static_cast<double>(result->original_peak_bytes);
    reduction_sum += reduction;
    ++counted;
    std::printf("| %s | %d | %d | %d | %zu | %lld | **%lld** | %s | %.1f%% | %d | %.1f s%s |\n",
                name.c_str(), original_ops, verified->graph.num_ops(), result->sites_found,
                result->rewrites.size(), static_cast<long long>(result->original_peak_bytes),
                static_cast<long long>(result->schedule.peak_bytes),
                std::string(ScheduleStatusName(result->schedule.status)).c_str(), reduction,
                result->schedules_run, seconds, result->time_limit_hit ? " (limit)" : "");
    if (args.list_rewrites) {
      for (const AppliedRewrite& applied : result->rewrites) {
        std::vector<std::string> kinds;
        for (ConvPartition p : applied.partitions) kinds.emplace_back(ConvPartitionName(p));
        std::printf("|   %s -> %s (%s) | | | | | %lld | %lld | | | | |\n", applied.concat.c_str(),
                    absl::StrJoin(applied.convs, ", ").c_str(), absl::StrJoin(kinds, ", ").c_str(),
                    static_cast<long long>(applied.peak_before_bytes),
                    static_cast<long long>(applied.peak_after_bytes));
      }
    }
    std::fflush(stdout);
  }
  if (counted > 0) {
    std::printf("\naverage extra reduction over %d models: %.1f%%\n", counted,
                reduction_sum / counted);
  }
  return failures == 0 ? 0 : 1;
}

}  // namespace
}  // namespace ordo

int main(int argc, char** argv) {
  ordo::Args args;
  if (!ordo::ParseArgs(argc, argv, args)) {
    std::fprintf(stderr,
                 "usage: ordo-rewrite-bench [MODEL.onnx ...] [--dir=DIR] "
                 "[--schedule_time_limit_s=5] [--time_limit_s=300] [--scheduler=best] "
                 "[--rewrites] [--rewrite=identity|partition|all] "
                 "[--max_latency_overhead=0.05] [--msf]\n");
    return 2;
  }
  return ordo::Run(args);
}
