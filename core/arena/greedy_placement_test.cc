#include "core/arena/greedy_placement.h"

#include <algorithm>
#include <cstdint>
#include <numeric>
#include <random>
#include <vector>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

// No two placed blocks live at a common step share a byte.
bool Valid(const ArenaProblem& problem, const std::vector<int32_t>& placed,
           const std::vector<int64_t>& offsets) {
  for (size_t i = 0; i < placed.size(); ++i) {
    for (size_t j = i + 1; j < placed.size(); ++j) {
      const int32_t a = placed[i], b = placed[j];
      const ArenaBlock &x = problem.blocks[a], &y = problem.blocks[b];
      if (x.size == 0 || y.size == 0 || x.first > x.last || y.first > y.last) continue;
      if (BlocksOverlapInTime(x, y) && offsets[a] < offsets[b] + y.size &&
          offsets[b] < offsets[a] + x.size) {
        return false;
      }
    }
  }
  return true;
}

// Random blocks: short and long lifetimes, some live before step 0 or to
// the end, repeated sizes (ties in offset), zero sizes.
ArenaProblem RandomProblem(std::mt19937_64& rng, int32_t blocks, int32_t steps) {
  ArenaProblem problem;
  problem.alignment = std::uniform_int_distribution<int64_t>(1, 3)(rng) * 16;
  problem.num_steps = steps;
  std::uniform_int_distribution<int32_t> step(-1, steps - 1);
  for (int32_t i = 0; i < blocks; ++i) {
    ArenaBlock block;
    block.raw_bytes = std::uniform_int_distribution<int64_t>(0, 4)(rng) * 40;
    block.size = (block.raw_bytes + problem.alignment - 1) / problem.alignment * problem.alignment;
    block.first = step(rng);
    const int32_t span = std::uniform_int_distribution<int32_t>(0, 9)(rng) == 0
                             ? steps
                             : std::uniform_int_distribution<int32_t>(0, 3)(rng);
    block.last = std::min(steps - 1, block.first + span);
    block.tensors = {i};
    problem.blocks.push_back(block);
  }
  return problem;
}

// The index of placed blocks by time meets exactly the blocks the scan of
// every placed block does: the same offsets, valid ones.
TEST(PlaceInOrderTest, TheIndexByTimeGivesTheOffsetsOfTheFullScan) {
  std::mt19937_64 rng(27);
  for (int trial = 0; trial < 400; ++trial) {
    const int32_t steps = std::uniform_int_distribution<int32_t>(1, 60)(rng);
    const int32_t blocks = std::uniform_int_distribution<int32_t>(1, 120)(rng);
    const ArenaProblem problem = RandomProblem(rng, blocks, steps);
    std::vector<int32_t> order(problem.blocks.size());
    std::iota(order.begin(), order.end(), 0);
    std::shuffle(order.begin(), order.end(), rng);
    order.resize(order.size() - order.size() / 5);  // blocks left out get 0
    for (FitRule rule : {FitRule::kBestFit, FitRule::kFirstFit}) {
      const std::vector<int64_t> all = PlaceInOrder(problem, order, rule, PlacementScan::kAll);
      ASSERT_EQ(PlaceInOrder(problem, order, rule, PlacementScan::kByTime), all)
          << "trial " << trial << (rule == FitRule::kBestFit ? " best fit" : " first fit");
      ASSERT_TRUE(Valid(problem, order, all)) << "trial " << trial;
    }
  }
}

// The estimate picks the index where blocks are short-lived (a chain) and
// the full scan where every block is live throughout.
TEST(PlaceInOrderTest, TheCheaperScanIsChosenByLifetimes) {
  ArenaProblem chain, throughout;
  for (ArenaProblem* problem : {&chain, &throughout}) {
    problem->alignment = 1;
    problem->num_steps = 2000;
  }
  std::vector<int32_t> order;
  for (int32_t i = 0; i < 2000; ++i) {
    chain.blocks.push_back({.size = 8, .raw_bytes = 8, .first = i - 1, .last = i});
    throughout.blocks.push_back({.size = 8, .raw_bytes = 8, .first = -1, .last = 1999});
    order.push_back(i);
  }
  EXPECT_TRUE(IndexByTimePays(chain, order));
  EXPECT_FALSE(IndexByTimePays(throughout, order));
  EXPECT_EQ(PlaceInOrder(chain, order, FitRule::kBestFit),
            PlaceInOrder(chain, order, FitRule::kBestFit, PlacementScan::kAll));
}

// A block whose first step is after its last (never live) meets nothing.
TEST(PlaceInOrderTest, ABlockNeverLiveOverlapsNothing) {
  ArenaProblem problem;
  problem.alignment = 1;
  problem.num_steps = 4;
  problem.blocks.resize(2);
  problem.blocks[0] = {.size = 8, .raw_bytes = 8, .first = 0, .last = 3};
  problem.blocks[1] = {.size = 8, .raw_bytes = 8, .first = 3, .last = 1};
  EXPECT_THAT(PlaceInOrder(problem, {0, 1}, FitRule::kFirstFit), ::testing::ElementsAre(0, 0));
}

}  // namespace
}  // namespace ordo
