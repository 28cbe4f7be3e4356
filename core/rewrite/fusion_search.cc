#include "core/rewrite/fusion_search.h"

#include <cstdint>
#include <string>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/memory/memory_model.h"
#include "core/rewrite/patch_fusion.h"
#include "core/util/status_macros.h"

namespace ordo {
namespace {

int32_t OpsFusedAway(const FusionPlan& plan) {
  int32_t ops = 0;
  for (const FusedStage& stage : plan.stages) ops += static_cast<int32_t>(stage.ops.size()) - 1;
  return ops;
}

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
    cost.ops -= OpsFusedAway(plan);
    if (LatencyOverhead(original, cost, options.latency) > options.max_latency_overhead) continue;
    within.push_back(&plan);
  }
  const std::string start_key = absl::StrCat("fusion@", reinterpret_cast<uintptr_t>(start.get()));
  for (size_t index : Pick(within.size(), max_plans)) {
    if (evaluator.Expired()) {
      result.time_limit_hit = true;
      break;
    }
    const FusionPlan& plan = *within[index];
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
                       (options.fit_mode() && options.Fits(evaluated->graph, evaluated->schedule));
    const EvaluatedModel& incumbent = result.best != nullptr ? *result.best : *start;
    if (lower &&
        RankModel(*evaluated, original, options) < RankModel(incumbent, original, options)) {
      result.best = std::move(evaluated);
      result.rewrite = std::move(applied);
    }
  }
  return result;
}

}  // namespace ordo
