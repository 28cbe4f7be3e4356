#include "core/arena/arena_search.h"

#include <algorithm>
#include <limits>
#include <random>

#include "core/arena/best_arena_planner.h"
#include "core/testing/trials.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

ArenaProblem RandomProblem(std::mt19937_64& rng, int32_t max_blocks) {
  ArenaProblem problem;
  problem.alignment = 1;
  problem.num_steps = 8;
  const int32_t n = std::uniform_int_distribution<int32_t>(1, max_blocks)(rng);
  std::uniform_int_distribution<int32_t> step(-1, problem.num_steps - 1);
  for (int32_t i = 0; i < n; ++i) {
    ArenaBlock block;
    block.size = block.raw_bytes = std::uniform_int_distribution<int64_t>(1, 6)(rng);
    const int32_t a = step(rng), b = step(rng);
    block.first = std::min(a, b);
    block.last = std::max(a, b);
    block.tensors = {i};
    problem.blocks.push_back(block);
    problem.block_of_tensor.push_back(i);
  }
  std::vector<int64_t> live(problem.num_steps + 1, 0);
  for (const ArenaBlock& block : problem.blocks) {
    for (int32_t s = block.first + 1; s <= block.last + 1; ++s) live[s] += block.size;
  }
  problem.lower_bound_bytes = *std::max_element(live.begin(), live.end());
  return problem;
}

bool Valid(const ArenaProblem& problem, const std::vector<int64_t>& offsets) {
  for (size_t a = 0; a < problem.blocks.size(); ++a) {
    if (offsets[a] < 0) return false;
    for (size_t b = a + 1; b < problem.blocks.size(); ++b) {
      if (!BlocksOverlapInTime(problem.blocks[a], problem.blocks[b])) continue;
      if (offsets[a] < offsets[b] + problem.blocks[b].size &&
          offsets[b] < offsets[a] + problem.blocks[a].size) {
        return false;
      }
    }
  }
  return true;
}

// The optimum by enumeration: every order, each block stacked on the placed
// blocks it overlaps. The offset order of an optimal layout pushed down as
// far as it goes is one of these orders, so the minimum is the optimum.
int64_t BruteForceArena(const ArenaProblem& problem) {
  std::vector<int32_t> order(problem.blocks.size());
  for (size_t i = 0; i < order.size(); ++i) order[i] = static_cast<int32_t>(i);
  int64_t best = std::numeric_limits<int64_t>::max();
  do {
    std::vector<int64_t> offsets(order.size(), 0);
    int64_t arena = 0;
    for (size_t k = 0; k < order.size(); ++k) {
      const ArenaBlock& block = problem.blocks[order[k]];
      int64_t offset = 0;
      for (size_t j = 0; j < k; ++j) {
        const ArenaBlock& other = problem.blocks[order[j]];
        if (BlocksOverlapInTime(block, other)) {
          offset = std::max(offset, offsets[order[j]] + other.size);
        }
      }
      offsets[order[k]] = offset;
      arena = std::max(arena, offset + block.size);
    }
    best = std::min(best, arena);
  } while (std::next_permutation(order.begin(), order.end()));
  return best;
}

TEST(SearchArenaTest, FindsTheOptimumAndProvesNothingSmallerFits) {
  std::mt19937_64 rng(11);
  for (int iteration = 0; iteration < ::ordo::testing::Trials(400); ++iteration) {
    const ArenaProblem problem = RandomProblem(rng, 7);
    const int64_t optimum = BruteForceArena(problem);
    for (const char* preordering : {"WAT", "TAW", "TWA", "Z"}) {
      const ArenaSearchResult at =
          SearchArena(problem, optimum, preordering, 1'000'000, ArenaLimits{});
      ASSERT_EQ(at.outcome, ArenaSearchOutcome::kFound) << "iteration " << iteration;
      EXPECT_TRUE(Valid(problem, at.offsets));
      EXPECT_LE(ArenaBytes(problem, at.offsets), optimum);
      const ArenaSearchResult below =
          SearchArena(problem, optimum - 1, preordering, 1'000'000, ArenaLimits{});
      EXPECT_EQ(below.outcome, ArenaSearchOutcome::kInfeasible) << "iteration " << iteration;
    }
  }
}

TEST(SearchArenaTest, GivesUpWhenTheNodeBudgetRunsOut) {
  std::mt19937_64 rng(3);
  ArenaProblem problem = RandomProblem(rng, 7);
  while (problem.blocks.size() < 5) problem = RandomProblem(rng, 7);
  const ArenaSearchResult result =
      SearchArena(problem, BruteForceArena(problem), "WAT", 1, ArenaLimits{});
  EXPECT_EQ(result.outcome, ArenaSearchOutcome::kAborted);
  EXPECT_EQ(result.nodes, 2);
}

TEST(CountOverlappingPairsTest, MatchesPairwiseCount) {
  std::mt19937_64 rng(9);
  for (int iteration = 0; iteration < ::ordo::testing::Trials(200); ++iteration) {
    const ArenaProblem problem = RandomProblem(rng, 12);
    int64_t pairs = 0;
    for (size_t a = 0; a < problem.blocks.size(); ++a) {
      for (size_t b = a + 1; b < problem.blocks.size(); ++b) {
        pairs += BlocksOverlapInTime(problem.blocks[a], problem.blocks[b]);
      }
    }
    EXPECT_EQ(CountOverlappingPairs(problem), pairs);
  }
}

// Three blocks pairwise live together need their sum; the search proves it.
TEST(SearchArenaTest, RoundRobinDecidesSmallCases) {
  ArenaProblem problem;
  problem.alignment = 1;
  problem.num_steps = 2;
  for (int32_t i = 0; i < 3; ++i) {
    ArenaBlock block;
    block.size = block.raw_bytes = 10 * (i + 1);
    block.first = 0;
    block.last = 1;
    block.tensors = {i};
    problem.blocks.push_back(block);
  }
  EXPECT_EQ(SearchArenaRoundRobin(problem, 60, 1000, ArenaLimits{}).outcome,
            ArenaSearchOutcome::kFound);
  EXPECT_EQ(SearchArenaRoundRobin(problem, 59, 1000, ArenaLimits{}).outcome,
            ArenaSearchOutcome::kInfeasible);
}

// `best` reaches the optimum of every small instance and says so.
TEST(BestArenaPlannerTest, IsOptimalOnSmallInstances) {
  std::mt19937_64 rng(5);
  for (int iteration = 0; iteration < ::ordo::testing::Trials(300); ++iteration) {
    const ArenaProblem problem = RandomProblem(rng, 7);
    const ArenaPlacement placement = BestArenaPlanner().Place(problem, ArenaLimits{});
    ASSERT_TRUE(Valid(problem, placement.offsets));
    EXPECT_EQ(ArenaBytes(problem, placement.offsets), BruteForceArena(problem))
        << "iteration " << iteration;
    EXPECT_TRUE(placement.optimal);
  }
}

}  // namespace
}  // namespace ordo
