#ifndef ORDO_CORE_POOLS_PLACE_POOLS_H_
#define ORDO_CORE_POOLS_PLACE_POOLS_H_

#include <cstdint>
#include <limits>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/arena/arena_plan.h"
#include "core/arena/arena_planner.h"
#include "core/graph/graph.h"
#include "core/memory/memory_model.h"
#include "core/memory/simulator.h"
#include "core/pools/memory_pools.h"
#include "core/pools/pool_placer.h"
#include "core/traffic/traffic.h"

namespace ordo {

// Another placement of the same schedule, reported beside ordo's.
struct PoolBaseline {
  // "internal_first", "usmp_greedy", "single_pool" or "one_arena" (TFLite
  // Micro's way: the schedule's one arena whole in the fastest pool that
  // holds it; a compile with pools adds it).
  std::string name;
  bool fits = false;
  // 0 for single_pool, which places nothing (it is a bound).
  double modelled_seconds = 0;
  // internal_first/usmp_greedy/one_arena: bytes beyond capacities (for
  // one_arena when pins keep every pool out: the whole arena, time 0);
  // single_pool: the schedule's arena in one pool of the summed capacity.
  int64_t overflow_bytes = 0;
  // single_pool, one_arena: the schedule's one-arena layout.
  int64_t single_pool_bytes = 0;
};

// What the place stage answers for a device with pools.
struct PoolReport {
  PoolPlacement placement;
  double lower_bound_seconds = 0;
  std::vector<PoolBaseline> baselines;
  // Empty when the placement fits; else which pools overflow and by how
  // much, and, when it is proved, why no order of the model fits.
  std::string overflow;
  // Not fitting: PoolInfeasibility's proof that no order fits, or "".
  std::string no_order_fits;
  // Per model tensor: its pool (kNoId for weights) and offset in the pool.
  std::vector<int32_t> pool_of_tensor;
  std::vector<int64_t> offset_of_tensor;
  // The placement's own time: PlaceInPools on this schedule; in a compile,
  // PlaceScoredInPools, which leaves out building the pool problem and the
  // eight greedy starts (computed when the schedule was scored, counted in
  // stage_time).
  absl::Duration time = absl::ZeroDuration();
  // What pools add to a compile: its whole place stage but the chosen
  // schedule's one-arena plan (which a compile without pools makes too),
  // i.e. PlaceInPools on every schedule it placed and the verification and
  // arena plans of the candidates compared with the chosen one.
  absl::Duration stage_time = absl::ZeroDuration();

  bool fits() const { return placement.fits(); }
};

// A schedule's pool problem with the placer's greedy starts on it: what the
// place stage scores a candidate schedule by, and what its full placement
// (PlaceInPools) starts from, so neither is computed twice.
struct ScoredPoolProblem {
  PoolProblem problem;
  // Thorough starts, or with the fast effort its starts (greedy.effort).
  PoolGreedyStarts greedy;
  // The fast effort's placement (PlacePoolsFast) when it fits:
  // PlaceScoredInPools reports it instead of running the full placer.
  std::optional<HeuristicPoolResult> fast;
  // PoolInfeasibility of the problem, when the caller computed it with the
  // bound it passes to PlaceScoredInPools ("" : no proof).
  std::optional<std::string> no_order_fits;
};

// Problems of at most this many blocks are placed thoroughly whatever the
// effort: the fast placement is far from the optimum there (pool_placer_test:
// worst gap 116% against 19.9% on random graphs of up to ~40 tensors), and
// the full placer takes at most about a millisecond on the shared models
// that small (their whole thorough place stage 0.3-2.8 ms).
inline constexpr int32_t kThoroughUpToBlocks = 64;

// The placer's scoring of a built problem, by the one rule of the effort:
// with PlacementEffort::kFast on more than kThoroughUpToBlocks blocks,
// PlacePoolsFast (its placement kept in `fast` when it fits; when it does
// not, only its starts, and the full placer runs on thorough starts unless
// a proof says nothing fits: PlaceScoredInPools); otherwise (kThorough, or
// a small problem) the thorough greedy starts.
// `prove_no_order_fits`: PlacePoolsFast's (the fast effort only); its
// answer, when asked, is kept in `no_order_fits`.
ScoredPoolProblem ScoreBuiltPoolProblem(PoolProblem problem, PlacementEffort effort,
                                        const NoOrderFitsProof& prove_no_order_fits = {});

// Replaces fast starts with the thorough ones (and drops a fast placement),
// e.g. before a scored schedule competes with thoroughly scored ones.
void MakeStartsThorough(ScoredPoolProblem& scored);

// BuildPoolProblem and ScoreBuiltPoolProblem with options.effort.
// INVALID_ARGUMENT as BuildPoolProblem.
absl::StatusOr<ScoredPoolProblem> ScorePoolProblem(const Graph& graph, const MemoryModel& model,
                                                   const SimulationResult& simulation,
                                                   int64_t alignment, const PoolOptions& options);

// PlaceInPools (below) on a problem already scored (the fast placement when
// `scored.fast` holds one, else the full placer from thorough starts, made
// here, within `time`, when `scored` has only fast ones), without the
// single_pool
// baseline, which needs the schedule's one-arena layout: the caller adds it
// (AddSinglePoolBaseline) once it has that layout, i.e. only for a
// placement it keeps. `time` covers the placement, not the scoring.
// `give_up_above`: as PlacePoolsHeuristic's; a placement given up is its
// best greedy start, slower than `give_up_above` (or not fitting), so a
// caller comparing it with a placement of that time keeps the other.
// `every_order_peak`: what the caller proved about the peak of every order
// (PoolInfeasibility's granularity proof uses it).
absl::StatusOr<PoolReport> PlaceScoredInPools(
    const Graph& graph, const MemoryModel& model, const ScoredPoolProblem& scored,
    const ArenaLimits& limits, const EveryOrderPeakBound& every_order_peak = {},
    double give_up_above = std::numeric_limits<double>::infinity());

// Appends the single_pool baseline: `single_arena_bytes` (the schedule's
// one-arena layout) against the summed capacity of `pools`.
void AddSinglePoolBaseline(const std::vector<MemoryPool>& pools, int64_t single_arena_bytes,
                           PoolReport& report);

// The place stage with pools: builds the PoolProblem of the schedule,
// runs ordo's placer and the baselines, checks a fitting placement with
// CheckPoolAssignment (INTERNAL if it fails: a placer bug never leaves) and
// reports the lower bound. `single_arena_bytes` is the schedule's one-arena
// layout (the single_pool baseline). INVALID_ARGUMENT for bad pools or pins
// (BuildPoolProblem).
absl::StatusOr<PoolReport> PlaceInPools(const Graph& graph, const MemoryModel& model,
                                        const SimulationResult& simulation, int64_t alignment,
                                        const PoolOptions& options, int64_t single_arena_bytes,
                                        const ArenaLimits& limits);

// The place stage for a runtime that plans one arena (PoolOptions::
// one_arena; TensorFlow Lite Micro): `arena`, the schedule's one-arena plan,
// goes whole into one pool, every tensor at its offset in the plan. The pool
// is the one of least modelled time among those every block may use (pins,
// sizes) that hold the arena; when none holds it, the one that overflows
// least. The lower bound is the least time of a pool that holds the
// schedule's aligned peak (no one-arena layout needs less), so the gap is
// what the arena's fragmentation costs. No baselines: the caller adds them
// (AddPoolBaselines) to the placement it keeps. INVALID_ARGUMENT as
// BuildPoolProblem, and naming a tensor that keeps each pool out (pinned
// elsewhere, or larger than it) when no pool may hold them all.
// `given`: the schedule's pool problem when the caller built it already
// (nullptr: built here). O(blocks x pools).
absl::StatusOr<PoolReport> PlaceOneArenaInPools(const Graph& graph, const MemoryModel& model,
                                                const SimulationResult& simulation,
                                                int64_t alignment, const PoolOptions& options,
                                                const ArenaPlan& arena, const ArenaLimits& limits,
                                                const PoolProblem* given = nullptr);

// The placement PlaceOneArenaInPools reports, alone: `arena` whole in the
// pool its rule picks, evaluated (no check, bound or tensor records: for a
// baseline's figures; what is returned as an answer goes through
// PlaceOneArenaInPools). nullopt when no pool may hold every block.
// O(blocks x pools).
std::optional<PoolPlacement> OneArenaPlacement(const PoolProblem& problem, const ArenaPlan& arena);

// Whether every block may live in `pool` (no pin elsewhere, none larger),
// as one arena there needs. O(blocks).
bool MayHoldEveryBlock(const PoolProblem& problem, int32_t pool);

// Why no pool may hold every block (one arena), one reason per pool: the
// first block each pool is not allowed, pinned elsewhere or larger than it.
std::string NoPoolHoldsEveryBlock(const Graph& graph, const PoolProblem& problem);

// The least modelled time of one arena in one pool for a schedule whose
// aligned peak is `peak_bytes`: every block in a pool that may hold them
// all and holds the peak (the time has no offsets, so no layout does
// better); infinity when no pool does. O(blocks x pools).
double OneArenaLowerBoundSeconds(const PoolProblem& problem, int64_t peak_bytes);

// Appends the baselines PlaceInPools reports (internal_first, usmp_greedy:
// the scored problem's greedy starts, placements across the pools that a
// runtime with an arena per pool could use; single_pool from
// `single_arena_bytes`) to a placement made without them
// (PlaceOneArenaInPools).
void AddPoolBaselines(const ScoredPoolProblem& scored, int64_t single_arena_bytes,
                      PoolReport& report);

// `plan` (the schedule's one-arena plan) rewritten to the pools: every tensor
// gets its pool and its offset in that pool; arena_bytes becomes the summed
// used bytes of the pools. Tensors of one in-place chain share pool and
// offset, as they share the block.
ArenaPlan PoolArenaPlan(const PoolReport& report, ArenaPlan plan);

// With an off-chip pool among `options.pools`: the off-chip traffic of the
// placement (PlacedTraffic: the tensors placed off the chip are the traffic),
// with the summed capacity of the on-chip pools as C. nullopt when every
// pool is on the chip. With `record_residency`, resident_bytes[s] is what
// TrafficResult says: the bytes on the chip while step s of `simulation`
// runs, i.e. the activation tensors live at s that the placement put in an
// on-chip pool (unaligned sizes, as the traffic; an in-place pair shares
// its block and counts once). Within C when the placement fits.
std::optional<TrafficResult> PlacementTraffic(const MemoryModel& model,
                                              const SimulationResult& simulation,
                                              const PoolOptions& options, const PoolReport& report,
                                              bool record_residency);

// A placement computed elsewhere (a server's response), given as every
// tensor's pool and offset in `plan` (TensorPlacement::pool), re-derived
// from scratch for the schedule `simulation`: the problem is rebuilt from
// `options`, each arena block takes the pool and offset of its tensors, the
// evaluation is recomputed by the spec's rules, and a placement that fits is
// re-checked by CheckPoolAssignment. INVALID_ARGUMENT naming the tensor or
// rule when a tensor of the schedule has no pool, tensors sharing a block
// disagree, the placement breaks a rule, or `options.one_arena` asks for
// one pool and the tensors lie in several.
absl::StatusOr<PoolPlacement> RecheckPoolPlacement(const Graph& graph, const MemoryModel& model,
                                                   const SimulationResult& simulation,
                                                   int64_t alignment, const PoolOptions& options,
                                                   const ArenaPlan& plan);

}  // namespace ordo

#endif  // ORDO_CORE_POOLS_PLACE_POOLS_H_
