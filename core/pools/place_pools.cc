#include "core/pools/place_pools.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/util/status_macros.h"

namespace ordo {
namespace {

std::string DescribeOverflow(const PoolEvaluation& evaluation) {
  std::vector<std::string> parts;
  for (const PoolUsage& pool : evaluation.pools) {
    if (pool.used_bytes <= pool.capacity_bytes) continue;
    parts.push_back(absl::StrCat("pool \"", pool.name, "\" overflows by ",
                                 pool.used_bytes - pool.capacity_bytes, " bytes (needs ",
                                 pool.used_bytes, " of ", pool.capacity_bytes, ")"));
  }
  return absl::StrJoin(parts, "; ");
}

PoolBaseline BaselineOf(const PoolPlacement& placement) {
  PoolBaseline baseline;
  baseline.name = placement.algorithm;
  baseline.fits = placement.fits();
  baseline.modelled_seconds = placement.evaluation.modelled_seconds;
  baseline.overflow_bytes = placement.evaluation.overflow_bytes;
  return baseline;
}

// The baselines are greedy starts of the placer: the same placements.
void AddGreedyBaselines(const PoolGreedyStarts& greedy, PoolReport& report) {
  report.baselines.push_back(BaselineOf(greedy.named("internal_first")));
  report.baselines.push_back(BaselineOf(greedy.named("usmp_greedy")));
}

// Per tensor, so that reports and the arena plan need no pool problem.
void RecordTensorPlacement(const PoolProblem& problem, int32_t num_tensors, PoolReport& report) {
  report.pool_of_tensor.assign(num_tensors, kNoId);
  report.offset_of_tensor.assign(num_tensors, 0);
  for (int32_t b = 0; b < problem.num_blocks(); ++b) {
    for (int32_t t : problem.arena.blocks[b].tensors) {
      report.pool_of_tensor[t] = report.placement.assignment.pool[b];
      report.offset_of_tensor[t] = report.placement.assignment.offset[b];
    }
  }
}

}  // namespace

absl::StatusOr<ScoredPoolProblem> ScorePoolProblem(const Graph& graph, const MemoryModel& model,
                                                   const SimulationResult& simulation,
                                                   int64_t alignment, const PoolOptions& options) {
  ORDO_ASSIGN_OR_RETURN(PoolProblem problem,
                        BuildPoolProblem(graph, model, simulation, alignment, options));
  return ScoreBuiltPoolProblem(std::move(problem), options.effort);
}

ScoredPoolProblem ScoreBuiltPoolProblem(PoolProblem problem, PlacementEffort effort,
                                        const NoOrderFitsProof& prove_no_order_fits) {
  if (effort == PlacementEffort::kFast && problem.num_blocks() > kThoroughUpToBlocks) {
    FastPoolPlacement fast = PlacePoolsFast(problem, prove_no_order_fits);
    std::optional<HeuristicPoolResult> placed;
    if (fast.result.placement.fits()) placed = std::move(fast.result);
    return {std::move(problem), std::move(fast.starts), std::move(placed),
            std::move(fast.no_order_fits)};
  }
  PoolGreedyStarts greedy = PlacePoolsGreedyStarts(problem);
  return {std::move(problem), std::move(greedy), std::nullopt};
}

namespace {

// `scored`'s starts when they are thorough, else the thorough ones, made
// into `storage`.
const PoolGreedyStarts& ThoroughStarts(const ScoredPoolProblem& scored,
                                       std::optional<PoolGreedyStarts>& storage) {
  if (scored.greedy.effort == PlacementEffort::kThorough) return scored.greedy;
  return storage.emplace(PlacePoolsGreedyStarts(scored.problem));
}

}  // namespace

void MakeStartsThorough(ScoredPoolProblem& scored) {
  std::optional<PoolGreedyStarts> storage;
  ThoroughStarts(scored, storage);
  if (!storage) return;
  scored.greedy = *std::move(storage);
  scored.fast.reset();
}

absl::StatusOr<PoolReport> PlaceScoredInPools(const Graph& graph, const MemoryModel& model,
                                              const ScoredPoolProblem& scored,
                                              const ArenaLimits& limits,
                                              const EveryOrderPeakBound& every_order_peak,
                                              double give_up_above) {
  const absl::Time start = limits.Now();
  const PoolProblem& problem = scored.problem;
  PoolReport report;
  // A fitting fast placement is the answer (it needs no proof that nothing
  // fits). Else a proof that no order fits (cheap: a few tensors per op)
  // leaves nothing to search for: the starts give the overflow to report.
  if (scored.fast) {
    report.placement = scored.fast->placement;
    report.lower_bound_seconds = scored.fast->lower_bound_seconds;
  } else {
    report.no_order_fits = scored.no_order_fits
                               ? *scored.no_order_fits
                               : PoolInfeasibility(graph, model, problem, every_order_peak);
    if (report.no_order_fits.empty()) {
      // The full placer proves the lower bound on the way (its relaxation).
      std::optional<PoolGreedyStarts> storage;
      HeuristicPoolResult placed = PlacePoolsHeuristic(
          problem, limits, &ThoroughStarts(scored, storage), give_up_above);
      report.placement = std::move(placed.placement);
      report.lower_bound_seconds = placed.lower_bound_seconds;
    } else {
      // No valid placement: the bound is set below, for one that does not fit.
      report.placement = scored.greedy.best();
    }
  }
  if (report.placement.fits()) {
    ORDO_RETURN_IF_ERROR(CheckPoolAssignment(problem, report.placement.assignment));
    // The bound sums the same per-block times in another order; a placement
    // at the bound may come out an ulp below it.
    report.lower_bound_seconds =
        std::min(report.lower_bound_seconds, report.placement.evaluation.modelled_seconds);
  } else {
    // The capacity arguments bound valid placements, not this one.
    report.lower_bound_seconds = CheapestPoolsSeconds(problem);
    report.overflow = DescribeOverflow(report.placement.evaluation);
    // Why: no order fits, else (when it can be shown) not this order.
    std::string why = report.no_order_fits;
    if (why.empty()) why = ScheduleInfeasibility(graph, problem);
    if (!why.empty()) absl::StrAppend(&report.overflow, "; ", why);
  }
  AddGreedyBaselines(scored.greedy, report);
  RecordTensorPlacement(problem, model.num_tensors(), report);
  report.time = limits.Now() - start;
  return report;
}

void AddSinglePoolBaseline(const std::vector<MemoryPool>& pools, int64_t single_arena_bytes,
                           PoolReport& report) {
  int64_t total_capacity = 0;
  for (const MemoryPool& pool : pools) total_capacity += pool.capacity_bytes;
  report.baselines.push_back({"single_pool", single_arena_bytes <= total_capacity, 0,
                              std::max<int64_t>(0, single_arena_bytes - total_capacity),
                              single_arena_bytes});
}

absl::StatusOr<PoolReport> PlaceInPools(const Graph& graph, const MemoryModel& model,
                                        const SimulationResult& simulation, int64_t alignment,
                                        const PoolOptions& options, int64_t single_arena_bytes,
                                        const ArenaLimits& limits) {
  const absl::Time start = limits.Now();
  ORDO_ASSIGN_OR_RETURN(ScoredPoolProblem scored,
                        ScorePoolProblem(graph, model, simulation, alignment, options));
  ORDO_ASSIGN_OR_RETURN(PoolReport report, PlaceScoredInPools(graph, model, scored, limits));
  AddSinglePoolBaseline(scored.problem.pools, single_arena_bytes, report);
  report.time = limits.Now() - start;
  return report;
}

std::string NoPoolHoldsEveryBlock(const Graph& graph, const PoolProblem& problem) {
  std::vector<std::string> reasons;
  for (int32_t p = 0; p < problem.num_pools(); ++p) {
    for (int32_t b = 0; b < problem.num_blocks(); ++b) {
      if (problem.allowed[b][p]) continue;
      const ArenaBlock& block = problem.arena.blocks[b];
      const bool too_large = block.size > problem.pools[p].capacity_bytes;
      reasons.push_back(absl::StrCat("pool \"", problem.pools[p].name, "\": tensor \"",
                                     graph.tensor(block.tensors.front()).name, "\" ",
                                     too_large ? "is larger than it" : "is pinned elsewhere"));
      break;
    }
  }
  return absl::StrCat(
      "one arena (the runtime plans one, as TFLite Micro does): no memory pool may hold every "
      "activation tensor (",
      absl::StrJoin(reasons, "; "), ")");
}

bool MayHoldEveryBlock(const PoolProblem& problem, int32_t pool) {
  for (int32_t b = 0; b < problem.num_blocks(); ++b) {
    if (!problem.allowed[b][pool]) return false;
  }
  return true;
}

namespace {

// The modelled time of every block in pool `p`, or nullopt when a block may
// not live there. The same in any layout: the spec's time has no offsets.
std::optional<double> OneArenaSeconds(const PoolProblem& problem, int32_t p) {
  double seconds = 0;
  for (int32_t b = 0; b < problem.num_blocks(); ++b) {
    if (!problem.allowed[b][p]) return std::nullopt;
    seconds += problem.seconds[b][p];
  }
  return seconds;
}

}  // namespace

double OneArenaLowerBoundSeconds(const PoolProblem& problem, int64_t peak_bytes) {
  double least = std::numeric_limits<double>::infinity();
  for (int32_t p = 0; p < problem.num_pools(); ++p) {
    const std::optional<double> seconds = OneArenaSeconds(problem, p);
    if (seconds && peak_bytes <= problem.pools[p].capacity_bytes) least = std::min(least, *seconds);
  }
  return least;
}

std::optional<PoolPlacement> OneArenaPlacement(const PoolProblem& problem, const ArenaPlan& arena) {
  // A block's offset is its first tensor's in the plan (its tensors share it).
  int32_t max_tensor = -1;
  for (const TensorPlacement& tensor : arena.tensors) {
    max_tensor = std::max(max_tensor, tensor.tensor);
  }
  std::vector<int64_t> offset_of_tensor(max_tensor + 1, 0);
  for (const TensorPlacement& tensor : arena.tensors)
    offset_of_tensor[tensor.tensor] = tensor.offset;
  PoolAssignment assignment;
  assignment.offset.reserve(problem.num_blocks());
  for (const ArenaBlock& block : problem.arena.blocks) {
    const int32_t tensor = block.tensors.front();
    assignment.offset.push_back(tensor <= max_tensor ? offset_of_tensor[tensor] : 0);
  }
  std::optional<PoolPlacement> best;
  for (int32_t p = 0; p < problem.num_pools(); ++p) {
    if (!OneArenaSeconds(problem, p)) continue;
    assignment.pool.assign(problem.num_blocks(), p);
    PoolPlacement placement{absl::StrCat("one arena in \"", problem.pools[p].name, "\""),
                            assignment, EvaluatePoolAssignment(problem, assignment)};
    if (!best || BetterPlacement(placement, *best)) best = std::move(placement);
  }
  return best;
}

absl::StatusOr<PoolReport> PlaceOneArenaInPools(const Graph& graph, const MemoryModel& model,
                                                const SimulationResult& simulation,
                                                int64_t alignment, const PoolOptions& options,
                                                const ArenaPlan& arena, const ArenaLimits& limits,
                                                const PoolProblem* given) {
  const absl::Time start = limits.Now();
  std::optional<PoolProblem> built;
  if (given == nullptr) {
    ORDO_ASSIGN_OR_RETURN(built, BuildPoolProblem(graph, model, simulation, alignment, options));
    given = &*built;
  }
  const PoolProblem& problem = *given;
  std::optional<PoolPlacement> best = OneArenaPlacement(problem, arena);
  if (!best) return absl::InvalidArgumentError(NoPoolHoldsEveryBlock(graph, problem));
  PoolReport report;
  report.placement = *std::move(best);
  const double holds_peak = OneArenaLowerBoundSeconds(problem, arena.lower_bound_bytes);
  if (report.placement.fits()) {
    ORDO_RETURN_IF_ERROR(CheckPoolAssignment(problem, report.placement.assignment));
    report.lower_bound_seconds = std::min(holds_peak, report.placement.evaluation.modelled_seconds);
  } else {
    // The capacity argument bounds valid placements, not this one: the
    // arena in its cheapest allowed pool, capacities ignored.
    double any = std::numeric_limits<double>::infinity();
    for (int32_t p = 0; p < problem.num_pools(); ++p) {
      if (const std::optional<double> seconds = OneArenaSeconds(problem, p)) {
        any = std::min(any, *seconds);
      }
    }
    report.lower_bound_seconds = any;
    report.overflow = absl::StrCat(DescribeOverflow(report.placement.evaluation),
                                   "; one arena: the schedule's arena (", arena.arena_bytes,
                                   " bytes) fits no single pool it may use");
  }
  RecordTensorPlacement(problem, model.num_tensors(), report);
  report.time = limits.Now() - start;
  return report;
}

void AddPoolBaselines(const ScoredPoolProblem& scored, int64_t single_arena_bytes,
                      PoolReport& report) {
  AddGreedyBaselines(scored.greedy, report);
  AddSinglePoolBaseline(scored.problem.pools, single_arena_bytes, report);
}

ArenaPlan PoolArenaPlan(const PoolReport& report, ArenaPlan plan) {
  for (TensorPlacement& tensor : plan.tensors) {
    tensor.pool = report.pool_of_tensor[tensor.tensor];
    tensor.offset = report.offset_of_tensor[tensor.tensor];
  }
  plan.arena_bytes = 0;
  for (const PoolUsage& pool : report.placement.evaluation.pools) plan.arena_bytes += pool.used_bytes;
  plan.algorithm = report.placement.algorithm;
  plan.gap_bytes = plan.arena_bytes - plan.lower_bound_bytes;
  plan.optimal = false;
  return plan;
}

namespace {

// Bytes of the on-chip tensors live at each step: a difference array over
// the live intervals; where an in-place output and the input it overwrote
// are both live (the step that consumes one and writes the other) they
// share one block, so the smaller is taken back out. O(steps + tensors).
std::vector<int64_t> OnChipResidency(const MemoryModel& model, const SimulationResult& simulation,
                                     const std::vector<bool>& on_chip) {
  const int32_t steps = static_cast<int32_t>(simulation.step_bytes.size());
  std::vector<int64_t> delta(steps + 1, 0);
  auto add = [&](int32_t first, int32_t last, int64_t bytes) {
    first = std::max(first, 0);
    last = std::min(last, steps - 1);
    if (first > last) return;
    delta[first] += bytes;
    delta[last + 1] -= bytes;
  };
  for (int32_t t = 0; t < model.num_tensors(); ++t) {
    if (!on_chip[t] || !simulation.has_interval[t]) continue;
    const LiveInterval& life = simulation.intervals[t];
    add(life.first, life.last, model.tensors[t].bytes);
    const int32_t source = simulation.inplace_source[t];
    if (source == kNoId || !on_chip[source] || !simulation.has_interval[source]) continue;
    const LiveInterval& other = simulation.intervals[source];
    add(std::max(life.first, other.first), std::min(life.last, other.last),
        -std::min(model.tensors[t].bytes, model.tensors[source].bytes));
  }
  std::vector<int64_t> resident(steps, 0);
  int64_t running = 0;
  for (int32_t s = 0; s < steps; ++s) resident[s] = running += delta[s];
  return resident;
}

}  // namespace

std::optional<TrafficResult> PlacementTraffic(const MemoryModel& model,
                                              const SimulationResult& simulation,
                                              const PoolOptions& options, const PoolReport& report,
                                              bool record_residency) {
  int64_t on_chip_bytes = 0;
  bool any_off_chip = false;
  for (const MemoryPool& pool : options.pools) {
    any_off_chip = any_off_chip || pool.off_chip;
    if (!pool.off_chip) on_chip_bytes += pool.capacity_bytes;
  }
  if (!any_off_chip) return std::nullopt;
  std::vector<bool> off_chip(model.num_tensors(), false), on_chip(model.num_tensors(), false);
  for (int32_t t = 0; t < model.num_tensors(); ++t) {
    const int32_t pool = report.pool_of_tensor[t];
    off_chip[t] = pool != kNoId && options.pools[pool].off_chip;
    on_chip[t] = pool != kNoId && !options.pools[pool].off_chip;
  }
  TrafficResult traffic = PlacedTraffic(model, off_chip, on_chip_bytes);
  if (record_residency) traffic.resident_bytes = OnChipResidency(model, simulation, on_chip);
  return traffic;
}

absl::StatusOr<PoolPlacement> RecheckPoolPlacement(const Graph& graph, const MemoryModel& model,
                                                   const SimulationResult& simulation,
                                                   int64_t alignment, const PoolOptions& options,
                                                   const ArenaPlan& plan) {
  ORDO_ASSIGN_OR_RETURN(PoolProblem problem,
                        BuildPoolProblem(graph, model, simulation, alignment, options));
  std::vector<const TensorPlacement*> placed(model.num_tensors(), nullptr);
  for (const TensorPlacement& tensor : plan.tensors) {
    if (tensor.tensor < 0 || tensor.tensor >= model.num_tensors()) continue;
    if (tensor.pool < 0 || tensor.pool >= problem.num_pools()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "placement: tensor \"", graph.tensor(tensor.tensor).name, "\" has no memory pool"));
    }
    placed[tensor.tensor] = &tensor;
  }
  PoolPlacement placement;
  placement.algorithm = plan.algorithm;
  placement.assignment.pool.assign(problem.num_blocks(), kNoId);
  placement.assignment.offset.assign(problem.num_blocks(), 0);
  for (int32_t b = 0; b < problem.num_blocks(); ++b) {
    for (int32_t t : problem.arena.blocks[b].tensors) {
      if (placed[t] == nullptr) {
        return absl::InvalidArgumentError(absl::StrCat(
            "placement: activation tensor \"", graph.tensor(t).name, "\" is not placed"));
      }
      const int32_t pool = placed[t]->pool;
      const int64_t offset = placed[t]->offset;
      if (t != problem.arena.blocks[b].tensors[0] &&
          (pool != placement.assignment.pool[b] || offset != placement.assignment.offset[b])) {
        return absl::InvalidArgumentError(absl::StrCat(
            "placement: tensor \"", graph.tensor(t).name,
            "\" is written in place over another tensor but placed elsewhere"));
      }
      placement.assignment.pool[b] = pool;
      placement.assignment.offset[b] = offset;
    }
  }
  const std::vector<int32_t>& pools = placement.assignment.pool;
  if (options.one_arena &&
      std::adjacent_find(pools.begin(), pools.end(), std::not_equal_to<>()) != pools.end()) {
    return absl::InvalidArgumentError(
        "placement: the request asks for one arena (device.one_arena) but the tensors lie in "
        "several pools; a server that predates DeviceSpec.one_arena?");
  }
  placement.evaluation = EvaluatePoolAssignment(problem, placement.assignment);
  if (placement.fits()) {
    if (absl::Status valid = CheckPoolAssignment(problem, placement.assignment); !valid.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("placement: ", valid.message()));
    }
  }
  return placement;
}

}  // namespace ordo
