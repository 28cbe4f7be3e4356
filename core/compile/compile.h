#ifndef ORDO_CORE_COMPILE_COMPILE_H_
#define ORDO_CORE_COMPILE_COMPILE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/arena/arena_plan.h"
#include "core/graph/graph.h"
#include "core/memory/memory_model.h"
#include "core/memory/simulator.h"
#include "core/schedule/scheduler.h"
#include "core/traffic/traffic.h"
#include "core/util/clock.h"

namespace ordo {

// What a compile may do and under which memory rules.
struct CompileOptions {
  MemoryOptions memory;
  // A name from BuiltinSchedulers().
  std::string scheduler = "best";
  // Wall-clock budget for scheduling; the best schedule so far is returned
  // when it runs out.
  absl::Duration time_limit = absl::Seconds(10);
  // Device memory; 0 means unknown (then `fits` is not judged).
  int64_t memory_limit_bytes = 0;
  // Arena alignment in bytes (spec: Arena layout).
  int64_t alignment = 64;
  // A name from BuiltinArenaPlanners().
  std::string arena_planner = "best";
  // On-chip memory for the off-chip traffic estimate; 0 skips the estimate.
  int64_t on_chip_bytes = 0;
  // Also record bytes resident on-chip per step (TrafficResult).
  bool record_residency = false;
  // Memory the scheduler's search may use.
  int64_t max_state_bytes = int64_t{1} << 30;
};

// A baseline order's peak, reported beside the chosen schedule.
struct BaselinePeak {
  std::string name;  // "model_order", "kahn", "rpo"
  int64_t peak_bytes = 0;
};

// An arena planner's size for some schedule, for comparison.
struct ArenaBaseline {
  std::string name;  // e.g. "tflite"
  int64_t schedule_bytes = 0;     // on the chosen schedule
  int64_t model_order_bytes = 0;  // on the model order
};

// Everything a compile returns. The schedule has been re-checked by the
// simulator: `simulation` is its footprint profile.
struct CompileResult {
  std::vector<OpId> schedule;
  SimulationResult simulation;
  int64_t peak_bytes = 0;
  int64_t lower_bound_bytes = 0;
  ScheduleStatus status = ScheduleStatus::kHeuristic;
  std::string scheduler;  // requested
  std::string algorithm;  // that produced the schedule
  std::vector<BaselinePeak> baselines;
  ScheduleStats stats;
  std::vector<PartStats> parts;
  // The model order's profile, for pictures and comparisons.
  SimulationResult model_order_simulation;
  // Layout of `schedule` in one arena (verified).
  ArenaPlan arena;
  std::vector<ArenaBaseline> arena_baselines;
  // Off-chip traffic of `schedule` and of the model order, when
  // CompileOptions::on_chip_bytes > 0.
  std::optional<TrafficResult> traffic;
  std::optional<TrafficResult> model_order_traffic;
  absl::Duration time = absl::ZeroDuration();
};

// The one compile path (STYLE: CLI local mode and server run this):
// memory model -> baselines -> schedule -> verify -> layout -> traffic. Among
// the schedules that reach the best peak it keeps the one with the least
// off-chip traffic (when on_chip_bytes > 0), then the smallest arena. Errors: INVALID_ARGUMENT
// for an unknown scheduler or a model the memory model rejects; INTERNAL when
// a scheduler returns an order the simulator refuses (a bug, never shipped).
absl::StatusOr<CompileResult> Compile(const Graph& graph, const CompileOptions& options,
                                      const Clock& clock);

}  // namespace ordo

#endif  // ORDO_CORE_COMPILE_COMPILE_H_
