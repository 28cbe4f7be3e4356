#ifndef ORDO_CORE_POOLS_MEMORY_POOLS_H_
#define ORDO_CORE_POOLS_MEMORY_POOLS_H_

#include <cstdint>
#include <initializer_list>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/arena/arena_problem.h"
#include "core/graph/graph.h"
#include "core/memory/memory_model.h"
#include "core/memory/simulator.h"
#include "core/partition/hourglass_partitioner.h"
#include "core/util/check.h"

namespace ordo {

// Bandwidth of a pool whose spec gives none: 1 GB/s, the order of an on-chip
// SRAM of a 200-500 MHz microcontroller (documented in docs/pools.md).
inline constexpr double kDefaultPoolBytesPerSecond = 1e9;

// One memory bank of a device (spec: Memory pools).
struct MemoryPool {
  std::string name;
  int64_t capacity_bytes = 0;
  double read_bytes_per_second = kDefaultPoolBytesPerSecond;
  double write_bytes_per_second = kDefaultPoolBytesPerSecond;
  // Off the chip (external HyperRAM, PSRAM, SDRAM): what is placed here is
  // off-chip traffic (PlacementTraffic), and the other pools are the chip's.
  bool off_chip = false;
};

// How hard the place stage works for the banks (docs/pools.md, "Placement
// effort"). kFast: the schedule stage's own order, four greedy starts and
// one pass of moves to cheaper banks, a few tenths of a millisecond on the
// NAS models; it becomes kThorough when that placement does not fit (since
// whether the model fits matters most) unless a proof shows that no order
// fits, and on problems of at most kThoroughUpToBlocks blocks. kThorough:
// six candidate schedules, eight greedy starts each, the full placer
// (relaxation, compaction, promotion, swaps), several milliseconds.
enum class PlacementEffort { kFast, kThorough };

// "fast" or "thorough" (the CLI's and the benchmark's spelling), else nullopt.
std::optional<PlacementEffort> ParsePlacementEffort(absl::string_view name);

// The banks of a device and the per-tensor restrictions. Empty pools: the
// device has one flat arena (the behaviour without pools).
struct PoolOptions {
  std::vector<MemoryPool> pools;
  // Tensor name -> the one pool it must live in (e.g. a DMA-written input).
  std::map<std::string, std::string> pinned;
  // The runtime plans one arena (TensorFlow Lite Micro): every activation
  // lives in the same pool, at its offset in the schedule's one-arena plan
  // (PlaceOneArenaInPools). Needs pools.
  bool one_arena = false;
  PlacementEffort effort = PlacementEffort::kFast;

  bool enabled() const { return !pools.empty(); }
};

// Real chips have a handful of banks; the placer's work grows with the
// pool count, so a request may not name more than this.
inline constexpr int kMaxMemoryPools = 64;
// Bandwidths must lie in [1 B/s, 1e15 B/s]: modelled times stay finite.
inline constexpr double kMinPoolBytesPerSecond = 1;
inline constexpr double kMaxPoolBytesPerSecond = 1e15;

// INVALID_ARGUMENT naming the pool: more than kMaxMemoryPools pools, empty
// or duplicate names, a capacity that is not positive, a bandwidth outside
// [kMinPoolBytesPerSecond, kMaxPoolBytesPerSecond] (or not a number), a
// pinned pool that does not exist; pins or one_arena without pools.
absl::Status ValidatePoolOptions(const PoolOptions& options);

// The spec's modelled memory time of one tensor of `aligned_bytes` placed in
// `pool`: written once by its producer (graph inputs are not written), read
// once by each distinct consumer. The one place this rule lives.
double TensorMemorySeconds(const MemoryModel& model, int32_t tensor, int64_t aligned_bytes,
                           const MemoryPool& pool);

// One value per block and pool, each block's row of pools side by side in
// one array: every placer reads a block's row at each step, and a vector
// per block was an allocation each when the problem was built (perf,
// docs/pools-log.md). table[b][p]; rows are added whole, all as wide as the
// first.
template <typename T>
class PerBlockPoolTable {
 public:
  absl::Span<const T> operator[](int32_t block) const {
    return absl::Span<const T>(values_.data() + static_cast<size_t>(block) * width_, width_);
  }
  void push_back(absl::Span<const T> row) {
    if (values_.empty()) width_ = row.size();
    ORDO_CHECK(row.size() == width_);
    values_.insert(values_.end(), row.begin(), row.end());
  }
  void push_back(std::initializer_list<T> row) {
    push_back(absl::Span<const T>(row.begin(), row.size()));
  }
  void reserve(size_t rows, size_t width) { values_.reserve(rows * width); }

 private:
  size_t width_ = 0;
  std::vector<T> values_;
};

// The instance every pool placer solves: the arena blocks of one schedule
// (an in-place chain is one block, so it lives in one pool), the pools, the
// time each block costs in each pool and the pools each block may use.
struct PoolProblem {
  ArenaProblem arena;
  std::vector<MemoryPool> pools;
  // [block][pool]: summed TensorMemorySeconds of the block's tensors.
  PerBlockPoolTable<double> seconds;
  // [block][pool]: the block may live in the pool (pinning, size); 0 or 1.
  PerBlockPoolTable<uint8_t> allowed;

  int32_t num_blocks() const { return static_cast<int32_t>(arena.blocks.size()); }
  int32_t num_pools() const { return static_cast<int32_t>(pools.size()); }
};

// Builds the pool instance of the schedule `simulation` describes.
// INVALID_ARGUMENT: bad options (ValidatePoolOptions), a pinned tensor that
// is not an activation of `graph`, two tensors of one in-place chain pinned to
// different pools, a tensor larger than every pool it may use (named).
// The same from the schedule's arena problem (BuildArenaProblem with
// `alignment`), when the caller has it.
absl::StatusOr<PoolProblem> BuildPoolProblem(const Graph& graph, const MemoryModel& model,
                                             const SimulationResult& simulation, ArenaProblem arena,
                                             const PoolOptions& options);
absl::StatusOr<PoolProblem> BuildPoolProblem(const Graph& graph, const MemoryModel& model,
                                             const SimulationResult& simulation,
                                             int64_t alignment, const PoolOptions& options);

// True for BuildPoolProblem's INVALID_ARGUMENT of tensors larger than every
// pool when each of them is an intermediate tensor and not pinned: a bad
// spec for the model as it is, but one that fit-mode rewriting may cure by
// never forming them. Not for a pinned tensor (the pin is the user's rule)
// or a graph input or output (every rewrite keeps them).
bool IsTensorLargerThanEveryPool(const absl::Status& status);

// True for BuildPoolProblem's INVALID_ARGUMENT of a graph input or output,
// not pinned, larger than every pool: a device may keep it in a buffer of
// its own (MemoryOptions::io_outside_arena), which the caller can suggest.
bool IsGraphInputOrOutputLargerThanEveryPool(const absl::Status& status);

// A placement: for every block a pool and an offset in it.
struct PoolAssignment {
  std::vector<int32_t> pool;
  std::vector<int64_t> offset;
};

// What a placement costs and how full it leaves each pool.
struct PoolUsage {
  std::string name;
  int64_t capacity_bytes = 0;
  // max over its blocks of offset + size.
  int64_t used_bytes = 0;
  int32_t tensors = 0;
  double modelled_seconds = 0;
};
struct PoolEvaluation {
  std::vector<PoolUsage> pools;
  double modelled_seconds = 0;
  // Sum over pools of max(0, used - capacity): 0 iff capacities hold.
  int64_t overflow_bytes = 0;
};

// Used bytes, tensor counts and modelled time of `assignment` (spec: Memory
// pools). Does not check overlaps; see CheckPoolAssignment. O(B).
PoolEvaluation EvaluatePoolAssignment(const PoolProblem& problem,
                                      const PoolAssignment& assignment);

// Spec "valid placement": every block in one allowed pool at an aligned
// non-negative offset, co-live blocks of a pool disjoint, every pool within
// its capacity. INTERNAL naming the first broken rule (a placer bug).
// O(B log B + co-live pairs).
absl::Status CheckPoolAssignment(const PoolProblem& problem, const PoolAssignment& assignment);

// A lower bound on the modelled time of every valid placement, the larger of
// two capacity arguments: each block in its cheapest allowed pool, raised,
// when one pool is at least as fast as every other for reads and writes, by
// the cheapest fractional eviction of the bytes live at one step beyond
// that pool's capacity (one sweep over the steps, O(S + B log B + the
// blocks live at the steps over capacity)); and the Lagrangian relaxation of
// every pool's capacity at every step (PoolRelaxation, 200 subgradient
// steps of O(B * P + S * P)), which prices all congested steps at once.
double PoolLowerBoundSeconds(const PoolProblem& problem);

// The first argument of PoolLowerBoundSeconds alone: every block in its
// cheapest allowed pool, raised by the one-step eviction.
double PoolPeakStepBoundSeconds(const PoolProblem& problem);

// Every block in its cheapest allowed pool: a lower bound on the modelled
// time of every assignment of blocks to allowed pools, valid or not (it
// ignores capacities). The bound reported beside a placement that does not
// fit, which the capacity arguments above need not be (they bound valid
// placements only, and where there are none the relaxation grows without
// limit).
double CheapestPoolsSeconds(const PoolProblem& problem);

// Subgradient steps of the relaxation bound (PoolLowerBoundSeconds, and the
// placer's relaxation, which gives the same bound on the way): a few
// milliseconds on a thousand blocks.
inline constexpr int kPoolBoundSteps = 200;

// One part's share of the granularity proof (PoolInfeasibility, 3.): the
// part is a block of every order (core/partition, exact), so every order
// has a step where the tensors the part touches (produced or read in it;
// the first part also holds graph inputs nobody reads, live before step 0),
// as the simulator counts them, total at least `live_bytes`; each of them
// is a multiple of `unit` bytes.
struct PartLiveBound {
  std::string name;  // "the part from op "a" to op "b""
  int64_t unit = 0;
  int64_t live_bytes = 0;
  std::string source;  // what proved live_bytes
};

// A bound on the peak (simulator footprint) of every order of a model, and
// what proved it (e.g. "the proved least peak"). bytes 0: none beyond the
// spec's MemoryLowerBound, which PoolInfeasibility takes itself.
struct EveryOrderPeakBound {
  int64_t bytes = 0;
  std::string source;
  // Per part of the model (empty: none known). The whole's bound above is
  // at least each part's, but a part's own tensors may share a unit the
  // whole model's do not.
  std::vector<PartLiveBound> parts;
};

// The part bounds of `partition` (a partition of the model `graph` was
// built into), from a bound on every order's peak of each part's model
// (`part_peaks[i]` for `partition.parts[i]`, raised to the part's spec
// bound): live_bytes is that less the part's constant bytes (weights when
// counted, and tensors live across the part that it does not touch), unit
// the gcd of its tensors' sizes. The soundness argument is beside
// GranularityInfeasibility in the .cc. O(tensors of the parts).
std::vector<PartLiveBound> PartLiveBounds(const Graph& graph, const Partition& partition,
                                          const std::vector<EveryOrderPeakBound>& part_peaks);

// Why no order of the model has a valid placement, when one of two proofs
// holds, "" otherwise (which does not make a placement exist):
//  1. An op whose own tensors (its activation inputs and outputs, all live
//     while it runs, in every order; an output it may write in place counts
//     as its input) have no split over the pools they may use within the
//     capacities. Names the op, its tensors and their sizes. Exhaustive per
//     op, at most 100000 tries each (an op beyond that is skipped).
//  2. Size granularity: every activation tensor is a multiple of g bytes
//     (their gcd), so a pool of capacity C holds at most floor(C / g) * g
//     bytes of them at once and the pools at most H, the sum of that; every
//     order has a step with at least L bytes live (the larger of
//     `every_order_peak` and MemoryLowerBound); L > H proves it. Names g, H
//     per pool, L and its source. O(tensors + pools).
//  3. The same per part of `every_order_peak.parts`: g the gcd of the
//     tensors the part touches, L its live bytes; names the part (its first
//     and last op). O(parts * pools).
std::string PoolInfeasibility(const Graph& graph, const MemoryModel& model,
                              const PoolProblem& problem,
                              const EveryOrderPeakBound& every_order_peak = {});

// The first step of the problem's schedule whose live blocks have no split
// over the pools they may use within the capacities (none: found() false).
// Steps with live bytes under 7/8 of the summed capacity are skipped (they
// split); each step tried gets at most 100000 tries and all at most
// `max_nodes`; a step whose tries run out counts as split (no proof).
struct UnsplittableStep {
  // -1: before the first op; kNoStep when every step tried splits.
  static constexpr int32_t kNoStep = -2;
  int32_t step = kNoStep;
  // The blocks live at it, largest first.
  std::vector<int32_t> blocks;
  int64_t live_bytes = 0;

  bool found() const { return step != kNoStep; }
};
UnsplittableStep FirstUnsplittableStep(const PoolProblem& problem, int64_t max_nodes = 1'000'000);

// Why this schedule (the problem's) has no valid placement, when a proof is
// found: a step whose live blocks have no split over the pools they may use
// within the capacities (a placement needs one at every step). Names the
// step and the blocks; "" otherwise. Only steps whose live bytes
// are at least 7/8 of the summed capacity are tried, each with at most
// 100000 tries and all with at most `max_nodes`.
std::string ScheduleInfeasibility(const Graph& graph, const PoolProblem& problem,
                                  int64_t max_nodes = 1'000'000);

}  // namespace ordo

#endif  // ORDO_CORE_POOLS_MEMORY_POOLS_H_
