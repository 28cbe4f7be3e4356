#include "core/pools/pool_placer.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/types/span.h"
#include "core/arena/arena_search.h"
#include "core/arena/best_arena_planner.h"
#include "core/pools/lowest_gap.h"
#include "core/pools/pool_relaxation.h"
#include "core/util/check.h"
#include "core/util/radix_sort.h"

namespace ordo {

bool BetterPlacement(const PoolPlacement& a, const PoolPlacement& b) {
  return PlacementRank(a) < PlacementRank(b);
}

namespace {

// Past this many rounds LowestGap sorts (see its header).
constexpr int kLowestGapRounds = 4;

bool Overlaps(const std::pair<int64_t, int64_t>& extent, int64_t start, int64_t size) {
  const auto& [offset, extent_size] = extent;
  // `&`, not `&&`: no branches (see LowestGap).
  return (extent_size > 0) & (offset < start + size) & (offset + extent_size > start);
}

}  // namespace

int64_t LowestGap(absl::Span<const std::pair<int64_t, int64_t>> taken, int64_t size,
                  int64_t limit) {
  int64_t candidate = 0;
  for (int round = 0; round < kLowestGapRounds; ++round) {
    // Branch-free, as the first fit's scan (see PoolFiller::FirstFit).
    bool moved = false;
    for (const auto& extent : taken) {
      const bool overlaps = Overlaps(extent, candidate, size);
      candidate = overlaps ? extent.first + extent.second : candidate;
      moved |= overlaps;
    }
    if (!moved || candidate > limit - size) return candidate;
  }
  // Everything below `candidate` is still taken; by offset, one scan ends it.
  Extents sorted(taken.begin(), taken.end());
  std::sort(sorted.begin(), sorted.end());
  for (const auto& extent : sorted) {
    if (extent.first >= candidate + size) break;
    if (Overlaps(extent, candidate, size)) candidate = extent.first + extent.second;
  }
  return candidate;
}

namespace {

constexpr int32_t kUnplaced = -1;

// For every block, the blocks of non-zero size live at some step it is live
// (itself excluded): the only blocks a first fit must step over. Computed
// once per placer call, O(B log B + pairs), in one flat array (the first
// fits read it for every block of every pass); NAS cells' blocks are
// co-live with a few dozen others out of hundreds.
class CoLiveBlocks {
 public:
  explicit CoLiveBlocks(const PoolProblem& problem) {
    const std::vector<ArenaBlock>& blocks = problem.arena.blocks;
    std::vector<int32_t> by_first;
    for (int32_t b = 0; b < problem.num_blocks(); ++b) {
      if (blocks[b].size > 0) by_first.push_back(b);
    }
    SortByFirstStep(blocks, by_first);
    // Counted, then filled. A block's list holds the blocks before it in
    // `by_first` first (filled while the pass is at them), then the rest.
    start_.assign(problem.num_blocks() + 1, 0);
    earlier_.assign(problem.num_blocks(), 0);
    ForEachCoLivePair(blocks, by_first, [&](int32_t a, int32_t b) {
      ++start_[a + 1], ++start_[b + 1];
      ++earlier_[b];
    });
    for (size_t b = 1; b < start_.size(); ++b) start_[b] += start_[b - 1];
    others_.resize(start_.back());
    std::vector<int32_t> next(start_.begin(), start_.end() - 1);
    ForEachCoLivePair(blocks, by_first, [&](int32_t a, int32_t b) {
      others_[next[a]++] = {b, blocks[b].size};
      others_[next[b]++] = {a, blocks[a].size};
    });
  }

  // A co-live block and its size, side by side for the first fit's scan.
  struct Other {
    int32_t block;
    int64_t size;
  };
  absl::Span<const Other> operator[](int32_t b) const {
    return absl::MakeConstSpan(others_).subspan(start_[b], start_[b + 1] - start_[b]);
  }
  // The co-live blocks before b in SortByFirstStep's order of all blocks
  // (stable, so the same order without the empty ones): all that are placed
  // when blocks are placed in that order (InternalFirst).
  absl::Span<const Other> earlier(int32_t b) const {
    return absl::MakeConstSpan(others_).subspan(start_[b], earlier_[b]);
  }

 private:
  std::vector<int32_t> start_;  // block b's are others_[start_[b], start_[b + 1])
  std::vector<int32_t> earlier_;  // of which the first earlier_[b] start before b
  std::vector<Other> others_;
};

// Blocks placed so far, with first-fit queries over each block's co-live
// blocks (LowestGap over k of them, not O(blocks in the pool)). With
// `Lists::kKept` also each pool's blocks in offset order (blocks_of), which
// the compaction and the swaps read; the greedy passes do not.
// Holds references to `problem` and `co_live`, which must outlive it.
class PoolFiller {
 public:
  enum class Lists { kKept, kNone };
  // Which co-live blocks a first fit steps over: all, or only those that
  // start earlier (CoLiveBlocks::earlier), which are all the placed ones
  // when every block is placed in first-step order and never moved.
  enum class Scan { kAll, kEarlier };

  PoolFiller(const PoolProblem& problem, const CoLiveBlocks& co_live, Lists lists = Lists::kKept,
             Scan scan = Scan::kAll)
      : problem_(problem),
        co_live_(co_live),
        lists_(lists),
        scan_(scan),
        by_offset_(problem.num_pools()) {
    assignment_.pool.assign(problem.num_blocks(), kUnplaced);
    assignment_.offset.assign(problem.num_blocks(), 0);
  }

  // LowestGap of block b among its co-live blocks in pool p, with `limit`.
  int64_t FirstFit(int32_t b, int32_t p,
                   int64_t limit = std::numeric_limits<int64_t>::max()) const {
    // Branch-free: whether a co-live block is in `p` is data no predictor
    // learns in one compile (a branch here measured faster only in a
    // benchmark that repeats one problem).
    const absl::Span<const CoLiveBlocks::Other> others =
        scan_ == Scan::kAll ? co_live_[b] : co_live_.earlier(b);
    if (taken_.size() < others.size()) taken_.resize(others.size());
    size_t count = 0;
    for (const CoLiveBlocks::Other& other : others) {
      taken_[count] = {assignment_.offset[other.block], other.size};
      count += static_cast<size_t>(assignment_.pool[other.block] == p);
    }
    return LowestGap(absl::MakeConstSpan(taken_.data(), count), problem_.arena.blocks[b].size,
                     limit);
  }
  bool FitsAt(int32_t b, int32_t p, int64_t offset) const {
    return offset + problem_.arena.blocks[b].size <= problem_.pools[p].capacity_bytes;
  }
  void Place(int32_t b, int32_t p, int64_t offset) {
    assignment_.pool[b] = p;
    assignment_.offset[b] = offset;
    if (problem_.arena.blocks[b].size == 0) {
      assignment_.offset[b] = 0;
      return;
    }
    if (lists_ == Lists::kNone) return;
    std::vector<int32_t>& list = by_offset_[p];
    auto it = std::upper_bound(list.begin(), list.end(), offset, [this](int64_t value, int32_t o) {
      return value < assignment_.offset[o];
    });
    list.insert(it, b);
  }
  void Remove(int32_t b) {
    if (lists_ == Lists::kKept) {
      std::vector<int32_t>& list = by_offset_[assignment_.pool[b]];
      list.erase(std::remove(list.begin(), list.end(), b), list.end());
    }
    assignment_.pool[b] = kUnplaced;
  }
  // First preferred pool with room; else the allowed pool it overflows least.
  // Most blocks fit the first pool they try, so each pool's co-live extents
  // are gathered only when it is tried.
  void PlaceFirstFit(int32_t b, absl::Span<const int32_t> preference) {
    const int64_t size = problem_.arena.blocks[b].size;
    for (int32_t p : preference) {
      if (!problem_.allowed[b][p]) continue;
      const int64_t offset = FirstFit(b, p, problem_.pools[p].capacity_bytes);
      if (FitsAt(b, p, offset)) return Place(b, p, offset);
    }
    // No room anywhere (rare): the exact lowest gaps, for the least overflow.
    int32_t least_pool = kNoId;
    int64_t least_offset = 0, least_overflow = std::numeric_limits<int64_t>::max();
    for (int32_t p : preference) {
      if (!problem_.allowed[b][p]) continue;
      const int64_t offset = FirstFit(b, p);
      const int64_t overflow = offset + size - problem_.pools[p].capacity_bytes;
      if (overflow < least_overflow) {
        least_pool = p, least_offset = offset, least_overflow = overflow;
      }
    }
    Place(b, least_pool, least_offset);
  }
  const PoolAssignment& assignment() const { return assignment_; }
  // Lists::kKept only.
  const std::vector<int32_t>& blocks_of(int32_t p) const { return by_offset_[p]; }
  void Rebuild(const PoolAssignment& assignment) {
    for (auto& list : by_offset_) list.clear();
    for (int32_t b = 0; b < problem_.num_blocks(); ++b) {
      Place(b, assignment.pool[b], assignment.offset[b]);
    }
  }

 private:
  const PoolProblem& problem_;
  const CoLiveBlocks& co_live_;
  const Lists lists_;
  const Scan scan_;
  PoolAssignment assignment_;
  std::vector<std::vector<int32_t>> by_offset_;
  // The first fit's working list, kept to spare allocations.
  mutable Extents taken_;
};

PoolPlacement Finish(const PoolProblem& problem, std::string algorithm, PoolAssignment assignment) {
  PoolPlacement placement{std::move(algorithm), std::move(assignment), {}};
  placement.evaluation = EvaluatePoolAssignment(problem, placement.assignment);
  return placement;
}

// Pools by the time of one byte written once and read once, fastest first.
std::vector<int32_t> PoolsBySpeed(const PoolProblem& problem) {
  std::vector<int32_t> pools(problem.num_pools());
  std::iota(pools.begin(), pools.end(), 0);
  auto byte_seconds = [&](int32_t p) {
    return 1 / problem.pools[p].read_bytes_per_second + 1 / problem.pools[p].write_bytes_per_second;
  };
  std::stable_sort(pools.begin(), pools.end(),
                   [&](int32_t a, int32_t b) { return byte_seconds(a) < byte_seconds(b); });
  return pools;
}

std::vector<int32_t> AllBlocks(const PoolProblem& problem) {
  std::vector<int32_t> blocks(problem.num_blocks());
  std::iota(blocks.begin(), blocks.end(), 0);
  return blocks;
}

// Every block's allowed pools, cheapest first (ties: the given pool order),
// in one flat array: the greedy passes and the improvement steps read them
// for every block, and a vector per block was a tenth of a fast placement
// (perf, docs/pools-log.md).
class PoolCostOrders {
 public:
  explicit PoolCostOrders(const PoolProblem& problem) {
    start_.reserve(problem.num_blocks() + 1);
    start_.push_back(0);
    pools_.reserve(static_cast<size_t>(problem.num_blocks()) * problem.num_pools());
    for (int32_t b = 0; b < problem.num_blocks(); ++b) {
      const absl::Span<const double> seconds = problem.seconds[b];
      const auto first = static_cast<std::ptrdiff_t>(pools_.size());
      for (int32_t p = 0; p < problem.num_pools(); ++p) {
        if (!problem.allowed[b][p]) continue;
        // Insertion after every pool no dearer: stable, and pools are few.
        auto at = pools_.end();
        while (at - pools_.begin() > first && seconds[*(at - 1)] > seconds[p]) --at;
        pools_.insert(at, p);
      }
      start_.push_back(static_cast<int32_t>(pools_.size()));
    }
  }
  absl::Span<const int32_t> operator[](int32_t b) const {
    return absl::MakeConstSpan(pools_).subspan(start_[b], start_[b + 1] - start_[b]);
  }

 private:
  std::vector<int32_t> start_;  // block b's are pools_[start_[b], start_[b + 1])
  std::vector<int32_t> pools_;
};

// Time the block saves in its cheapest allowed pool over its dearest
// (`pools`: its PoolCostOrders).
double Saving(const PoolProblem& problem, absl::Span<const int32_t> pools, int32_t b) {
  return problem.seconds[b][pools.back()] - problem.seconds[b][pools.front()];
}

// `preference(b)`: block b's pools in the order it tries them.
// `scan`: PoolFiller::Scan::kEarlier only for `order` by first step.
template <typename PoolPreference>
PoolAssignment Greedy(const PoolProblem& problem, const CoLiveBlocks& co_live,
                      const std::vector<int32_t>& order, const PoolPreference& preference,
                      PoolFiller::Scan scan = PoolFiller::Scan::kAll) {
  PoolFiller filler(problem, co_live, PoolFiller::Lists::kNone, scan);
  for (int32_t b : order) filler.PlaceFirstFit(b, preference(b));
  return filler.assignment();
}

// Greedy, given up (nullopt) as soon as it cannot rank before `to_beat`
// (another placement's PlacementRank: overflow bytes, then modelled time):
// once the overflow of the blocks placed so far is larger (it only grows
// as blocks are placed), or as large while their time with every other
// block in its cheapest pool is longer (a margin keeps the summation
// order's ulps from giving up on a tie, which the earlier start wins).
template <typename PoolPreference>
std::optional<PoolAssignment> GreedyUnlessBeaten(const PoolProblem& problem,
                                                 const CoLiveBlocks& co_live,
                                                 const PoolCostOrders& cost_orders,
                                                 const std::vector<int32_t>& order,
                                                 const PoolPreference& preference,
                                                 const std::tuple<int64_t, double>& to_beat) {
  const auto [overflow_to_beat, seconds_to_beat] = to_beat;
  const double give_up_above = seconds_to_beat * (1 + 1e-9);
  PoolFiller filler(problem, co_live, PoolFiller::Lists::kNone);
  std::vector<int64_t> used(problem.num_pools(), 0);
  int64_t overflow = 0;
  double bound = CheapestPoolsSeconds(problem);
  for (int32_t b : order) {
    filler.PlaceFirstFit(b, preference(b));
    const int32_t p = filler.assignment().pool[b];
    const int64_t size = problem.arena.blocks[b].size;
    const int64_t end = filler.assignment().offset[b] + size;
    if (size > 0 && end > used[p]) {
      const int64_t capacity = problem.pools[p].capacity_bytes;
      overflow += std::max<int64_t>(0, end - capacity) - std::max<int64_t>(0, used[p] - capacity);
      used[p] = end;
    }
    bound += problem.seconds[b][p] - problem.seconds[b][cost_orders[b].front()];
    if (overflow > overflow_to_beat || (overflow == overflow_to_beat && bound > give_up_above)) {
      return std::nullopt;
    }
  }
  return filler.assignment();
}

// Blocks not in their cheapest allowed pool, most time to gain first.
std::vector<int32_t> BlocksToPromote(const PoolProblem& problem,
                                     const PoolCostOrders& cost_orders,
                                     const PoolAssignment& assignment) {
  std::vector<int32_t> candidates;
  std::vector<double> gains;
  for (int32_t b = 0; b < problem.num_blocks(); ++b) {
    const double gain =
        problem.seconds[b][assignment.pool[b]] - problem.seconds[b][cost_orders[b].front()];
    if (gain > 0) candidates.push_back(b), gains.push_back(gain);
  }
  std::vector<int32_t> blocks;
  blocks.reserve(candidates.size());
  for (int32_t i : StableOrderByKeyDescending(gains)) blocks.push_back(candidates[i]);
  return blocks;
}

// Moves blocks to cheaper pools where first fit finds room. Never adds
// overflow: a block moves only into room within capacity.
bool MoveToCheaperPools(const PoolProblem& problem,
                        const PoolCostOrders& cost_orders, PoolFiller& filler) {
  bool moved = false;
  for (int32_t b : BlocksToPromote(problem, cost_orders, filler.assignment())) {
    const int32_t from = filler.assignment().pool[b];
    for (int32_t p : cost_orders[b]) {
      if (problem.seconds[b][p] >= problem.seconds[b][from]) break;
      const int64_t offset = filler.FirstFit(b, p);
      if (!filler.FitsAt(b, p, offset)) continue;
      filler.Remove(b);
      filler.Place(b, p, offset);
      moved = true;
      break;
    }
  }
  return moved;
}

// Re-plans pools' offsets with the `best` arena planner and keeps them where
// the pool gets no larger. The plan of a pool depends only on the set of
// blocks in it, and the starts often converge to the same sets, so plans are
// cached by (pool, blocks) for the lifetime of the compactor (one
// PlacePoolsHeuristic call). Not thread-safe.
class PoolCompactor {
 public:
  // `search_nodes_per_block`: the arena search's budget for a pool of n
  // blocks is n times this, at most kMaxSearchNodes (0: the greedy arena
  // planners only, which take about a tenth of a millisecond per pool; a
  // search that cannot close a pool's gap spends its whole budget, about
  // 2 us a node).
  static constexpr int64_t kMaxSearchNodes = 20000;
  PoolCompactor(const PoolProblem& problem, const ArenaLimits& limits,
                int64_t search_nodes_per_block)
      : problem_(problem), budget_(limits), nodes_per_block_(search_nodes_per_block) {
    budget_.max_search_nodes = std::min<int64_t>(limits.max_search_nodes, kMaxSearchNodes);
  }

  // Re-plans the pools with `compact[p]` set.
  void Compact(PoolFiller& filler, const std::vector<bool>& compact) {
    PoolAssignment assignment = filler.assignment();
    bool changed = false;
    for (int32_t p = 0; p < problem_.num_pools(); ++p) {
      if (!compact[p] || filler.blocks_of(p).empty()) continue;
      std::vector<int32_t> blocks = filler.blocks_of(p);
      std::sort(blocks.begin(), blocks.end());
      int64_t used = 0;
      for (int32_t b : blocks) {
        used = std::max(used, assignment.offset[b] + problem_.arena.blocks[b].size);
      }
      if (used == LiveBound(blocks)) continue;  // nothing to gain
      const Plan& plan = PlanOf(p, blocks);
      if (plan.arena_bytes >= used) continue;
      for (size_t i = 0; i < blocks.size(); ++i) assignment.offset[blocks[i]] = plan.offsets[i];
      changed = true;
    }
    if (changed) filler.Rebuild(assignment);
  }

 private:
  struct Plan {
    std::vector<int64_t> offsets;
    int64_t arena_bytes = 0;
  };

  // The most bytes of `blocks` live at one step: no layout is smaller.
  int64_t LiveBound(const std::vector<int32_t>& blocks) const {
    std::vector<int64_t> live(problem_.arena.num_steps + 1, 0);
    for (int32_t b : blocks) {
      const ArenaBlock& block = problem_.arena.blocks[b];
      for (int32_t s = block.first; s <= block.last; ++s) live[s + 1] += block.size;
    }
    return *std::max_element(live.begin(), live.end());
  }

  // `blocks` sorted.
  const Plan& PlanOf(int32_t p, const std::vector<int32_t>& blocks) {
    std::vector<int32_t> key = blocks;
    key.push_back(p);
    auto [it, inserted] = plans_.try_emplace(std::move(key));
    if (!inserted) return it->second;
    ArenaProblem sub;
    sub.num_steps = problem_.arena.num_steps;
    sub.alignment = problem_.arena.alignment;
    for (int32_t b : blocks) sub.blocks.push_back(problem_.arena.blocks[b]);
    sub.lower_bound_bytes = LiveBound(blocks);
    Plan& plan = it->second;
    ArenaLimits budget = budget_;
    budget.max_search_nodes = std::min<int64_t>(
        budget.max_search_nodes, nodes_per_block_ * static_cast<int64_t>(blocks.size()));
    plan.offsets = BestArenaPlanner().Place(sub, budget).offsets;
    plan.arena_bytes = ArenaBytes(sub, plan.offsets);
    return plan;
  }

  const PoolProblem& problem_;
  ArenaLimits budget_;
  const int64_t nodes_per_block_;
  absl::flat_hash_map<std::vector<int32_t>, Plan> plans_;
};

// The pools a compaction can matter in: every pool that overflows (a
// smaller layout may make it fit) and, when moves follow, every pool some
// block would move into (it is cheaper for it than its own). A block only
// ever moves to a cheaper pool, so a pool nobody wants stays unwanted and
// re-planning it changes no later move; it is re-planned once at the end
// (CompactAll).
std::vector<bool> PoolsWorthCompacting(const PoolProblem& problem, const PoolFiller& filler,
                                       bool moves_follow) {
  const PoolAssignment& assignment = filler.assignment();
  std::vector<bool> compact(problem.num_pools(), false);
  for (int32_t p = 0; p < problem.num_pools(); ++p) {
    for (int32_t b : filler.blocks_of(p)) {
      if (assignment.offset[b] + problem.arena.blocks[b].size > problem.pools[p].capacity_bytes) {
        compact[p] = true;
      }
    }
  }
  if (!moves_follow) return compact;
  for (int32_t b = 0; b < problem.num_blocks(); ++b) {
    const double current = problem.seconds[b][assignment.pool[b]];
    for (int32_t p = 0; p < problem.num_pools(); ++p) {
      if (problem.allowed[b][p] && problem.seconds[b][p] < current) compact[p] = true;
    }
  }
  return compact;
}

PoolPlacement Improve(const PoolProblem& problem, const CoLiveBlocks& co_live,
                      const PoolCostOrders& cost_orders,
                      PoolCompactor& compactor, const PoolPlacement& start,
                      const ArenaLimits& limits) {
  constexpr int kRounds = 3;
  PoolFiller filler(problem, co_live);
  filler.Rebuild(start.assignment);
  for (int round = 0; round < kRounds; ++round) {
    const bool moved = MoveToCheaperPools(problem, cost_orders, filler);
    if ((round > 0 && !moved) || limits.Expired()) break;
    compactor.Compact(filler, PoolsWorthCompacting(problem, filler, round + 1 < kRounds));
  }
  return Finish(problem, start.algorithm, filler.assignment());
}

// Swaps for small problems: a block b that wants a cheaper pool p takes the
// place of a co-live block a there, and a goes first-fit to its cheapest
// pool with room; kept when the time drops. A single move cannot do this
// when p is full (the greedy filled it with a block worth less there).
// Never adds overflow. Each pass O(B^2 P x B); only for kMaxSwapBlocks or
// fewer blocks, at most kSwapPasses passes.
constexpr int32_t kMaxSwapBlocks = 64;
constexpr int kSwapPasses = 8;

bool SwapIntoCheaperPools(const PoolProblem& problem,
                          const PoolCostOrders& cost_orders,
                          PoolFiller& filler) {
  for (int32_t b : BlocksToPromote(problem, cost_orders, filler.assignment())) {
    const int32_t from = filler.assignment().pool[b];
    const ArenaBlock& block = problem.arena.blocks[b];
    for (int32_t p : cost_orders[b]) {
      if (problem.seconds[b][p] >= problem.seconds[b][from]) break;
      for (int32_t a : filler.blocks_of(p)) {
        if (!BlocksOverlapInTime(problem.arena.blocks[a], block)) continue;
        PoolFiller trial = filler;
        trial.Remove(a);
        trial.Remove(b);
        const int64_t offset = trial.FirstFit(b, p);
        if (!trial.FitsAt(b, p, offset)) continue;
        trial.Place(b, p, offset);
        double delta = problem.seconds[b][p] - problem.seconds[b][from] - problem.seconds[a][p];
        bool placed = false;
        for (int32_t q : cost_orders[a]) {
          const int64_t at = trial.FirstFit(a, q);
          if (!trial.FitsAt(a, q, at)) continue;
          trial.Place(a, q, at);
          delta += problem.seconds[a][q];
          placed = true;
          break;
        }
        if (!placed || delta >= 0) continue;
        filler.Rebuild(trial.assignment());
        return true;
      }
    }
  }
  return false;
}

PoolPlacement SwapPasses(const PoolProblem& problem, const CoLiveBlocks& co_live,
                         const PoolCostOrders& cost_orders,
                         PoolPlacement placement) {
  if (problem.num_blocks() > kMaxSwapBlocks || !placement.fits()) return placement;
  PoolFiller filler(problem, co_live);
  filler.Rebuild(placement.assignment);
  bool swapped = false;
  for (int pass = 0; pass < kSwapPasses && SwapIntoCheaperPools(problem, cost_orders, filler);
       ++pass) {
    swapped = true;
    while (MoveToCheaperPools(problem, cost_orders, filler)) {
    }
  }
  if (!swapped) return placement;
  PoolPlacement candidate = Finish(problem, placement.algorithm + "+swap", filler.assignment());
  return BetterPlacement(candidate, placement) ? candidate : placement;
}

// Re-plans every pool of `placement` (PoolsWorthCompacting left some out).
PoolPlacement CompactAll(const PoolProblem& problem, const CoLiveBlocks& co_live,
                         PoolCompactor& compactor, PoolPlacement placement) {
  PoolFiller filler(problem, co_live);
  filler.Rebuild(placement.assignment);
  compactor.Compact(filler, std::vector<bool>(problem.num_pools(), true));
  return Finish(problem, std::move(placement.algorithm), filler.assignment());
}

// Ruin and recreate: a block kept out of its cheapest pool is placed before
// everything else and the greedy pass reruns; kept when the result is
// better. Bounded by `kMaxPromotions` reruns, each O(B^2 P): on the shared
// models no rerun after the eighth ever improved a placement (48 reruns
// gave the same placements in about twice the time, docs/pools.md).
constexpr int kMaxPromotions = 8;

PoolPlacement Promote(const PoolProblem& problem, const CoLiveBlocks& co_live,
                      const PoolCostOrders& cost_orders, PoolPlacement best,
                      const std::vector<int32_t>& base_order, const ArenaLimits& limits) {
  std::vector<int32_t> promoted;
  int reruns = 0;
  for (bool improved = true; improved && reruns < kMaxPromotions;) {
    improved = false;
    for (int32_t b : BlocksToPromote(problem, cost_orders, best.assignment)) {
      if (++reruns > kMaxPromotions || limits.Expired()) break;
      std::vector<int32_t> order = promoted;
      order.push_back(b);
      std::vector<bool> ordered(problem.num_blocks(), false);
      for (int32_t block : order) ordered[block] = true;
      for (int32_t other : base_order) {
        if (!ordered[other]) order.push_back(other);
      }
      PoolFiller filler(problem, co_live, PoolFiller::Lists::kNone);
      for (int32_t block : order) filler.PlaceFirstFit(block, cost_orders[block]);
      while (MoveToCheaperPools(problem, cost_orders, filler)) {
      }
      PoolPlacement candidate = Finish(problem, best.algorithm, filler.assignment());
      if (BetterPlacement(candidate, best)) {
        best = std::move(candidate);
        promoted.push_back(b);
        improved = true;
        break;
      }
    }
  }
  return best;
}

// Starts from the capacity prices of PoolRelaxation: every kEvery steps up
// to kStartSteps, each block prefers its pools by reduced cost (time plus
// the price of the congested steps it lives through) and blocks go
// first-fit by regret (what losing their best pool costs them at those
// prices), outright and per byte. The kKeep best (by BetterPlacement) are
// returned (all of them on at most kMaxSwapBlocks blocks). The same run goes on to kPoolBoundSteps for the lower bound
// (PoolLowerBoundSeconds's steps, here aimed at the best placement known):
// one relaxation serves both.
constexpr int kStartSteps = 150, kEvery = 15, kKeep = 2;

struct RelaxationResult {
  std::vector<PoolPlacement> starts;
  double lower_bound_seconds = 0;
  // The bound passed `give_up_above`: stopped there, `starts` empty (the
  // checkpoints' placements found before are dropped: none can win).
  bool given_up = false;
};

RelaxationResult RelaxationStarts(const PoolProblem& problem, const CoLiveBlocks& co_live,
                                  double upper_bound, const ArenaLimits& limits,
                                  double give_up_above) {
  const double peak_step_bound = PoolPeakStepBoundSeconds(problem);
  constexpr int kOrders = 3;
  static constexpr const char* kNames[kOrders] = {"relaxation", "relaxation-per-byte",
                                                  "relaxation-by-size"};
  PoolRelaxation relaxation(problem);
  std::vector<PoolPlacement> found;
  // A checkpoint whose preferences and order equal the previous
  // checkpoint's gives the same placement: it is copied, not recomputed
  // (the by-size order never changes, so this happens once prices settle).
  // The buffers are swapped, not reallocated, from one checkpoint to the next.
  std::vector<std::vector<int32_t>> preference(problem.num_blocks()), previous_preference;
  std::vector<int32_t> previous_order[kOrders];
  int previous_found[kOrders] = {-1, -1, -1};
  std::vector<double> regret(problem.num_blocks(), 0.0), reduced(problem.num_pools(), 0.0),
      key(problem.num_blocks(), 0.0);
  for (int step = 1; step <= std::max(kStartSteps, kPoolBoundSteps); ++step) {
    // Checked at every step, checkpoints included. The bound only grows:
    // once past `give_up_above`, so is every placement.
    // (A margin keeps an ulp of summation order from giving up on a tie.)
    if (std::max(peak_step_bound, relaxation.best_bound()) > give_up_above * (1 + 1e-9)) {
      return {{}, std::max(peak_step_bound, relaxation.best_bound()), true};
    }
    relaxation.Step(upper_bound);
    if (step % kEvery != 0 || step > kStartSteps || limits.Expired()) continue;
    for (int32_t b = 0; b < problem.num_blocks(); ++b) {
      std::vector<int32_t>& pools = preference[b];
      pools.clear();
      for (int32_t p = 0; p < problem.num_pools(); ++p) {
        if (problem.allowed[b][p]) pools.push_back(p);
      }
      for (int32_t p : pools) reduced[p] = relaxation.ReducedSeconds(b, p);
      std::stable_sort(pools.begin(), pools.end(),
                       [&](int32_t x, int32_t y) { return reduced[x] < reduced[y]; });
      regret[b] = pools.size() > 1 ? reduced[pools[1]] - reduced[pools[0]] : 0.0;
    }
    const bool same_preference = preference == previous_preference;
    // By regret, by regret per byte, and (for fitting: packing wants the
    // large first) by size.
    for (int key_kind = 0; key_kind < kOrders; ++key_kind) {
      for (int32_t b = 0; b < problem.num_blocks(); ++b) {
        const double size = static_cast<double>(std::max<int64_t>(1, problem.arena.blocks[b].size));
        key[b] = key_kind == 0 ? regret[b] : key_kind == 1 ? regret[b] / size : size;
      }
      std::vector<int32_t> order = StableOrderByKeyDescending(key);
      if (same_preference && previous_found[key_kind] >= 0 &&
          order == previous_order[key_kind]) {
        PoolPlacement same = found[previous_found[key_kind]];
        found.push_back(std::move(same));
      } else {
        found.push_back(Finish(
            problem, kNames[key_kind],
            Greedy(problem, co_live, order,
                   [&](int32_t b) -> const std::vector<int32_t>& { return preference[b]; })));
      }
      previous_found[key_kind] = static_cast<int>(found.size()) - 1;
      previous_order[key_kind] = std::move(order);
      if (found.back().fits()) {
        upper_bound = upper_bound > 0
                          ? std::min(upper_bound, found.back().evaluation.modelled_seconds)
                          : found.back().evaluation.modelled_seconds;
      }
    }
    std::swap(preference, previous_preference);
    preference.resize(problem.num_blocks());
  }
  std::stable_sort(found.begin(), found.end(), BetterPlacement);
  // Small problems keep every start: improving and swapping each is cheap,
  // and the one that ends best is often not the best before (pools_test:
  // optimal on 34 of 60 instead of 33 with this alone).
  if (problem.num_blocks() > kMaxSwapBlocks && found.size() > kKeep) found.resize(kKeep);
  return {std::move(found), std::max(peak_step_bound, relaxation.best_bound()), false};
}

PoolPlacement InternalFirst(const PoolProblem& problem, const CoLiveBlocks& co_live) {
  std::vector<int32_t> order = AllBlocks(problem);
  SortByFirstStep(problem.arena.blocks, order);  // stable: ties by block
  std::vector<int32_t> pools = PoolsBySpeed(problem);
  // In this order the placed co-live blocks are the earlier ones: half the
  // scan.
  return Finish(
      problem, "internal_first",
      Greedy(
          problem, co_live, order, [&](int32_t) -> const std::vector<int32_t>& { return pools; },
          PoolFiller::Scan::kEarlier));
}

PoolPlacement UsmpGreedy(const PoolProblem& problem, const CoLiveBlocks& co_live) {
  // Largest first, then by first step, then by block: by first step
  // (stable), then stably by size, the sizes side by side.
  std::vector<int32_t> by_first = AllBlocks(problem);
  SortByFirstStep(problem.arena.blocks, by_first);
  std::vector<uint64_t> larger_first(by_first.size());
  for (size_t i = 0; i < by_first.size(); ++i) {
    larger_first[i] = ~static_cast<uint64_t>(problem.arena.blocks[by_first[i]].size);
  }
  const std::vector<int32_t> by_size = StableOrderByKey(larger_first);
  std::vector<int32_t> order(by_size.size());
  for (size_t i = 0; i < by_size.size(); ++i) order[i] = by_first[by_size[i]];
  std::vector<int32_t> pools(problem.num_pools());
  std::iota(pools.begin(), pools.end(), 0);
  return Finish(problem, "usmp_greedy",
                Greedy(problem, co_live, order,
                       [&](int32_t) -> const std::vector<int32_t>& { return pools; }));
}

}  // namespace

PoolPlacement PlaceInternalFirst(const PoolProblem& problem) {
  return InternalFirst(problem, CoLiveBlocks(problem));
}

PoolPlacement PlaceUsmpGreedy(const PoolProblem& problem) {
  return UsmpGreedy(problem, CoLiveBlocks(problem));
}

namespace {

PoolGreedyStarts GreedyStarts(const PoolProblem& problem, const CoLiveBlocks& co_live,
                              const PoolCostOrders& cost_orders,
                              PlacementEffort effort) {
  auto cost_order = [&](int32_t b) { return cost_orders[b]; };
  auto sorted_by = [&](auto key) {
    std::vector<double> keys(problem.num_blocks());
    for (int32_t b = 0; b < problem.num_blocks(); ++b) keys[b] = key(b);
    return StableOrderByKeyDescending(keys);
  };
  auto per_byte = [&](int32_t b) {
    return Saving(problem, cost_orders[b], b) / std::max<int64_t>(1, problem.arena.blocks[b].size);
  };
  auto size = [&](int32_t b) { return static_cast<double>(problem.arena.blocks[b].size); };
  PoolGreedyStarts result;
  result.effort = effort;
  std::vector<PoolPlacement>& starts = result.starts;
  const std::vector<int32_t> by_saving =
      sorted_by([&](int32_t b) { return Saving(problem, cost_orders[b], b); });
  const std::vector<int32_t> by_size = sorted_by(size);
  // The fast effort keeps the starts that won on the shared models when a
  // placement fits (docs/pools.md, "Placement effort"): by time saved and
  // by size, and the two baselines, which are reported anyway. It needs
  // only the best of them: the baselines go first, and a start of its own
  // is dropped as soon as it cannot rank before the best so far.
  if (effort == PlacementEffort::kFast) {
    PoolPlacement internal_first = InternalFirst(problem, co_live);
    PoolPlacement usmp_greedy = UsmpGreedy(problem, co_live);
    std::tuple<int64_t, double> to_beat =
        std::min(PlacementRank(internal_first), PlacementRank(usmp_greedy));
    // By size first: it won more often on the shared models (and so gives
    // up the other sooner); kept in the thorough effort's order, so that
    // best() breaks ties alike.
    auto own_start = [&](const char* name,
                         const std::vector<int32_t>& order) -> std::optional<PoolPlacement> {
      std::optional<PoolAssignment> assignment =
          GreedyUnlessBeaten(problem, co_live, cost_orders, order, cost_order, to_beat);
      if (!assignment) return std::nullopt;
      PoolPlacement start = Finish(problem, name, *std::move(assignment));
      to_beat = std::min(to_beat, PlacementRank(start));
      return start;
    };
    std::optional<PoolPlacement> by_size_start = own_start("size", by_size);
    std::optional<PoolPlacement> by_saving_start = own_start("saving", by_saving);
    for (std::optional<PoolPlacement>* start : {&by_saving_start, &by_size_start}) {
      if (*start) starts.push_back(std::move(**start));
    }
    starts.push_back(std::move(internal_first));
    starts.push_back(std::move(usmp_greedy));
    return result;
  }
  result.density_order = sorted_by(per_byte);
  starts.push_back(
      Finish(problem, "density", Greedy(problem, co_live, result.density_order, cost_order)));
  starts.push_back(Finish(problem, "saving", Greedy(problem, co_live, by_saving, cost_order)));
  starts.push_back(Finish(problem, "size", Greedy(problem, co_live, by_size, cost_order)));
  starts.push_back(InternalFirst(problem, co_live));
  starts.push_back(UsmpGreedy(problem, co_live));
  auto lifetime = [&](int32_t b) {
    const ArenaBlock& block = problem.arena.blocks[b];
    return static_cast<double>(block.last - block.first) * 1e12 + static_cast<double>(block.size);
  };
  std::vector<int32_t> largest_pools(problem.num_pools());
  std::iota(largest_pools.begin(), largest_pools.end(), 0);
  std::stable_sort(largest_pools.begin(), largest_pools.end(), [&](int32_t a, int32_t b) {
    return problem.pools[a].capacity_bytes > problem.pools[b].capacity_bytes;
  });
  auto by_capacity = [&](int32_t) -> const std::vector<int32_t>& { return largest_pools; };
  // Interval colouring's rule for fitting: blocks in the order they start,
  // each into the smallest bank with room, so the large banks keep room
  // for the large blocks that start later.
  std::vector<int32_t> smallest_pools(largest_pools.rbegin(), largest_pools.rend());
  std::vector<int32_t> by_start = AllBlocks(problem);
  std::stable_sort(by_start.begin(), by_start.end(), [&](int32_t a, int32_t b) {
    const ArenaBlock &x = problem.arena.blocks[a], &y = problem.arena.blocks[b];
    return x.first != y.first ? x.first < y.first : x.size > y.size;
  });
  // For fitting, not speed: bin packing's "largest first into the largest
  // bank", by size and by lifetime.
  starts.push_back(
      Finish(problem, "fit-by-size", Greedy(problem, co_live, sorted_by(size), by_capacity)));
  starts.push_back(Finish(problem, "fit-by-lifetime",
                          Greedy(problem, co_live, sorted_by(lifetime), by_capacity)));
  starts.push_back(
      Finish(problem, "fit-in-order",
             Greedy(problem, co_live, by_start,
                    [&](int32_t) -> const std::vector<int32_t>& { return smallest_pools; })));
  return result;
}

}  // namespace

const PoolPlacement& PoolGreedyStarts::best() const {
  return *std::min_element(starts.begin(), starts.end(), BetterPlacement);
}

const PoolPlacement& PoolGreedyStarts::named(const std::string& algorithm) const {
  auto it = std::find_if(starts.begin(), starts.end(), [&](const PoolPlacement& start) {
    return start.algorithm == algorithm;
  });
  ORDO_CHECK(it != starts.end());
  return *it;
}

PoolGreedyStarts PlacePoolsGreedyStarts(const PoolProblem& problem, PlacementEffort effort) {
  return GreedyStarts(problem, CoLiveBlocks(problem), PoolCostOrders(problem), effort);
}

FastPoolPlacement PlacePoolsFast(const PoolProblem& problem,
                                 const NoOrderFitsProof& prove_no_order_fits) {
  const CoLiveBlocks co_live(problem);
  const PoolCostOrders cost_orders(problem);
  FastPoolPlacement fast;
  fast.starts = GreedyStarts(problem, co_live, cost_orders, PlacementEffort::kFast);
  const PoolPlacement& best = fast.starts.best();
  if (!best.fits() && prove_no_order_fits) {
    fast.no_order_fits = prove_no_order_fits(problem);
    if (!fast.no_order_fits->empty()) {
      fast.result = {best, CheapestPoolsSeconds(problem)};
      return fast;
    }
  }
  PoolFiller filler(problem, co_live, PoolFiller::Lists::kNone);
  filler.Rebuild(best.assignment);
  MoveToCheaperPools(problem, cost_orders, filler);
  PoolPlacement moved = Finish(problem, best.algorithm, filler.assignment());
  if (BetterPlacement(moved, best)) {
    fast.result.placement = std::move(moved);
  } else {
    fast.result.placement = best;
  }
  fast.result.lower_bound_seconds = fast.result.placement.fits()
                                       ? PoolPeakStepBoundSeconds(problem)
                                       : CheapestPoolsSeconds(problem);
  return fast;
}

PoolPlacement PlacePoolsGreedy(const PoolProblem& problem) {
  return PlacePoolsGreedyStarts(problem).best();
}

HeuristicPoolResult PlacePoolsHeuristic(const PoolProblem& problem, const ArenaLimits& limits,
                                        const PoolGreedyStarts* given, double give_up_above) {
  const PoolCostOrders cost_orders(problem);
  const CoLiveBlocks co_live(problem);
  std::optional<PoolGreedyStarts> computed;
  if (given == nullptr) {
    given = &computed.emplace(
        GreedyStarts(problem, co_live, cost_orders, PlacementEffort::kThorough));
  }
  ORDO_CHECK(given->effort == PlacementEffort::kThorough);
  std::vector<PoolPlacement> starts = given->starts;
  const std::vector<int32_t>& density_order = given->density_order;
  double upper_bound = 0;
  for (const PoolPlacement& start : starts) {
    if (start.fits() && (upper_bound == 0 || start.evaluation.modelled_seconds < upper_bound)) {
      upper_bound = start.evaluation.modelled_seconds;
    }
  }
  RelaxationResult relaxation =
      RelaxationStarts(problem, co_live, upper_bound, limits, give_up_above);
  if (relaxation.given_up) return {given->best(), relaxation.lower_bound_seconds, true};
  for (PoolPlacement& start : relaxation.starts) starts.push_back(std::move(start));
  const double lower_bound_seconds = relaxation.lower_bound_seconds;
  // Nothing can beat a placement at the bound: stop there.
  auto at_bound = [&](const PoolPlacement& placement) {
    return placement.fits() &&
           placement.evaluation.modelled_seconds <= lower_bound_seconds * (1 + 1e-12);
  };
  // Starts are improved with the greedy arena planners only; the search,
  // which costs milliseconds per pool it cannot close, improves only the
  // kSearchedStarts best of them (and what promotion and swaps make of the
  // best). On the shared models the search on every start found nothing
  // better than this (docs/pools.md).
  constexpr int kSearchedStarts = 2;
  // On large problems only the kImprovedStarts best starts (by
  // BetterPlacement) are improved: on the shared models the placement that
  // won always came from one of them, and improving the other seven or so
  // took 40% of the improvement's time (docs/pools.md). Small problems
  // improve every start (cheap, and the worse starts often win there).
  constexpr int kImprovedStarts = 3;
  const bool large = problem.num_blocks() > kMaxSwapBlocks;
  if (large) std::stable_sort(starts.begin(), starts.end(), BetterPlacement);
  constexpr int64_t kSearchNodesPerBlock = 16;
  PoolCompactor quick(problem, limits, 0);
  PoolCompactor compactor(problem, limits, kSearchNodesPerBlock);
  std::optional<PoolPlacement> best;
  std::vector<PoolPlacement> improved_starts;
  std::vector<const PoolAssignment*> improved_from;
  for (PoolPlacement& start : starts) {
    if (best && at_bound(*best)) break;
    // Several orders often yield the same placement; improving it again
    // would find the same thing.
    const bool seen =
        std::any_of(improved_from.begin(), improved_from.end(), [&](const PoolAssignment* other) {
          return other->pool == start.assignment.pool && other->offset == start.assignment.offset;
        });
    if (seen) continue;
    if (large && static_cast<int>(improved_from.size()) == kImprovedStarts) break;
    improved_from.push_back(&start.assignment);
    PoolPlacement improved = Improve(problem, co_live, cost_orders, quick, start, limits);
    if (!BetterPlacement(improved, start)) improved = start;
    if (!best || BetterPlacement(improved, *best)) best = improved;
    improved_starts.push_back(std::move(improved));
  }
  std::stable_sort(improved_starts.begin(), improved_starts.end(), BetterPlacement);
  // Swaps (small problems only) on every improved start, not only the best:
  // a worse start often swaps into a better placement (pools_test: optimal
  // on 38 of 60 instead of 33, worst gap 25.0% instead of 39.6%; with every
  // relaxation start kept, 42 of 60 and 19.9%).
  for (const PoolPlacement& start : improved_starts) {
    if (at_bound(*best)) break;
    PoolPlacement swapped = SwapPasses(problem, co_live, cost_orders, start);
    if (BetterPlacement(swapped, *best)) best = std::move(swapped);
  }
  if (improved_starts.size() > kSearchedStarts) improved_starts.resize(kSearchedStarts);
  for (const PoolPlacement& start : improved_starts) {
    if (at_bound(*best)) break;
    PoolPlacement improved = Improve(problem, co_live, cost_orders, compactor, start, limits);
    if (BetterPlacement(improved, *best)) best = std::move(improved);
  }
  if (!at_bound(*best)) {
    PoolPlacement promoted = Promote(problem, co_live, cost_orders, *best, density_order, limits);
    if (BetterPlacement(promoted, *best)) {
      best = Improve(problem, co_live, cost_orders, compactor, promoted, limits);
      best->algorithm += "+promote";
    }
  }
  if (!at_bound(*best)) best = SwapPasses(problem, co_live, cost_orders, *std::move(best));
  return {CompactAll(problem, co_live, compactor, *std::move(best)), lower_bound_seconds};
}

namespace {

// The branch and bound of PlacePoolsExact.
class ExactPoolSearch {
 public:
  ExactPoolSearch(const PoolProblem& problem, int64_t max_nodes, const ArenaLimits& limits)
      : problem_(problem), cost_orders_(problem), max_nodes_(max_nodes), limits_(limits) {
    order_ = AllBlocks(problem);
    std::stable_sort(order_.begin(), order_.end(), [&](int32_t a, int32_t b) {
      return problem.arena.blocks[a].size > problem.arena.blocks[b].size;
    });
    remaining_min_.assign(order_.size() + 1, 0.0);
    for (size_t i = order_.size(); i-- > 0;) {
      const int32_t b = order_[i];
      remaining_min_[i] = remaining_min_[i + 1] + problem.seconds[b][cost_orders_[b].front()];
    }
    live_.assign(problem.num_pools(), std::vector<int64_t>(problem.arena.num_steps + 1, 0));
    pool_.assign(problem.num_blocks(), kUnplaced);
  }

  ExactPoolResult Run() {
    complete_ = true;
    Search(0, 0.0);
    result_.optimal = complete_;
    result_.nodes = nodes_;
    return std::move(result_);
  }

 private:
  bool Pruned(double bound) const {
    return result_.placement &&
           bound >= result_.placement->evaluation.modelled_seconds * (1 - 1e-12);
  }

  bool RoomFor(int32_t b, int32_t p) const {
    const ArenaBlock& block = problem_.arena.blocks[b];
    for (int32_t s = block.first; s <= block.last; ++s) {
      if (live_[p][s + 1] + block.size > problem_.pools[p].capacity_bytes) return false;
    }
    return true;
  }
  void AddLive(int32_t b, int32_t p, int64_t sign) {
    const ArenaBlock& block = problem_.arena.blocks[b];
    for (int32_t s = block.first; s <= block.last; ++s) live_[p][s + 1] += sign * block.size;
  }

  void Search(size_t index, double seconds) {
    if (++nodes_ > max_nodes_ || ((nodes_ & 255) == 0 && limits_.Expired())) {
      complete_ = false;
      return;
    }
    if (index == order_.size()) return Leaf();
    const int32_t b = order_[index];
    for (int32_t p : cost_orders_[b]) {
      const double next = seconds + problem_.seconds[b][p];
      if (Pruned(next + remaining_min_[index + 1])) break;  // pools in cost order
      if (!RoomFor(b, p)) continue;
      pool_[b] = p;
      AddLive(b, p, +1);
      Search(index + 1, next);
      AddLive(b, p, -1);
      pool_[b] = kUnplaced;
      if (nodes_ > max_nodes_) return;
    }
  }

  // Every pool's blocks must have a layout within its capacity.
  void Leaf() {
    PoolAssignment assignment{pool_, std::vector<int64_t>(problem_.num_blocks(), 0)};
    for (int32_t p = 0; p < problem_.num_pools(); ++p) {
      ArenaProblem sub;
      sub.num_steps = problem_.arena.num_steps;
      sub.alignment = problem_.arena.alignment;
      std::vector<int32_t> blocks;
      for (int32_t b = 0; b < problem_.num_blocks(); ++b) {
        if (pool_[b] != p) continue;
        blocks.push_back(b);
        sub.blocks.push_back(problem_.arena.blocks[b]);
      }
      if (blocks.empty()) continue;
      const ArenaSearchResult found = SearchArenaRoundRobin(
          sub, problem_.pools[p].capacity_bytes, std::max<int64_t>(1000, max_nodes_ / 10), limits_);
      if (found.outcome == ArenaSearchOutcome::kAborted) complete_ = false;
      if (found.outcome != ArenaSearchOutcome::kFound) return;
      for (size_t i = 0; i < blocks.size(); ++i) assignment.offset[blocks[i]] = found.offsets[i];
    }
    result_.placement = Finish(problem_, "exact", std::move(assignment));
  }

  const PoolProblem& problem_;
  const PoolCostOrders cost_orders_;
  const int64_t max_nodes_;
  const ArenaLimits& limits_;
  std::vector<int32_t> order_;
  std::vector<double> remaining_min_;
  std::vector<std::vector<int64_t>> live_;
  std::vector<int32_t> pool_;
  int64_t nodes_ = 0;
  bool complete_ = true;
  ExactPoolResult result_;
};

}  // namespace

ExactPoolResult PlacePoolsExact(const PoolProblem& problem, int64_t max_nodes,
                                const ArenaLimits& limits) {
  return ExactPoolSearch(problem, max_nodes, limits).Run();
}

}  // namespace ordo
