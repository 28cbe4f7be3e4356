#include "core/pools/pool_relaxation.h"

#include "gtest/gtest.h"

namespace ordo {
namespace {

// Four 64-byte blocks; A and B live together at steps 0-1, C and D at steps
// 3-4; the fast pool holds 64 bytes. Each pair must send one block to the
// slow pool. The bound of one step at a time sees one such move; the
// relaxation prices both steps and sees both.
PoolProblem TwoCongestedSteps() {
  PoolProblem problem;
  problem.arena.num_steps = 5;
  problem.arena.alignment = 64;
  const int32_t lives[4][2] = {{0, 1}, {0, 1}, {3, 4}, {3, 4}};
  for (int32_t b = 0; b < 4; ++b) {
    ArenaBlock block;
    block.size = 64;
    block.raw_bytes = 64;
    block.first = lives[b][0];
    block.last = lives[b][1];
    block.tensors = {b};
    problem.arena.blocks.push_back(block);
    problem.seconds.push_back({1.0, 3.0});  // fast, slow
    problem.allowed.push_back({true, true});
  }
  problem.pools = {{"fast", 64, 1e9, 1e9}, {"slow", 1 << 20, 1e8, 1e8}};
  return problem;
}

TEST(PoolRelaxationTest, PricesEveryCongestedStep) {
  const PoolProblem problem = TwoCongestedSteps();
  PoolRelaxation relaxation(problem);
  EXPECT_DOUBLE_EQ(relaxation.best_bound(), 4.0);  // every block fast
  // The optimum is 1 + 3 + 1 + 3 = 8; the bound approaches it from below.
  const double bound = PoolRelaxationBound(problem, 200);
  EXPECT_LE(bound, 8.0 + 1e-9);
  EXPECT_GE(bound, 7.9);
  EXPECT_GE(PoolLowerBoundSeconds(problem), bound);
  // At those prices staying fast costs a block more than it did.
  for (int i = 0; i < 200; ++i) relaxation.Step(8.0);
  EXPECT_GT(relaxation.ReducedSeconds(0, 0), 1.0);
}

TEST(PoolRelaxationTest, NothingCongestedKeepsThePlainBound) {
  PoolProblem problem = TwoCongestedSteps();
  problem.pools[0].capacity_bytes = 128;
  EXPECT_DOUBLE_EQ(PoolRelaxationBound(problem, 50), 4.0);
}

}  // namespace
}  // namespace ordo
