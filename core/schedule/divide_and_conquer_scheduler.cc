#include "core/schedule/divide_and_conquer_scheduler.h"

#include <algorithm>
#include <map>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/memory/simulator.h"
#include "core/schedule/greedy_scheduler.h"
#include "core/schedule/op_dag.h"
#include "core/schedule/topological_orders.h"
#include "core/util/status_macros.h"

namespace ordo {
namespace {

struct NamedOrder {
  std::string algorithm;
  std::vector<int32_t> order;
};

// The cheap orders; on equal peaks the earlier one is kept.
std::vector<NamedOrder> HeuristicOrders(const MemoryModel& model) {
  OpDag dag(model);
  std::vector<NamedOrder> orders;
  orders.push_back({"greedy", GreedyOrder(model, dag)});
  orders.push_back({"model", ModelOrder(dag)});
  orders.push_back({"kahn", KahnOrder(dag)});
  orders.push_back({"rpo", ReversePostOrder(dag)});
  return orders;
}

// Each whole-model order cut into the parts' blocks, in part op ids (every
// order of the whole runs the parts as blocks, so each piece is an order
// of its part).
std::vector<std::vector<NamedOrder>> RestrictToParts(const Partition& partition,
                                                     const std::vector<NamedOrder>& whole,
                                                     int32_t num_ops) {
  std::vector<int32_t> part_of(num_ops), local_of(num_ops);
  for (int32_t p = 0; p < static_cast<int32_t>(partition.parts.size()); ++p) {
    const std::vector<int32_t>& ops = partition.parts[p].ops;
    for (int32_t i = 0; i < static_cast<int32_t>(ops.size()); ++i) {
      part_of[ops[i]] = p;
      local_of[ops[i]] = i;
    }
  }
  std::vector<std::vector<NamedOrder>> restricted(partition.parts.size());
  for (const NamedOrder& named : whole) {
    for (std::vector<NamedOrder>& orders : restricted) orders.push_back({named.algorithm, {}});
    for (int32_t op : named.order) restricted[part_of[op]].back().order.push_back(local_of[op]);
  }
  return restricted;
}

// The lowest peak among `candidates` (orders of `model`).
absl::StatusOr<ScheduleResult> BestOf(const MemoryModel& model, std::vector<NamedOrder> candidates,
                                      const ScheduleLimits& limits) {
  const absl::Time start = limits.Now();
  ScheduleResult best;
  for (size_t i = 0; i < candidates.size(); ++i) {
    ORDO_ASSIGN_OR_RETURN(ScheduleResult result,
                          FinishSchedule(model, std::move(candidates[i].order),
                                         std::move(candidates[i].algorithm), start, limits));
    if (i == 0 || result.peak_bytes < best.peak_bytes) best = std::move(result);
  }
  best.stats.time = limits.Now() - start;
  return best;
}

// "greedy+dp": the algorithms behind the parts' orders, most ops first.
std::string AlgorithmName(const Partition& partition, const std::vector<ScheduleResult>& parts) {
  std::map<std::string, int64_t> ops;
  for (size_t p = 0; p < parts.size(); ++p) {
    ops[parts[p].algorithm] += static_cast<int64_t>(partition.parts[p].ops.size());
  }
  std::vector<std::pair<int64_t, std::string>> ranked;
  for (const auto& [name, count] : ops) ranked.push_back({-count, name});
  std::sort(ranked.begin(), ranked.end());
  return absl::StrJoin(ranked, "+",
                       [](std::string* out, const auto& entry) { out->append(entry.second); });
}

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

// The exact search on one part from `part` (its best schedule so far),
// with the hierarchical scheduler's help when a quick attempt does not
// prove it (class comment, step 3).
absl::StatusOr<ScheduleResult> SearchPart(const MemoryModel& model, const DpScheduler& dp,
                                          const DivideAndConquerOptions& options,
                                          const ScheduleLimits& limits, ScheduleResult part) {
  const absl::Duration heuristic_time = part.stats.time;
  if (!options.hierarchical) {
    ORDO_ASSIGN_OR_RETURN(ScheduleResult improved,
                          dp.Improve(model, limits, part.order, part.algorithm));
    improved.stats.time += heuristic_time;
    return improved;
  }
  ORDO_ASSIGN_OR_RETURN(
      ScheduleResult quick,
      dp.Improve(model,
                 ShareOf(limits, options.quick_search_share, options.quick_search_max_state_bytes),
                 part.order, part.algorithm));
  quick.stats.time += heuristic_time;
  if (quick.status == ScheduleStatus::kOptimal || limits.Expired()) return quick;
  ORDO_ASSIGN_OR_RETURN(
      ScheduleResult hierarchical,
      HierarchicalScheduler(options.hierarchical_options)
          .Schedule(model, ShareOf(limits, 0.5, limits.max_state_bytes)));
  const ScheduleResult& incumbent =
      hierarchical.peak_bytes < quick.peak_bytes ? hierarchical : quick;
  ORDO_ASSIGN_OR_RETURN(ScheduleResult result,
                        dp.Improve(model, limits, incumbent.order, incumbent.algorithm));
  ApplyLowerBound(std::max({quick.lower_bound_bytes, hierarchical.lower_bound_bytes,
                            result.lower_bound_bytes}),
                  MemoryLowerBound(model), result);
  result.stats.states_expanded += quick.stats.states_expanded +
                                  hierarchical.stats.states_expanded;
  result.stats.time += quick.stats.time + hierarchical.stats.time;
  return result;
}

// Step 3 of the class comment: runs the exact search on the parts of
// `pending` not yet `searched`, in turn, sharing the time left equally among
// those not yet run. With `only_peak_parts`, only parts whose peak is above
// `proven` (the best lower bound proved for any part, raised as parts are
// solved), since only they can lower the whole peak.
absl::Status ImproveParts(const Partition& partition, const DpScheduler& dp,
                          const DivideAndConquerOptions& options, const ScheduleLimits& limits,
                          const std::vector<int32_t>& pending, bool only_peak_parts,
                          int64_t& proven, std::vector<bool>& searched,
                          std::vector<ScheduleResult>& results) {
  auto wanted = [&](int32_t p) {
    return !searched[p] && results[p].status != ScheduleStatus::kOptimal &&
           (!only_peak_parts || results[p].peak_bytes > proven);
  };
  for (size_t i = 0; i < pending.size(); ++i) {
    if (limits.Expired()) break;
    if (!wanted(pending[i])) continue;
    ScheduleResult& part = results[pending[i]];
    const int64_t left = std::count_if(pending.begin() + i, pending.end(), wanted);
    ScheduleLimits share = limits;
    const absl::Time now = limits.Now();
    share.deadline = now + (limits.deadline - now) / left;
    ORDO_ASSIGN_OR_RETURN(part, SearchPart(partition.parts[pending[i]].model, dp, options, share,
                                           std::move(part)));
    searched[pending[i]] = true;
    proven = std::max(proven, part.lower_bound_bytes);
  }
  return absl::OkStatus();
}

// Step 2 of the class comment, for every part.
absl::StatusOr<std::vector<ScheduleResult>> ScheduleHeuristically(const MemoryModel& model,
                                                                  const Partition& partition,
                                                                  const ScheduleLimits& limits) {
  std::vector<std::vector<NamedOrder>> candidates =
      RestrictToParts(partition, HeuristicOrders(model), model.num_ops());
  std::vector<ScheduleResult> results(partition.parts.size());
  for (size_t p = 0; p < partition.parts.size(); ++p) {
    std::vector<NamedOrder> own = HeuristicOrders(partition.parts[p].model);
    own.insert(own.end(), std::make_move_iterator(candidates[p].begin()),
               std::make_move_iterator(candidates[p].end()));
    ORDO_ASSIGN_OR_RETURN(results[p], BestOf(partition.parts[p].model, std::move(own), limits));
  }
  return results;
}

PartStats StatsOf(const Part& part, const ScheduleResult& result) {
  PartStats stats;
  stats.ops = part.model.num_ops();
  stats.peak_bytes = result.peak_bytes;
  stats.lower_bound_bytes = result.lower_bound_bytes;
  stats.status = result.status;
  stats.algorithm = result.algorithm;
  stats.states_expanded = result.stats.states_expanded;
  stats.time = result.stats.time;
  return stats;
}

// Step 4 of the class comment.
absl::StatusOr<ScheduleResult> Combine(const MemoryModel& model, const Partition& partition,
                                       const std::vector<ScheduleResult>& results, absl::Time start,
                                       const ScheduleLimits& limits) {
  std::vector<std::vector<int32_t>> orders;
  int64_t max_part_peak = 0, proven = 0;
  ScheduleStats stats;
  std::vector<PartStats> part_stats;
  for (size_t p = 0; p < results.size(); ++p) {
    orders.push_back(results[p].order);
    max_part_peak = std::max(max_part_peak, results[p].peak_bytes);
    proven = std::max(proven, results[p].lower_bound_bytes);
    stats.states_expanded += results[p].stats.states_expanded;
    stats.states_stored = std::max(stats.states_stored, results[p].stats.states_stored);
    part_stats.push_back(StatsOf(partition.parts[p], results[p]));
  }
  ORDO_ASSIGN_OR_RETURN(ScheduleResult result,
                        FinishSchedule(model, ConcatenatePartOrders(partition, orders),
                                       AlgorithmName(partition, results), start, limits));
  // The partition's exactness (HourglassPartitioner) in one line; a bug in
  // the boundary accounting would show here first.
  if (result.peak_bytes != max_part_peak) {
    return absl::InternalError(absl::StrCat("divide-and-conquer: whole peak ", result.peak_bytes,
                                            " != max part peak ", max_part_peak));
  }
  ApplyLowerBound(proven, MemoryLowerBound(model), result);
  result.stats.states_expanded = stats.states_expanded;
  result.stats.states_stored = stats.states_stored;
  result.parts = std::move(part_stats);
  return result;
}

}  // namespace

absl::StatusOr<ScheduleResult> DivideAndConquerScheduler::Schedule(
    const MemoryModel& model, const ScheduleLimits& limits) const {
  const absl::Time start = limits.Now();
  const Partition partition = HourglassPartitioner(options_.partition).Split(model);
  ORDO_ASSIGN_OR_RETURN(std::vector<ScheduleResult> results,
                        ScheduleHeuristically(model, partition, limits));
  if (options_.exact) {
    int64_t proven = 0;
    for (const ScheduleResult& result : results) {
      proven = std::max(proven, result.lower_bound_bytes);
    }
    std::vector<int32_t> by_size(results.size());
    for (size_t p = 0; p < by_size.size(); ++p) by_size[p] = static_cast<int32_t>(p);
    std::stable_sort(by_size.begin(), by_size.end(), [&](int32_t a, int32_t b) {
      return partition.parts[a].ops.size() < partition.parts[b].ops.size();
    });
    const DpScheduler dp(options_.dp);
    std::vector<bool> searched(results.size(), false);
    ORDO_RETURN_IF_ERROR(ImproveParts(partition, dp, options_, limits, by_size, true, proven,
                                      searched, results));
    if (options_.prove_every_part) {
      ORDO_RETURN_IF_ERROR(ImproveParts(partition, dp, options_, limits, by_size, false, proven,
                                        searched, results));
    }
  }
  return Combine(model, partition, results, start, limits);
}

}  // namespace ordo
