// The pool model: options, the time rule, the problem, the checker and the
// lower bound, on small graphs written inline.

#include "core/pools/memory_pools.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <limits>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/pools/device_presets.h"
#include "core/pools/random_pool_problem.h"
#include "core/testing/status_matchers.h"
#include "core/testing/test_graph.h"
#include "core/testing/trials.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::StatusIs;
using ::ordo::testing::TestGraph;
using ::testing::AllOf;
using ::testing::HasSubstr;

// x (input, 64 B) -> a -> y (128 B) read by b and c -> z, w; output join.
constexpr char kGraph[] = R"(
  input x 64
  op a Conv x -> y:128
  op b Conv y -> z:64
  op c Conv y -> w:64
  op d Concat z w -> out:128
  output out
)";

struct Fixture {
  Graph graph = TestGraph(kGraph);
  MemoryModel model = *BuildMemoryModel(graph, {});
  SimulationResult simulation = *Simulate(model, {0, 1, 2, 3});
};

PoolOptions TwoPools(int64_t fast_bytes, int64_t slow_bytes) {
  PoolOptions options;
  options.pools = {{"fast", fast_bytes, 4e9, 2e9}, {"slow", slow_bytes, 1e8, 1e8}};
  return options;
}

TEST(MemoryPoolsTest, TensorTimeIsWriteOncePlusOneReadPerDistinctConsumer) {
  Fixture f;
  const MemoryPool pool{"p", 1 << 20, 1000, 500};
  const int32_t y = *f.graph.FindTensor("y");
  const int32_t x = *f.graph.FindTensor("x");
  // y: written once (128/500) and read by b and c (2 x 128/1000).
  EXPECT_DOUBLE_EQ(TensorMemorySeconds(f.model, y, 128, pool), 128.0 / 500 + 2 * 128.0 / 1000);
  // A graph input is not written.
  EXPECT_DOUBLE_EQ(TensorMemorySeconds(f.model, x, 64, pool), 64.0 / 1000);
}

TEST(MemoryPoolsTest, BadOptionsNameThePool) {
  PoolOptions duplicate = TwoPools(100, 100);
  duplicate.pools[1].name = "fast";
  EXPECT_THAT(ValidatePoolOptions(duplicate), StatusIs(absl::StatusCode::kInvalidArgument,
                                                       HasSubstr("\"fast\" is given twice")));
  PoolOptions empty = TwoPools(0, 100);
  EXPECT_THAT(ValidatePoolOptions(empty),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"fast\": capacity")));
  PoolOptions slow = TwoPools(100, 100);
  slow.pools[1].read_bytes_per_second = 0;
  EXPECT_THAT(ValidatePoolOptions(slow),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"slow\": bandwidths")));
  PoolOptions infinite = TwoPools(100, 100);
  infinite.pools[0].write_bytes_per_second = std::numeric_limits<double>::infinity();
  EXPECT_THAT(ValidatePoolOptions(infinite),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"fast\": bandwidths")));
  PoolOptions many;
  for (int p = 0; p <= kMaxMemoryPools; ++p) {
    many.pools.push_back({absl::StrCat("bank", p), 1024, 1e9, 1e9});
  }
  EXPECT_THAT(ValidatePoolOptions(many),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("at most 64")));
  PoolOptions pinned = TwoPools(100, 100);
  pinned.pinned["x"] = "dtcm";
  EXPECT_THAT(ValidatePoolOptions(pinned),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unknown memory pool \"dtcm\"")));
  // Capacities that add up past 2^62 (two pools of 9e18 bytes once wrapped
  // single_pool's sum and made the proof say nothing fits).
  PoolOptions huge = TwoPools(int64_t{1} << 62, 1);
  EXPECT_THAT(ValidatePoolOptions(huge),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("memory pool \"slow\": the pools' capacities add up past 2^62")));
  ORDO_EXPECT_OK(ValidatePoolOptions(TwoPools((int64_t{1} << 62) - 1, 1)));
}

TEST(MemoryPoolsTest, ProblemRejectsUnknownPinnedTensorsAndTensorsThatFitNowhere) {
  Fixture f;
  PoolOptions options = TwoPools(1024, 1024);
  options.pinned["nope"] = "fast";
  EXPECT_THAT(BuildPoolProblem(f.graph, f.model, f.simulation, 64, options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("pinned tensor \"nope\" is not a tensor of the model; its graph "
                                 "inputs are \"x\"")));
  {  // A weight is named as one.
    const Graph graph = TestGraph(R"(
      input x 64
      weight k 16
      op a Conv x k -> y:64
      output y
    )");
    const MemoryModel model = *BuildMemoryModel(graph, {});
    const SimulationResult simulation = *Simulate(model, {0});
    PoolOptions weight_pinned = TwoPools(1024, 1024);
    weight_pinned.pinned["k"] = "fast";
    EXPECT_THAT(BuildPoolProblem(graph, model, simulation, 64, weight_pinned),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         HasSubstr("pinned tensor \"k\" is not an activation tensor of the "
                                   "model (it is a weight")));
  }
  PoolOptions small = TwoPools(64, 64);
  // y and the graph output "out" are over both pools: "out" is named, as no
  // rewrite changes a graph output, and the refusal is not marked curable.
  const absl::Status too_large =
      BuildPoolProblem(f.graph, f.model, f.simulation, 64, small).status();
  EXPECT_THAT(too_large,
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("tensor \"out\" (128 bytes) is larger than every memory pool")));
  EXPECT_FALSE(IsTensorLargerThanEveryPool(too_large));
  // A device may keep it in a buffer of its own (io_outside_arena).
  EXPECT_TRUE(IsGraphInputOrOutputLargerThanEveryPool(too_large));
  // Only an intermediate over every pool: marked for fit-mode rewriting,
  // which may never form it.
  const Graph chain = TestGraph(R"(
    input x 64
    op a Conv x -> y:128
    op b Conv y -> out:64
    output out
  )");
  const MemoryModel chain_model = *BuildMemoryModel(chain, {});
  const absl::Status intermediate =
      BuildPoolProblem(chain, chain_model, *Simulate(chain_model, {0, 1}), 64, small).status();
  EXPECT_THAT(intermediate,
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("tensor \"y\" (128 bytes) is larger than every memory pool")));
  EXPECT_TRUE(IsTensorLargerThanEveryPool(intermediate));
  EXPECT_FALSE(IsGraphInputOrOutputLargerThanEveryPool(intermediate));
  PoolOptions pinned = TwoPools(64, 1024);
  pinned.pinned["y"] = "fast";
  const absl::Status pinned_too_large =
      BuildPoolProblem(f.graph, f.model, f.simulation, 64, pinned).status();
  EXPECT_THAT(pinned_too_large,
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("pinned to \"fast\"")));
  // A pin is the user's own restriction: no rewrite lifts it.
  EXPECT_FALSE(IsTensorLargerThanEveryPool(pinned_too_large));
  EXPECT_FALSE(IsGraphInputOrOutputLargerThanEveryPool(pinned_too_large));
  // The same words without the mark are some other refusal.
  EXPECT_FALSE(IsTensorLargerThanEveryPool(absl::InvalidArgumentError(intermediate.message())));
  EXPECT_FALSE(IsTensorLargerThanEveryPool(absl::OkStatus()));
}

// A Relu writes over its input in place: one block. A pin of the Relu's
// output is named as pinned, and two pins of the pair disagreeing say how
// to undo the sharing.
TEST(MemoryPoolsTest, PinsOfAnInPlacePairNameThePinnedTensor) {
  const Graph graph = TestGraph(R"(
    input x 64
    op c Conv x -> conv:128
    op r Relu conv -> relu:128
    op o Conv relu -> out:64
    output out
  )");
  const MemoryModel model = *BuildMemoryModel(graph, {});
  const SimulationResult simulation = *Simulate(model, {0, 1, 2});
  PoolOptions options = TwoPools(64, 1024);
  options.pinned["relu"] = "fast";
  EXPECT_THAT(BuildPoolProblem(graph, model, simulation, 64, options),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("tensor \"relu\" (128 bytes, its block shared in place with "
                                 "\"conv\") is larger than every memory pool it may use "
                                 "(pinned to \"fast\")")));
  options.pinned["conv"] = "slow";
  EXPECT_THAT(BuildPoolProblem(graph, model, simulation, 64, options),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--no-inplace")));
}

TEST(MemoryPoolsTest, PinningRestrictsTheBlock) {
  Fixture f;
  PoolOptions options = TwoPools(1024, 1024);
  options.pinned["x"] = "slow";
  const PoolProblem problem = *BuildPoolProblem(f.graph, f.model, f.simulation, 64, options);
  const int32_t x = *f.graph.FindTensor("x");
  const int32_t block = problem.arena.block_of_tensor[x];
  EXPECT_FALSE(problem.allowed[block][0]);
  EXPECT_TRUE(problem.allowed[block][1]);
}

TEST(MemoryPoolsTest, CheckerFindsOverlapAndOverflow) {
  Fixture f;
  const PoolProblem problem =
      *BuildPoolProblem(f.graph, f.model, f.simulation, 64, TwoPools(1024, 1024));
  PoolAssignment all_at_zero{std::vector<int32_t>(problem.num_blocks(), 0),
                             std::vector<int64_t>(problem.num_blocks(), 0)};
  EXPECT_THAT(CheckPoolAssignment(problem, all_at_zero),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("overlap")));
  PoolAssignment beyond{std::vector<int32_t>(problem.num_blocks(), 1),
                        std::vector<int64_t>(problem.num_blocks(), 0)};
  for (int32_t b = 0; b < problem.num_blocks(); ++b) beyond.offset[b] = 1024 * b;
  EXPECT_THAT(CheckPoolAssignment(problem, beyond),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("beyond pool \"slow\"")));
  PoolAssignment apart = beyond;
  for (int32_t b = 0; b < problem.num_blocks(); ++b) apart.offset[b] = 128 * b;
  ORDO_EXPECT_OK(CheckPoolAssignment(problem, apart));
  const PoolEvaluation evaluation = EvaluatePoolAssignment(problem, apart);
  EXPECT_EQ(evaluation.pools[1].tensors, 5);
  EXPECT_EQ(evaluation.overflow_bytes, 0);
}

TEST(MemoryPoolsTest, LowerBoundIsRaisedWhenTheFastPoolCannotHoldAStep) {
  Fixture f;
  // Everything in the fast pool when it is big enough.
  const PoolProblem roomy =
      *BuildPoolProblem(f.graph, f.model, f.simulation, 64, TwoPools(4096, 4096));
  double fastest = 0;
  for (int32_t b = 0; b < roomy.num_blocks(); ++b) fastest += roomy.seconds[b][0];
  EXPECT_DOUBLE_EQ(PoolLowerBoundSeconds(roomy), fastest);
  // At step 2 (c) y, z and w (256 bytes) are live: 128 bytes must leave a
  // 128-byte fast pool, which costs time the plain bound does not count.
  const PoolProblem tight =
      *BuildPoolProblem(f.graph, f.model, f.simulation, 64, TwoPools(128, 4096));
  EXPECT_GT(PoolLowerBoundSeconds(tight), fastest);
}

// Random problems (random DAGs in random orders, three banks whose first is
// the fastest and small).
PoolProblem RandomProblem(std::mt19937_64& rng, int iteration) {
  PoolOptions options;
  options.pools = {{"tcm", 128 + 64 * (iteration % 4), 4e9, 4e9},
                   {"ocram", 4096, 1e9, 5e8},
                   {"sdram", 1 << 20, 1e8, 1e8}};
  return *testing::RandomOrderPoolProblem(rng, iteration, options);
}

// PoolPeakStepBoundSeconds as the spec's words put it, step by step, without
// the sweep: every block in its cheapest pool, raised at the worst step by
// the cheapest fractional eviction of the bytes beyond the fastest pool.
double PeakStepBoundByDefinition(const PoolProblem& problem) {
  const double base = CheapestPoolsSeconds(problem);
  const int32_t fast = 0;  // RandomProblem's first pool is the fastest
  double best_raise = 0;
  for (int32_t step = -1; step < problem.arena.num_steps; ++step) {
    int64_t to_move = -problem.pools[fast].capacity_bytes;
    std::vector<std::pair<double, int64_t>> penalties;
    for (int32_t b = 0; b < problem.num_blocks(); ++b) {
      const ArenaBlock& block = problem.arena.blocks[b];
      if (block.size == 0 || step < block.first || step > block.last) continue;
      to_move += block.size;
      if (!problem.allowed[b][fast]) {
        to_move -= block.size;
        continue;
      }
      double other = std::numeric_limits<double>::infinity();
      for (int32_t p = 1; p < problem.num_pools(); ++p) {
        if (problem.allowed[b][p]) other = std::min(other, problem.seconds[b][p]);
      }
      if (std::isfinite(other)) {
        penalties.push_back({(other - problem.seconds[b][fast]) / block.size, block.size});
      }
    }
    if (to_move <= 0) continue;
    std::sort(penalties.begin(), penalties.end());
    double raise = 0;
    for (const auto& [per_byte, size] : penalties) {
      if (to_move <= 0) break;
      const int64_t moved = std::min(to_move, size);
      raise += per_byte * static_cast<double>(moved);
      to_move -= moved;
    }
    best_raise = std::max(best_raise, raise);
  }
  return base + best_raise;
}

TEST(MemoryPoolsTest, PeakStepBoundIsItsDefinition) {
  std::mt19937_64 rng(41);
  int raised = 0;  // problems where some step is over the fast pool's capacity
  for (int iteration = 0; iteration < testing::Trials(200); ++iteration) {
    const PoolProblem problem = RandomProblem(rng, iteration);
    const double bound = PoolPeakStepBoundSeconds(problem);
    EXPECT_DOUBLE_EQ(bound, PeakStepBoundByDefinition(problem)) << "iteration " << iteration;
    raised += bound > CheapestPoolsSeconds(problem) * (1 + 1e-9);
  }
  EXPECT_GT(raised, 0);
}

// The checker compares only co-live pairs (by first step); against every
// pair, on random assignments: offsets drawn from a wide range in the large
// bank (mostly valid) or a narrow one in the two larger banks (mostly not).
TEST(MemoryPoolsTest, CheckerAgreesWithEveryPairCompared) {
  std::mt19937_64 rng(43);
  int valid = 0, overlapping = 0;
  for (int iteration = 0; iteration < testing::Trials(400); ++iteration) {
    const PoolProblem problem = RandomProblem(rng, iteration);
    const bool wide = iteration % 2 == 0;
    PoolAssignment assignment;
    for (int32_t b = 0; b < problem.num_blocks(); ++b) {
      assignment.pool.push_back(!wide && problem.allowed[b][1] && rng() % 2 ? 1 : 2);
      assignment.offset.push_back(16 * static_cast<int64_t>(rng() % (wide ? 4096 : 24)));
    }
    bool disjoint = true;
    for (int32_t a = 0; a < problem.num_blocks(); ++a) {
      for (int32_t b = a + 1; b < problem.num_blocks(); ++b) {
        const ArenaBlock &x = problem.arena.blocks[a], &y = problem.arena.blocks[b];
        if (assignment.pool[a] == assignment.pool[b] && x.size > 0 && y.size > 0 &&
            BlocksOverlapInTime(x, y) && assignment.offset[a] < assignment.offset[b] + y.size &&
            assignment.offset[b] < assignment.offset[a] + x.size) {
          disjoint = false;
        }
      }
    }
    const absl::Status checked = CheckPoolAssignment(problem, assignment);
    if (disjoint) {
      ORDO_EXPECT_OK(checked) << "iteration " << iteration;
      ++valid;
    } else {
      EXPECT_THAT(checked, StatusIs(absl::StatusCode::kInternal, HasSubstr("overlap")))
          << "iteration " << iteration;
      ++overlapping;
    }
  }
  EXPECT_GT(valid, 0);
  EXPECT_GT(overlapping, 0);
  std::printf("checker: %d valid and %d overlapping assignments\n", valid, overlapping);
}

// An op's input and output are live together in every order: when only one
// pool can hold either and it cannot hold both, no order fits.
TEST(MemoryPoolsTest, InfeasibilityNamesTheOpWhoseTensorsFitNoSplit) {
  const Graph graph = TestGraph(R"(
    input x 100
    op c Conv x -> y:100
    output y
  )");
  const MemoryModel model = *BuildMemoryModel(graph, {});
  const SimulationResult simulation = *Simulate(model, {0});
  PoolOptions options;
  options.pools = {{"big", 128, 1e9, 1e9}, {"small", 64, 1e9, 1e9}};
  const PoolProblem problem = *BuildPoolProblem(graph, model, simulation, 64, options);
  EXPECT_THAT(PoolInfeasibility(graph, model, problem),
              AllOf(HasSubstr("op \"c\" needs"), HasSubstr("\"x\" (128 B)"),
                    HasSubstr("\"y\" (128 B)"), HasSubstr("no order")));
  options.pools[1].capacity_bytes = 128;
  EXPECT_EQ(PoolInfeasibility(graph, model,
                              *BuildPoolProblem(graph, model, simulation, 64, options)),
            "");
}

// Two 30-byte outputs stay live to the end beside the input: every order
// has a step with 90 B live (the least peak; each op alone needs 60 B, and
// splits). Banks of 50 B hold one 30-byte tensor each, 60 B in all though
// their capacities sum to 100: no order fits, by granularity alone.
TEST(MemoryPoolsTest, InfeasibilityByGranularityNamesTheUnitTheBanksAndTheBound) {
  const Graph graph = TestGraph(R"(
    input x 30
    op a Conv x -> y:30
    op b Conv x -> z:30
    output y
    output z
  )");
  const MemoryModel model = *BuildMemoryModel(graph, {});
  const SimulationResult simulation = *Simulate(model, {0, 1});
  ASSERT_EQ(simulation.peak_bytes, 90);
  ASSERT_EQ(MemoryLowerBound(model), 60);
  PoolOptions options;
  options.pools = {{"a", 50, 1e9, 1e9}, {"b", 50, 1e9, 1e9}};
  const PoolProblem problem = *BuildPoolProblem(graph, model, simulation, 1, options);
  const EveryOrderPeakBound least_peak{90, "the proved least peak"};
  EXPECT_EQ(PoolInfeasibility(graph, model, problem, least_peak),
            "no order of this model fits these pools: every activation tensor is a multiple of "
            "30 B, so the pools hold at most 60 B of them at once (a 1 x 30 B, b 1 x 30 B), and "
            "every order has a step with at least 90 B of them live (the proved least peak)");
  // The spec's bound alone (60 B) proves nothing here.
  EXPECT_EQ(PoolInfeasibility(graph, model, problem), "");
  // A 60-byte bank holds two: H = 90 = L, and an order does fit.
  options.pools[0].capacity_bytes = 60;
  EXPECT_EQ(PoolInfeasibility(graph, model,
                              *BuildPoolProblem(graph, model, simulation, 1, options), least_peak),
            "");
}

// Without a common unit the argument is plain capacity: 90 B live in
// every order cannot sit in banks of 44 + 44 B, though every op's own
// tensors (at most 31 + 29 = 60 B, one per bank) split.
TEST(MemoryPoolsTest, InfeasibilityByGranularityWithUnitOneIsTheSummedCapacity) {
  const Graph graph = TestGraph(R"(
    input x 31
    op a Conv x -> y:29
    op b Conv x -> z:30
    output y
    output z
  )");
  const MemoryModel model = *BuildMemoryModel(graph, {});
  const SimulationResult simulation = *Simulate(model, {0, 1});
  PoolOptions options;
  options.pools = {{"a", 44, 1e9, 1e9}, {"b", 44, 1e9, 1e9}};
  const PoolProblem problem = *BuildPoolProblem(graph, model, simulation, 1, options);
  EXPECT_THAT(PoolInfeasibility(graph, model, problem, {90, "the proved least peak"}),
              AllOf(HasSubstr("the pools hold at most 88 B of them at once (a 44 B, b 44 B)"),
                    HasSubstr("at least 90 B"), ::testing::Not(HasSubstr("multiple of"))));
  EXPECT_EQ(PoolInfeasibility(graph, model, problem, {88, "the proved least peak"}), "");
}

// A chain of 30-byte tensors while x waits for d; v is 7 B.
constexpr char kChainWhileXWaits[] = R"(
  input x 30
  op a Conv x -> y:30
  op b Conv y -> z:30
  op c Conv z -> u:30
  op j Conv u -> w:30
  op d Conv x w -> v:7
  output v
)";

// The model's tensors have no common unit (v is 7 B), so the whole's
// proof sees 100 B of banks against a least peak of 90 B. But a, b, c and
// j are a part (j is a cut) whose tensors are all 30 B, and every order
// has a step in it with three of them live (x waits for d while the chain
// runs): banks of 50 B hold one each. Every op's own tensors split.
TEST(MemoryPoolsTest, InfeasibilityByGranularityOfAPartNamesThePart) {
  const Graph graph = TestGraph(kChainWhileXWaits);
  const MemoryModel model = *BuildMemoryModel(graph, {});
  const Partition partition = HourglassPartitioner({.merge_up_to_ops = 4}).Split(model);
  ASSERT_EQ(partition.parts.size(), 2u);
  const SimulationResult simulation = *Simulate(model, {0, 1, 2, 3, 4});
  ASSERT_EQ(simulation.peak_bytes, 90);
  PoolOptions options;
  options.pools = {{"a", 50, 1e9, 1e9}, {"b", 50, 1e9, 1e9}};
  const PoolProblem problem = *BuildPoolProblem(graph, model, simulation, 1, options);
  EveryOrderPeakBound bound{90, "the proved least peak"};
  EXPECT_EQ(PoolInfeasibility(graph, model, problem, bound), "");
  bound.parts = PartLiveBounds(graph, partition, {{90, "the part's proved least peak"},
                                                  {67, "the part's proved least peak"}});
  EXPECT_EQ(PoolInfeasibility(graph, model, problem, bound),
            "no order of this model fits these pools: every tensor of the part from op \"a\" to "
            "op \"j\" is a multiple of 30 B, so the pools hold at most 60 B of them at once (a 1 "
            "x 30 B, b 1 x 30 B), and every order has a step with at least 90 B of them live (the "
            "part's proved least peak)");
  // A bank of 60 B holds two: H = 90 = L.
  options.pools[0].capacity_bytes = 60;
  EXPECT_EQ(PoolInfeasibility(graph, model,
                              *BuildPoolProblem(graph, model, simulation, 1, options), bound),
            "");
}

// Split finer, the part of b alone counts x (live across it, untouched) as
// constant bytes: its own tensors are 60 B live, and nothing is claimed.
TEST(MemoryPoolsTest, APartsConstantBytesAreNotCountedAsItsOwn) {
  const Graph graph = TestGraph(kChainWhileXWaits);
  const MemoryModel model = *BuildMemoryModel(graph, {});
  const Partition partition = HourglassPartitioner({.merge_up_to_ops = 1}).Split(model);
  ASSERT_EQ(partition.parts.size(), 5u);
  ASSERT_EQ(partition.parts[1].model.constant_bytes, 30);
  std::vector<EveryOrderPeakBound> peaks(5, {90, "the part's proved least peak"});
  peaks[4] = {67, "the part's proved least peak"};
  const std::vector<PartLiveBound> bounds = PartLiveBounds(graph, partition, peaks);
  ASSERT_EQ(bounds.size(), 5u);
  EXPECT_EQ(bounds[1].live_bytes, 60);
  EXPECT_EQ(bounds[1].unit, 30);
  EXPECT_THAT(bounds[1].source, HasSubstr("less 30 B"));
}

// Every op's own tensors split over two pools of one block each, but while
// b runs x, p and q are live: three blocks (192 of 200 bytes) with no split,
// so this order has no valid placement, and the step is named.
TEST(MemoryPoolsTest, ScheduleInfeasibilityNamesAStepWhoseLiveBlocksFitNoSplit) {
  const Graph graph = TestGraph(R"(
    input x 64
    op a Conv x -> p:64
    op b Conv x -> q:64
    output p
    output q
  )");
  const MemoryModel model = *BuildMemoryModel(graph, {});
  const SimulationResult simulation = *Simulate(model, {0, 1});
  PoolOptions options;
  options.pools = {{"one", 100, 1e9, 1e9}, {"two", 100, 1e9, 1e9}};
  const PoolProblem problem = *BuildPoolProblem(graph, model, simulation, 64, options);
  EXPECT_EQ(PoolInfeasibility(graph, model, problem), "");
  EXPECT_THAT(ScheduleInfeasibility(graph, problem),
              AllOf(HasSubstr("at step 1, 3 blocks are live"), HasSubstr("\"x\" (64 B)"),
                    HasSubstr("\"q\" (64 B)"), HasSubstr("this order has no valid placement")));
  options.pools[1].capacity_bytes = 128;
  EXPECT_EQ(ScheduleInfeasibility(graph, *BuildPoolProblem(graph, model, simulation, 64, options)),
            "");
}

TEST(DevicePresetsTest, PresetsAreValidAndFoundIgnoringCaseAndPunctuation) {
  for (const DevicePreset& preset : BuiltinDevicePresets()) {
    PoolOptions options;
    options.pools = preset.pools;
    ORDO_EXPECT_OK(ValidatePoolOptions(options)) << preset.name;
  }
  ORDO_ASSERT_OK_AND_ASSIGN(DevicePreset rt, FindDevicePreset("i.MX RT1170"));
  EXPECT_EQ(rt.name, "imxrt1170");
  // SRAM1-3 are contiguous, so one 288 KiB pool (RM0433's memory map).
  const DevicePreset h7 = *FindDevicePreset("STM32H743");
  ASSERT_EQ(h7.pools.size(), 4u);
  EXPECT_EQ(h7.pools[2].name, "d2_sram");
  EXPECT_EQ(h7.pools[2].capacity_bytes, 288 * 1024);
  EXPECT_THAT(FindDevicePreset("z80"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unknown device \"z80\"")));
}

// The pools a preset should have, with the figures of its comment in
// device_presets.cc.
struct ExpectedPool {
  std::string name;
  int64_t capacity_bytes;
  double bytes_per_second;  // read and write alike
  bool off_chip;
};

void ExpectPools(absl::string_view device, const std::vector<ExpectedPool>& expected) {
  SCOPED_TRACE(device);
  ORDO_ASSERT_OK_AND_ASSIGN(DevicePreset preset, FindDevicePreset(device));
  ASSERT_EQ(preset.pools.size(), expected.size());
  for (size_t p = 0; p < expected.size(); ++p) {
    const MemoryPool& pool = preset.pools[p];
    EXPECT_EQ(pool.name, expected[p].name);
    EXPECT_EQ(pool.capacity_bytes, expected[p].capacity_bytes) << pool.name;
    EXPECT_DOUBLE_EQ(pool.read_bytes_per_second, expected[p].bytes_per_second) << pool.name;
    EXPECT_DOUBLE_EQ(pool.write_bytes_per_second, expected[p].bytes_per_second) << pool.name;
    EXPECT_EQ(pool.off_chip, expected[p].off_chip) << pool.name;
  }
}

TEST(DevicePresetsTest, Stm32f746HasOneSramOfDtcmSram1And2AndTheDiscoveryBoardsSdram) {
  // With the SDRAM on, ST limits the system clock to 200 MHz. DTCM (64 KB),
  // SRAM1 (240 KB) and SRAM2 (16 KB) are contiguous and one 320K region in
  // ST's linker script: one pool, at SRAM1-2's 32-bit AHB path,
  // 4 B x 200 MHz. SDRAM: 8 MB reachable over 16 data lines,
  // 2 B x (200 MHz / 2).
  ExpectPools("STM32F746", {{"sram", (64 + 240 + 16) * 1024, 4 * 200e6, false},
                            {"sdram", 8 * 1024 * 1024, 2 * 100e6, true}});
}

TEST(DevicePresetsTest, Nrf5340HasTheApplicationCoresRamOnly) {
  // 512 KB at 0x2000_0000; the network core's RAM is not reachable from
  // the application core. One pool, so the default 1 GB/s.
  ExpectPools("nRF5340", {{"sram", 512 * 1024, kDefaultPoolBytesPerSecond, false}});
}

TEST(DevicePresetsTest, Rp2350HasStripedSram0To7AndTheTwoScratchBanks) {
  // Every bank is 32 bits wide at the 150 MHz system clock: 4 B x 150 MHz.
  // SRAM0-7 (8 x 64 KB) are one striped region; SRAM8 and SRAM9 (4 KB
  // each) are the pico-sdk's SCRATCH_X and SCRATCH_Y.
  ExpectPools("rp2350", {{"sram0_7", 8 * 64 * 1024, 4 * 150e6, false},
                         {"sram8", 4 * 1024, 4 * 150e6, false},
                         {"sram9", 4 * 1024, 4 * 150e6, false}});
}

}  // namespace
}  // namespace ordo
