#ifndef ORDO_CORE_REWRITE_REWRITE_H_
#define ORDO_CORE_REWRITE_REWRITE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "core/graph/graph.h"
#include "core/memory/memory_model.h"
#include "core/rewrite/concat_conv_pattern.h"
#include "core/rewrite/pareto_front.h"
#include "core/schedule/scheduler.h"
#include "core/util/clock.h"
#include "onnx/onnx_pb.h"

namespace ordo {

// `ordo compile --rewrite none|identity|partition|all`.
enum class RewriteMode : int8_t {
  kNone,       // the model as it is
  kIdentity,   // SERENITY §3.3 identity rewrites where they lower the peak
  kPartition,  // MOTES channel partitioning and spatial tiling (dataflow
               // restructuring) of the bottleneck, under the latency budget
  kAll,        // identity first, then partition
};

// What extra work a rewrite may cost: latency = MACs / macs_per_second +
// ops * op_overhead_seconds (the DeviceSpec's figures).
struct LatencyModel {
  double macs_per_second = 1e9;
  double op_overhead_seconds = 20e-6;
};
// The figures a LatencyModel may hold (CheckRewriteCompileOptions): within
// them every latency is finite, so no overhead is NaN (an op overhead of
// 1e308 s made one).
inline constexpr double kMinMacsPerSecond = 1, kMaxMacsPerSecond = 1e18;
inline constexpr double kMaxOpOverheadSeconds = 1e3;

// Fit mode's question about a candidate beyond its peak, asked by whoever
// knows the device: does this schedule of `graph` fit it? (With memory
// pools: has it a valid placement across the banks; core/compile supplies
// that test, the search knows nothing of pools.) Asked only of candidates
// within memory_limit_bytes that could become the answer, so it may cost a
// placement.
using ScheduleFitTest = std::function<bool(const Graph& graph, const ScheduleResult& schedule)>;

// "none" / "identity" / "partition" / "all"; INVALID_ARGUMENT naming them
// otherwise.
absl::StatusOr<RewriteMode> ParseRewriteMode(absl::string_view name);
absl::string_view RewriteModeName(RewriteMode mode);

struct RewriteOptions {
  RewriteMode mode = RewriteMode::kIdentity;
  // The rules every peak is measured under (those of the compile that
  // follows).
  MemoryOptions memory;
  // Scheduler every candidate graph is scheduled with, by registry name.
  std::string scheduler = "best";
  // Wall-clock limit of each of those schedules.
  absl::Duration schedule_time_limit = absl::Seconds(5);
  // Limit of the whole search; when hit, the rewrites accepted so far are
  // kept and `time_limit_hit` is set.
  absl::Duration time_limit = absl::Seconds(120);
  GraphLimits limits;
  // Partitioning may raise the modelled latency by at most this fraction of
  // the original's (MOTES' delta).
  double max_latency_overhead = 0.05;
  // States the partition search keeps per round (MOTES' beam width; 1 is
  // greedy). Each round costs about beam_width times the schedules; values
  // below 1 mean 1.
  int32_t beam_width = 1;
  LatencyModel latency;
  // Fit mode when > 0 or `fit_test` is set: stop at the cheapest set of
  // rewrites whose schedule fits (Fits); `fits` and `bottleneck_tensors`
  // report the outcome.
  int64_t memory_limit_bytes = 0;
  // Fit mode's device test beyond the limit (e.g. memory pools); may be
  // empty.
  ScheduleFitTest fit_test;
  // Must outlive the call; null means the real clock.
  const Clock* clock = nullptr;
  // Set by another thread to stop the search like its time limit does (the
  // rewrites kept so far are returned); may be null. Must outlive the call.
  const std::atomic<bool>* cancelled = nullptr;
  // Budget for the candidates the partition search keeps for reuse (each
  // a model, with its weight data, and its graph). Over it, those no state
  // still holds are dropped (re-evaluated if proposed again); below it the
  // result is the same as with no budget.
  int64_t max_search_bytes = int64_t{512} << 20;
  // kPartition / kAll: also try patch-wise fusion of layer chains
  // (patch_fusion.h) on the partition search's result. Fused stages are
  // ai.ordo nodes (with local functions any ONNX runtime runs); off for
  // deployments whose runtime executes standard ops only.
  bool fusion = true;
  // Called as each candidate schedule starts (progress reports; a search
  // in several steps counts each step's schedules from zero, this sees
  // them all); from the searching thread. May be empty.
  std::function<void()> on_schedule_run;

  // Counts one candidate schedule in `schedules_run` and reports it.
  void CountScheduleRun(int32_t& schedules_run) const {
    ++schedules_run;
    if (on_schedule_run) on_schedule_run();
  }

  bool fit_mode() const { return memory_limit_bytes > 0 || fit_test != nullptr; }
  // Fit mode's one verdict on a candidate: its peak within
  // memory_limit_bytes (when set), then `fit_test` (when set). False
  // outside fit mode.
  bool Fits(const Graph& graph, const ScheduleResult& schedule) const;
};

// One rewrite the search kept.
struct AppliedRewrite {
  // "identity" (SERENITY concat-conv), "reassociate" (sums in schedule
  // order), "channel" (MOTES channel
  // partitioning), "spatial" (tiling over height / width with halos),
  // "fusion" (patch-wise fusion of layer chains; `convs` then names each
  // stage's first op).
  std::string kind = "identity";
  // One line for humans, e.g. "conv_3..conv_9 (7 ops) tiled 4x1 (H x W),
  // halos cached" (spatial: "halos recomputed" or "halos cached", see
  // HaloMode in spatial_tiling.h).
  std::string description;
  // identity: the Concat node that disappeared; empty otherwise.
  std::string concat;
  std::vector<std::string> convs;
  std::vector<ConvPartition> partitions;  // per entry of `convs`
  // Peak of the scheduler's schedule of the model just before and just
  // after this rewrite (re-simulated).
  int64_t peak_before_bytes = 0;
  int64_t peak_after_bytes = 0;
  // MACs and ops this rewrite added (negative when it removed some).
  int64_t extra_macs = 0;
  int32_t extra_ops = 0;
};

struct RewriteResult {
  // The rewritten model. Every node the importer would have named is named
  // as the Graph names it; nothing else differs from the input outside the
  // rewritten sites. Carries weight data exactly when the input did.
  onnx::ModelProto model;
  Graph graph;              // ImportOnnx(model)
  ScheduleResult schedule;  // of `graph`, by options.scheduler
  int64_t original_peak_bytes = 0;
  std::vector<AppliedRewrite> rewrites;  // in the order applied
  int32_t sites_found = 0;
  // Sites whose rewrite does not apply here (a weight that is not an
  // initializer, data that cannot be split, a Pad / Slice touching
  // channels); never rewritten.
  int32_t sites_skipped = 0;
  int32_t schedules_run = 0;
  bool time_limit_hit = false;
  // Cost of the input and of the result under the cost model.
  int64_t original_macs = 0;
  int64_t rewritten_macs = 0;
  int32_t original_ops = 0;
  int32_t rewritten_ops = 0;
  // (latency(result) - latency(input)) / latency(input) under options.latency.
  double latency_overhead = 0;
  // Whether the input model carried weight data (then the result does).
  bool weights_carried = false;
  // Fit mode only: whether the result fits (RewriteOptions::Fits), and
  // when not, the tensors live at the result's peak step.
  bool fits = false;
  std::vector<std::string> bottleneck_tensors;
  // The non-dominated (peak, latency overhead) models the search reached
  // (NonDominated): the input, each prefix of the rewrites kept and of the
  // routes the search tried and did not return; cheapest first.
  std::vector<ParetoPoint> pareto;
};

// Rewrites `model` to lower the peak of its best schedule (SERENITY §3.3).
//
// 1. Imports and schedules the model (options.scheduler): the peak to beat.
// 2. Finds every site: a channel Concat whose output reaches only Convs
//    through per-channel ops (concat_conv_pattern.h).
// 3. Greedy, in model order, repeated until nothing changes: apply one
//    site, re-import, re-schedule; keep it only if the peak drops.
// 4. Sites no single rewrite helps can still help together (cells of equal
//    peak in parallel: lowering one leaves the others at the peak). The
//    rest are applied at once; if that lowers the peak, each is dropped
//    again when the peak without it is no higher, and the survivors are
//    applied one by one, so every kept rewrite is needed and each is
//    reported with its own before and after.
// 5. Sums of three or more terms reassociated to add their terms in the
//    order the schedule produces them (sum_reassociation.h; identity,
//    partition and all: no extra MACs or ops), repeated on the new schedule
//    while the peak drops.
// 6. kPartition / kAll: SearchPartitions (partition_search.h) with what is
//    left of the time limit; when it stops early (nothing more helps), a
//    second, wider search (8 windows, also 6x1 and 8x1 tilings) from the
//    same start with the time left, and the better of the two (peak, then
//    latency; in fit mode: one that fits, then latency, then peak) is kept.
//
// The result never has a higher peak than the input (nothing kept
// otherwise). Each trial costs one import and one schedule: O(sites^2)
// schedules in the worst case, bounded by options.time_limit (and stopped
// like it by options.cancelled). Errors: the import's and scheduler's
// (INVALID_ARGUMENT for bad models); a site whose rewrite fails (weight
// not an initializer, data not splittable) is skipped, not an error.
// Thread-compatible; never throws.
absl::StatusOr<RewriteResult> RewriteForMemory(const onnx::ModelProto& model,
                                               const RewriteOptions& options);

}  // namespace ordo

#endif  // ORDO_CORE_REWRITE_REWRITE_H_
