#include "core/arena/arena_problem.h"

#include <algorithm>
#include <random>
#include <vector>

#include "core/memory/simulator.h"
#include "core/testing/status_matchers.h"
#include "core/testing/test_graph.h"
#include "core/testing/trials.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::StatusIs;
using ::ordo::testing::TestGraph;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

struct Scheduled {
  MemoryModel model;
  SimulationResult simulation;
};

// The model-order simulation of a test graph.
Scheduled ModelOrder(const Graph& graph, MemoryOptions options = {}) {
  absl::StatusOr<MemoryModel> model = BuildMemoryModel(graph, options);
  EXPECT_TRUE(model.ok());
  std::vector<int32_t> order(model->num_ops());
  for (int32_t op = 0; op < model->num_ops(); ++op) order[op] = op;
  absl::StatusOr<SimulationResult> simulation = Simulate(*model, order);
  EXPECT_TRUE(simulation.ok());
  return {*std::move(model), *std::move(simulation)};
}

TEST(AlignUpTest, RoundsUpAndDetectsOverflow) {
  EXPECT_EQ(AlignUp(0, 64), 0);
  EXPECT_EQ(AlignUp(1, 64), 64);
  EXPECT_EQ(AlignUp(128, 64), 128);
  EXPECT_EQ(AlignUp(100, 1), 100);
  EXPECT_EQ(AlignUp(std::numeric_limits<int64_t>::max(), 64), std::nullopt);
}

TEST(BuildArenaProblemTest, InplaceChainIsOneBlockWithTheUnionLifetime) {
  const Graph graph = TestGraph(R"(
    input x 100
    op a Conv x -> t:100
    op b Relu t -> r:100      # in place: t dies here
    op c Conv r -> y:10
    output y
  )");
  const Scheduled s = ModelOrder(graph);
  ASSERT_EQ(s.simulation.inplace_source[*graph.FindTensor("r")], *graph.FindTensor("t"));
  ORDO_ASSERT_OK_AND_ASSIGN(ArenaProblem problem, BuildArenaProblem(s.model, s.simulation, 64));
  ASSERT_EQ(problem.blocks.size(), 3u);  // x, t+r, y
  const ArenaBlock& chain = problem.blocks[problem.block_of_tensor[*graph.FindTensor("t")]];
  EXPECT_THAT(chain.tensors, ElementsAre(*graph.FindTensor("t"), *graph.FindTensor("r")));
  EXPECT_EQ(chain.size, 128);
  EXPECT_EQ(chain.raw_bytes, 100);
  EXPECT_EQ(chain.first, 0);
  EXPECT_EQ(chain.last, 2);
  EXPECT_EQ(problem.block_of_tensor[*graph.FindTensor("r")],
            problem.block_of_tensor[*graph.FindTensor("t")]);
  // Steps: before 0: x 128; 0: x + t = 256; 1: t/r = 128; 2: r + y = 192.
  EXPECT_EQ(problem.lower_bound_bytes, 256);
}

TEST(BuildArenaProblemTest, WholeRunBlocksAreProducedAtStepZeroAndNeverFreed) {
  const Graph graph = TestGraph(R"(
    input x 64
    op a Conv x -> early:64 t:64
    op b Conv t -> late:64
    output early
    output late
  )");
  const Scheduled s = ModelOrder(graph);
  ORDO_ASSERT_OK_AND_ASSIGN(ArenaProblem problem, BuildArenaProblem(s.model, s.simulation, 64));
  auto block = [&](absl::string_view name) {
    return problem.blocks[problem.block_of_tensor[*graph.FindTensor(name)]];
  };
  EXPECT_TRUE(block("early").whole_run);
  EXPECT_FALSE(block("late").whole_run);  // produced at step 1
  EXPECT_FALSE(block("x").whole_run);     // freed after step 0
  EXPECT_FALSE(block("t").whole_run);
}

TEST(BuildArenaProblemTest, WeightsAreNotInTheArena) {
  const Graph graph = TestGraph(R"(
    input x 64
    weight w 1000
    op a Conv x w -> y:64
    output y
  )");
  const Scheduled s = ModelOrder(graph, {.count_weights = true});
  ORDO_ASSERT_OK_AND_ASSIGN(ArenaProblem problem, BuildArenaProblem(s.model, s.simulation, 64));
  EXPECT_EQ(problem.block_of_tensor[*graph.FindTensor("w")], kNoId);
  EXPECT_EQ(problem.blocks.size(), 2u);
  EXPECT_EQ(problem.lower_bound_bytes, 128);  // the simulator's peak counts 1000 more
  EXPECT_EQ(s.simulation.peak_bytes, 1128);
}

TEST(BuildArenaProblemTest, RejectsBadAlignmentAndMismatchedSimulation) {
  const Graph graph = TestGraph(R"(
    input x 64
    op a Conv x -> y:64
    output y
  )");
  Scheduled s = ModelOrder(graph);
  EXPECT_THAT(BuildArenaProblem(s.model, s.simulation, 0),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("alignment")));
  SimulationResult truncated = s.simulation;
  truncated.intervals.pop_back();
  EXPECT_THAT(BuildArenaProblem(s.model, truncated, 64),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("tensors")));
  SimulationResult out_of_range = s.simulation;
  out_of_range.intervals[*graph.FindTensor("y")].last = 7;
  EXPECT_THAT(BuildArenaProblem(s.model, out_of_range, 64),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("live interval")));
  SimulationResult bad_pair = s.simulation;
  s.model.tensors[*graph.FindTensor("y")].bytes = 32;
  bad_pair.inplace_source[*graph.FindTensor("y")] = *graph.FindTensor("x");
  EXPECT_THAT(BuildArenaProblem(s.model, bad_pair, 64),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("in place")));
}

// Aligned sizes whose total passes int64 are refused: a layout of them
// would end past 2^63 bytes (an arena of 2^62 was once reported for two
// co-live blocks of 2^62).
TEST(BuildArenaProblemTest, RejectsAlignedSizesAddingUpPastInt64) {
  Scheduled s = ModelOrder(TestGraph(R"(
    input x 64
    op a Conv x -> y:64
    output y
  )"));
  EXPECT_THAT(BuildArenaProblem(s.model, s.simulation, int64_t{1} << 62),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("alignment 4611686018427387904: the activations' aligned sizes "
                                 "add up past 2^63 bytes")));
  ORDO_ASSERT_OK_AND_ASSIGN(ArenaProblem problem,
                            BuildArenaProblem(s.model, s.simulation, int64_t{1} << 61));
  EXPECT_EQ(problem.lower_bound_bytes, int64_t{1} << 62);
}

// Property: the lower bound is the simulator's peak of the same schedule with
// every size aligned (weights not counted), on random graphs and alignments.
TEST(BuildArenaProblemTest, LowerBoundIsTheAlignedSimulatedPeak) {
  std::mt19937_64 rng(7);
  for (int iteration = 0; iteration < ::ordo::testing::Trials(200); ++iteration) {
    testing::RandomDagOptions options;
    options.num_ops = 1 + iteration % 12;
    options.num_inputs = 1 + iteration % 3;
    const Graph graph = testing::RandomDag(rng, options);
    const Scheduled s = ModelOrder(graph);
    const int64_t alignment = int64_t{1} << (iteration % 7);
    ORDO_ASSERT_OK_AND_ASSIGN(ArenaProblem problem,
                              BuildArenaProblem(s.model, s.simulation, alignment));
    MemoryModel aligned = s.model;
    for (MemoryModel::TensorInfo& t : aligned.tensors) t.bytes = *AlignUp(t.bytes, alignment);
    std::vector<int32_t> order(aligned.num_ops());
    for (int32_t op = 0; op < aligned.num_ops(); ++op) order[op] = op;
    ORDO_ASSERT_OK_AND_ASSIGN(int64_t peak, SimulatePeak(aligned, order));
    EXPECT_EQ(problem.lower_bound_bytes, peak) << "iteration " << iteration;
    if (alignment == 1) {
      EXPECT_EQ(problem.lower_bound_bytes, s.simulation.peak_bytes);
    }
  }
}

// The counting sort (many ids, steps few against them) and the comparison
// sort (few ids, or steps spread wide) give a stable sort's order.
TEST(SortByFirstStepTest, IsTheStableOrderByFirstStep) {
  std::mt19937 rng(7);
  for (int iteration = 0; iteration < testing::Trials(200); ++iteration) {
    const int n = 1 + static_cast<int>(rng() % 300);
    const int32_t spread = 1 + static_cast<int32_t>(rng() % (iteration % 2 == 0 ? 8 : 5000));
    std::vector<ArenaBlock> blocks(n);
    for (ArenaBlock& block : blocks) block.first = static_cast<int32_t>(rng() % spread) - 1;
    std::vector<int32_t> ids;
    for (int32_t b = 0; b < n; ++b) {
      if (rng() % 4 != 0) ids.push_back(b);
    }
    std::shuffle(ids.begin(), ids.end(), rng);
    std::vector<int32_t> expected = ids;
    std::stable_sort(expected.begin(), expected.end(), [&](int32_t a, int32_t b) {
      return blocks[a].first < blocks[b].first;
    });
    SortByFirstStep(blocks, ids);
    EXPECT_EQ(ids, expected) << "iteration " << iteration;
  }
}

}  // namespace
}  // namespace ordo
