#include "core/schedule/hierarchical_scheduler.h"

#include <algorithm>
#include <string>
#include <utility>

#include "core/memory/simulator.h"
#include "core/partition/hourglass_partitioner.h"
#include "core/schedule/greedy_scheduler.h"
#include "core/schedule/op_dag.h"
#include "core/schedule/topological_orders.h"
#include "core/util/status_macros.h"

namespace ordo {
namespace {

struct Incumbent {
  std::vector<int32_t> order;
  int64_t peak = 0;
  std::string algorithm;
};

// The lowest peak among the cheap orders; the earlier one on ties.
absl::StatusOr<Incumbent> CheapestOrder(const MemoryModel& model) {
  const OpDag dag(model);
  std::pair<const char*, std::vector<int32_t>> candidates[] = {
      {"greedy", GreedyOrder(model, dag)},
      {"model", ModelOrder(dag)},
      {"kahn", KahnOrder(dag)},
      {"rpo", ReversePostOrder(dag)},
  };
  Incumbent best;
  for (auto& [name, order] : candidates) {
    ORDO_ASSIGN_OR_RETURN(const int64_t peak, SimulatePeak(model, order));
    if (best.algorithm.empty() || peak < best.peak) best = {std::move(order), peak, name};
  }
  return best;
}

}  // namespace

int64_t PartwiseLowerBound(const MemoryModel& model) {
  int64_t bound = MemoryLowerBound(model);
  HourglassPartitioner::Options no_merging;
  no_merging.merge_up_to_ops = 0;
  for (const Part& part : HourglassPartitioner(no_merging).Split(model).parts) {
    bound = std::max(bound, MemoryLowerBound(part.model));
  }
  return bound;
}

absl::StatusOr<ScheduleResult> HierarchicalScheduler::Schedule(const MemoryModel& model,
                                                               const ScheduleLimits& limits) const {
  const absl::Time start = limits.Now();
  const int64_t bound = PartwiseLowerBound(model);
  Incumbent incumbent;
  if (options_.heuristic_incumbent) {
    ORDO_ASSIGN_OR_RETURN(incumbent, CheapestOrder(model));
  }
  IterativeSchedulingResult iterative;
  if (incumbent.algorithm.empty() || incumbent.peak > bound) {
    ORDO_ASSIGN_OR_RETURN(iterative,
                          ScheduleIteratively(model, options_.iterative, incumbent.order, limits));
    if (iterative.improved || incumbent.algorithm.empty()) {
      incumbent = {iterative.order, iterative.peak_bytes, "hierarchical"};
    }
  }
  const int64_t proven = std::max(bound, iterative.proven_lower_bound);
  if (incumbent.order.empty() && model.num_ops() > 0) {
    // The searches hit a limit before any schedule, and there was no cheap
    // one to start from: fall back to the paper's baseline.
    incumbent = {ReversePostOrder(OpDag(model)), 0, "rpo"};
  }
  if (options_.refine_windows && !incumbent.order.empty()) {
    ORDO_ASSIGN_OR_RETURN(
        WindowRefinementResult refined,
        RefineAroundPeak(model, incumbent.order, proven, options_.windows, limits));
    if (refined.rounds > 0) {
      incumbent = {std::move(refined.order), refined.peak_bytes, "hierarchical"};
    }
  }
  ORDO_ASSIGN_OR_RETURN(ScheduleResult result,
                        FinishSchedule(model, std::move(incumbent.order),
                                       std::move(incumbent.algorithm), start, limits));
  ApplyLowerBound(proven, MemoryLowerBound(model), result);
  result.stats.states_expanded = iterative.search.states_expanded;
  result.stats.states_stored = iterative.search.states_stored;
  result.stats.iterative = SummarizeIterations(iterative);
  return result;
}

HierarchicalOptions HmcosPaperOptions() {
  HierarchicalOptions paper;
  paper.heuristic_incumbent = false;
  paper.refine_windows = false;
  paper.iterative.all_peak_steps = false;
  paper.iterative.disassemble_readers = false;
  return paper;
}

std::vector<std::pair<std::string, HierarchicalOptions>> HmcosAblationConfigurations() {
  const HierarchicalOptions paper = HmcosPaperOptions();
  std::vector<std::pair<std::string, HierarchicalOptions>> configs;
  HierarchicalOptions none = paper;
  none.iterative.hierarchy.sequences = false;
  none.iterative.hierarchy.groups.cell_groups = false;
  none.iterative.hierarchy.groups.dominator_groups = false;
  configs.push_back({"1 none", none});
  HierarchicalOptions sequences = paper;
  sequences.iterative.hierarchy.groups.cell_groups = false;
  sequences.iterative.hierarchy.groups.dominator_groups = false;
  configs.push_back({"2 sequences", sequences});
  HierarchicalOptions cells = paper;
  cells.iterative.hierarchy.groups.dominator_groups = false;
  configs.push_back({"3 seq+cells", cells});
  configs.push_back({"4 complete", paper});
  HierarchicalOptions no_budget = paper;
  no_budget.iterative.budget = false;
  configs.push_back({"5 w/o budget", no_budget});
  HierarchicalOptions no_selection = paper;
  no_selection.iterative.search.strategy_selection = false;
  configs.push_back({"6 w/o selection", no_selection});
  HierarchicalOptions no_memo = paper;
  no_memo.iterative.search.memoization = false;
  configs.push_back({"7 w/o memo", no_memo});
  return configs;
}

}  // namespace ordo
