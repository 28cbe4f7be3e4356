// Placers against an independent checker written here from the spec (not
// the pool model's own code), and ordo's heuristic against the exact search
// on random graphs.

#include "core/pools/pool_placer.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <limits>
#include <numeric>
#include <random>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/pools/lowest_gap.h"
#include "core/pools/pool_order_repair.h"
#include "core/pools/random_pool_problem.h"
#include "core/testing/status_matchers.h"
#include "core/testing/test_graph.h"
#include "core/testing/trials.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

// Spec "Memory pools", tensor by tensor from the model and the simulation:
// every activation in exactly one allowed pool, aligned sizes and offsets,
// capacities, co-live tensors disjoint within a pool except an in-place pair
// (which coincides); returns the modelled time recomputed from the formula.
double CheckIndependently(const MemoryModel& model, const SimulationResult& simulation,
                          const PoolProblem& problem, const PoolAssignment& assignment,
                          const std::vector<int32_t>& pinned_pool) {
  const int64_t alignment = problem.arena.alignment;
  struct Placed {
    int32_t tensor, pool;
    int64_t offset, size;
  };
  std::vector<Placed> placed;
  double seconds = 0;
  for (int32_t t = 0; t < model.num_tensors(); ++t) {
    if (!simulation.has_interval[t]) continue;
    const int32_t block = problem.arena.block_of_tensor[t];
    const int32_t pool = assignment.pool[block];
    const int64_t size = (model.tensors[t].bytes + alignment - 1) / alignment * alignment;
    const int64_t offset = assignment.offset[block];
    EXPECT_TRUE(pool >= 0 && pool < problem.num_pools()) << "tensor " << t;
    if (pinned_pool[t] != kNoId) {
      EXPECT_EQ(pool, pinned_pool[t]) << "tensor " << t;
    }
    EXPECT_EQ(offset % alignment, 0);
    EXPECT_LE(offset + size, problem.pools[pool].capacity_bytes) << "tensor " << t;
    placed.push_back({t, pool, offset, size});
    const MemoryPool& p = problem.pools[pool];
    const double writes = model.tensors[t].producer == kNoId ? 0 : 1;
    seconds += writes * size / p.write_bytes_per_second +
               static_cast<double>(model.tensors[t].consumers.size()) * size /
                   p.read_bytes_per_second;
  }
  for (const Placed& a : placed) {
    for (const Placed& b : placed) {
      if (a.tensor >= b.tensor || a.pool != b.pool || a.size == 0 || b.size == 0) continue;
      const LiveInterval &x = simulation.intervals[a.tensor], &y = simulation.intervals[b.tensor];
      if (x.last < y.first || y.last < x.first) continue;
      const bool inplace = simulation.inplace_source[b.tensor] == a.tensor ||
                           simulation.inplace_source[a.tensor] == b.tensor;
      if (inplace) {
        EXPECT_EQ(a.offset, b.offset);
        continue;
      }
      bool chained = false;  // same in-place chain, further apart
      chained = problem.arena.block_of_tensor[a.tensor] == problem.arena.block_of_tensor[b.tensor];
      if (chained) continue;
      EXPECT_TRUE(a.offset + a.size <= b.offset || b.offset + b.size <= a.offset)
          << "tensors " << a.tensor << " and " << b.tensor << " overlap";
    }
  }
  return seconds;
}

PoolOptions ThreeBanks(int64_t scale) {
  PoolOptions options;
  options.pools = {{"tcm", 2 * scale, 8e9, 8e9},
                   {"ocram", 4 * scale, 2e9, 1e9},
                   {"hyperram", 64 * scale, 2e8, 1e8}};
  return options;
}

// The one order of placements: fitting first (even when slower), then less
// overflow, then the lower modelled time.
TEST(PoolPlacerTest, PlacementsRankFittingFirstThenOverflowThenTime) {
  auto placement = [](int64_t overflow, double seconds) {
    PoolPlacement p;
    p.evaluation.overflow_bytes = overflow;
    p.evaluation.modelled_seconds = seconds;
    return p;
  };
  EXPECT_TRUE(BetterPlacement(placement(0, 9.0), placement(1, 1.0)));
  EXPECT_TRUE(BetterPlacement(placement(5, 9.0), placement(6, 1.0)));
  EXPECT_TRUE(BetterPlacement(placement(0, 1.0), placement(0, 2.0)));
  EXPECT_FALSE(BetterPlacement(placement(0, 1.0), placement(0, 1.0)));
}

TEST(PoolPlacerTest, HotSmallTensorGoesToTheFastPoolAndTheBigOneStreams) {
  // y is read by four ops; big is read once and is too large for tcm.
  const Graph graph = ordo::testing::TestGraph(R"(
    input x 64
    op a Conv x -> y:64 big:512
    op b Conv y big -> p:64
    op c Conv y -> q:64
    op d Conv y -> r:64
    op e Conv y p q r -> out:64
    output out
  )");
  const MemoryModel model = *BuildMemoryModel(graph, {});
  const SimulationResult simulation = *Simulate(model, {0, 1, 2, 3, 4});
  PoolOptions options;
  options.pools = {{"fast", 256, 8e9, 8e9}, {"slow", 4096, 1e8, 1e8}};
  const PoolProblem problem = *BuildPoolProblem(graph, model, simulation, 64, options);
  const PoolPlacement placement = PlacePoolsHeuristic(problem, ArenaLimits{}).placement;
  ASSERT_TRUE(placement.fits());
  ORDO_EXPECT_OK(CheckPoolAssignment(problem, placement.assignment));
  auto pool_of = [&](const char* name) {
    return placement.assignment.pool[problem.arena.block_of_tensor[*graph.FindTensor(name)]];
  };
  EXPECT_EQ(pool_of("y"), 0);
  EXPECT_EQ(pool_of("big"), 1);
  EXPECT_GE(placement.evaluation.modelled_seconds, PoolLowerBoundSeconds(problem) * (1 - 1e-12));
}

TEST(PoolPlacerTest, HeuristicIsNeverBelowTheExactOptimumNorAboveTheBaselines) {
  std::mt19937_64 rng(17);
  int exact_runs = 0, optimal_hits = 0, fast_fits = 0, fast_optimal_hits = 0;
  double worst_gap = 0, worst_fast_gap = 0;
  for (int iteration = 0; iteration < ::ordo::testing::Trials(60); ++iteration) {
    testing::RandomDagOptions dag;
    dag.num_ops = 4 + iteration % 18;  // up to ~40 tensors with inputs and outputs
    dag.num_inputs = 1 + iteration % 2;
    dag.min_bytes = 16;
    dag.max_bytes = 256;
    const Graph graph = testing::RandomDag(rng, dag);
    const MemoryModel model = *BuildMemoryModel(graph, {});
    const std::vector<int32_t> order = testing::RandomTopologicalOrder(model, rng);
    const SimulationResult simulation = *Simulate(model, order);
    PoolOptions options = ThreeBanks(128);
    std::vector<int32_t> pinned(model.num_tensors(), kNoId);
    if (iteration % 3 == 0) {  // pin the first input to the middle bank
      options.pinned[graph.tensor(model.ops[order[0]].inputs.empty()
                                      ? 0
                                      : model.ops[order[0]].inputs[0])
                         .name] = "ocram";
    }
    absl::StatusOr<PoolProblem> problem =
        BuildPoolProblem(graph, model, simulation, 16, options);
    if (!problem.ok()) continue;  // a pinned tensor too large for its bank
    for (const auto& [name, pool] : options.pinned) pinned[*graph.FindTensor(name)] = 1;

    const HeuristicPoolResult placed = PlacePoolsHeuristic(*problem, ArenaLimits{});
    const PoolPlacement& heuristic = placed.placement;
    // Two bounds: the plain one and the placer's (the same arguments, its
    // relaxation aimed at its own starts); both must hold.
    const double lower = std::max(PoolLowerBoundSeconds(*problem), placed.lower_bound_seconds);
    EXPECT_GE(placed.lower_bound_seconds, PoolPeakStepBoundSeconds(*problem));
    for (const PoolPlacement& baseline :
         {PlaceInternalFirst(*problem), PlaceUsmpGreedy(*problem)}) {
      if (baseline.fits()) {
        ASSERT_TRUE(heuristic.fits()) << baseline.algorithm << " fits, ordo does not";
        EXPECT_LE(heuristic.evaluation.modelled_seconds,
                  baseline.evaluation.modelled_seconds * (1 + 1e-12))
            << baseline.algorithm;
        EXPECT_NEAR(CheckIndependently(model, simulation, *problem, baseline.assignment, pinned),
                    baseline.evaluation.modelled_seconds, 1e-12);
      }
    }
    // The fast effort's placement: checked independently, fits whenever a
    // baseline does (both are among its starts), never slower than either,
    // never below a bound; its gap to the optimum is counted below.
    const FastPoolPlacement fast = PlacePoolsFast(*problem);
    const PoolPlacement& quick = fast.result.placement;
    EXPECT_DOUBLE_EQ(fast.result.lower_bound_seconds, quick.fits()
                                                          ? PoolPeakStepBoundSeconds(*problem)
                                                          : CheapestPoolsSeconds(*problem));
    for (const char* name : {"internal_first", "usmp_greedy"}) {
      const PoolPlacement& baseline = fast.starts.named(name);
      if (!baseline.fits()) continue;
      ASSERT_TRUE(quick.fits()) << name << " fits, the fast placement does not";
      EXPECT_LE(quick.evaluation.modelled_seconds,
                baseline.evaluation.modelled_seconds * (1 + 1e-12))
          << name;
    }
    double quick_seconds = 0;
    if (quick.fits()) {
      quick_seconds = CheckIndependently(model, simulation, *problem, quick.assignment, pinned);
      EXPECT_NEAR(quick_seconds, quick.evaluation.modelled_seconds,
                  1e-12 + quick_seconds * 1e-9);
      EXPECT_GE(quick_seconds, lower * (1 - 1e-9));
    }
    // A proof that this order has no placement never meets a placement.
    const std::string no_placement = ScheduleInfeasibility(graph, *problem);
    if (heuristic.fits()) {
      EXPECT_EQ(no_placement, "");
    }
    if (!no_placement.empty()) {
      EXPECT_FALSE(PlacePoolsExact(*problem, 200000, ArenaLimits{}).placement.has_value());
    }
    if (!heuristic.fits()) continue;
    const double seconds =
        CheckIndependently(model, simulation, *problem, heuristic.assignment, pinned);
    EXPECT_NEAR(seconds, heuristic.evaluation.modelled_seconds, 1e-12 + seconds * 1e-9);
    EXPECT_GE(seconds, lower * (1 - 1e-9));

    const ExactPoolResult exact = PlacePoolsExact(*problem, 200000, ArenaLimits{});
    if (!exact.optimal) continue;
    ++exact_runs;
    ASSERT_TRUE(exact.placement.has_value()) << "heuristic found a placement the search missed";
    const double optimum =
        CheckIndependently(model, simulation, *problem, exact.placement->assignment, pinned);
    EXPECT_GE(optimum, lower * (1 - 1e-9));
    EXPECT_GE(seconds, optimum * (1 - 1e-9)) << "heuristic below the proved optimum: a bug";
    const double gap = seconds / optimum - 1;
    worst_gap = std::max(worst_gap, gap);
    if (gap < 1e-9) ++optimal_hits;
    if (quick.fits()) {
      EXPECT_GE(quick_seconds, optimum * (1 - 1e-9)) << "fast placement below the optimum: a bug";
      const double quick_gap = quick_seconds / optimum - 1;
      worst_fast_gap = std::max(worst_fast_gap, quick_gap);
      if (quick_gap < 1e-9) ++fast_optimal_hits;
      ++fast_fits;
    }
  }
  EXPECT_GT(exact_runs, 0);
  std::printf("heuristic optimal on %d of %d exactly solved graphs; worst gap %.1f%%\n",
              optimal_hits, exact_runs, 100 * worst_gap);
  std::printf("fast placement: fits on %d of them, optimal on %d; worst gap %.1f%%\n", fast_fits,
              fast_optimal_hits, 100 * worst_fast_gap);
}

// The whole placement: both assignments and what a baseline reports of it
// (fits, modelled seconds, overflow).
void ExpectSamePlacement(const PoolPlacement& a, const PoolPlacement& b) {
  EXPECT_EQ(a.assignment.pool, b.assignment.pool) << a.algorithm << " vs " << b.algorithm;
  EXPECT_EQ(a.assignment.offset, b.assignment.offset) << a.algorithm << " vs " << b.algorithm;
  EXPECT_EQ(a.fits(), b.fits());
  EXPECT_EQ(a.evaluation.modelled_seconds, b.evaluation.modelled_seconds);
  EXPECT_EQ(a.evaluation.overflow_bytes, b.evaluation.overflow_bytes);
}

// LowestGap against its definition, checked on every candidate: the lowest
// gap starts at 0 or at some extent's end, and is the least of those where
// [c, c + size) overlaps no extent of non-zero size.
int64_t LowestGapByDefinition(const Extents& taken, int64_t size) {
  std::vector<int64_t> candidates = {0};
  for (const auto& [offset, extent_size] : taken) candidates.push_back(offset + extent_size);
  int64_t best = std::numeric_limits<int64_t>::max();
  for (int64_t c : candidates) {
    const bool free = std::none_of(taken.begin(), taken.end(), [&](const auto& extent) {
      return extent.second > 0 && extent.first < c + size && c < extent.first + extent.second;
    });
    if (free) best = std::min(best, c);
  }
  return best;
}

TEST(LowestGapTest, IsTheLowestOffsetOverlappingNothing) {
  std::mt19937_64 rng(37);
  auto uniform = [&rng](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  for (int trial = 0; trial < ::ordo::testing::Trials(3000); ++trial) {
    Extents taken;
    switch (trial % 3) {
      case 0:  // Scattered, overlapping, some of zero size.
        for (int64_t i = uniform(0, 12); i > 0; --i) taken.push_back({uniform(0, 96), uniform(0, 24)});
        break;
      case 1: {  // A chain of adjacent extents from 0, stored by descending offset.
        int64_t end = 0;
        for (int64_t i = uniform(1, 40); i > 0; --i) {
          const int64_t extent_size = uniform(0, 8);
          taken.push_back({end, extent_size});
          end += extent_size;
        }
        std::reverse(taken.begin(), taken.end());
        break;
      }
      default:  // Chains with gaps, shuffled.
        for (int64_t offset = 0, i = uniform(1, 30); i > 0; --i) {
          const int64_t extent_size = uniform(1, 8);
          taken.push_back({offset, extent_size});
          offset += extent_size + (uniform(0, 3) == 0 ? uniform(1, 6) : 0);
        }
        std::shuffle(taken.begin(), taken.end(), rng);
    }
    const int64_t size = uniform(0, 10);
    const int64_t lowest = LowestGapByDefinition(taken, size);
    ASSERT_EQ(LowestGap(taken, size), lowest)
        << "trial " << trial << ", size " << size << ", " << taken.size() << " extents";
    // With a limit (a pool's capacity): the lowest gap when the block fits
    // below it, else any offset that says it does not.
    const int64_t limit = uniform(0, 128);
    const int64_t limited = LowestGap(taken, size, limit);
    if (lowest + size <= limit) {
      ASSERT_EQ(limited, lowest) << "trial " << trial << ", limit " << limit;
    } else {
      ASSERT_GT(limited + size, limit) << "trial " << trial << ", limit " << limit;
    }
  }
}

// The place stage scores a schedule by its greedy starts and then places it
// in full from them (PlaceScoredInPools): that must be the placement the
// placer finds on its own, and the starts must hold both baselines.
TEST(PoolPlacerTest, GivenGreedyStartsGiveTheSamePlacement) {
  std::mt19937_64 rng(29);
  for (int iteration = 0; iteration < ::ordo::testing::Trials(20); ++iteration) {
    testing::RandomDagOptions dag;
    dag.num_ops = 4 + iteration % 18;
    dag.min_bytes = 16;
    dag.max_bytes = 256;
    const Graph graph = testing::RandomDag(rng, dag);
    const MemoryModel model = *BuildMemoryModel(graph, {});
    const SimulationResult simulation =
        *Simulate(model, testing::RandomTopologicalOrder(model, rng));
    absl::StatusOr<PoolProblem> problem =
        BuildPoolProblem(graph, model, simulation, 16, ThreeBanks(128));
    ASSERT_TRUE(problem.ok()) << problem.status();
    const PoolGreedyStarts starts = PlacePoolsGreedyStarts(*problem);
    const HeuristicPoolResult alone = PlacePoolsHeuristic(*problem, ArenaLimits{});
    const HeuristicPoolResult given = PlacePoolsHeuristic(*problem, ArenaLimits{}, &starts);
    ExpectSamePlacement(given.placement, alone.placement);
    EXPECT_EQ(given.lower_bound_seconds, alone.lower_bound_seconds);
    EXPECT_EQ(given.given_up, alone.given_up);
    ExpectSamePlacement(starts.best(), PlacePoolsGreedy(*problem));
    ExpectSamePlacement(starts.named("internal_first"), PlaceInternalFirst(*problem));
    ExpectSamePlacement(starts.named("usmp_greedy"), PlaceUsmpGreedy(*problem));
  }
}

// The fast effort gives up a start of its own once it cannot rank before
// another start (less overflow, then less time): its best start must be
// the best of the same four starts run to the end (the thorough effort's,
// which keeps every start), on banks from roomy to too small for any
// placement.
TEST(PoolPlacerTest, FastStartsGiveUpOnlyStartsThatCannotWin) {
  std::mt19937_64 rng(37);
  int given_up = 0, none_fits = 0, given_up_when_none_fits = 0;
  for (int iteration = 0; iteration < ::ordo::testing::Trials(120); ++iteration) {
    absl::StatusOr<PoolProblem> problem =
        testing::RandomOrderPoolProblem(rng, iteration, ThreeBanks(4 << (iteration % 6)));
    if (!problem.ok()) continue;  // a tensor larger than every bank
    const PoolGreedyStarts whole = PlacePoolsGreedyStarts(*problem);
    const PoolPlacement* best = nullptr;
    for (const char* name : {"saving", "size", "internal_first", "usmp_greedy"}) {
      const PoolPlacement& start = whole.named(name);
      if (best == nullptr || BetterPlacement(start, *best)) best = &start;
    }
    const FastPoolPlacement fast = PlacePoolsFast(*problem);
    ExpectSamePlacement(fast.starts.best(), *best);
    EXPECT_EQ(fast.starts.best().algorithm, best->algorithm);
    ExpectSamePlacement(fast.starts.named("internal_first"), whole.named("internal_first"));
    ExpectSamePlacement(fast.starts.named("usmp_greedy"), whole.named("usmp_greedy"));
    given_up += fast.starts.starts.size() < 4;
    none_fits += !best->fits();
    given_up_when_none_fits += !best->fits() && fast.starts.starts.size() < 4;
  }
  // Every case was met.
  EXPECT_GT(given_up, 0);
  EXPECT_GT(none_fits, 0);
  EXPECT_GT(given_up_when_none_fits, 0);
}

// The fast placer asks for the proof that no order fits only when no start
// fits; with a proof it skips the moves (its placement is the best start),
// without one it places as it does when it cannot ask.
TEST(PoolPlacerTest, FastPlacerAsksForTheProofOnlyWhenNoStartFits) {
  std::mt19937_64 rng(41);
  int asked = 0, not_asked = 0;
  for (int iteration = 0; iteration < ::ordo::testing::Trials(60); ++iteration) {
    absl::StatusOr<PoolProblem> problem =
        testing::RandomOrderPoolProblem(rng, iteration, ThreeBanks(4 << (iteration % 6)));
    if (!problem.ok()) continue;
    const FastPoolPlacement alone = PlacePoolsFast(*problem);
    int calls = 0;
    const FastPoolPlacement no_proof = PlacePoolsFast(*problem, [&](const PoolProblem&) {
      ++calls;
      return std::string();
    });
    ExpectSamePlacement(no_proof.result.placement, alone.result.placement);
    const bool any_start_fits = alone.starts.best().fits();
    EXPECT_EQ(calls, any_start_fits ? 0 : 1);
    EXPECT_EQ(no_proof.no_order_fits.has_value(), !any_start_fits);
    const FastPoolPlacement proved =
        PlacePoolsFast(*problem, [](const PoolProblem&) { return std::string("proof"); });
    if (any_start_fits) {
      ExpectSamePlacement(proved.result.placement, alone.result.placement);
      EXPECT_FALSE(proved.no_order_fits.has_value());
      ++not_asked;
    } else {
      ExpectSamePlacement(proved.result.placement, alone.starts.best());
      EXPECT_EQ(proved.no_order_fits, "proof");
      EXPECT_EQ(proved.result.lower_bound_seconds, CheapestPoolsSeconds(*problem));
      ++asked;
    }
  }
  EXPECT_GT(asked, 0);
  EXPECT_GT(not_asked, 0);
}

// Given up above a time, the placer stops only when no valid placement is
// that fast: below the time it finds what it finds without the limit.
TEST(PoolPlacerTest, GivesUpOnlyAboveItsBound) {
  std::mt19937_64 rng(31);
  int given_up = 0;
  for (int iteration = 0; iteration < ::ordo::testing::Trials(20); ++iteration) {
    testing::RandomDagOptions dag;
    dag.num_ops = 4 + iteration % 18;
    dag.min_bytes = 16;
    dag.max_bytes = 256;
    const Graph graph = testing::RandomDag(rng, dag);
    const MemoryModel model = *BuildMemoryModel(graph, {});
    const SimulationResult simulation =
        *Simulate(model, testing::RandomTopologicalOrder(model, rng));
    absl::StatusOr<PoolProblem> problem =
        BuildPoolProblem(graph, model, simulation, 16, ThreeBanks(128));
    ASSERT_TRUE(problem.ok()) << problem.status();
    const HeuristicPoolResult alone = PlacePoolsHeuristic(*problem, ArenaLimits{});
    if (!alone.placement.fits()) continue;
    const double seconds = alone.placement.evaluation.modelled_seconds;
    // At its own time it never gives up: it must find that placement again.
    const HeuristicPoolResult at = PlacePoolsHeuristic(*problem, ArenaLimits{}, nullptr, seconds);
    EXPECT_FALSE(at.given_up);
    EXPECT_EQ(at.placement.assignment.pool, alone.placement.assignment.pool);
    // Far below the bound it gives up, with a bound above the limit.
    const double below = alone.lower_bound_seconds * 0.5;
    const HeuristicPoolResult under = PlacePoolsHeuristic(*problem, ArenaLimits{}, nullptr, below);
    EXPECT_TRUE(under.given_up);
    EXPECT_GT(under.lower_bound_seconds, below);
    EXPECT_GT(under.placement.evaluation.modelled_seconds, below);
    given_up += under.given_up;
  }
  EXPECT_GT(given_up, 0);
}

TEST(PoolPlacerTest, UsmpIgnoresBandwidthsAndInternalFirstFillsTheFastestPool) {
  const Graph graph = ordo::testing::TestGraph(R"(
    input x 64
    op a Conv x -> y:64
    op b Conv y -> out:64
    output out
  )");
  const MemoryModel model = *BuildMemoryModel(graph, {});
  const SimulationResult simulation = *Simulate(model, {0, 1});
  PoolOptions options;
  // Listed slow first: USMP takes the first pool with room.
  options.pools = {{"slow", 4096, 1e8, 1e8}, {"fast", 4096, 8e9, 8e9}};
  const PoolProblem problem = *BuildPoolProblem(graph, model, simulation, 64, options);
  const PoolPlacement usmp = PlaceUsmpGreedy(problem);
  const PoolPlacement internal = PlaceInternalFirst(problem);
  for (int32_t b = 0; b < problem.num_blocks(); ++b) {
    EXPECT_EQ(usmp.assignment.pool[b], 0);
    EXPECT_EQ(internal.assignment.pool[b], 1);
  }
}

// The baselines' rules spelt out, step by step, over every placed block
// (not the placer's co-live lists, sorts or first fit): blocks in `order`,
// each at the lowest offset in the first of `pools` (allowed) where it
// fits, else where it overflows least (the first such pool).
PoolAssignment FirstFitByDefinition(const PoolProblem& problem, const std::vector<int32_t>& order,
                                    const std::vector<int32_t>& pools) {
  PoolAssignment assignment;
  assignment.pool.assign(problem.num_blocks(), kNoId);
  assignment.offset.assign(problem.num_blocks(), 0);
  auto lowest_gap = [&](int32_t b, int32_t p) {
    const ArenaBlock& block = problem.arena.blocks[b];
    for (int64_t offset = 0;; offset += problem.arena.alignment) {
      bool free = true;
      for (int32_t other = 0; other < problem.num_blocks() && free; ++other) {
        const ArenaBlock& placed = problem.arena.blocks[other];
        free = !(assignment.pool[other] == p && placed.size > 0 &&
                 BlocksOverlapInTime(block, placed) &&
                 assignment.offset[other] < offset + block.size &&
                 offset < assignment.offset[other] + placed.size);
      }
      if (free) return offset;
    }
  };
  for (int32_t b : order) {
    const int64_t size = problem.arena.blocks[b].size;
    int32_t chosen = kNoId;
    int64_t chosen_offset = 0, least_overflow = std::numeric_limits<int64_t>::max();
    for (int32_t p : pools) {
      if (!problem.allowed[b][p]) continue;
      const int64_t offset = size == 0 ? 0 : lowest_gap(b, p);
      const int64_t overflow = offset + size - problem.pools[p].capacity_bytes;
      if (overflow <= 0) {
        chosen = p, chosen_offset = offset;
        break;
      }
      if (overflow < least_overflow) chosen = p, chosen_offset = offset, least_overflow = overflow;
    }
    assignment.pool[b] = chosen;
    assignment.offset[b] = chosen_offset;
  }
  return assignment;
}

// internal_first (ESP-DL: by first step, fastest pool first) and
// usmp_greedy (TVM: largest first, ties by first step, pools as given)
// against their definitions, on banks from roomy to overflowing.
TEST(PoolPlacerTest, BaselinesAreTheirRulesStepByStep) {
  std::mt19937_64 rng(43);
  int overflowing = 0;
  for (int iteration = 0; iteration < ::ordo::testing::Trials(80); ++iteration) {
    // Listed slow, fast, middle: neither rule may rely on the given order.
    PoolOptions options;
    const int64_t scale = 4 << (iteration % 6);
    options.pools = {{"slow", 64 * scale, 2e8, 1e8},
                     {"fast", 2 * scale, 8e9, 8e9},
                     {"middle", 4 * scale, 2e9, 1e9}};
    absl::StatusOr<PoolProblem> problem = testing::RandomOrderPoolProblem(rng, iteration, options);
    if (!problem.ok()) continue;  // a tensor larger than every bank
    std::vector<int32_t> by_first(problem->num_blocks());
    std::iota(by_first.begin(), by_first.end(), 0);
    std::stable_sort(by_first.begin(), by_first.end(), [&](int32_t a, int32_t b) {
      return problem->arena.blocks[a].first < problem->arena.blocks[b].first;
    });
    std::vector<int32_t> by_size = by_first;
    std::stable_sort(by_size.begin(), by_size.end(), [&](int32_t a, int32_t b) {
      return problem->arena.blocks[a].size > problem->arena.blocks[b].size;
    });
    const PoolPlacement internal = PlaceInternalFirst(*problem);
    const PoolAssignment internal_rule = FirstFitByDefinition(*problem, by_first, {1, 2, 0});
    EXPECT_EQ(internal.assignment.pool, internal_rule.pool) << "iteration " << iteration;
    EXPECT_EQ(internal.assignment.offset, internal_rule.offset) << "iteration " << iteration;
    const PoolPlacement usmp = PlaceUsmpGreedy(*problem);
    const PoolAssignment usmp_rule = FirstFitByDefinition(*problem, by_size, {0, 1, 2});
    EXPECT_EQ(usmp.assignment.pool, usmp_rule.pool) << "iteration " << iteration;
    EXPECT_EQ(usmp.assignment.offset, usmp_rule.offset) << "iteration " << iteration;
    overflowing += !internal.fits();
  }
  EXPECT_GT(overflowing, 0);
}

PoolOptions TwoBanks(int64_t big, int64_t small) {
  PoolOptions options;
  options.pools = {{"big", big, 2e9, 2e9}, {"small", small, 1e9, 1e9}};
  return options;
}

// Every topological order of `model` (exponential: a handful of ops).
std::vector<std::vector<int32_t>> AllOrders(const MemoryModel& model) {
  std::vector<std::vector<int32_t>> orders;
  std::vector<int32_t> order;
  std::vector<bool> done(model.num_ops(), false);
  std::function<void()> extend = [&] {
    if (static_cast<int32_t>(order.size()) == model.num_ops()) {
      orders.push_back(order);
      return;
    }
    for (int32_t op = 0; op < model.num_ops(); ++op) {
      if (done[op]) continue;
      bool ready = true;
      for (int32_t t : model.ops[op].inputs) {
        const int32_t producer = model.tensors[t].producer;
        ready = ready && (producer == kNoId || done[producer]);
      }
      if (!ready) continue;
      done[op] = true;
      order.push_back(op);
      extend();
      order.pop_back();
      done[op] = false;
    }
  };
  extend();
  return orders;
}

// Model order runs branch b first, so B2 (21) waits beside A1 (45) and A2
// (5) at step 3: no split over banks of 60 and 20. Running branch a first
// keeps them apart; the repair finds that order by delaying branch b past
// A2 (to just before z, its reader), and the exact placer places it, as the
// independent checker confirms.
TEST(PoolOrderRepairTest, RepairsAnOrderWithAStepThatHasNoSplit) {
  const Graph graph = testing::TestGraph(R"(
    input x 1
    op b1 Conv x -> b_first:25
    op b2 Conv b_first -> b_second:21
    op a1 Conv x -> a_first:45
    op a2 Conv a_first -> a_second:5
    op z Concat a_second b_second -> y:1
    output y
  )");
  const MemoryModel model = *BuildMemoryModel(graph, {});
  const PoolOptions options = TwoBanks(60, 20);
  const std::vector<int32_t> model_order = {0, 1, 2, 3, 4};
  const PoolProblem start = *BuildPoolProblem(graph, model, *Simulate(model, model_order), 1, options);
  EXPECT_EQ(FirstUnsplittableStep(start).step, 3);  // step 2 (67 B) is under 7/8 of 80: not tried
  EXPECT_THAT(ScheduleInfeasibility(graph, start), ::testing::HasSubstr("at step 3"));

  const std::vector<std::vector<int32_t>> starts = {model_order};
  const PoolOrderRepair repair = RepairOrderForPools(graph, model, 1, options, starts, 100);
  ASSERT_TRUE(repair.order.has_value());
  EXPECT_EQ(*repair.order, (std::vector<int32_t>{2, 3, 0, 1, 4}));
  EXPECT_EQ(repair.start, 0);
  const SimulationResult simulation = *Simulate(model, *repair.order);
  const PoolProblem repaired = *BuildPoolProblem(graph, model, simulation, 1, options);
  EXPECT_FALSE(FirstUnsplittableStep(repaired).found());
  const ExactPoolResult exact = PlacePoolsExact(repaired, 200000, ArenaLimits{});
  ASSERT_TRUE(exact.placement.has_value());
  const std::vector<int32_t> unpinned(model.num_tensors(), kNoId);
  EXPECT_NEAR(CheckIndependently(model, simulation, repaired, exact.placement->assignment, unpinned),
              exact.placement->evaluation.modelled_seconds, 1e-12);
  // A cap of one order tries the start alone.
  EXPECT_FALSE(RepairOrderForPools(graph, model, 1, options, starts, 1).order.has_value());
}

// Against brute force over every order of small random graphs on two banks:
// a repaired order is a valid order whose every step splits; when the exact
// placer places it, brute force knows a fitting order too (the repair never
// claims a fit that every order refutes). Prints how often the repair finds
// a fitting order where the start has none but some order has one.
TEST(PoolOrderRepairTest, NeverClaimsWhatBruteForceRefutes) {
  std::mt19937_64 rng(1717);
  int start_fails_some_fits = 0, repaired = 0, repaired_fits = 0;
  for (int iteration = 0; iteration < ::ordo::testing::Trials(400); ++iteration) {
    testing::RandomDagOptions dag;
    dag.num_ops = 4 + iteration % 4;
    dag.min_bytes = 16;
    dag.max_bytes = 160;
    dag.inplace_chance = 0;
    const Graph graph = testing::RandomDag(rng, dag);
    const MemoryModel model = *BuildMemoryModel(graph, {});
    std::vector<int32_t> model_order(model.num_ops());
    for (int32_t op = 0; op < model.num_ops(); ++op) model_order[op] = op;
    const SimulationResult start_simulation = *Simulate(model, model_order);
    // Banks summing to the model order's peak, split unevenly.
    const int64_t total = (start_simulation.peak_bytes + 15) / 16 * 16;
    const int64_t big = std::max<int64_t>(16, total * (5 + iteration % 3) / 8 / 16 * 16);
    const PoolOptions options = TwoBanks(big, std::max<int64_t>(16, total - big));
    auto fits = [&](const std::vector<int32_t>& order) -> std::optional<bool> {
      absl::StatusOr<PoolProblem> problem =
          BuildPoolProblem(graph, model, *Simulate(model, order), 16, options);
      if (!problem.ok()) return std::nullopt;
      if (FirstUnsplittableStep(*problem).found()) return false;
      const ExactPoolResult exact = PlacePoolsExact(*problem, 200000, ArenaLimits{});
      if (!exact.optimal && !exact.placement) return std::nullopt;
      return exact.placement.has_value();
    };
    const std::optional<bool> start_fits = fits(model_order);
    if (!start_fits.has_value() || *start_fits) continue;
    bool some_order_fits = false;
    for (const std::vector<int32_t>& order : AllOrders(model)) {
      some_order_fits = some_order_fits || fits(order).value_or(false);
    }
    const std::vector<std::vector<int32_t>> starts = {model_order};
    const PoolOrderRepair repair = RepairOrderForPools(graph, model, 16, options, starts, 200);
    EXPECT_LE(repair.orders_tried, 200);
    start_fails_some_fits += some_order_fits;
    if (!repair.order) continue;
    ++repaired;
    ASSERT_TRUE(Simulate(model, *repair.order).ok());
    const PoolProblem problem =
        *BuildPoolProblem(graph, model, *Simulate(model, *repair.order), 16, options);
    EXPECT_FALSE(FirstUnsplittableStep(problem).found());
    const bool placed = fits(*repair.order).value_or(false);
    if (placed) {
      EXPECT_TRUE(some_order_fits) << "a fit every order refutes";
    }
    repaired_fits += placed && some_order_fits;
  }
  std::printf("start order without a placement but some order with one: %d graphs; the repair "
              "found an order whose steps all split on %d, one the exact placer places on %d\n",
              start_fails_some_fits, repaired, repaired_fits);
}

// Appends `num_ops` random ops reading `input` (and what they write) to
// `text`, named with `prefix`; their outputs are multiples of `unit`, some
// are Relu (in place over an input of the same size). Returns the tensors
// nothing reads.
std::vector<std::string> AppendRandomOps(std::mt19937_64& rng, int64_t unit, int32_t num_ops,
                                         const std::string& prefix,
                                         std::pair<std::string, int64_t> input,
                                         std::string& text) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  std::vector<std::pair<std::string, int64_t>> tensors = {std::move(input)};
  std::vector<bool> read = {false};
  for (int32_t op = 0; op < num_ops; ++op) {
    const size_t first = static_cast<size_t>(pick(0, static_cast<int64_t>(tensors.size()) - 1));
    const std::string out = absl::StrCat(prefix, "t", op);
    if (pick(0, 3) == 0) {
      absl::StrAppend(&text, "op ", prefix, "o", op, " Relu ", tensors[first].first, " -> ", out,
                      ":", tensors[first].second, "\n");
      read[first] = true;
      tensors.push_back({out, tensors[first].second});
    } else {
      const size_t second = static_cast<size_t>(pick(0, static_cast<int64_t>(tensors.size()) - 1));
      const int64_t bytes = unit * pick(1, 3);
      absl::StrAppend(&text, "op ", prefix, "o", op, " Conv ", tensors[first].first,
                      second != first ? absl::StrCat(" ", tensors[second].first) : "", " -> ", out,
                      ":", bytes, "\n");
      read[first] = read[second] = true;
      tensors.push_back({out, bytes});
    }
    read.push_back(false);
  }
  std::vector<std::string> unread;
  for (size_t t = 1; t < tensors.size(); ++t) {
    if (!read[t]) unread.push_back(tensors[t].first);
  }
  return unread;
}

// A random small graph whose activation sizes are multiples of `unit`.
// Unread tensors are graph outputs.
Graph RandomGraphOfUnit(std::mt19937_64& rng, int64_t unit, int32_t num_ops) {
  const int64_t x = unit * std::uniform_int_distribution<int64_t>(1, 3)(rng);
  std::string text = absl::StrCat("input x ", x, "\n");
  for (const std::string& t : AppendRandomOps(rng, unit, num_ops, "", {"x", x}, text)) {
    absl::StrAppend(&text, "output ", t, "\n");
  }
  return testing::TestGraph(text);
}

// Two random halves of units `first_unit` and `second_unit`: op "join"
// reads every tensor of the first half that nothing else reads and writes
// the second half's input (a multiple of both units), so it is a cut and
// each half's tensors are a part of their own unit.
Graph RandomGraphOfTwoUnits(std::mt19937_64& rng, int64_t first_unit, int64_t second_unit,
                            int32_t first_ops, int32_t second_ops) {
  const int64_t x = first_unit * std::uniform_int_distribution<int64_t>(1, 3)(rng);
  std::string text = absl::StrCat("input x ", x, "\n");
  const std::vector<std::string> sinks =
      AppendRandomOps(rng, first_unit, first_ops, "a", {"x", x}, text);
  const int64_t joined = first_unit * second_unit;
  absl::StrAppend(&text, "op join Concat ", absl::StrJoin(sinks, " "), " -> j:", joined, "\n");
  for (const std::string& t :
       AppendRandomOps(rng, second_unit, second_ops, "b", {"j", joined}, text)) {
    absl::StrAppend(&text, "output ", t, "\n");
  }
  return testing::TestGraph(text);
}

// Expects that no order in `orders` has a valid placement (the exact
// placer finds none; `why` is the claim under test). True when the exact
// placer finished on every order, so the claim is confirmed.
bool ExpectNoOrderHasAPlacement(const Graph& graph, const MemoryModel& model,
                                const std::vector<std::vector<int32_t>>& orders,
                                const PoolOptions& options, const std::string& why) {
  bool refuted_everywhere = true;
  for (const std::vector<int32_t>& order : orders) {
    absl::StatusOr<PoolProblem> of_order =
        BuildPoolProblem(graph, model, *Simulate(model, order), 1, options);
    if (!of_order.ok()) continue;
    const ExactPoolResult exact = PlacePoolsExact(*of_order, 200000, ArenaLimits{});
    EXPECT_FALSE(exact.placement.has_value()) << why << "\n" << graph.num_ops() << " ops";
    refuted_everywhere = refuted_everywhere && exact.optimal;
  }
  return refuted_everywhere;
}

// Against brute force over every order and every placement: whenever
// PoolInfeasibility (given the least peak over all orders, found by brute
// force too) says no order fits, no order of the graph has a valid
// placement by the exact placer. Sizes share a unit and the banks are not
// multiples of it, so the granularity proof fires where summed capacity
// alone would not.
TEST(PoolInfeasibilityTest, NeverClaimsWhatBruteForceRefutes) {
  std::mt19937_64 rng(17);
  int claimed = 0, by_granularity = 0, within_capacity = 0, confirmed = 0;
  // Scaled-down runs (sanitizers) go on past their trials until the rarer
  // claim the last expectation asks for has been checked at least once.
  for (int iteration = 0;
       iteration < ::ordo::testing::Trials(1000) || (within_capacity == 0 && iteration < 1000);
       ++iteration) {
    const int64_t unit = 3 + iteration % 5;
    const Graph graph = RandomGraphOfUnit(rng, unit, 3 + iteration % 4);
    const MemoryModel model = *BuildMemoryModel(graph, {});
    const std::vector<std::vector<int32_t>> orders = AllOrders(model);
    int64_t least_peak = std::numeric_limits<int64_t>::max();
    for (const std::vector<int32_t>& order : orders) {
      least_peak = std::min(least_peak, Simulate(model, order)->peak_bytes);
    }
    PoolOptions options;
    std::uniform_int_distribution<int64_t> capacity(unit * 3 / 2, unit * 5);
    options.pools = {{"big", capacity(rng), 2e9, 2e9}, {"small", capacity(rng), 1e9, 1e9}};
    absl::StatusOr<PoolProblem> problem =
        BuildPoolProblem(graph, model, *Simulate(model, orders.front()), 1, options);
    if (!problem.ok()) continue;  // a tensor larger than both banks
    const std::string why =
        PoolInfeasibility(graph, model, *problem, {least_peak, "the least peak"});
    if (why.empty()) continue;
    ++claimed;
    by_granularity += why.find("hold at most") != std::string::npos;
    // Claims summed capacity alone could not make.
    within_capacity +=
        least_peak <= options.pools[0].capacity_bytes + options.pools[1].capacity_bytes &&
        why.find("multiple of") != std::string::npos;
    confirmed += ExpectNoOrderHasAPlacement(graph, model, orders, options, why);
  }
  std::printf(
      "no order fits claimed on %d graphs (%d by granularity, %d of them within the summed "
      "capacity); brute force finished on %d\n",
      claimed, by_granularity, within_capacity, confirmed);
  EXPECT_GT(within_capacity, 0);
}

// The per-part granularity proof against brute force: graphs of two
// halves whose units differ (so the whole model's gcd is small), each part's
// bound its least peak over all of its own orders (brute force on the
// part's model), every order of the whole placed by the exact placer.
// Whenever PoolInfeasibility says no order fits, none has a placement.
TEST(PoolInfeasibilityTest, PerPartProofNeverClaimsWhatBruteForceRefutes) {
  std::mt19937_64 rng(1717);
  int claimed = 0, only_per_part = 0, confirmed = 0;
  for (int iteration = 0;
       iteration < ::ordo::testing::Trials(1000) || (only_per_part == 0 && iteration < 1000);
       ++iteration) {
    const int64_t first_unit = 5 + iteration % 3, second_unit = 2 + iteration % 2;
    const Graph graph = RandomGraphOfTwoUnits(rng, first_unit, second_unit, 2 + iteration % 3,
                                              2 + (iteration / 3) % 3);
    const MemoryModel model = *BuildMemoryModel(graph, {});
    const Partition partition = HourglassPartitioner({.merge_up_to_ops = 1}).Split(model);
    std::vector<EveryOrderPeakBound> part_peaks;
    for (const Part& part : partition.parts) {
      int64_t least = std::numeric_limits<int64_t>::max();
      for (const std::vector<int32_t>& order : AllOrders(part.model)) {
        least = std::min(least, Simulate(part.model, order)->peak_bytes);
      }
      part_peaks.push_back({least, "the part's least peak"});
    }
    PoolOptions options;
    std::uniform_int_distribution<int64_t> capacity(first_unit * 2, first_unit * 6);
    options.pools = {{"big", capacity(rng), 2e9, 2e9}, {"small", capacity(rng), 1e9, 1e9}};
    const std::vector<std::vector<int32_t>> orders = AllOrders(model);
    absl::StatusOr<PoolProblem> problem =
        BuildPoolProblem(graph, model, *Simulate(model, orders.front()), 1, options);
    if (!problem.ok()) continue;  // a tensor larger than both banks
    // The whole's bound: the max of the parts' (the partition theorem).
    EveryOrderPeakBound bound{0, "the least peak", PartLiveBounds(graph, partition, part_peaks)};
    for (const EveryOrderPeakBound& part : part_peaks) bound.bytes = std::max(bound.bytes, part.bytes);
    const std::string why = PoolInfeasibility(graph, model, *problem, bound);
    if (why.empty()) continue;
    ++claimed;
    bound.parts.clear();
    only_per_part += PoolInfeasibility(graph, model, *problem, bound).empty();
    confirmed += ExpectNoOrderHasAPlacement(graph, model, orders, options, why);
  }
  std::printf("no order fits claimed on %d two-unit graphs, %d only by the per-part proof; brute "
              "force finished on %d\n",
              claimed, only_per_part, confirmed);
  EXPECT_GT(only_per_part, 0);
}

}  // namespace
}  // namespace ordo
