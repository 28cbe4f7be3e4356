#include "core/rewrite/fusion_search.h"

#include <algorithm>
#include <array>
#include <cstdint>
#include <string>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/memory/memory_model.h"
#include "core/rewrite/patch_fusion.h"
#include "core/rewrite/region_fusion.h"
#include "core/util/status_macros.h"

namespace ordo {
namespace {

// Up to `max_plans` indices of `plans` (sorted by chain peak): the lowest
// half first, the rest spread evenly over what remains.
std::vector<size_t> Pick(size_t count, int32_t max_plans) {
  std::vector<size_t> picked;
  const size_t limit = static_cast<size_t>(std::max(1, max_plans));
  if (count <= limit) {
    for (size_t i = 0; i < count; ++i) picked.push_back(i);
    return picked;
  }
  const size_t first = limit / 2;
  for (size_t i = 0; i < first; ++i) picked.push_back(i);
  const size_t rest = limit - first;
  for (size_t k = 1; k <= rest; ++k) picked.push_back(first + (count - first - 1) * k / rest);
  return picked;
}

std::string Describe(const Graph& graph, const FusionPlan& plan) {
  std::vector<std::string> stages;
  for (const FusedStage& stage : plan.stages) stages.push_back(DescribeStage(graph, stage));
  return absl::StrCat("patch-wise fusion of ", plan.stages.size(),
                      " stage(s): ", absl::StrJoin(stages, "; "));
}

// Regions, each with the column strips it runs in (region_fusion.h).
struct Regions {
  std::vector<std::vector<OpId>> ops;
  std::vector<int32_t> strips;
};

std::string DescribeRegions(const Graph& graph, const Regions& regions) {
  std::vector<std::string> parts;
  int32_t ops = 0;
  for (const std::vector<OpId>& region : regions.ops) ops += static_cast<int32_t>(region.size());
  for (size_t r = 0; r < regions.ops.size() && r < 3; ++r) {
    const std::vector<OpId>& region = regions.ops[r];
    parts.push_back(absl::StrCat(
        graph.op(region.front()).name, "..", graph.op(region.back()).name, " (", region.size(),
        " ops", regions.strips[r] > 1 ? absl::StrCat(", ", regions.strips[r], " strips") : "",
        ")"));
  }
  if (regions.ops.size() > 3) parts.push_back(absl::StrCat("and ", regions.ops.size() - 3, " more"));
  return absl::StrCat("line-buffered fusion of ", regions.ops.size(), " region(s), ", ops,
                      " ops across branches and joins: ", absl::StrJoin(parts, "; "));
}

// `regions` with `t` made internal (InternalizeTensor); the regions not
// merged keep their strips, the merged one runs in one (GrowRegion picks).
std::optional<Regions> Internalize(const Graph& graph, const StreamWindows& windows,
                                   const Regions& regions, TensorId t) {
  std::optional<std::vector<std::vector<OpId>>> ops =
      InternalizeTensor(graph, windows, regions.ops, t);
  if (!ops) return std::nullopt;
  absl::flat_hash_map<OpId, int32_t> strips_of;  // by a region's first op
  for (size_t r = 0; r < regions.ops.size(); ++r) {
    strips_of[regions.ops[r].front()] = regions.strips[r];
  }
  Regions next{*std::move(ops), {}};
  for (size_t r = 0; r + 1 < next.ops.size(); ++r) {
    next.strips.push_back(strips_of.at(next.ops[r].front()));
  }
  next.strips.push_back(1);
  return next;
}

// Regions grown by GrowRegion, and the step of the one grown.
struct GrownRegions {
  Regions regions;
  int64_t step_bytes = 0;
};

// The strip counts a grown region tries, fewest (least recomputed) first.
constexpr std::array<int32_t, 6> kStrips = {1, 2, 3, 4, 6, 8};

// `regions` with `t` made internal, then the region it is in grown, one
// boundary tensor at a time (the largest that can be made internal), until
// the region's own step is below `target`: at each size the fewest column
// strips that get there with at most `max_extra_macs` recomputed, else a
// larger region. nullopt when it cannot get there in kMaxGrowth steps.
std::optional<GrownRegions> GrowRegion(const Graph& graph, const MemoryModel& memory,
                                       const StreamWindows& windows, const Regions& regions,
                                       TensorId t, int64_t target, int64_t max_extra_macs) {
  constexpr int32_t kMaxGrowth = 32;
  std::optional<Regions> next = Internalize(graph, windows, regions, t);
  for (int32_t step = 0; next && step < kMaxGrowth; ++step) {
    absl::StatusOr<std::vector<RegionCost>> costs =
        CostOfRegionInStrips(graph, memory, windows, next->ops.back(), kStrips);
    if (!costs.ok()) return std::nullopt;
    for (const RegionCost& cost : *costs) {
      if (cost.extra_macs > max_extra_macs) break;
      if (cost.step_bytes < target) {
        next->strips.back() = cost.strips;
        return GrownRegions{*std::move(next), cost.step_bytes};
      }
    }
    const RegionCost& whole = costs->front();
    std::vector<TensorId> boundary = whole.inputs;
    boundary.insert(boundary.end(), whole.outputs.begin(), whole.outputs.end());
    std::stable_sort(boundary.begin(), boundary.end(), [&](TensorId a, TensorId b) {
      return memory.tensors[a].bytes > memory.tensors[b].bytes;
    });
    std::optional<Regions> grown;
    for (TensorId edge : boundary) {
      grown = Internalize(graph, windows, *next, edge);
      if (grown) break;
    }
    next = std::move(grown);
  }
  return std::nullopt;
}

// `regions` with the region whose own step is largest and at least
// kPeakShare of `peak` run in the strips that lower its step most, by at
// least kWorthwhile of `peak`, recomputing at most `max_extra_macs` more;
// nullopt when there are none.
absl::StatusOr<std::optional<Regions>> NarrowestPeakRegion(const Graph& graph,
                                                           const MemoryModel& memory,
                                                           const StreamWindows& windows,
                                                           const Regions& regions, int64_t peak,
                                                           int64_t max_extra_macs) {
  constexpr double kPeakShare = 0.8;
  constexpr double kWorthwhile = 0.02;
  size_t widest = regions.ops.size();
  RegionCost widest_cost;
  for (size_t r = 0; r < regions.ops.size(); ++r) {
    ORDO_ASSIGN_OR_RETURN(RegionCost cost, CostOfRegion(graph, memory, windows, regions.ops[r],
                                                        regions.strips[r]));
    if (widest == regions.ops.size() || cost.step_bytes > widest_cost.step_bytes) {
      widest = r;
      widest_cost = std::move(cost);
    }
  }
  if (widest == regions.ops.size() ||
      static_cast<double>(widest_cost.step_bytes) < kPeakShare * static_cast<double>(peak)) {
    return std::nullopt;
  }
  // One schedule per try: the strips that lower the step most, and only
  // when that is worth a schedule (strips shrink the rings, not the
  // inputs and outputs that are often most of the step).
  int32_t best_strips = 0;
  int64_t best_step = widest_cost.step_bytes - static_cast<int64_t>(kWorthwhile * peak);
  ORDO_ASSIGN_OR_RETURN(std::vector<RegionCost> costs,
                        CostOfRegionInStrips(graph, memory, windows, regions.ops[widest], kStrips));
  for (const RegionCost& cost : costs) {
    if (cost.strips <= regions.strips[widest]) continue;
    if (cost.extra_macs - widest_cost.extra_macs > max_extra_macs) break;
    if (cost.step_bytes < best_step) {
      best_step = cost.step_bytes;
      best_strips = cost.strips;
    }
  }
  if (best_strips == 0) return std::nullopt;
  Regions narrower = regions;
  narrower.strips[widest] = best_strips;
  return narrower;
}

// The extra MACs `current` may still add within the latency budget.
int64_t ExtraMacsAllowed(const GraphCost& original, const GraphCost& current,
                         const RewriteOptions& options) {
  auto within = [&](int64_t extra) {
    GraphCost cost = current;
    cost.macs += extra;
    return LatencyOverhead(original, cost, options.latency) <= options.max_latency_overhead;
  };
  if (!within(0)) return 0;
  int64_t low = 0;
  int64_t high = std::max<int64_t>(1, original.macs);
  while (within(high) && high < (int64_t{1} << 60)) high *= 2;
  while (high - low > 1) {
    const int64_t mid = low + (high - low) / 2;
    (within(mid) ? low : high) = mid;
  }
  return low;
}

// The regions as a cache key for the evaluator.
std::string RegionsKey(const Regions& regions) {
  std::vector<std::string> parts;
  parts.reserve(regions.ops.size());
  for (size_t r = 0; r < regions.ops.size(); ++r) {
    parts.push_back(absl::StrCat(absl::StrJoin(regions.ops[r], ","), "/", regions.strips[r]));
  }
  std::sort(parts.begin(), parts.end());
  return absl::StrJoin(parts, "|");
}

// The rewrite from `start` to `fused` (its regions), for the report.
AppliedRewrite RegionRewrite(const Graph& graph, const Regions& regions,
                             const EvaluatedModel& start, const EvaluatedModel& fused) {
  AppliedRewrite applied;
  applied.kind = "fusion";
  applied.description = DescribeRegions(graph, regions);
  applied.peak_before_bytes = start.peak();
  applied.peak_after_bytes = fused.peak();
  applied.extra_macs = fused.cost.macs - start.cost.macs;
  applied.extra_ops = fused.cost.ops - start.cost.ops;
  for (const std::vector<OpId>& region : regions.ops) {
    applied.convs.push_back(graph.op(region.front()).name);
  }
  return applied;
}

// Is `next` a step forward from `current` for the region search: a lower
// peak, or the same peak at fewer steps.
bool LowersPeak(const EvaluatedModel& next, const EvaluatedModel& current) {
  return next.peak() < current.peak() ||
         (next.peak() == current.peak() && next.steps_at_peak < current.steps_at_peak);
}

}  // namespace

absl::StatusOr<FusionSearchResult> SearchFusion(const std::shared_ptr<const EvaluatedModel>& start,
                                                const GraphCost& original,
                                                ModelEvaluator& evaluator, int32_t max_plans) {
  const RewriteOptions& options = evaluator.options();
  FusionSearchResult result;
  ORDO_ASSIGN_OR_RETURN(MemoryModel memory, BuildMemoryModel(start->graph, options.memory));
  ORDO_ASSIGN_OR_RETURN(std::vector<FusionPlan> front, FusionFront(start->graph, memory));
  std::vector<const FusionPlan*> within;
  for (const FusionPlan& plan : front) {
    if (plan.stages.empty() || plan.chain_peak_bytes >= start->peak()) continue;
    GraphCost cost = start->cost;
    cost.macs += plan.extra_macs;
    if (LatencyOverhead(original, cost, options.latency) > options.max_latency_overhead) continue;
    within.push_back(&plan);
  }
  const std::string start_key = absl::StrCat("fusion@", reinterpret_cast<uintptr_t>(start.get()));
  for (size_t index : Pick(within.size(), max_plans)) {
    if (evaluator.Expired()) {
      result.time_limit_hit = true;
      break;
    }
    ORDO_ASSIGN_OR_RETURN(FusionPlan plan,
                          WithoutStagesFoldedNodesRead(start->model, start->graph, *within[index]));
    if (plan.stages.empty()) continue;
    ORDO_ASSIGN_OR_RETURN(onnx::ModelProto fused,
                          ApplyPatchFusion(start->model, start->graph, memory, plan));
    ORDO_ASSIGN_OR_RETURN(
        std::shared_ptr<const EvaluatedModel> evaluated,
        evaluator.Evaluate(std::move(fused), absl::StrCat(start_key, ":", index)));
    AppliedRewrite applied;
    applied.kind = "fusion";
    applied.description = Describe(start->graph, plan);
    applied.peak_before_bytes = start->peak();
    applied.peak_after_bytes = evaluated->peak();
    applied.extra_macs = evaluated->cost.macs - start->cost.macs;
    applied.extra_ops = evaluated->cost.ops - start->cost.ops;
    for (const FusedStage& stage : plan.stages) {
      applied.convs.push_back(start->graph.op(stage.ops.front()).name);
    }
    result.tried.push_back(applied);
    // Fusion is for memory: a fused model that only saves launches at the
    // same peak is not worth its custom ops (fit mode: unless it fits).
    const bool lower = evaluated->peak() < start->peak() ||
                       evaluated->fits;
    const EvaluatedModel& incumbent = result.best != nullptr ? *result.best : *start;
    if (lower &&
        RankModel(*evaluated, original, options) < RankModel(incumbent, original, options)) {
      result.best = std::move(evaluated);
      result.rewrite = std::move(applied);
    }
  }
  return result;
}

absl::StatusOr<FusionSearchResult> SearchRegionFusion(
    const std::shared_ptr<const EvaluatedModel>& start, const GraphCost& original,
    ModelEvaluator& evaluator, absl::Time deadline, int32_t tries) {
  const RewriteOptions& options = evaluator.options();
  FusionSearchResult result;
  ORDO_ASSIGN_OR_RETURN(MemoryModel memory, BuildMemoryModel(start->graph, options.memory));
  const Graph& graph = start->graph;
  const StreamWindows windows = StreamableOps(graph, &start->model.graph());
  const std::string start_key = absl::StrCat("region@", reinterpret_cast<uintptr_t>(start.get()));
  Regions regions;
  std::shared_ptr<const EvaluatedModel> current = start;
  auto expired = [&] { return evaluator.Expired() || evaluator.Now() >= deadline; };
  // Fuses and schedules `candidate`; keeps it when it is a step forward.
  auto try_regions = [&](Regions candidate) -> absl::StatusOr<bool> {
    absl::StatusOr<onnx::ModelProto> fused =
        ApplyRegionFusion(start->model, graph, memory, candidate.ops, candidate.strips);
    if (!fused.ok()) return false;
    ORDO_ASSIGN_OR_RETURN(std::shared_ptr<const EvaluatedModel> evaluated,
                          evaluator.Evaluate(*std::move(fused),
                                             absl::StrCat(start_key, ":", RegionsKey(candidate))));
    if (LatencyOverhead(original, evaluated->cost, options.latency) >
            options.max_latency_overhead ||
        !LowersPeak(*evaluated, *current)) {
      return false;
    }
    regions = std::move(candidate);
    current = std::move(evaluated);
    result.tried.push_back(RegionRewrite(graph, regions, *start, *current));
    result.rewrite = result.tried.back();
    return true;
  };
  // A region grown only until its own step is below the peak often leaves
  // the peak where it was (what else is live beside it counts too): each
  // hot tensor gets a few targets, each lower than the last region's step.
  constexpr int32_t kTargetsPerTensor = 3;
  constexpr double kTargetStep = 0.85;
  constexpr double kFirstTarget = 0.8;
  while (!expired()) {
    // The hot tensors of the current model, as tensors of `start` (a
    // workspace has none).
    std::vector<TensorId> hot;
    for (TensorId live : current->peak_tensors) {
      if (std::optional<TensorId> t = graph.FindTensor(current->graph.tensor(live).name)) {
        hot.push_back(*t);
      }
    }
    const int64_t max_extra_macs = ExtraMacsAllowed(original, current->cost, options);
    // A region whose own step is the peak (its inputs, outputs and rings)
    // runs in more strips first: fewer columns in every ring.
    ORDO_ASSIGN_OR_RETURN(std::optional<Regions> narrower,
                          NarrowestPeakRegion(graph, memory, windows, regions, current->peak(),
                                              max_extra_macs));
    bool stepped = false;
    if (narrower && !expired()) {
      ORDO_ASSIGN_OR_RETURN(stepped, try_regions(*std::move(narrower)));
    }
    int32_t tried = 0;  // hot tensors that could grow a region
    for (size_t h = 0; h < hot.size() && tried < tries && !stepped; ++h) {
      // A long stride first: one schedule for what would otherwise be many
      // steps of one tensor each.
      if (std::optional<GrownRegions> far =
              GrowRegion(graph, memory, windows, regions, hot[h],
                         static_cast<int64_t>(kFirstTarget * static_cast<double>(current->peak())),
                         max_extra_macs);
          far && !expired()) {
        ORDO_ASSIGN_OR_RETURN(stepped, try_regions(std::move(far->regions)));
        if (stepped) break;
      }
      int64_t target = current->peak();
      for (int32_t attempt = 0; attempt < kTargetsPerTensor && !stepped && !expired(); ++attempt) {
        std::optional<GrownRegions> next =
            GrowRegion(graph, memory, windows, regions, hot[h], target, max_extra_macs);
        if (!next) break;
        if (attempt == 0) ++tried;
        target = static_cast<int64_t>(static_cast<double>(next->step_bytes) * kTargetStep);
        ORDO_ASSIGN_OR_RETURN(stepped, try_regions(std::move(next->regions)));
      }
    }
    // Then every hot tensor at once: where several are live at the peak,
    // making one internal leaves the peak to the others.
    if (!stepped && !expired()) {
      Regions all = regions;
      int32_t grown = 0;
      for (TensorId t : hot) {
        if (std::optional<GrownRegions> next =
                GrowRegion(graph, memory, windows, all, t, current->peak(), max_extra_macs)) {
          all = std::move(next->regions);
          ++grown;
        }
      }
      if (grown > 1) {
        ORDO_ASSIGN_OR_RETURN(stepped, try_regions(std::move(all)));
      }
    }
    if (!stepped) break;
  }
  result.time_limit_hit = expired();
  const bool lower = current->peak() < start->peak() || (current != start && current->fits);
  if (current != start && lower) result.best = current;
  return result;
}

}  // namespace ordo
