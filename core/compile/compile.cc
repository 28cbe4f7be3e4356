#include "core/compile/compile.h"

#include <algorithm>
#include <cmath>
#include <limits>
#include <optional>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "core/arena/arena_planner_registry.h"
#include "core/arena/arena_problem.h"
#include "core/partition/hourglass_partitioner.h"
#include "core/pools/pool_order_repair.h"
#include "core/schedule/baseline_schedulers.h"
#include "core/schedule/hmcos_scheduler.h"
#include "core/schedule/scheduler_registry.h"
#include "core/util/checked_math.h"
#include "core/util/status_macros.h"

namespace ordo {
namespace {

// A schedule that may carry the result: the chosen one, or a baseline order.
struct Candidate {
  std::vector<int32_t> order;
  std::string algorithm;
  int64_t peak_bytes = 0;
};

absl::Status CheckOptions(const CompileOptions& options) {
  if (options.time_limit < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("time limit is negative");
  }
  if (options.alignment <= 0 || options.memory_limit_bytes < 0 || options.on_chip_bytes < 0) {
    return absl::InvalidArgumentError(
        "alignment must be positive, the memory limit and on-chip size non-negative");
  }
  if (options.pools.enabled() && options.arena_planner == kNoArenaPlanner) {
    return absl::InvalidArgumentError(
        "memory pools need arena planning; do not combine pools with arena planner \"none\"");
  }
  if (options.pools.enabled() && options.on_chip_bytes > 0) {
    // One definition of what is on the chip: the pools say it.
    return absl::InvalidArgumentError(
        "with memory pools the on-chip size is the pools' own: mark the external pools "
        "off-chip instead of giving an on-chip size");
  }
  return ValidatePoolOptions(options.pools);
}

absl::StatusOr<std::vector<Candidate>> RunBaselines(const SchedulerRegistry& registry,
                                                    const MemoryModel& model,
                                                    const ScheduleLimits& limits,
                                                    std::vector<BaselinePeak>& peaks) {
  std::vector<Candidate> candidates;
  for (const Baseline& baseline : ReportedBaselines()) {
    ORDO_ASSIGN_OR_RETURN(auto scheduler, registry.Create(baseline.scheduler_name));
    ORDO_ASSIGN_OR_RETURN(ScheduleResult result, scheduler->Schedule(model, limits));
    peaks.push_back({baseline.report_name, result.peak_bytes});
    candidates.push_back({std::move(result.order), baseline.scheduler_name, result.peak_bytes});
  }
  return candidates;
}

// The simulator is the only authority: a schedule whose re-simulated peak
// differs from the scheduler's claim is a bug and never leaves.
absl::StatusOr<SimulationResult> Verify(const MemoryModel& model, const Candidate& candidate) {
  absl::StatusOr<SimulationResult> simulation = Simulate(model, candidate.order);
  if (!simulation.ok()) {
    return absl::InternalError(absl::StrCat("scheduler ", candidate.algorithm,
                                            " returned an invalid schedule: ",
                                            simulation.status().message()));
  }
  if (simulation->peak_bytes != candidate.peak_bytes) {
    return absl::InternalError(absl::StrCat("scheduler ", candidate.algorithm, " reported peak ",
                                            candidate.peak_bytes, "; the simulator says ",
                                            simulation->peak_bytes));
  }
  return simulation;
}

ArenaOptions ArenaOptionsFor(const CompileOptions& options, absl::Time deadline,
                             const Clock& clock, absl::string_view planner) {
  ArenaOptions arena;
  arena.planner = std::string(planner);
  arena.alignment = options.alignment;
  // Layout gets what scheduling left, but always enough for the greedy
  // planners (milliseconds) and never more than a couple of seconds.
  arena.time_limit =
      std::clamp(deadline - clock.Now(), absl::Milliseconds(100), absl::Seconds(2));
  return arena;
}

// A schedule with everything that ranks it among schedules of equal peak.
struct Layout {
  std::vector<int32_t> order;
  std::string algorithm;
  SimulationResult simulation;
  ArenaPlan arena;
  std::optional<TrafficResult> traffic;
  std::optional<PoolReport> pools;
  // Planning `arena`, which a compile without pools does too.
  absl::Duration arena_time = absl::ZeroDuration();

  // With pools, the placement's PlacementRank; then off-chip traffic when
  // the device has on-chip memory (it costs time and energy on every run),
  // then the arena.
  std::tuple<int64_t, double, int64_t, int64_t> Rank() const {
    return std::tuple_cat(RankBeforeArena(), std::tuple(arena.arena_bytes));
  }
  // Rank without the arena (PlaceLayout's part): a layout that ranks
  // strictly worse here loses whatever its arena, which is then not planned.
  std::tuple<int64_t, double, int64_t> RankBeforeArena() const {
    return std::tuple_cat(pools ? PlacementRank(pools->placement) : std::tuple<int64_t, double>(),
                          std::tuple(traffic ? traffic->total_bytes : 0));
  }
  // Without pools every layout fits (the memory limit is checked elsewhere).
  bool FitsPools() const { return !pools.has_value() || pools->fits(); }
  // Without pools: nothing of another schedule with the same peak can beat
  // this one.
  bool Unbeatable() const { return arena.gap_bytes == 0 && !traffic; }
};

// Placement runs once per candidate schedule; it must stay a small part of
// the compile.
ArenaLimits PlacementLimits(const CompileOptions& options, absl::Time deadline,
                            const Clock& clock) {
  ArenaLimits limits;
  limits.clock = &clock;
  limits.deadline = clock.Now() + std::min(ArenaOptionsFor(options, deadline, clock, "").time_limit,
                                           absl::Milliseconds(200));
  return limits;
}

// A layout's placement in the pools (when the device has them) and its
// off-chip traffic, without its one-arena plan (PlanLayoutArena), which only
// a layout that may still win needs. `scored`: the schedule's pool problem
// with its greedy starts when the caller scored it already (nullptr: built
// here). `give_up_above`: PlaceScoredInPools's (a layout given up loses to
// one placed at that time). `every_order_peak`: PlaceScoredInPools's.
absl::StatusOr<Layout> PlaceLayout(const Graph& graph, const MemoryModel& model,
                                   const CompileOptions& options, absl::Time deadline,
                                   const Clock& clock, std::vector<int32_t> order,
                                   std::string algorithm, SimulationResult simulation,
                                   const EveryOrderPeakBound& every_order_peak,
                                   const ScoredPoolProblem* scored = nullptr,
                                   double give_up_above = std::numeric_limits<double>::infinity()) {
  Layout layout{std::move(order), std::move(algorithm), std::move(simulation), {}, {}};
  if (options.pools.enabled() && !options.pools.one_arena) {
    const ArenaLimits limits = PlacementLimits(options, deadline, clock);
    std::optional<ScoredPoolProblem> built;
    if (scored == nullptr) {
      ORDO_ASSIGN_OR_RETURN(built, ScorePoolProblem(graph, model, layout.simulation,
                                                    options.alignment, options.pools));
      scored = &*built;
    }
    ORDO_ASSIGN_OR_RETURN(layout.pools,
                          PlaceScoredInPools(graph, model, *scored, limits, every_order_peak,
                                             give_up_above));
    layout.traffic = PlacementTraffic(model, layout.simulation, options.pools, *layout.pools,
                                      options.record_residency);
  }
  if (options.on_chip_bytes > 0) {
    TrafficOptions traffic{options.on_chip_bytes, options.record_residency};
    ORDO_ASSIGN_OR_RETURN(layout.traffic, EstimateTraffic(model, layout.order, traffic));
  }
  return layout;
}

// The layout's one-arena plan placed whole in one pool (PoolOptions::
// one_arena), and the placement's off-chip traffic.
// `problem`: the layout's pool problem when the caller has it (nullptr:
// built here).
absl::Status PlaceOneArena(const Graph& graph, const MemoryModel& model,
                           const CompileOptions& options, absl::Time deadline, const Clock& clock,
                           Layout& layout, const PoolProblem* problem = nullptr) {
  ORDO_ASSIGN_OR_RETURN(
      layout.pools,
      PlaceOneArenaInPools(graph, model, layout.simulation, options.alignment, options.pools,
                           layout.arena, PlacementLimits(options, deadline, clock), problem));
  layout.traffic = PlacementTraffic(model, layout.simulation, options.pools, *layout.pools,
                                    options.record_residency);
  return absl::OkStatus();
}

// The layout's one-arena plan, and with pools the single_pool baseline from
// it; for a runtime with one arena (PoolOptions::one_arena), the placement
// of that plan in one pool, which only then can be made.
// `built`: the arena problem of layout.simulation, when the caller has it.
absl::Status PlanLayoutArena(const Graph& graph, const MemoryModel& model,
                             const CompileOptions& options, absl::Time deadline, const Clock& clock,
                             Layout& layout, const ArenaProblem* built = nullptr) {
  const absl::Time arena_start = clock.Now();
  ORDO_ASSIGN_OR_RETURN(
      layout.arena,
      PlanArena(model, layout.simulation,
                ArenaOptionsFor(options, deadline, clock, options.arena_planner), clock, built));
  layout.arena_time = clock.Now() - arena_start;
  if (options.pools.one_arena) {
    ORDO_RETURN_IF_ERROR(PlaceOneArena(graph, model, options, deadline, clock, layout));
  } else if (layout.pools) {
    AddSinglePoolBaseline(options.pools.pools, layout.arena.arena_bytes, *layout.pools);
  }
  return absl::OkStatus();
}

absl::StatusOr<Layout> Evaluate(const Graph& graph, const MemoryModel& model,
                                const CompileOptions& options, absl::Time deadline,
                                const Clock& clock, std::vector<int32_t> order,
                                std::string algorithm, SimulationResult simulation,
                                const EveryOrderPeakBound& every_order_peak,
                                const ScoredPoolProblem* scored = nullptr) {
  ORDO_ASSIGN_OR_RETURN(Layout layout,
                        PlaceLayout(graph, model, options, deadline, clock, std::move(order),
                                    std::move(algorithm), std::move(simulation), every_order_peak,
                                    scored));
  ORDO_RETURN_IF_ERROR(PlanLayoutArena(graph, model, options, deadline, clock, layout));
  return layout;
}

// Moves the chosen layout into `result`. `start`: when the stage began; the
// stage's time but the chosen layout's one-arena plan (which a compile
// without pools makes too) is the pools' cost: the placements, and the other
// schedules found, verified, scored, laid out and placed to compete with it.
// An upper bound: without pools some of those would be compared too.
// `result.schedule` is still the schedule stage's order.
void Adopt(const MemoryModel& model, Layout best, const Clock& clock, absl::Time start,
           CompileResult& result) {
  if (best.order != result.schedule) {
    // The per-part figures describe the schedule stage's order, not this one.
    result.parts.clear();
    result.part_cached.clear();
    // The stage's lower bound holds for every order; the status follows
    // from it by the one rule.
    ScheduleResult adopted;
    adopted.peak_bytes = best.simulation.peak_bytes;
    adopted.lower_bound_bytes = result.lower_bound_bytes;
    ApplyLowerBound(0, MemoryLowerBound(model), adopted);
    result.peak_bytes = adopted.peak_bytes;
    result.lower_bound_bytes = adopted.lower_bound_bytes;
    result.status = adopted.status;
  }
  result.schedule = std::move(best.order);
  result.algorithm = std::move(best.algorithm);
  result.simulation = std::move(best.simulation);
  result.arena = best.pools ? PoolArenaPlan(*best.pools, std::move(best.arena))
                            : std::move(best.arena);
  result.placement = std::move(best.pools);
  if (result.placement) result.placement->stage_time = clock.Now() - start - best.arena_time;
  result.traffic = std::move(best.traffic);
}

// Many schedules share the best peak; their arenas and traffic differ.
// Without pools: ranks the chosen schedule and every other candidate with
// the same peak (Layout::Rank) and keeps the best, unless nothing can beat
// the chosen one.
absl::Status ChooseLayout(const Graph& graph, const MemoryModel& model,
                          const CompileOptions& options,
                          absl::Time deadline, const Clock& clock,
                          const std::vector<Candidate>& alternatives, CompileResult& result) {
  const absl::Time start = clock.Now();
  ORDO_ASSIGN_OR_RETURN(Layout best, Evaluate(graph, model, options, deadline, clock,
                                              result.schedule, std::move(result.algorithm),
                                              std::move(result.simulation), {}));
  for (const Candidate& candidate : alternatives) {
    if (best.Unbeatable()) break;
    if (candidate.peak_bytes != result.peak_bytes || candidate.order == best.order) continue;
    ORDO_ASSIGN_OR_RETURN(SimulationResult simulation, Verify(model, candidate));
    ORDO_ASSIGN_OR_RETURN(
        Layout layout,
        Evaluate(graph, model, options, deadline, clock, candidate.order,
                 absl::StrCat(candidate.algorithm, " (same peak, better layout)"),
                 std::move(simulation), {}));
    if (layout.Rank() < best.Rank()) best = std::move(layout);
  }
  Adopt(model, std::move(best), clock, start, result);
  return absl::OkStatus();
}

// Orders that compete with the chosen schedule for the banks, besides the
// baseline orders: greedy and hmcos, whose orders gave the fastest placement
// on several shared models (docs/pools-log.md, "Across schedules").
//
// hmcos's search is worth a fraction of the compile, not its whole budget:
// uncut it expands 233,564-310,863 states on randwire1-3 (~1 us each, a
// quarter second) against 6-67,072 on the other shared models. It is cut by
// work, not time, so that the schedule chosen does not depend on load or
// caches: at most kCandidateStatesPerOp states per op, at least
// kMinCandidateStates; cut, it keeps its best order so far (its last
// finished iteration's, else reverse post-order). The rule lets every
// shared model but RandWire finish (nasnet_cifar, 782 ops, needs 67,072).
// The compile's own deadline still stops it as a hard stop: a compile whose
// time limit runs out before the cap may choose another schedule.
constexpr int64_t kCandidateStatesPerOp = 100;
constexpr int64_t kMinCandidateStates = 10'000;

int64_t CandidateStatesCap(const MemoryModel& model) {
  return std::max(kMinCandidateStates, kCandidateStatesPerOp * model.num_ops());
}

// A candidate schedule and its score for the banks.
struct ScoredSchedule {
  Candidate candidate;
  SimulationResult simulation;
  // Its pool problem and the placer's greedy starts on it: the score is
  // their best (PlacePoolsGreedy), a fraction of the full placer's cost, and
  // a placement the full placer never does worse than (its starts include
  // them), so a candidate that fits here fits. Its full placement starts
  // from both instead of computing them again.
  ScoredPoolProblem pools;
  // The schedule stage's own schedule (not a competitor).
  bool chosen = false;
  // Placed in full (PlaceLayout).
  bool placed = false;

  const PoolPlacement& greedy() const { return pools.greedy.best(); }
};

// `candidate` scored with the placer's greedy starts: verified by the
// simulator and its pool problem built, unless the caller already has both.
// `effort` and `prove_no_order_fits`: ScoreBuiltPoolProblem's (competitors
// are scored thoroughly).
absl::StatusOr<ScoredSchedule> ScoreSchedule(const Graph& graph, const MemoryModel& model,
                                             const CompileOptions& options, Candidate candidate,
                                             PlacementEffort effort,
                                             std::optional<SimulationResult> simulation = {},
                                             std::optional<PoolProblem> problem = {},
                                             const NoOrderFitsProof& prove_no_order_fits = {}) {
  ScoredSchedule entry;
  if (simulation) {
    entry.simulation = std::move(*simulation);
  } else {
    ORDO_ASSIGN_OR_RETURN(entry.simulation, Verify(model, candidate));
  }
  if (!problem) {
    ORDO_ASSIGN_OR_RETURN(problem, BuildPoolProblem(graph, model, entry.simulation,
                                                    options.alignment, options.pools));
  }
  entry.pools = ScoreBuiltPoolProblem(*std::move(problem), effort, prove_no_order_fits);
  entry.candidate = std::move(candidate);
  return entry;
}

// The greedy placement's PlacementRank, then the lower peak; the chosen
// schedule (index 0) wins ties.
bool BetterScore(const ScoredSchedule& a, const ScoredSchedule& b) {
  return std::tuple_cat(PlacementRank(a.greedy()), std::tuple(a.candidate.peak_bytes)) <
         std::tuple_cat(PlacementRank(b.greedy()), std::tuple(b.candidate.peak_bytes));
}

// The schedules that compete with the chosen one for the banks: the
// baseline orders and the greedy and hmcos orders, each once and none the
// chosen order, none over the memory limit.
absl::StatusOr<std::vector<Candidate>> PoolCompetitors(
    const SchedulerRegistry& registry, const MemoryModel& model, const CompileOptions& options,
    const ScheduleLimits& limits, const Candidate& chosen,
    const std::vector<Candidate>& baselines) {
  std::vector<Candidate> candidates;
  auto add = [&](Candidate candidate) {
    if (options.memory_limit_bytes > 0 && candidate.peak_bytes > options.memory_limit_bytes) {
      return;
    }
    if (candidate.order == chosen.order) return;
    for (const Candidate& known : candidates) {
      if (known.order == candidate.order) return;
    }
    candidates.push_back(std::move(candidate));
  };
  for (const Candidate& baseline : baselines) add(baseline);
  ORDO_ASSIGN_OR_RETURN(auto greedy, registry.Create("greedy"));
  IterativeSchedulingOptions capped;
  capped.search.max_states_expanded = CandidateStatesCap(model);
  const HmcosScheduler hmcos(capped);
  for (const Scheduler* scheduler : {static_cast<const Scheduler*>(greedy.get()),
                                     static_cast<const Scheduler*>(&hmcos)}) {
    ORDO_ASSIGN_OR_RETURN(ScheduleResult scheduled, scheduler->Schedule(model, limits));
    add({std::move(scheduled.order), scheduled.algorithm, scheduled.peak_bytes});
  }
  return candidates;
}

// When no candidate order has a valid placement: an order repaired from
// them (best score first) until every step's live blocks split over the
// banks (RepairOrderForPools), under a work cap of kRepairOrdersPerOp
// orders per op; nullopt when none is found.
std::optional<Candidate> RepairedPoolCandidate(const Graph& graph, const MemoryModel& model,
                                               const CompileOptions& options,
                                               const std::vector<ScoredSchedule>& scored) {
  std::vector<std::vector<int32_t>> starts;
  starts.reserve(scored.size());
  for (const ScoredSchedule& entry : scored) starts.push_back(entry.candidate.order);
  const int64_t cap = std::max(kMinRepairOrders, kRepairOrdersPerOp * model.num_ops());
  PoolOrderRepair repair =
      RepairOrderForPools(graph, model, options.alignment, options.pools, starts, cap);
  if (!repair.order) return std::nullopt;
  absl::StatusOr<int64_t> peak = SimulatePeak(model, *repair.order);
  if (!peak.ok()) return std::nullopt;
  if (options.memory_limit_bytes > 0 && *peak > options.memory_limit_bytes) return std::nullopt;
  return Candidate{std::move(*repair.order),
                   absl::StrCat(scored[repair.start].candidate.algorithm, "+split repair"), *peak};
}

// The schedule stage's per-part bounds for the granularity proof of
// PoolInfeasibility, on the partitioner's parts. The stage's parts are
// those parts when their op counts agree in order: both merge the same
// cut blocks of the model, so equal counts are equal parts. Otherwise, or
// with one part (the whole's bound says as much), none.
std::vector<PartLiveBound> PartBounds(const Graph& graph, const MemoryModel& model,
                                      const std::vector<PartStats>& stats) {
  if (stats.size() < 2) return {};
  const Partition partition = HourglassPartitioner().Split(model);
  if (partition.parts.size() != stats.size()) return {};
  std::vector<EveryOrderPeakBound> part_peaks;
  for (size_t p = 0; p < stats.size(); ++p) {
    if (partition.parts[p].ops.size() != static_cast<size_t>(stats[p].ops)) return {};
    part_peaks.push_back({stats[p].lower_bound_bytes, stats[p].status == ScheduleStatus::kOptimal
                                                          ? "the part's proved least peak"
                                                          : "the part's proved lower bound on "
                                                            "its peak"});
  }
  return PartLiveBounds(graph, partition, part_peaks);
}

// TFLite Micro's way on the layout's own schedule, as a baseline: its one
// arena (planned already) whole in the fastest pool that holds it
// (OneArenaPlacement). When no pool may hold every tensor (pins), it does not
// fit, by the whole arena. `problem`: the layout's pool problem when the
// caller has it (nullptr: built here; an error other than INVALID_ARGUMENT
// is a bug and leaves).
absl::Status AddOneArenaBaseline(const Graph& graph, const MemoryModel& model,
                                 const CompileOptions& options, Layout& layout,
                                 const PoolProblem* problem = nullptr) {
  PoolBaseline baseline{"one_arena", false, 0, layout.arena.arena_bytes, layout.arena.arena_bytes};
  std::optional<PoolProblem> built;
  if (problem == nullptr) {
    absl::StatusOr<PoolProblem> made =
        BuildPoolProblem(graph, model, layout.simulation, options.alignment, options.pools);
    if (!made.ok() && !absl::IsInvalidArgument(made.status())) return made.status();
    if (made.ok()) problem = &built.emplace(*std::move(made));
  }
  // Figures only: this placement is not returned (OneArenaIfFaster checks
  // the one it returns).
  if (const std::optional<PoolPlacement> one =
          problem ? OneArenaPlacement(*problem, layout.arena) : std::nullopt) {
    baseline.fits = one->fits();
    baseline.modelled_seconds = one->evaluation.modelled_seconds;
    baseline.overflow_bytes = one->evaluation.overflow_bytes;
  }
  layout.pools->baselines.push_back(baseline);
  return absl::OkStatus();
}

// Of two one arenas that fit, the faster, and of equal times the smaller.
// A pool's time is the same for every order in exact arithmetic, but the
// blocks it is summed over differ (in-place chains), so times within a few
// ulps are equal.
bool SmallerOneArena(const Layout& a, const Layout& b) {
  const double ta = a.pools->placement.evaluation.modelled_seconds;
  const double tb = b.pools->placement.evaluation.modelled_seconds;
  if (std::abs(ta - tb) > 1e-12 * std::max(ta, tb)) return ta < tb;
  return a.arena.arena_bytes < b.arena.arena_bytes;
}

// TFLite Micro's way, an order's one arena whole in the fastest pool that
// holds it, is a placement too, and the placer's greedy offsets can miss it
// (they fragment where the arena planner does not). A pool's time is the
// same for every order (the spec's time has no offsets), so what differs
// between the candidates is whether their arena fits a faster pool: each
// candidate's arena is planned (or `best`'s reused) only when a pool that
// holds its aligned peak could beat the incumbent, and a fitting one that
// ranks better wins. Its report keeps a bound for every placement of its
// order, not only one-arena ones.
absl::StatusOr<std::optional<Layout>> OneArenaIfFaster(const Graph& graph, const MemoryModel& model,
                                                       const CompileOptions& options,
                                                       absl::Time deadline, const Clock& clock,
                                                       const std::vector<ScoredSchedule>& scored,
                                                       const Layout& best) {
  CompileOptions one_arena = options;
  one_arena.pools.one_arena = true;
  // Least aligned peak first (the schedule stage's own on ties): its arena
  // is the likeliest to fit a fast pool, and a later order must be faster
  // by more than rounding to be planned, so a model that fits the fastest
  // pool whole plans no arena here.
  std::vector<const ScoredSchedule*> by_peak;
  by_peak.reserve(scored.size());
  for (const ScoredSchedule& entry : scored) by_peak.push_back(&entry);
  std::stable_sort(by_peak.begin(), by_peak.end(), [](const auto* a, const auto* b) {
    return std::pair(a->pools.problem.arena.lower_bound_bytes, !a->chosen) <
           std::pair(b->pools.problem.arena.lower_bound_bytes, !b->chosen);
  });
  std::optional<Layout> winner;
  const ScoredSchedule* winner_entry = nullptr;
  for (const ScoredSchedule* candidate : by_peak) {
    const ScoredSchedule& entry = *candidate;
    const Layout& incumbent = winner ? *winner : best;
    const PoolProblem& problem = entry.pools.problem;
    const double bound = OneArenaLowerBoundSeconds(problem, problem.arena.lower_bound_bytes);
    if (!std::isfinite(bound) ||
        (incumbent.FitsPools() &&
         bound >= incumbent.pools->placement.evaluation.modelled_seconds * (1 - 1e-12))) {
      continue;
    }
    Layout layout{entry.candidate.order, entry.candidate.algorithm, entry.simulation, {}, {}};
    if (entry.candidate.order == best.order && !best.arena.tensors.empty()) {
      // Planned once, for this order, as a compile without pools does.
      layout.arena = best.arena;
      layout.arena_time = best.arena_time;
      ORDO_RETURN_IF_ERROR(
          PlaceOneArena(graph, model, one_arena, deadline, clock, layout, &problem));
    } else {
      ORDO_RETURN_IF_ERROR(PlanLayoutArena(graph, model, one_arena, deadline, clock, layout));
    }
    if (!layout.FitsPools() || !(winner ? SmallerOneArena(layout, *winner)
                                        : layout.Rank() < incumbent.Rank())) {
      continue;
    }
    winner = std::move(layout);
    winner_entry = &entry;
  }
  if (!winner) return std::nullopt;
  PoolReport& report = *winner->pools;
  double order_bound = PoolPeakStepBoundSeconds(winner_entry->pools.problem);
  if (winner->order == best.order)
    order_bound = std::max(order_bound, best.pools->lower_bound_seconds);
  report.lower_bound_seconds = std::min(order_bound, report.placement.evaluation.modelled_seconds);
  AddPoolBaselines(winner_entry->pools, winner->arena.arena_bytes, report);
  if (!winner_entry->chosen) absl::StrAppend(&winner->algorithm, " (places faster in the pools)");
  return winner;
}

// The fast effort (PlacementEffort::kFast) when the chosen schedule's fast
// placement fits (ScoreBuiltPoolProblem): that placement, unless the
// schedule's one arena whole in one pool is faster (OneArenaIfFaster), so it
// is never slower than either baseline nor than TFLite Micro's way on this
// order. No other order competes.
// `arena_problem_time`: building the chosen order's arena problem, which
// its pool problem holds and its one-arena plan reads: the plan's time.
absl::Status AdoptFastPlacement(const Graph& graph, const MemoryModel& model,
                                const CompileOptions& options, absl::Time deadline,
                                const Clock& clock, ScoredSchedule chosen,
                                absl::Duration arena_problem_time, absl::Time start,
                                CompileResult& result) {
  std::vector<ScoredSchedule> scored;
  scored.push_back(std::move(chosen));
  const ScoredSchedule& entry = scored.front();
  ORDO_ASSIGN_OR_RETURN(Layout layout,
                        PlaceLayout(graph, model, options, deadline, clock, entry.candidate.order,
                                    entry.candidate.algorithm, entry.simulation, {},
                                    &entry.pools));
  ORDO_RETURN_IF_ERROR(
      PlanLayoutArena(graph, model, options, deadline, clock, layout, &entry.pools.problem.arena));
  layout.arena_time += arena_problem_time;
  ORDO_ASSIGN_OR_RETURN(std::optional<Layout> one_arena,
                        OneArenaIfFaster(graph, model, options, deadline, clock, scored, layout));
  if (one_arena) layout = *std::move(one_arena);
  ORDO_RETURN_IF_ERROR(AddOneArenaBaseline(graph, model, options, layout, &entry.pools.problem));
  Adopt(model, std::move(layout), clock, start, result);
  return absl::OkStatus();
}

// Steps 1-2 of ChoosePoolLayout: the chosen schedule (thoroughly scored
// from here on) and its competitors, each verified and scored, best score
// first.
absl::StatusOr<std::vector<ScoredSchedule>> ScoreCompetingOrders(
    const Graph& graph, const MemoryModel& model, const CompileOptions& options,
    const SchedulerRegistry& registry, const ScheduleLimits& limits,
    const std::vector<Candidate>& baselines, ScoredSchedule chosen_entry) {
  MakeStartsThorough(chosen_entry.pools);
  ORDO_ASSIGN_OR_RETURN(std::vector<Candidate> candidates,
                        PoolCompetitors(registry, model, options, limits,
                                        chosen_entry.candidate, baselines));
  std::vector<ScoredSchedule> scored;
  scored.reserve(candidates.size() + 2);  // the chosen one and a repaired order
  scored.push_back(std::move(chosen_entry));
  for (Candidate& candidate : candidates) {
    ORDO_ASSIGN_OR_RETURN(ScoredSchedule entry,
                          ScoreSchedule(graph, model, options, std::move(candidate),
                                        PlacementEffort::kThorough));
    scored.push_back(std::move(entry));
  }
  std::stable_sort(scored.begin(), scored.end(), BetterScore);
  return scored;
}

// Steps 1-5 of ChoosePoolLayout (the thorough effort, or a fast placement
// that does not fit and no proof that nothing does).
absl::Status ChooseAmongOrders(const Graph& graph, const MemoryModel& model,
                               const CompileOptions& options, const SchedulerRegistry& registry,
                               const ScheduleLimits& limits, const Clock& clock,
                               const std::vector<Candidate>& baselines,
                               const EveryOrderPeakBound& every_order_peak,
                               ScoredSchedule chosen_entry, absl::Time start,
                               CompileResult& result) {
  const absl::Time deadline = limits.deadline;
  ORDO_ASSIGN_OR_RETURN(std::vector<ScoredSchedule> scored,
                        ScoreCompetingOrders(graph, model, options, registry, limits, baselines,
                                             std::move(chosen_entry)));
  const bool chosen_fits = std::find_if(scored.begin(), scored.end(), [](const auto& entry) {
                             return entry.chosen;
                           })->greedy().fits();
  // A competitor is named for why it won: it fits where the chosen one does
  // not, places faster, or (when nothing fits) overflows least.
  auto place = [&](ScoredSchedule& entry, double give_up_above) -> absl::StatusOr<Layout> {
    entry.placed = true;
    ORDO_ASSIGN_OR_RETURN(
        Layout layout,
        PlaceLayout(graph, model, options, deadline, clock, entry.candidate.order,
                    entry.candidate.algorithm, entry.simulation, every_order_peak, &entry.pools,
                    give_up_above));
    if (!entry.chosen) {
      absl::StrAppend(&layout.algorithm,
                      !layout.FitsPools() ? " (overflows the pools least)"
                      : chosen_fits       ? " (places faster in the pools)"
                                          : " (fits the pools)");
    }
    return layout;
  };
  // `layout` replaces `best` when it ranks better, or as well with `replace_ties`.
  // Its arena (the last tie-break) is planned only when it can still win.
  std::optional<Layout> best;
  auto keep_better = [&](Layout layout, bool replace_ties) -> absl::Status {
    if (best && best->RankBeforeArena() < layout.RankBeforeArena()) return absl::OkStatus();
    ORDO_RETURN_IF_ERROR(PlanLayoutArena(graph, model, options, deadline, clock, layout));
    const bool better = !best || (replace_ties ? !(best->Rank() < layout.Rank())
                                               : layout.Rank() < best->Rank());
    if (better) best = std::move(layout);
    return absl::OkStatus();
  };
  for (ScoredSchedule& entry : scored) {
    ORDO_ASSIGN_OR_RETURN(Layout layout, place(entry, std::numeric_limits<double>::infinity()));
    const bool fits = layout.FitsPools();
    ORDO_RETURN_IF_ERROR(keep_better(std::move(layout), /*replace_ties=*/false));
    if (fits) break;
  }
  if (!best->FitsPools()) {
    std::optional<Candidate> repaired = RepairedPoolCandidate(graph, model, options, scored);
    if (repaired) {
      ORDO_ASSIGN_OR_RETURN(ScoredSchedule repaired_entry,
                            ScoreSchedule(graph, model, options, std::move(*repaired),
                                          PlacementEffort::kThorough));
      ScoredSchedule& entry = scored.emplace_back(std::move(repaired_entry));
      ORDO_ASSIGN_OR_RETURN(Layout layout,
                            place(entry, std::numeric_limits<double>::infinity()));
      ORDO_RETURN_IF_ERROR(keep_better(std::move(layout), /*replace_ties=*/false));
    }
  }
  // The score is the placer's first step only: a higher peak is kept only
  // when its full placement beats the least peak's (step 4).
  ScoredSchedule& least_peak =
      *std::min_element(scored.begin(), scored.end(), [](const auto& a, const auto& b) {
        return std::pair(a.candidate.peak_bytes, !a.chosen) <
               std::pair(b.candidate.peak_bytes, !b.chosen);
      });
  // Its placement is given up as soon as its lower bound is above the
  // winner's time (at the bound it could still tie, and ties go to it).
  if (best->FitsPools() && !least_peak.placed) {
    ORDO_ASSIGN_OR_RETURN(Layout layout,
                          place(least_peak, best->pools->placement.evaluation.modelled_seconds));
    ORDO_RETURN_IF_ERROR(keep_better(std::move(layout), /*replace_ties=*/true));
  }
  ORDO_ASSIGN_OR_RETURN(std::optional<Layout> one_arena,
                        OneArenaIfFaster(graph, model, options, deadline, clock, scored, *best));
  if (one_arena) best = std::move(one_arena);
  ORDO_RETURN_IF_ERROR(AddOneArenaBaseline(graph, model, options, *best));
  Adopt(model, std::move(*best), clock, start, result);
  return absl::OkStatus();
}

// With pools the schedule is chosen for the banks (spec: Memory pools; the
// issue's "joint with scheduling"): the order of least peak is not always
// the one that places fastest, nor the only one that fits. Steps:
//  0. With the fast effort (the default), the chosen schedule alone when its
//     fast placement fits (AdoptFastPlacement); the steps below run only
//     with kThorough or when it does not fit. Where no greedy start fits,
//     the proof that no order fits (PoolInfeasibility) is asked then, once.
//  1. Candidates (PoolCompetitors), each verified by the simulator.
//  2. Each is scored by PlacePoolsGreedy on its own pool problem (tens of
//     greedy passes in all, against the full placer's relaxation and
//     search), unless PoolInfeasibility proves on the chosen schedule that
//     no order fits: then only the chosen one is placed.
//  3. The best score (BetterScore) is placed by the full placer
//     (PlaceLayout, from its scored problem and greedy starts).
//     When no candidate's greedy placement fits, the candidates are placed
//     in score order until one fits (the full placer may fit where its
//     greedy starts do not), else the least overflowing stays.
//  4. A fitting winner other than the least-peak candidate (the chosen one
//     on ties) is kept only when its full placement ranks strictly better
//     (Layout::Rank) than the least-peak one's, which is placed in full
//     unless its lower bound (the placer's, on the way) is above the
//     winner's modelled time.
//  5. A candidate's one arena whole in one pool (OneArenaIfFaster) replaces
//     the winner when it is faster: ordo is never slower than TFLite
//     Micro's way with any of these orders.
// A placed layout's one-arena plan (the last tie-break of Layout::Rank) is
// made only when the rest of its rank does not lose already.
// Not optimal over orders: a schedule none of these schedulers produces may
// place faster; and the full placer on the winner may do less well than it
// would have on a runner-up other than the least-peak candidate.
absl::Status ChoosePoolLayout(const Graph& graph, const MemoryModel& model,
                              const CompileOptions& options, const SchedulerRegistry& registry,
                              const ScheduleLimits& limits, const Clock& clock,
                              const std::vector<Candidate>& baselines, CompileResult& result) {
  const absl::Time start = clock.Now();
  const absl::Time deadline = limits.deadline;
  // The chosen order's arena problem: its pool problem's, and (with a
  // fast placement that fits) the one its one-arena plan reads, which a
  // compile without pools builds too, so then its time is the plan's.
  const absl::Time arena_problem_start = clock.Now();
  ORDO_ASSIGN_OR_RETURN(ArenaProblem arena_problem,
                        BuildArenaProblem(model, result.simulation, options.alignment));
  const absl::Duration arena_problem_time = clock.Now() - arena_problem_start;
  ORDO_ASSIGN_OR_RETURN(
      PoolProblem chosen_problem,
      BuildPoolProblem(graph, model, result.simulation, std::move(arena_problem), options.pools));
  // The schedule stage's bound holds for every order (ScheduleResult), so
  // the granularity proof of PoolInfeasibility may use it; its parts'
  // bounds (the model partitioned again) only when the whole's do not
  // prove it, as an op's tensors usually do (e.g. nasnet_imagenet on the
  // STM32H743, where they were a tenth of the stage).
  EveryOrderPeakBound every_order_peak{
      result.lower_bound_bytes,
      result.status == ScheduleStatus::kOptimal ? "the proved least peak"
                                                : "the proved lower bound on the peak",
      {}};
  const NoOrderFitsProof prove_no_order_fits = [&](const PoolProblem& problem) {
    std::string proof = PoolInfeasibility(graph, model, problem, every_order_peak);
    if (proof.empty()) {
      every_order_peak.parts = PartBounds(graph, model, result.parts);
      if (!every_order_peak.parts.empty()) {
        proof = PoolInfeasibility(graph, model, problem, every_order_peak);
      }
    }
    return proof;
  };
  // The schedule stage's order, verified already, scored by the effort's
  // rule: a fitting fast placement ends the stage (step 0). One that does
  // not fit asks for the proof on the way.
  ORDO_ASSIGN_OR_RETURN(
      ScoredSchedule chosen_entry,
      ScoreSchedule(graph, model, options,
                    Candidate{result.schedule, std::move(result.algorithm), result.peak_bytes},
                    options.pools.effort, std::move(result.simulation), std::move(chosen_problem),
                    prove_no_order_fits));
  chosen_entry.chosen = true;
  if (chosen_entry.pools.fast) {
    return AdoptFastPlacement(graph, model, options, deadline, clock, std::move(chosen_entry),
                              arena_problem_time, start, result);
  }
  const std::string no_order_fits = chosen_entry.pools.no_order_fits
                                        ? *chosen_entry.pools.no_order_fits
                                        : prove_no_order_fits(chosen_entry.pools.problem);
  chosen_entry.pools.no_order_fits = no_order_fits;
  if (!no_order_fits.empty()) {
    ORDO_ASSIGN_OR_RETURN(
        Layout layout,
        Evaluate(graph, model, options, deadline, clock, std::move(chosen_entry.candidate.order),
                 std::move(chosen_entry.candidate.algorithm), std::move(chosen_entry.simulation),
                 every_order_peak, &chosen_entry.pools));
    ORDO_RETURN_IF_ERROR(
        AddOneArenaBaseline(graph, model, options, layout, &chosen_entry.pools.problem));
    Adopt(model, std::move(layout), clock, start, result);
    return absl::OkStatus();
  }
  return ChooseAmongOrders(graph, model, options, registry, limits, clock, baselines,
                           every_order_peak, std::move(chosen_entry), start, result);
}

// The arena `planner` gives the schedule `simulation` describes: the figure
// in `planned` (a plan of that same schedule, or null) when that planner made
// one there, the arena stage's `best` having run it as a member; else
// planned now.
absl::StatusOr<int64_t> BaselineArenaBytes(const MemoryModel& model,
                                           const SimulationResult& simulation,
                                           const ArenaPlan* planned, const ArenaOptions& options,
                                           const Clock& clock) {
  if (planned != nullptr) {
    if (std::optional<int64_t> bytes = PlannedArenaBytes(*planned, options.planner)) return *bytes;
  }
  ORDO_ASSIGN_OR_RETURN(ArenaPlan plan, PlanArena(model, simulation, options, clock));
  return plan.arena_bytes;
}

absl::Status CompareArenas(const MemoryModel& model, const CompileOptions& options,
                           absl::Time deadline, const Clock& clock,
                           absl::Span<const int32_t> model_order, CompileResult& result) {
  // TFLite's ArenaPlanner, and TFLite Micro's GreedyMemoryPlanner: what the
  // device allocates for the file order (model order) and for ordo's order
  // when it plans the arena itself. result.arena was planned on
  // result.simulation with the same alignment (with pools, its flat plan's
  // figures are kept).
  const bool schedule_is_model_order =
      absl::MakeConstSpan(result.schedule) == model_order;
  for (const char* planner : {"tflite", "tflm"}) {
    const ArenaOptions baseline = ArenaOptionsFor(options, deadline, clock, planner);
    ORDO_ASSIGN_OR_RETURN(
        const int64_t on_schedule,
        BaselineArenaBytes(model, result.simulation, &result.arena, baseline, clock));
    ORDO_ASSIGN_OR_RETURN(
        const int64_t on_model_order,
        BaselineArenaBytes(model, result.model_order_simulation,
                           schedule_is_model_order ? &result.arena : nullptr, baseline, clock));
    result.arena_baselines.push_back({planner, on_schedule, on_model_order});
  }
  return absl::OkStatus();
}

absl::Status EstimateModelOrderTraffic(const MemoryModel& model, const CompileOptions& options,
                                       absl::Span<const int32_t> model_order,
                                       CompileResult& result) {
  if (options.on_chip_bytes == 0) return absl::OkStatus();
  ORDO_ASSIGN_OR_RETURN(result.model_order_traffic,
                        EstimateTraffic(model, model_order, {options.on_chip_bytes, false}));
  return absl::OkStatus();
}

void Report(const CompileServices& services, const Clock& clock, absl::Time start,
            CompileProgress::Stage stage, int32_t parts_total, int32_t parts_done) {
  if (services.on_progress) {
    services.on_progress({stage, parts_total, parts_done, clock.Now() - start});
  }
}

// Schedule stage: the scheduler in this thread (`best` divides the model
// itself, through the same ScheduleByParts), or, with a runner, part by
// part through the cache and the runner.
absl::StatusOr<ScheduleResult> ScheduleModel(const MemoryModel& model,
                                             const CompileOptions& options,
                                             const CompileServices& services,
                                             const ScheduleLimits& limits, const Scheduler& scheduler,
                                             const Clock& clock, absl::Time start,
                                             CompileResult& result) {
  if (services.runner == nullptr) {
    ORDO_ASSIGN_OR_RETURN(ScheduleResult scheduled, scheduler.Schedule(model, limits));
    Report(services, clock, start, CompileProgress::Stage::kScheduled, 1, 1);
    return scheduled;
  }
  PartScheduleOptions part_options;
  part_options.scheduler = options.scheduler;
  part_options.time_limit = std::max(limits.deadline - clock.Now(), absl::ZeroDuration());
  part_options.request_id = services.request_id;
  // `best` locally searches only the parts that hold the peak; so does the
  // service, or a first compile would search parts that cannot matter.
  part_options.search_only_peak_parts = options.scheduler == "best";
  // ScheduleByParts reports twice: after the cache lookups, then after the
  // runs (even when the lookups left nothing to run).
  bool looked_up = false;
  part_options.on_progress = [&](int32_t parts, int32_t done) {
    Report(services, clock, start,
           looked_up ? CompileProgress::Stage::kScheduled : CompileProgress::Stage::kPartitioned,
           parts, done);
    looked_up = true;
  };
  ORDO_ASSIGN_OR_RETURN(PartScheduleResult scheduled,
                        ScheduleByParts(model, part_options, limits, *services.runner,
                                        services.cache));
  result.part_stats = scheduled.stats;
  result.part_cached = std::move(scheduled.part_cached);
  return std::move(scheduled.schedule);
}

}  // namespace

absl::StatusOr<CompileResult> Compile(const Graph& graph, const CompileOptions& options,
                                      const Clock& clock) {
  return Compile(graph, options, CompileServices{}, clock);
}

absl::StatusOr<CompileResult> Compile(const Graph& graph, const CompileOptions& options,
                                      const CompileServices& services, const Clock& clock) {
  const absl::Time start = clock.Now();
  ORDO_RETURN_IF_ERROR(CheckOptions(options));
  const SchedulerRegistry& registry = BuiltinSchedulers();
  ORDO_ASSIGN_OR_RETURN(std::unique_ptr<Scheduler> scheduler,
                        registry.Create(options.scheduler));
  // Refuse a bad planner name before spending the scheduling time.
  const bool plan_arena = options.arena_planner != kNoArenaPlanner;
  if (plan_arena) {
    ORDO_RETURN_IF_ERROR(BuiltinArenaPlanners().Create(options.arena_planner).status());
  }
  ORDO_ASSIGN_OR_RETURN(MemoryModel model, BuildMemoryModel(graph, options.memory));
  Report(services, clock, start, CompileProgress::Stage::kImported, 0, 0);

  ScheduleLimits limits;
  limits.clock = &clock;
  limits.deadline = start + options.time_limit;
  limits.max_state_bytes = options.max_state_bytes;
  limits.cancelled = services.cancelled;

  CompileResult result;
  result.memory = options.memory;
  ORDO_ASSIGN_OR_RETURN(std::vector<Candidate> baselines,
                        RunBaselines(registry, model, limits, result.baselines));
  ORDO_ASSIGN_OR_RETURN(
      ScheduleResult scheduled,
      ScheduleModel(model, options, services, limits, *scheduler, clock, start, result));
  Candidate chosen{std::move(scheduled.order), scheduled.algorithm, scheduled.peak_bytes};
  ORDO_ASSIGN_OR_RETURN(result.simulation, Verify(model, chosen));
  ORDO_ASSIGN_OR_RETURN(result.model_order_simulation, Verify(model, baselines.front()));
  result.schedule = std::move(chosen.order);
  result.peak_bytes = scheduled.peak_bytes;
  result.lower_bound_bytes = std::max(scheduled.lower_bound_bytes, MemoryLowerBound(model));
  result.status = scheduled.status;
  result.scheduler = options.scheduler;
  result.algorithm = std::move(scheduled.algorithm);
  result.stats = scheduled.stats;
  result.parts = std::move(scheduled.parts);

  if (plan_arena) {
    // One arena in one pool: the least-peak schedules compete by the one
    // arena, as without pools, and the winner's goes into a pool.
    if (options.pools.enabled() && !options.pools.one_arena) {
      ORDO_RETURN_IF_ERROR(
          ChoosePoolLayout(graph, model, options, registry, limits, clock, baselines, result));
    } else {
      ORDO_RETURN_IF_ERROR(
          ChooseLayout(graph, model, options, limits.deadline, clock, baselines, result));
      if (options.pools.one_arena) {
        ORDO_ASSIGN_OR_RETURN(
            const ScoredPoolProblem scored,
            ScorePoolProblem(graph, model, result.simulation, options.alignment, options.pools));
        AddPoolBaselines(scored, result.arena.arena_bytes, *result.placement);
      }
    }
    ORDO_RETURN_IF_ERROR(CompareArenas(model, options, limits.deadline, clock,
                                       baselines.front().order, result));
  } else if (options.on_chip_bytes > 0) {
    ORDO_ASSIGN_OR_RETURN(result.traffic,
                          EstimateTraffic(model, result.schedule,
                                          {options.on_chip_bytes, options.record_residency}));
  }
  ORDO_RETURN_IF_ERROR(
      EstimateModelOrderTraffic(model, options, baselines.front().order, result));
  result.time = clock.Now() - start;
  Report(services, clock, start, CompileProgress::Stage::kFinished,
         result.part_stats ? result.part_stats->parts : 1,
         result.part_stats ? result.part_stats->parts : 1);
  return result;
}

absl::StatusOr<bool> OrderFitsDevice(const Graph& graph, const CompileOptions& options,
                                     absl::Span<const OpId> order, absl::Duration budget,
                                     const Clock& clock) {
  ORDO_RETURN_IF_ERROR(CheckOptions(options));
  ORDO_ASSIGN_OR_RETURN(MemoryModel model, BuildMemoryModel(graph, options.memory));
  ORDO_ASSIGN_OR_RETURN(SimulationResult simulation, Simulate(model, order));
  const int64_t peak = simulation.peak_bytes;
  if (options.memory_limit_bytes > 0 && peak > options.memory_limit_bytes) return false;
  if (!options.pools.enabled()) return options.memory_limit_bytes > 0;
  // The tensors live at the peak step are disjoint in any valid placement;
  // one arena holds them all in one pool.
  int64_t capacity = 0;
  for (const MemoryPool& pool : options.pools.pools) {
    capacity = options.pools.one_arena ? std::max(capacity, pool.capacity_bytes)
                                       : capacity + pool.capacity_bytes;
  }
  if (peak > capacity) return false;
  // Fitting is the placement's alone: no one-arena plan, unless the
  // placement is that plan's.
  std::vector<int32_t> candidate(order.begin(), order.end());
  const absl::Time deadline = clock.Now() + budget;
  ORDO_ASSIGN_OR_RETURN(
      Layout layout, options.pools.one_arena
                         ? Evaluate(graph, model, options, deadline, clock, std::move(candidate),
                                    "candidate", std::move(simulation), {})
                         : PlaceLayout(graph, model, options, deadline, clock, std::move(candidate),
                                       "candidate", std::move(simulation), {}));
  return layout.FitsPools();
}

std::optional<bool> FitsDevice(const CompileOptions& options, const CompileResult& result) {
  const bool limit_holds =
      options.memory_limit_bytes == 0 || result.peak_bytes <= options.memory_limit_bytes;
  if (result.placement) return result.placement->fits() && limit_holds;
  if (options.memory_limit_bytes == 0) return std::nullopt;
  return limit_holds;
}

namespace {

// Estimate's verdict against the banks, without a search: no order fits
// when a tensor is larger than every pool it may use or PoolInfeasibility
// proves it (with the spec's bound); the greedy order fits when the
// placer's greedy starts place it; else only a compile can tell. Sets
// estimate.pools_reason. INVALID_ARGUMENT for a bad spec (BuildPoolProblem).
absl::StatusOr<EstimateFit> EstimatePoolsFit(const Graph& graph, const MemoryModel& model,
                                             const CompileOptions& options,
                                             const std::vector<int32_t>& greedy_order,
                                             EstimateResult& estimate) {
  ORDO_ASSIGN_OR_RETURN(SimulationResult simulation, Simulate(model, greedy_order));
  absl::StatusOr<PoolProblem> problem =
      BuildPoolProblem(graph, model, simulation, options.alignment, options.pools);
  if (!problem.ok()) {
    if (!IsTensorLargerThanEveryPool(problem.status())) return problem.status();
    estimate.pools_reason = std::string(problem.status().message());
    return EstimateFit::kNo;
  }
  const EveryOrderPeakBound bound{estimate.lower_bound_bytes, "the spec's lower bound", {}};
  estimate.pools_reason = PoolInfeasibility(graph, model, *problem, bound);
  if (!estimate.pools_reason.empty()) return EstimateFit::kNo;
  if (options.pools.one_arena) {
    // One arena holds every order's peak in one pool that may hold every
    // tensor (pins); its layout needs an arena plan, which only a compile
    // makes. The weights (count_weights) are in the bound but in no pool.
    std::optional<int64_t> largest;
    for (int32_t p = 0; p < problem->num_pools(); ++p) {
      if (MayHoldEveryBlock(*problem, p)) {
        largest = std::max(largest.value_or(0), problem->pools[p].capacity_bytes);
      }
    }
    if (!largest) return absl::InvalidArgumentError(NoPoolHoldsEveryBlock(graph, *problem));
    const int64_t activations_bound = estimate.lower_bound_bytes - model.constant_bytes;
    if (activations_bound > *largest) {
      estimate.pools_reason = absl::StrCat("one arena: every order's activations peak at ",
                                           activations_bound, " bytes or more, more than the ",
                                           *largest, " of the largest pool that may hold them");
      return EstimateFit::kNo;
    }
    // Any order's one arena is at most its tensors' aligned sizes end to end
    // (a planner puts each block at the lowest gap), so a pool holding them
    // all holds it whatever the compile chooses.
    std::optional<int64_t> end_to_end = 0;
    for (int32_t t = 0; t < model.num_tensors() && end_to_end; ++t) {
      if (!simulation.has_interval[t]) continue;
      const std::optional<int64_t> size = AlignUp(model.tensors[t].bytes, options.alignment);
      end_to_end = size ? CheckedAdd(*end_to_end, *size) : std::nullopt;
    }
    if (end_to_end && *end_to_end <= *largest) {
      estimate.pools_reason =
          absl::StrCat("one arena: every activation end to end (", *end_to_end,
                       " bytes) fits the largest pool that may hold them, of ", *largest);
      return EstimateFit::kYes;
    }
    estimate.pools_reason = "one arena: only a compile plans its layout";
    return EstimateFit::kUnknown;
  }
  const PoolPlacement placement = PlacePoolsGreedy(*problem);
  if (placement.fits()) {
    estimate.pools_reason = absl::StrCat("the greedy order, placed by ", placement.algorithm,
                                         ", fits the pools");
    return EstimateFit::kYes;
  }
  estimate.pools_reason = "the greedy order's greedy placements overflow; a compile may fit";
  return EstimateFit::kUnknown;
}

}  // namespace

absl::StatusOr<EstimateResult> Estimate(const Graph& graph, const CompileOptions& options,
                                        ScheduleCache* cache) {
  ORDO_RETURN_IF_ERROR(CheckOptions(options));
  ORDO_ASSIGN_OR_RETURN(MemoryModel model, BuildMemoryModel(graph, options.memory));
  const SchedulerRegistry& registry = BuiltinSchedulers();
  EstimateResult estimate;
  estimate.ops = graph.num_ops();
  estimate.import_notes.assign(graph.notes().begin(), graph.notes().end());
  std::vector<int32_t> greedy_order;
  for (const auto& [name, peak] :
       {std::pair{"model", &estimate.model_order_peak_bytes},
        std::pair{"greedy", &estimate.greedy_peak_bytes}}) {
    ORDO_ASSIGN_OR_RETURN(auto scheduler, registry.Create(name));
    ORDO_ASSIGN_OR_RETURN(ScheduleResult result, scheduler->Schedule(model, ScheduleLimits{}));
    *peak = result.peak_bytes;
    // Every result carries MemoryLowerBound(model): not computed a third time.
    estimate.lower_bound_bytes = result.lower_bound_bytes;
    if (peak == &estimate.greedy_peak_bytes) greedy_order = std::move(result.order);
  }
  // Estimate plans no arena, but refuses the alignment a compile's layout
  // refuses (aligned sizes past int64; nothing without a layout), by the
  // same rule. The tensors'
  // bytes add up to at most 2^62 (the memory model's cap), so only an
  // alignment over 2^62 / tensors can break it: the check is skipped below.
  const bool plans_a_layout = options.arena_planner != kNoArenaPlanner || options.pools.enabled();
  if (plans_a_layout && options.alignment > (int64_t{1} << 62) / (model.num_tensors() + 1)) {
    ORDO_ASSIGN_OR_RETURN(const SimulationResult simulation, Simulate(model, greedy_order));
    ORDO_RETURN_IF_ERROR(BuildArenaProblem(model, simulation, options.alignment).status());
  }
  if (cache != nullptr) {
    PartScheduleOptions part_options;
    part_options.scheduler = options.scheduler;
    part_options.time_limit = absl::ZeroDuration();  // any entry that verifies
    estimate.cached = LookupCachedPeak(model, part_options, *cache);
  }
  estimate.memory_limit_bytes = options.memory_limit_bytes;
  const int64_t best_known = std::min(
      estimate.greedy_peak_bytes, estimate.cached.peak_bytes.value_or(estimate.greedy_peak_bytes));
  if (options.memory_limit_bytes == 0) {
    estimate.fits = EstimateFit::kNoLimit;
  } else if (best_known <= options.memory_limit_bytes) {
    estimate.fits = EstimateFit::kYes;
  } else if (estimate.lower_bound_bytes > options.memory_limit_bytes) {
    estimate.fits = EstimateFit::kNo;
  } else {
    estimate.fits = EstimateFit::kUnknown;
  }
  if (options.pools.enabled()) {
    ORDO_ASSIGN_OR_RETURN(const EstimateFit banks,
                          EstimatePoolsFit(graph, model, options, greedy_order, estimate));
    // Both must fit, by one order (the banks' yes is the greedy order's);
    // either proof that none does decides.
    const bool greedy_within_limit = options.memory_limit_bytes == 0 ||
                                     estimate.greedy_peak_bytes <= options.memory_limit_bytes;
    if (estimate.fits == EstimateFit::kNoLimit || banks == EstimateFit::kNo ||
        (estimate.fits == EstimateFit::kYes && banks == EstimateFit::kUnknown)) {
      estimate.fits = banks;
    } else if (estimate.fits == EstimateFit::kYes && !greedy_within_limit) {
      estimate.fits = EstimateFit::kUnknown;
    }
  }
  return estimate;
}

}  // namespace ordo
