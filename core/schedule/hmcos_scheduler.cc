#include "core/schedule/hmcos_scheduler.h"

#include <utility>

#include "core/memory/simulator.h"
#include "core/schedule/op_dag.h"
#include "core/schedule/topological_orders.h"
#include "core/util/status_macros.h"

namespace ordo {

absl::StatusOr<ScheduleResult> HmcosScheduler::Schedule(const MemoryModel& model,
                                                        const ScheduleLimits& limits) const {
  const absl::Time start = limits.Now();
  ORDO_ASSIGN_OR_RETURN(IterativeSchedulingResult iterative,
                        ScheduleIteratively(model, options_, {}, limits));
  const bool found = !iterative.order.empty() || model.num_ops() == 0;
  std::vector<int32_t> order = found ? iterative.order : ReversePostOrder(OpDag(model));
  ORDO_ASSIGN_OR_RETURN(
      ScheduleResult result,
      FinishSchedule(model, std::move(order), found ? "hmcos" : "rpo", start, limits));
  ApplyLowerBound(iterative.proven_lower_bound, MemoryLowerBound(model), result);
  result.stats.states_expanded = iterative.search.states_expanded;
  result.stats.states_stored = iterative.search.states_stored;
  result.stats.iterative = SummarizeIterations(iterative);
  return result;
}

}  // namespace ordo
