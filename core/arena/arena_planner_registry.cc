#include "core/arena/arena_planner_registry.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/arena/best_arena_planner.h"
#include "core/arena/greedy_by_size_planners.h"
#include "core/arena/tflite_planners.h"

namespace ordo {

void ArenaPlannerRegistry::Register(ArenaPlannerInfo info) { planners_.push_back(std::move(info)); }

absl::StatusOr<std::unique_ptr<ArenaPlanner>> ArenaPlannerRegistry::Create(
    absl::string_view name) const {
  for (const ArenaPlannerInfo& info : planners_) {
    if (info.name == name) return info.create();
  }
  return absl::InvalidArgumentError(
      absl::StrCat("unknown arena planner \"", name, "\"; known: ", NamesJoined()));
}

std::string ArenaPlannerRegistry::NamesJoined() const {
  return absl::StrJoin(planners_, "|", [](std::string* out, const ArenaPlannerInfo& info) {
    out->append(info.name);
  });
}

namespace {

ArenaPlannerRegistry MakeBuiltinArenaPlanners() {
  ArenaPlannerRegistry registry;
  registry.Register({"best",
                     "portfolio of the greedy planners, then an exact search "
                     "(MiniMalloc-style) towards the lower bound",
                     [] { return std::make_unique<BestArenaPlanner>(); }});
  registry.Register({"tflite", "TFLite ArenaPlanner + SimpleMemoryArena (best fit)",
                     [] { return std::make_unique<TfliteArenaPlanner>(); }});
  registry.Register({"tflm", "TFLite Micro GreedyMemoryPlanner (largest first, first fit)",
                     [] { return std::make_unique<TflmArenaPlanner>(); }});
  registry.Register({"greedy-by-size", "Pisarchyk & Lee 2020: by size, best fit",
                     [] { return std::make_unique<GreedyBySizePlanner>(); }});
  registry.Register({"greedy-by-breadth", "Pisarchyk & Lee 2020: widest steps first, best fit",
                     [] { return std::make_unique<GreedyByBreadthPlanner>(); }});
  return registry;
}

}  // namespace

const ArenaPlannerRegistry& BuiltinArenaPlanners() {
  // Built once: PlanArena looks a planner up on every call.
  static const ArenaPlannerRegistry* const registry =
      new ArenaPlannerRegistry(MakeBuiltinArenaPlanners());
  return *registry;
}

absl::StatusOr<ArenaPlan> PlanArena(const MemoryModel& model, const SimulationResult& simulation,
                                    const ArenaOptions& options, const Clock& clock,
                                    const ArenaProblem* built) {
  if (options.time_limit < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("arena time limit is negative");
  }
  absl::StatusOr<std::unique_ptr<ArenaPlanner>> planner =
      BuiltinArenaPlanners().Create(options.planner);
  if (!planner.ok()) return planner.status();
  // The caller's problem is read in place, not copied.
  absl::StatusOr<ArenaProblem> owned;
  const ArenaProblem* problem = built;
  if (problem == nullptr) {
    owned = BuildArenaProblem(model, simulation, options.alignment);
    if (!owned.ok()) return owned.status();
    problem = &*owned;
  }
  ArenaLimits limits;
  limits.clock = &clock;
  limits.deadline = clock.Now() + options.time_limit;
  limits.max_search_nodes = options.max_search_nodes;
  ArenaPlacement placement = (*planner)->Place(*problem, limits);
  ArenaPlan plan = MakeArenaPlan(*problem, simulation, placement.offsets);
  plan.planner = options.planner;
  plan.algorithm = std::move(placement.algorithm);
  plan.optimal = plan.optimal || placement.optimal;
  plan.arenas_by_planner = std::move(placement.member_arenas);
  plan.arenas_by_planner.push_back({options.planner, plan.arena_bytes});
  if (absl::Status status = VerifyArena(model, simulation, plan); !status.ok()) {
    return absl::InternalError(absl::StrCat("arena planner \"", options.planner,
                                            "\" produced an invalid plan: ", status.message()));
  }
  return plan;
}

}  // namespace ordo
