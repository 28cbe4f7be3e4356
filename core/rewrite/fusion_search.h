#ifndef ORDO_CORE_REWRITE_FUSION_SEARCH_H_
#define ORDO_CORE_REWRITE_FUSION_SEARCH_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/rewrite/cost_model.h"
#include "core/rewrite/partition_search.h"
#include "core/rewrite/rewrite.h"

namespace ordo {

struct FusionSearchResult {
  // The fused model chosen (lowest peak within the latency budget; in fit
  // mode the cheapest that fits), or null when no plan beats `start`.
  std::shared_ptr<const EvaluatedModel> best;
  AppliedRewrite rewrite;  // what turned `start` into `best`
  // Every plan scheduled, as one rewrite from `start` each (for the Pareto
  // front); includes `rewrite`.
  std::vector<AppliedRewrite> tried;
  bool time_limit_hit = false;
};

// Patch-wise fusion (patch_fusion.h) on top of `start`: the plans of
// FusionFront(start) whose modelled latency stays within
// options.max_latency_overhead of `original` (the input model's cost) and
// whose chain peak is below start's peak, at most `max_plans` of them (the
// lowest chain peaks first, then spread over the rest), each fused and
// scheduled by `evaluator`; the best by RankModel is returned when it beats
// `start` that way and has a lower peak (fit mode: or fits). A fused model
// that only saves op launches at the same peak is never chosen.
// Stops like the evaluator does (time limit, cancellation). Errors: the
// importer's and the scheduler's.
absl::StatusOr<FusionSearchResult> SearchFusion(const std::shared_ptr<const EvaluatedModel>& start,
                                                const GraphCost& original,
                                                ModelEvaluator& evaluator, int32_t max_plans = 24);

// Line-buffered region fusion (region_fusion.h) grown from `start` toward
// its peak, greedily: each round makes internal, of the activations live at
// the current model's peak step (largest first, at most `tries` of them),
// the first whose region (InternalizeTensor) lowers the peak, or keeps it
// with fewer steps at the peak, once fused and scheduled by `evaluator`;
// it stops when none does, at `deadline`, or when the evaluator expires.
// No extra MACs (fewer ops); the result is the last model kept when it has a
// lower peak than `start` (fit mode: or fits). Every model kept is in
// `tried`, as one rewrite from `start`.
absl::StatusOr<FusionSearchResult> SearchRegionFusion(
    const std::shared_ptr<const EvaluatedModel>& start, const GraphCost& original,
    ModelEvaluator& evaluator, absl::Time deadline, int32_t tries = 3);

}  // namespace ordo

#endif  // ORDO_CORE_REWRITE_FUSION_SEARCH_H_
