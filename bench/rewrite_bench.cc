// ordo-rewrite-bench: the peak of the best schedule of each NAS model of
// ../shared/models, before and after SERENITY's identity rewrites (§3.3,
// core/rewrite), side by side in one process. Every result is checked
// before it is printed: the rewritten model re-imports, and the simulator's
// peak of the returned schedule on it is the reported one.
//
//   ordo-rewrite-bench [MODEL.onnx ...] [--dir=DIR] [--schedule_time_limit_s=5]
//                      [--time_limit_s=300] [--scheduler=best] [--rewrites]
//
// Default models: amoeba, darts, nasnet (cifar and imagenet) and pnas_cifar
// from DIR (default: ../shared/models). --rewrites lists each kept rewrite.

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/memory/memory_model.h"
#include "core/memory/simulator.h"
#include "core/onnx/onnx_import.h"
#include "core/rewrite/rewrite.h"
#include "onnx/onnx_pb.h"

namespace ordo {
namespace {

struct Args {
  std::vector<std::string> models;
  std::string dir = ORDO_SHARED_MODELS_DIR;
  double schedule_time_limit_s = 5;
  double time_limit_s = 300;
  std::string scheduler = "best";
  bool list_rewrites = false;
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
    } else if (arg == "--rewrites") {
      args.list_rewrites = true;
    } else if (absl::StartsWith(arg, "--")) {
      return false;
    } else {
      args.models.push_back(arg);
    }
  }
  if (args.models.empty()) {
    for (const char* name : {"amoeba_cifar", "amoeba_imagenet", "darts_cifar", "darts_imagenet",
                             "nasnet_cifar", "nasnet_imagenet", "pnas_cifar"}) {
      args.models.push_back(absl::StrCat(args.dir, "/", name, ".onnx"));
    }
  }
  return true;
}

int Run(const Args& args) {
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
    std::ifstream file(path, std::ios::binary);
    if (!file) {
      std::fprintf(stderr, "%s: cannot read (skipped)\n", path.c_str());
      continue;
    }
    std::stringstream bytes;
    bytes << file.rdbuf();
    onnx::ModelProto model;
    if (!model.ParseFromString(bytes.str())) {
      std::fprintf(stderr, "%s: not an ONNX model\n", path.c_str());
      ++failures;
      continue;
    }
    const absl::Time start = absl::Now();
    absl::StatusOr<RewriteResult> result = RewriteForMemory(model, options);
    const double seconds = absl::ToDoubleSeconds(absl::Now() - start);
    if (!result.ok()) {
      std::fprintf(stderr, "%s: %s\n", name.c_str(), result.status().ToString().c_str());
      ++failures;
      continue;
    }
    // Verify: the rewritten model re-imports to the same graph size and the
    // simulator agrees with the reported peak.
    std::string rewritten_bytes;
    result->model.SerializeToString(&rewritten_bytes);
    absl::StatusOr<Graph> reimported = ImportOnnx(rewritten_bytes);
    absl::StatusOr<MemoryModel> memory = reimported.ok()
                                             ? BuildMemoryModel(*reimported, options.memory)
                                             : absl::StatusOr<MemoryModel>(reimported.status());
    absl::StatusOr<int64_t> peak = memory.ok() ? SimulatePeak(*memory, result->schedule.order)
                                               : absl::StatusOr<int64_t>(memory.status());
    if (!peak.ok() || *peak != result->schedule.peak_bytes) {
      std::fprintf(stderr, "%s: verification failed: %s\n", name.c_str(),
                   peak.ok() ? "peak mismatch" : peak.status().ToString().c_str());
      ++failures;
      continue;
    }
    int32_t original_ops = 0;
    if (absl::StatusOr<Graph> original = ImportOnnx(bytes.str()); original.ok()) {
      original_ops = original->num_ops();
    }
    const double reduction = 100.0 * (result->original_peak_bytes - result->schedule.peak_bytes) /
                             static_cast<double>(result->original_peak_bytes);
    reduction_sum += reduction;
    ++counted;
    std::printf("| %s | %d | %d | %d | %zu | %lld | **%lld** | %s | %.1f%% | %d | %.1f s%s |\n",
                name.c_str(), original_ops, reimported->num_ops(), result->sites_found,
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
                 "[--rewrites]\n");
    return 2;
  }
  return ordo::Run(args);
}
