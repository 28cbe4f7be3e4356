#include "core/compile/compile.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/arena/arena_planner_registry.h"
#include "core/schedule/baseline_schedulers.h"
#include "core/schedule/scheduler_registry.h"
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

  // With pools, a placement that fits first and then its modelled time
  // (spec: Memory pools); then off-chip traffic when the device has on-chip
  // memory (it costs time and energy on every run), then the arena.
  std::tuple<int64_t, double, int64_t, int64_t> Rank() const {
    return {pools ? pools->placement.evaluation.overflow_bytes : 0,
            pools ? pools->placement.evaluation.modelled_seconds : 0.0,
            traffic ? traffic->total_bytes : 0, arena.arena_bytes};
  }
  // Without pools every layout fits (the memory limit is checked elsewhere).
  bool FitsPools() const { return !pools.has_value() || pools->fits(); }
  // Nothing of another schedule with the same peak can beat this one.
  bool Unbeatable() const {
    if (pools) {
      // A proof that no order fits ends the search for one that does.
      if (!pools->no_order_fits.empty()) return true;
      return pools->fits() && pools->placement.evaluation.modelled_seconds <=
                                  pools->lower_bound_seconds * (1 + 1e-12);
    }
    return arena.gap_bytes == 0 && !traffic;
  }
};

absl::StatusOr<Layout> Evaluate(const Graph& graph, const MemoryModel& model,
                                const CompileOptions& options,
                                absl::Time deadline, const Clock& clock,
                                std::vector<int32_t> order, std::string algorithm,
                                SimulationResult simulation) {
  Layout layout{std::move(order), std::move(algorithm), std::move(simulation), {}, {}};
  const absl::Time arena_start = clock.Now();
  ORDO_ASSIGN_OR_RETURN(
      layout.arena, PlanArena(model, layout.simulation,
                              ArenaOptionsFor(options, deadline, clock, options.arena_planner),
                              clock));
  layout.arena_time = clock.Now() - arena_start;
  if (options.pools.enabled()) {
    ArenaLimits limits;
    limits.clock = &clock;
    // Placement runs once per candidate schedule; it must stay a small part
    // of the compile.
    limits.deadline =
        clock.Now() + std::min(ArenaOptionsFor(options, deadline, clock, "").time_limit,
                               absl::Milliseconds(200));
    ORDO_ASSIGN_OR_RETURN(layout.pools,
                          PlaceInPools(graph, model, layout.simulation, options.alignment,
                                       options.pools, layout.arena.arena_bytes, limits));
    layout.traffic = PlacementTraffic(model, layout.simulation, options.pools, *layout.pools,
                                      options.record_residency);
  }
  if (options.on_chip_bytes > 0) {
    TrafficOptions traffic{options.on_chip_bytes, options.record_residency};
    ORDO_ASSIGN_OR_RETURN(layout.traffic, EstimateTraffic(model, layout.order, traffic));
  }
  return layout;
}

// Many schedules share the best peak; their arenas, placements and traffic
// differ. Ranks the chosen schedule and every other candidate with the same
// peak (peak first, then Layout::Rank) and keeps the best, unless nothing can
// beat the chosen one. With pools, when the chosen schedule does not fit the
// banks, candidates of any peak compete: a higher peak may split better
// across banks, and fitting is what the device needs.
absl::Status ChooseLayout(const Graph& graph, const MemoryModel& model,
                          const CompileOptions& options,
                          absl::Time deadline, const Clock& clock,
                          const std::vector<Candidate>& alternatives, CompileResult& result) {
  const absl::Time start = clock.Now();
  ORDO_ASSIGN_OR_RETURN(Layout best, Evaluate(graph, model, options, deadline, clock,
                                              std::move(result.schedule),
                                              std::move(result.algorithm),
                                              std::move(result.simulation)));
  const bool chosen_fits = best.FitsPools();
  const absl::Duration chosen_arena_time = best.arena_time;
  for (const Candidate& candidate : alternatives) {
    if (best.Unbeatable()) break;
    const bool same_peak = candidate.peak_bytes == result.peak_bytes;
    if ((!same_peak && chosen_fits) || candidate.order == best.order) continue;
    ORDO_ASSIGN_OR_RETURN(SimulationResult simulation, Verify(model, candidate));
    ORDO_ASSIGN_OR_RETURN(
        Layout layout,
        Evaluate(graph, model, options, deadline, clock, candidate.order,
                 absl::StrCat(candidate.algorithm,
                              same_peak ? " (same peak, better layout)" : " (fits the pools)"),
                 std::move(simulation)));
    const bool better =
        same_peak ? layout.Rank() < best.Rank() : layout.FitsPools() && !best.FitsPools();
    if (better) best = std::move(layout);
  }
  result.schedule = std::move(best.order);
  result.algorithm = std::move(best.algorithm);
  if (best.simulation.peak_bytes != result.peak_bytes) {
    // A higher peak chosen to fit the banks is not the proved optimum.
    result.status = ScheduleStatus::kHeuristic;
    result.peak_bytes = best.simulation.peak_bytes;
  }
  result.simulation = std::move(best.simulation);
  result.arena = best.pools ? PoolArenaPlan(*best.pools, std::move(best.arena))
                            : std::move(best.arena);
  result.placement = std::move(best.pools);
  // Everything this stage did but plan the chosen schedule's arena (which
  // a compile without pools does too) is the pools' cost: the placements,
  // and the other schedules verified, laid out and placed to compete with
  // it. An upper bound: without pools some of those would be compared too.
  if (result.placement) result.placement->stage_time = clock.Now() - start - chosen_arena_time;
  result.traffic = std::move(best.traffic);
  return absl::OkStatus();
}

absl::Status CompareArenas(const MemoryModel& model, const CompileOptions& options,
                           absl::Time deadline, const Clock& clock, CompileResult& result) {
  // TFLite's ArenaPlanner, and TFLite Micro's GreedyMemoryPlanner: what the
  // device allocates for the file order (model order) and for ordo's order
  // when it plans the arena itself.
  for (const char* planner : {"tflite", "tflm"}) {
    ArenaOptions baseline = ArenaOptionsFor(options, deadline, clock, planner);
    ORDO_ASSIGN_OR_RETURN(ArenaPlan on_schedule,
                          PlanArena(model, result.simulation, baseline, clock));
    ORDO_ASSIGN_OR_RETURN(ArenaPlan on_model_order,
                          PlanArena(model, result.model_order_simulation, baseline, clock));
    result.arena_baselines.push_back(
        {planner, on_schedule.arena_bytes, on_model_order.arena_bytes});
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
  SchedulerRegistry registry = BuiltinSchedulers();
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
    ORDO_RETURN_IF_ERROR(
        ChooseLayout(graph, model, options, limits.deadline, clock, baselines, result));
    ORDO_RETURN_IF_ERROR(CompareArenas(model, options, limits.deadline, clock, result));
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
  // The tensors live at the peak step are disjoint in any valid placement.
  int64_t capacity = 0;
  for (const MemoryPool& pool : options.pools.pools) capacity += pool.capacity_bytes;
  if (peak > capacity) return false;
  ORDO_ASSIGN_OR_RETURN(Layout layout,
                        Evaluate(graph, model, options, clock.Now() + budget, clock,
                                 std::vector<int32_t>(order.begin(), order.end()), "candidate",
                                 std::move(simulation)));
  return layout.FitsPools();
}

std::optional<bool> FitsDevice(const CompileOptions& options, const CompileResult& result) {
  const bool limit_holds =
      options.memory_limit_bytes == 0 || result.peak_bytes <= options.memory_limit_bytes;
  if (result.placement) return result.placement->fits() && limit_holds;
  if (options.memory_limit_bytes == 0) return std::nullopt;
  return limit_holds;
}

absl::StatusOr<EstimateResult> Estimate(const Graph& graph, const CompileOptions& options,
                                        ScheduleCache* cache) {
  ORDO_RETURN_IF_ERROR(CheckOptions(options));
  ORDO_ASSIGN_OR_RETURN(MemoryModel model, BuildMemoryModel(graph, options.memory));
  const SchedulerRegistry registry = BuiltinSchedulers();
  EstimateResult estimate;
  estimate.ops = graph.num_ops();
  estimate.lower_bound_bytes = MemoryLowerBound(model);
  for (const auto& [name, peak] :
       {std::pair{"model", &estimate.model_order_peak_bytes},
        std::pair{"greedy", &estimate.greedy_peak_bytes}}) {
    ORDO_ASSIGN_OR_RETURN(auto scheduler, registry.Create(name));
    ORDO_ASSIGN_OR_RETURN(ScheduleResult result, scheduler->Schedule(model, ScheduleLimits{}));
    *peak = result.peak_bytes;
  }
  if (cache != nullptr) {
    PartScheduleOptions part_options;
    part_options.scheduler = options.scheduler;
    part_options.time_limit = absl::ZeroDuration();  // any entry that verifies
    estimate.cached = LookupCachedPeak(model, part_options, *cache);
  }
  return estimate;
}

}  // namespace ordo
