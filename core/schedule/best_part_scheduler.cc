#include "core/schedule/best_part_scheduler.h"

#include <algorithm>
#include <utility>

#include "core/memory/simulator.h"
#include "core/schedule/greedy_scheduler.h"
#include "core/schedule/op_dag.h"
#include "core/schedule/topological_orders.h"
#include "core/util/status_macros.h"

namespace ordo {
namespace {

// `limits` with `share` of the time to its deadline and of its state bytes
// (at most `max_state_bytes`).
ScheduleLimits ShareOf(const ScheduleLimits& limits, double share, int64_t max_state_bytes) {
  ScheduleLimits part = limits;
  if (limits.deadline != absl::InfiniteFuture()) {
    const absl::Time now = limits.Now();
    part.deadline = now + (limits.deadline - now) * share;
  }
  part.max_state_bytes = std::min(
      max_state_bytes, static_cast<int64_t>(static_cast<double>(limits.max_state_bytes) * share));
  return part;
}

// Step 2 of the class comment, from `cheap` (step 1's schedule).
absl::StatusOr<ScheduleResult> Search(const MemoryModel& model, const BestPartOptions& options,
                                      const ScheduleLimits& limits, const ScheduleResult& cheap) {
  const DpScheduler dp(options.dp);
  const absl::Duration cheap_time = cheap.stats.time;
  if (!options.hierarchical) {
    ORDO_ASSIGN_OR_RETURN(ScheduleResult improved,
                          dp.Improve(model, limits, cheap.order, cheap.algorithm));
    improved.stats.time += cheap_time;
    return improved;
  }
  ORDO_ASSIGN_OR_RETURN(
      ScheduleResult quick,
      dp.Improve(model,
                 ShareOf(limits, options.quick_search_share, options.quick_search_max_state_bytes),
                 cheap.order, cheap.algorithm));
  quick.stats.time += cheap_time;
  if (quick.status == ScheduleStatus::kOptimal || limits.Expired()) return quick;
  ORDO_ASSIGN_OR_RETURN(
      ScheduleResult hierarchical,
      HierarchicalScheduler(options.hierarchical_options)
          .Schedule(model, ShareOf(limits, options.hierarchical_share, limits.max_state_bytes)));
  const ScheduleResult& incumbent =
      hierarchical.peak_bytes < quick.peak_bytes ? hierarchical : quick;
  ORDO_ASSIGN_OR_RETURN(ScheduleResult result,
                        dp.Improve(model, limits, incumbent.order, incumbent.algorithm));
  ApplyLowerBound(std::max({quick.lower_bound_bytes, hierarchical.lower_bound_bytes,
                            result.lower_bound_bytes}),
                  MemoryLowerBound(model), result);
  result.stats.states_expanded += quick.stats.states_expanded +
                                  hierarchical.stats.states_expanded;
  result.stats.states_stored = std::max({result.stats.states_stored, quick.stats.states_stored,
                                         hierarchical.stats.states_stored});
  result.stats.time += quick.stats.time + hierarchical.stats.time;
  result.stats.iterative = hierarchical.stats.iterative;
  return result;
}

}  // namespace

std::vector<NamedOrder> CheapOrders(const MemoryModel& model) {
  OpDag dag(model);
  std::vector<NamedOrder> orders;
  orders.push_back({"greedy", GreedyOrder(model, dag)});
  orders.push_back({"model", ModelOrder(dag)});
  orders.push_back({"kahn", KahnOrder(dag)});
  orders.push_back({"rpo", ReversePostOrder(dag)});
  return orders;
}

absl::StatusOr<ScheduleResult> LowestPeakOf(const MemoryModel& model,
                                            std::vector<NamedOrder> candidates,
                                            const ScheduleLimits& limits) {
  const absl::Time start = limits.Now();
  const int64_t lower_bound = MemoryLowerBound(model);
  ScheduleResult best;
  for (size_t i = 0; i < candidates.size(); ++i) {
    ORDO_ASSIGN_OR_RETURN(ScheduleResult result,
                          FinishSchedule(model, std::move(candidates[i].order),
                                         std::move(candidates[i].algorithm), start, limits,
                                         lower_bound));
    if (i == 0 || result.peak_bytes < best.peak_bytes) best = std::move(result);
  }
  best.stats.time = limits.Now() - start;
  return best;
}

absl::StatusOr<ScheduleResult> BestPartScheduler::Schedule(const MemoryModel& model,
                                                           const ScheduleLimits& limits) const {
  ORDO_ASSIGN_OR_RETURN(ScheduleResult cheap, LowestPeakOf(model, CheapOrders(model), limits));
  if (!options_.exact || cheap.status == ScheduleStatus::kOptimal) return cheap;
  return Search(model, options_, limits, cheap);
}

}  // namespace ordo
