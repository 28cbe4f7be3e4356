#ifndef ORDO_CORE_ARENA_ARENA_PLANNER_REGISTRY_H_
#define ORDO_CORE_ARENA_ARENA_PLANNER_REGISTRY_H_

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "core/arena/arena_plan.h"
#include "core/arena/arena_planner.h"
#include "core/memory/memory_model.h"
#include "core/memory/simulator.h"
#include "core/util/clock.h"

namespace ordo {

struct ArenaPlannerInfo {
  std::string name;
  std::string description;
  std::function<std::unique_ptr<ArenaPlanner>()> create;
};

// Arena planners by name: the one source for CLI flags, GetInfo and lookups.
// BuiltinArenaPlanners() is built once per process and never changes; a
// caller that needs another set copies it and registers.
class ArenaPlannerRegistry {
 public:
  void Register(ArenaPlannerInfo info);
  // INVALID_ARGUMENT naming the known planners when `name` is unknown.
  absl::StatusOr<std::unique_ptr<ArenaPlanner>> Create(absl::string_view name) const;
  const std::vector<ArenaPlannerInfo>& planners() const { return planners_; }
  // "a|b|c", for usage messages.
  std::string NamesJoined() const;

 private:
  std::vector<ArenaPlannerInfo> planners_;
};

// Every arena planner ordo ships, in the order reports list them: "best"
// (the default), "tflite", "tflm", "greedy-by-size", "greedy-by-breadth".
const ArenaPlannerRegistry& BuiltinArenaPlanners();

// The default planner name.
inline constexpr absl::string_view kDefaultArenaPlanner = "best";

// How PlanArena runs.
struct ArenaOptions {
  // A name from BuiltinArenaPlanners().
  std::string planner = std::string(kDefaultArenaPlanner);
  // Spec: offsets and sizes are aligned to this many bytes.
  int64_t alignment = 64;
  // Wall-clock budget of searching planners; the best plan so far is
  // returned when it runs out.
  absl::Duration time_limit = absl::Seconds(2);
  // Deterministic budget of search nodes (see ArenaLimits).
  int64_t max_search_nodes = ArenaLimits{}.max_search_nodes;
};

// The arena stage of the compile path: builds the problem of the schedule
// `simulation` describes, runs the planner named in `options`, and verifies
// the plan (VerifyArena) before returning it. Errors: INVALID_ARGUMENT for an
// unknown planner, a bad alignment, a negative time limit or a simulation
// that does not match `model`; INTERNAL when a planner's plan fails verification (a bug, never
// returned as a plan). `clock` must outlive the call. `built`: the problem
// BuildArenaProblem(model, simulation, options.alignment) gives, when the
// caller has it already (nullptr: built here).
absl::StatusOr<ArenaPlan> PlanArena(const MemoryModel& model, const SimulationResult& simulation,
                                    const ArenaOptions& options, const Clock& clock,
                                    const ArenaProblem* built = nullptr);

}  // namespace ordo

#endif  // ORDO_CORE_ARENA_ARENA_PLANNER_REGISTRY_H_
