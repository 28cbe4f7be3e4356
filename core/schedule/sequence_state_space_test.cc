#include "core/schedule/sequence_state_space.h"

#include <algorithm>
#include <random>
#include <vector>

#include "core/hierarchy/hierarchical_graph.h"
#include "core/memory/simulator.h"
#include "core/testing/test_graph.h"
#include "core/testing/trials.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::RandomDag;
using ::ordo::testing::TestGraph;

// Runs the sequences of `graph` in a random order that respects their
// dependencies; returns the ops in that order and the peak the state space
// counted.
std::pair<std::vector<int32_t>, int64_t> RunRandomly(const SequenceStateSpace& space,
                                                     const HierarchicalGraph& graph,
                                                     std::mt19937_64& rng) {
  std::vector<uint64_t> set(space.words(), 0);
  int64_t live = space.initial_live();
  int64_t peak = space.initial_footprint();
  std::vector<int32_t> order;
  for (int32_t done = 0; done < graph.num_sequences(); ++done) {
    std::vector<int32_t> ready;
    for (int32_t s = 0; s < graph.num_sequences(); ++s) {
      if (SequenceStateSpace::Contains(set.data(), s)) continue;
      const auto preds = graph.sequence_graph().predecessors(s);
      if (std::all_of(preds.begin(), preds.end(),
                      [&](int32_t p) { return SequenceStateSpace::Contains(set.data(), p); })) {
        ready.push_back(s);
      }
    }
    const int32_t s = ready[rng() % ready.size()];
    const SequenceStateSpace::Run run = space.RunSequence(set.data(), live, s);
    peak = std::max(peak, run.peak);
    live = run.live_after;
    SequenceStateSpace::Add(set.data(), s);
    for (int32_t op : graph.sequence(s)) order.push_back(op);
  }
  return {order, peak};
}

// The sequence-level count must be the simulator's, in-place and graph
// outputs and unread inputs included, with and without joined sequences.
TEST(SequenceStateSpaceTest, AgreesWithTheSimulatorOnRandomDags) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < ::ordo::testing::Trials(2000); ++trial) {
    testing::RandomDagOptions options;
    options.num_ops = 1 + static_cast<int32_t>(rng() % 16);
    options.num_inputs = 1 + static_cast<int32_t>(rng() % 3);
    options.max_inputs = 1 + static_cast<int32_t>(rng() % 3);
    options.second_output_chance = (trial % 3) * 0.2;
    options.inplace_chance = (trial % 4) * 0.25;
    MemoryModel model = *BuildMemoryModel(RandomDag(rng, options), {});
    if (trial % 7 == 0) model.constant_bytes = 5;
    HierarchyOptions hierarchy;
    hierarchy.sequences = trial % 2 == 0;
    const HierarchicalGraph graph = HierarchicalGraph::Build(model, hierarchy);
    const SequenceStateSpace space(model, graph);
    const auto [order, peak] = RunRandomly(space, graph, rng);
    absl::StatusOr<int64_t> simulated = SimulatePeak(model, order);
    ASSERT_TRUE(simulated.ok()) << simulated.status();
    ASSERT_EQ(peak, *simulated) << "trial " << trial;
  }
}

// a and b (both in place) form one sequence; c reads x too, so whether x
// dies inside the sequence depends on whether c ran before it.
TEST(SequenceStateSpaceTest, InputsDieInASequenceOnlyAfterTheirOtherReaders) {
  MemoryModel model = *BuildMemoryModel(TestGraph(R"(
    input x 10
    op c Conv x -> c:1
    op a Relu x -> a:10
    op b Relu a -> b:10
    output c
    output b
  )"),
                                        {});
  const HierarchicalGraph graph = HierarchicalGraph::Build(model, {});
  ASSERT_EQ(graph.sequence_of_op(1), graph.sequence_of_op(2));
  const SequenceStateSpace space(model, graph);
  const int32_t ab = graph.sequence_of_op(1), c = graph.sequence_of_op(0);
  std::vector<uint64_t> set(space.words(), 0);
  // Before c: x survives a, which cannot write over it: 10 + 10 at a; b
  // writes over a.
  EXPECT_EQ(space.RunSequence(set.data(), 10, ab).peak, 20);
  EXPECT_EQ(space.RunSequence(set.data(), 10, ab).live_after, 20);
  // After c (x and c live: 11): a writes over x, b over a.
  SequenceStateSpace::Add(set.data(), c);
  EXPECT_EQ(space.RunSequence(set.data(), 11, ab).peak, 11);
  EXPECT_EQ(space.RunSequence(set.data(), 11, ab).live_after, 11);
}

}  // namespace
}  // namespace ordo
