#include "core/schedule/iterative_scheduling.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/memory/simulator.h"
#include "core/util/status_macros.h"

namespace ordo {
namespace {

// The assembled groups holding the definitions (and with
// `options.disassemble_readers` the reads) of the values alive at the peak
// step (or at every step at the peak): lines 4-7 of Algorithm 1.
std::vector<int32_t> PeakGroups(const MemoryModel& model, const HierarchicalGraph& graph,
                                const SimulationResult& simulation,
                                const IterativeSchedulingOptions& options) {
  std::vector<int32_t> steps;
  if (options.all_peak_steps) {
    for (int32_t k = 0; k < static_cast<int32_t>(simulation.step_bytes.size()); ++k) {
      if (simulation.step_bytes[k] == simulation.peak_bytes) steps.push_back(k);
    }
  } else if (simulation.peak_step >= 0) {
    steps.push_back(simulation.peak_step);
  }
  std::vector<int32_t> groups;
  for (int32_t t = 0; t < model.num_tensors(); ++t) {
    const int32_t producer = model.tensors[t].producer;
    if (!simulation.has_interval[t] || producer == kNoId) continue;
    const LiveInterval& interval = simulation.intervals[t];
    const bool at_peak = std::any_of(steps.begin(), steps.end(), [&](int32_t k) {
      return interval.first <= k && k <= interval.last;
    });
    if (!at_peak) continue;
    groups.push_back(graph.group_of_sequence(graph.sequence_of_op(producer)));
    if (!options.disassemble_readers) continue;
    for (int32_t consumer : model.tensors[t].consumers) {
      groups.push_back(graph.group_of_sequence(graph.sequence_of_op(consumer)));
    }
  }
  groups.erase(std::remove(groups.begin(), groups.end(), kNoId), groups.end());
  std::sort(groups.begin(), groups.end());
  groups.erase(std::unique(groups.begin(), groups.end()), groups.end());
  return groups;
}

// One pass of the loop of Algorithm 1 (lines 3-9) under `budget`: keeps the
// schedule when it is the best so far and disassembles the groups behind
// its peak. False when the loop ends.
absl::StatusOr<bool> Iterate(const MemoryModel& model, const IterativeSchedulingOptions& options,
                             const ScheduleLimits& limits, HierarchicalGraph& graph,
                             HierarchicalSearch& search, int64_t& budget,
                             IterativeSchedulingResult& result) {
  IterationStats& iteration = result.iterations.emplace_back();
  const absl::Time start = limits.Now();
  const int64_t expanded_before = search.stats().states_expanded;
  iteration.groups_assembled = graph.num_assembled_groups();
  HierarchicalSearchResult found = search.Schedule(budget, limits);
  iteration.states_expanded = search.stats().states_expanded - expanded_before;
  iteration.time = limits.Now() - start;
  // Exhaustive with nothing grouped: exact over all schedules.
  const bool exact = found.exhaustive && graph.num_assembled_groups() == 0;
  if (found.outcome != SearchOutcome::kFound) {
    result.limit_hit = found.outcome == SearchOutcome::kLimit;
    if (found.outcome == SearchOutcome::kOverBudget && exact) {
      result.proven_lower_bound = budget + 1;  // every schedule exceeds it
    }
    return false;
  }
  ORDO_ASSIGN_OR_RETURN(SimulationResult simulation, Simulate(model, found.order));
  if (simulation.peak_bytes != found.peak_bytes) {
    return absl::InternalError(absl::StrCat("hierarchical search: counted peak ", found.peak_bytes,
                                            ", simulated ", simulation.peak_bytes));
  }
  iteration.peak_bytes = simulation.peak_bytes;
  if (result.order.empty() || simulation.peak_bytes < result.peak_bytes) {
    result.order = std::move(found.order);
    result.peak_bytes = simulation.peak_bytes;
    result.improved = true;
  }
  if (exact) {
    result.proven_lower_bound = simulation.peak_bytes;
    return false;
  }
  const std::vector<int32_t> groups = PeakGroups(model, graph, simulation, options);
  for (int32_t g : groups) graph.Disassemble(g);
  iteration.groups_disassembled = static_cast<int32_t>(groups.size());
  if (options.budget) budget = std::min(budget, simulation.peak_bytes);
  return !groups.empty();
}

}  // namespace

IterativeStats SummarizeIterations(const IterativeSchedulingResult& result) {
  return IterativeStats{result.sequences,
                        result.groups,
                        static_cast<int32_t>(result.iterations.size()),
                        result.limit_hit,
                        result.search.group_searches,
                        result.search.memo_hits,
                        result.search.simple_schedules};
}

absl::StatusOr<IterativeSchedulingResult> ScheduleIteratively(
    const MemoryModel& model, const IterativeSchedulingOptions& options,
    std::vector<int32_t> incumbent, const ScheduleLimits& limits) {
  IterativeSchedulingResult result;
  int64_t budget = INT64_MAX;
  if (!incumbent.empty()) {
    ORDO_ASSIGN_OR_RETURN(result.peak_bytes, SimulatePeak(model, incumbent));
    result.order = std::move(incumbent);
    if (options.budget) budget = result.peak_bytes;
  }
  HierarchicalGraph graph = HierarchicalGraph::Build(model, options.hierarchy);
  result.sequences = graph.num_sequences();
  result.groups = graph.num_groups();
  HierarchicalSearch search(model, graph, options.search);
  bool more = true;
  while (more) {
    ORDO_ASSIGN_OR_RETURN(more, Iterate(model, options, limits, graph, search, budget, result));
  }
  result.search = search.stats();
  return result;
}

}  // namespace ordo
