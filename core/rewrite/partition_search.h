#ifndef ORDO_CORE_REWRITE_PARTITION_SEARCH_H_
#define ORDO_CORE_REWRITE_PARTITION_SEARCH_H_

#include <cstdint>
#include <memory>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/graph/graph.h"
#include "core/memory/memory_model.h"
#include "core/rewrite/cost_model.h"
#include "core/rewrite/rewrite.h"
#include "core/schedule/scheduler.h"
#include "onnx/onnx_pb.h"

namespace ordo {

// A model with its graph, its schedule by the search's scheduler and its cost.
struct EvaluatedModel {
  onnx::ModelProto model;  // nodes named as `graph` names them
  Graph graph;             // ImportOnnx(model)
  ScheduleResult schedule;
  GraphCost cost;
  int32_t peak_step = -1;     // first step at the peak
  int32_t steps_at_peak = 0;  // steps whose footprint equals the peak
  // Activation tensors live at `peak_step`, largest first.
  std::vector<TensorId> peak_tensors;
  // Scheduled with the full options.schedule_time_limit (not screened).
  bool full = true;
  // options.Fits(graph, schedule), computed once by the evaluator: in pools
  // fit mode it runs a placement, which every ranking would repeat.
  bool fits = false;
  int64_t peak() const { return schedule.peak_bytes; }
};

// Imports, schedules (options.scheduler, each schedule bounded by
// options.schedule_time_limit and by what is left of options.time_limit)
// and costs models, remembering results by a caller-chosen key (the
// sequence of rewrites that produced the model), so a candidate reached
// twice is scheduled once. Not thread-safe; `options` and `scheduler` must
// outlive it.
class ModelEvaluator {
 public:
  ModelEvaluator(const RewriteOptions& options, const Scheduler& scheduler);

  // Names the model's nodes as the graph does (NameNodesAsGraph) first.
  // Errors: the import's and scheduler's.
  // `schedule_time_limit` (when positive) replaces options.schedule_time_limit
  // for this schedule: the search screens candidates with a short one.
  absl::StatusOr<std::shared_ptr<const EvaluatedModel>> Evaluate(
      onnx::ModelProto model, const std::string& key,
      absl::Duration schedule_time_limit = absl::ZeroDuration());
  // `evaluated` scheduled again with the full options.schedule_time_limit;
  // keeps whichever of the two schedules has the lower peak (never worse).
  // Cached under `key` (which must differ from the screened one's).
  absl::StatusOr<std::shared_ptr<const EvaluatedModel>> Refine(
      std::shared_ptr<const EvaluatedModel> evaluated, const std::string& key);
  // An already scheduled model (no schedule run): `graph` is
  // ImportOnnx(model), `schedule` one of its schedules.
  absl::StatusOr<std::shared_ptr<const EvaluatedModel>> Adopt(onnx::ModelProto model, Graph graph,
                                                              ScheduleResult schedule,
                                                              const std::string& key);
  absl::Time Now() const;
  // The time limit is hit or options.cancelled is set.
  bool Expired() const;
  int32_t schedules_run() const { return schedules_run_; }
  const RewriteOptions& options() const { return options_; }
  // Results kept for reuse, and their estimated bytes (models with their
  // weight data, graphs, schedules). Whenever the bytes exceed
  // options.max_search_bytes, the results no caller still holds are
  // dropped (O(cache) per insertion while over the budget).
  int32_t cache_size() const { return static_cast<int32_t>(cache_.size()); }
  int64_t cached_bytes() const { return cached_bytes_; }

 private:
  absl::StatusOr<ScheduleResult> RunScheduler(const MemoryModel& memory, absl::Duration limit);
  absl::StatusOr<std::shared_ptr<const EvaluatedModel>> Finish(
      std::shared_ptr<EvaluatedModel> result, const MemoryModel& memory, const std::string& key);
  // Caches `evaluated` under `key` (`bytes` is its estimated size; 0 for a
  // second key of a cached result), then enforces the budget.
  void Remember(const std::string& key, std::shared_ptr<const EvaluatedModel> evaluated,
                int64_t bytes);

  const RewriteOptions& options_;
  const Scheduler& scheduler_;
  absl::Time start_;
  int32_t schedules_run_ = 0;
  struct CacheEntry {
    std::shared_ptr<const EvaluatedModel> evaluated;
    int64_t bytes = 0;
  };
  absl::flat_hash_map<std::string, CacheEntry> cache_;
  int64_t cached_bytes_ = 0;
};

// How the rewrite searches compare two models they reached, smaller
// first: in fit mode one that fits (options.Fits), then the lowest latency
// over `original`, then the lowest peak; otherwise (or when neither fits)
// the lowest peak, then the lowest latency.
std::tuple<bool, double, double> RankModel(const EvaluatedModel& m, const GraphCost& original,
                                           const RewriteOptions& options);

// Knobs of the search (defaults follow MOTES §5 and the dataflow-
// restructuring paper's alpha).
struct PartitionSearchOptions {
  // 1 (greedy) by default: under a time limit of a minute or two, going
  // deeper on one state lowers the peak further than keeping two.
  int32_t beam_width = 1;
  // The search stops here too (besides the evaluator's time limit), so that
  // steps after it keep some of the time.
  absl::Time deadline = absl::InfiniteFuture();
  // Channel slices tried for each Conv that starts a chain through a
  // bottleneck tensor.
  std::vector<int32_t> channel_parts = {2, 3, 4, 6, 8};
  // Spatial tilings (parts over H, parts over W) tried per region.
  std::vector<std::pair<int32_t, int32_t>> tilings = {{2, 1}, {3, 1}, {4, 1},
                                                      {2, 2}, {4, 2}, {4, 4}};
  // Critical subgraph: ops around the peak op whose own step needs at least
  // alpha x peak bytes.
  double alpha = 0.5;
  // Bottleneck tensors (largest live at the peak step) candidates start from.
  int32_t bottleneck_tensors = 4;
  // Also proposed: this many windows of consecutive ops around the peak op
  // with the lightest boundary (inputs + outputs kept whole).
  int32_t windows = 3;
  int32_t max_rounds = 200;
  bool spatial = true;
  // Candidates are first scheduled with this per-schedule limit (screening:
  // most of a rewritten graph is solved at once, and the exact search on a
  // tiled part runs to its limit); a candidate whose screened peak already
  // beats its state's is kept, and kept states are re-scheduled with the
  // full limit (Refine). When no candidate of a round beats it, the
  // `confirm` best screened ones are re-scheduled with the full limit
  // before giving up. Zero: every candidate gets the full limit.
  absl::Duration screen_time_limit = absl::Milliseconds(250);
  int32_t confirm = 2;
};

struct PartitionSearchResult {
  std::shared_ptr<const EvaluatedModel> best;
  // Kept rewrites, in order; each lowers the peak (rewrites that only
  // lowered the number of steps at an unchanged peak are reported together
  // with the one that then lowered it).
  std::vector<AppliedRewrite> rewrites;
  bool time_limit_hit = false;
  bool fits = false;  // fit mode: options.Fits(best)
  int32_t candidates_evaluated = 0;
  int32_t over_latency_budget = 0;  // candidates dropped for delta
};

// MOTES' memory-bottleneck-aware beam search (Alg. 1) under the latency
// constraint delta = options.max_latency_overhead (relative to `baseline`,
// the input model's cost):
//
// 1. For each state of the beam (start: `start`), take the op at the peak
//    step and the largest tensors live there (the bottleneck).
// 2. Propose: early subsampling of every shift chain (early_subsample.h,
//    all sites as one identity rewrite at no extra MACs); channel splits
//    (channel_split.h) of each group-1 Conv whose
//    chain of per-channel ops reaches a bottleneck tensor, in
//    `channel_parts` slices; spatial tilings (spatial_tiling.h) of the
//    critical subgraph around the peak op (dataflow restructuring: ops
//    needing >= alpha x peak, grown by 0..2 layers of neighbours) and of the
//    windows of consecutive ops around it with the lightest boundary, each
//    region checked with the Axis Connecting Graph, per `tilings`. A tiling
//    whose recomputed halos alone (SpatialTilingExtraMacs) would take the
//    state over delta is not proposed. Each tiling over H that recomputes
//    halos also has a cached-halo twin (no extra MACs, halos kept live
//    between tiles), screened in a second pass only when no other proposal
//    lowers the peak; the measured peak and the cost model then choose.
// 3. Evaluate each (apply, re-import, screen: a schedule bounded by
//    search.screen_time_limit, cost). Keep those within delta that lower the
//    peak, or keep it with fewer steps at it; when none does, re-schedule the
//    `confirm` best screened ones with the full limit first. The next beam
//    is the best `beam_width` by (peak, steps at peak, latency), each
//    re-scheduled with the full limit (ModelEvaluator::Refine).
// 4. Repeat until no candidate is kept, the time limit, or max_rounds. Fit
//    mode (options.fit_mode()): stop at the first round with a candidate
//    that fits (RewriteOptions::Fits: within the limit, and the device's
//    own test, e.g. a placement across memory pools) and take the cheapest
//    (latency) of those.
// The result never has a higher peak than `start`. Each round costs
// O(beam x candidates) schedules. Errors: the evaluator's for `start`;
// candidates that fail to apply or import are skipped.
absl::StatusOr<PartitionSearchResult> SearchPartitions(
    const std::shared_ptr<const EvaluatedModel>& start, const GraphCost& baseline,
    const PartitionSearchOptions& search, ModelEvaluator& evaluator);

// Names every node the importer names, as `graph` names it.
void NameNodesAsGraph(const Graph& graph, onnx::ModelProto& model);

}  // namespace ordo

#endif  // ORDO_CORE_REWRITE_PARTITION_SEARCH_H_
