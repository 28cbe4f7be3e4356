#ifndef ORDO_CORE_COMPILE_COMPILE_H_
#define ORDO_CORE_COMPILE_COMPILE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/arena/arena_plan.h"
#include "core/parts/schedule_by_parts.h"
#include "core/parts/part_runner.h"
#include "core/cache/schedule_cache.h"
#include "core/graph/graph.h"
#include "core/memory/memory_model.h"
#include "core/memory/simulator.h"
#include "core/pools/memory_pools.h"
#include "core/pools/place_pools.h"
#include "core/schedule/scheduler.h"
#include "core/traffic/traffic.h"
#include "core/util/clock.h"

namespace ordo {

// CompileOptions::arena_planner that skips arena planning.
inline constexpr char kNoArenaPlanner[] = "none";

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
  // A name from BuiltinArenaPlanners(), or kNoArenaPlanner to skip layout.
  std::string arena_planner = "best";
  // On-chip memory for the off-chip traffic estimate; 0 skips the estimate.
  int64_t on_chip_bytes = 0;
  // Also record bytes resident on-chip per step (TrafficResult).
  bool record_residency = false;
  // Memory the scheduler's search may use.
  int64_t max_state_bytes = int64_t{1} << 30;
  // The device's memory banks (spec: Memory pools); none: one flat arena.
  // With pools the place stage puts every tensor in a pool and chooses the
  // schedule for the banks: the chosen one, the baseline orders and the
  // greedy and hmcos orders compete (within memory_limit_bytes), scored by
  // the placer's greedy starts, and the best is placed in full (and kept
  // over the least-peak order only when its full placement is strictly
  // better); its peak may then be above the least (status by the lower
  // bound, ApplyLowerBound; per-part figures dropped).
  PoolOptions pools;
};

// How far a compile has got, for streaming progress.
struct CompileProgress {
  // kRewriting: a rewrite search is running (reported about once a second
  // while it does; a compile with rewriting reports the stages of each
  // compile it runs, and these between).
  enum class Stage { kImported, kPartitioned, kScheduled, kFinished, kRewriting };
  Stage stage = Stage::kImported;
  // Parts of the model (0 before partitioning) and parts with a schedule.
  int32_t parts_total = 0;
  int32_t parts_done = 0;
  // Since the reporting stage began (a compile, or the rewrite search).
  absl::Duration elapsed = absl::ZeroDuration();
  // kRewriting: candidate schedules the search has run so far.
  int32_t rewrite_schedules = 0;
};

// Where a compile schedules and caches parts (STYLE: the small interfaces
// of the one compile path). The CLI passes none: the scheduler runs in this
// thread (for `best`, DivideAndConquerScheduler: ScheduleByParts on one
// thread with no cache). The server passes its workers and its cache: the
// same ScheduleByParts sends every part through the cache and the runner,
// whatever the scheduler. All pointers may be null and must outlive the
// call.
struct CompileServices {
  PartRunner* runner = nullptr;
  // Only used with a runner.
  ScheduleCache* cache = nullptr;
  // Set by the caller to stop the search; the best schedule so far is kept.
  const std::atomic<bool>* cancelled = nullptr;
  // Called from the compiling thread after each stage.
  std::function<void(const CompileProgress&)> on_progress;
  // Passed to the runner's tasks, for logs.
  std::string request_id;
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
  // The memory rules every figure below was computed under (which
  // accounting was in force: MemoryOptions::io_outside_arena).
  MemoryOptions memory;
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
  // Layout of `schedule` in one arena (verified), or, with pools, in the
  // pools (TensorPlacement::pool; checked by CheckPoolAssignment).
  ArenaPlan arena;
  // With CompileOptions::pools: the placement, its bound and baselines.
  std::optional<PoolReport> placement;
  std::vector<ArenaBaseline> arena_baselines;
  // Off-chip traffic of `schedule` and of the model order, when
  // CompileOptions::on_chip_bytes > 0.
  std::optional<TrafficResult> traffic;
  std::optional<TrafficResult> model_order_traffic;
  // With a runner: what the cache and the workers did, and per part whether
  // its schedule came from the cache.
  std::optional<PartScheduleStats> part_stats;
  std::vector<bool> part_cached;
  absl::Duration time = absl::ZeroDuration();
};

// Whether the result fits the device: with pools, a valid placement exists
// (spec: Memory pools) and, when a memory limit is also set, the peak is
// within it; without pools, the peak within the memory limit. Unknown
// (nullopt) with neither.
std::optional<bool> FitsDevice(const CompileOptions& options, const CompileResult& result);

// The place stage alone, on one given order of `graph` (a candidate of a
// search that knows nothing of the device, e.g. fit-mode rewriting): the
// layout and placement Compile would compute for that order, judged by
// FitsDevice's rule. Cheap refusals first: a peak over the memory limit or
// over the pools' summed capacity cannot fit. Layout and placement get at
// most `budget` each. INVALID_ARGUMENT for bad options or an order the
// simulator refuses (named).
absl::StatusOr<bool> OrderFitsDevice(const Graph& graph, const CompileOptions& options,
                                     absl::Span<const OpId> order, absl::Duration budget,
                                     const Clock& clock);

// The one compile path (STYLE: CLI local mode and server run this):
// memory model -> baselines -> schedule -> verify -> layout -> traffic. Among
// the schedules that reach the best peak it keeps the one with the least
// off-chip traffic (when on_chip_bytes > 0), then the smallest arena; with
// pools, the schedule whose placement fits and is fastest (CompileOptions::
// pools). Errors: INVALID_ARGUMENT
// for an unknown scheduler or a model the memory model rejects; INTERNAL when
// a scheduler returns an order the simulator refuses (a bug, never shipped).
absl::StatusOr<CompileResult> Compile(const Graph& graph, const CompileOptions& options,
                                      const CompileServices& services, const Clock& clock);
// Compile in this thread, with no cache.
absl::StatusOr<CompileResult> Compile(const Graph& graph, const CompileOptions& options,
                                      const Clock& clock);

// Whether an Estimate's model fits options.memory_limit_bytes and, with
// memory pools, the banks (both when both are given).
enum class EstimateFit : int8_t {
  kNoLimit,  // neither a memory limit nor pools were given
  kYes,      // a known order (greedy, or the cached schedule) fits; with
             // pools, the greedy order's greedy placement fits the banks
  kNo,       // no order fits: the spec's lower bound is over the limit, or
             // PoolInfeasibility's proof, or a tensor larger than every pool
  kUnknown,  // only a compile can tell
};

// Figures that need no search, for "does it fit" loops: the model order's
// and the greedy order's peaks, the spec's lower bound, the cached peak
// when `cache` (may be null) has every part of the model for
// options.scheduler, and the verdict against options.memory_limit_bytes.
// Linear time plus one lookup per part.
struct EstimateResult {
  int32_t ops = 0;
  int64_t model_order_peak_bytes = 0;
  int64_t greedy_peak_bytes = 0;
  int64_t lower_bound_bytes = 0;
  CachedPeak cached;
  int64_t memory_limit_bytes = 0;
  EstimateFit fits = EstimateFit::kNoLimit;
  // With pools: why the banks' verdict is what it is (the proof that no
  // order fits, or what was placed); empty without pools.
  std::string pools_reason;
  // The graph's notes (Graph::notes): what the import told about how it
  // read the model, as a compile's answer carries them.
  std::vector<std::string> import_notes;
};
absl::StatusOr<EstimateResult> Estimate(const Graph& graph, const CompileOptions& options,
                                        ScheduleCache* cache);

}  // namespace ordo

#endif  // ORDO_CORE_COMPILE_COMPILE_H_
