#include "core/partition/hourglass_partitioner.h"

#include <algorithm>
#include <random>
#include <vector>

#include "core/memory/simulator.h"
#include "core/testing/schedule_checks.h"
#include "core/testing/test_graph.h"
#include "core/testing/trials.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::TestModel;

using ::ordo::testing::RandomDag;
using ::ordo::testing::RandomHourglass;
using ::ordo::testing::TestGraph;
using ::testing::ElementsAre;

// Ops reachable from `op` along dependencies, forwards or backwards.
std::vector<bool> Reach(const MemoryModel& model, int32_t op, bool forward) {
  std::vector<bool> seen(model.num_ops(), false);
  std::vector<int32_t> stack = {op};
  while (!stack.empty()) {
    const int32_t u = stack.back();
    stack.pop_back();
    std::vector<int32_t> next;
    if (forward) {
      for (int32_t t : model.ops[u].outputs) {
        for (int32_t c : model.tensors[t].consumers) next.push_back(c);
      }
    } else {
      for (int32_t t : model.ops[u].inputs) {
        if (model.tensors[t].producer != kNoId) next.push_back(model.tensors[t].producer);
      }
    }
    for (int32_t v : next) {
      if (!seen[v]) {
        seen[v] = true;
        stack.push_back(v);
      }
    }
  }
  return seen;
}

// The definition: every other op is an ancestor or a descendant.
std::vector<int32_t> CutsByDefinition(const MemoryModel& model) {
  std::vector<int32_t> cuts;
  for (int32_t c = 0; c < model.num_ops(); ++c) {
    std::vector<bool> down = Reach(model, c, true), up = Reach(model, c, false);
    bool cut = true;
    for (int32_t v = 0; v < model.num_ops(); ++v) cut = cut && (v == c || down[v] || up[v]);
    if (cut) cuts.push_back(c);
  }
  return cuts;
}

std::vector<int32_t> RandomOrder(const MemoryModel& model, std::mt19937_64& rng) {
  std::vector<int32_t> missing(model.num_ops(), 0), ready, order;
  for (int32_t op = 0; op < model.num_ops(); ++op) {
    for (int32_t t : model.ops[op].inputs) missing[op] += model.tensors[t].producer != kNoId;
    if (missing[op] == 0) ready.push_back(op);
  }
  while (!ready.empty()) {
    const size_t i = rng() % ready.size();
    const int32_t op = ready[i];
    ready.erase(ready.begin() + i);
    order.push_back(op);
    for (int32_t t : model.ops[op].outputs) {
      for (int32_t c : model.tensors[t].consumers) {
        if (--missing[c] == 0) ready.push_back(c);
      }
    }
  }
  return order;
}

MemoryModel RandomModel(std::mt19937_64& rng, int trial) {
  if (trial % 2 == 0) {
    testing::RandomDagOptions options;
    options.num_ops = 1 + static_cast<int32_t>(rng() % 30);
    options.num_inputs = 1 + static_cast<int32_t>(rng() % 3);
    options.max_inputs = 1 + static_cast<int32_t>(rng() % 3);
    options.inplace_chance = 0.4;
    return TestModel(RandomDag(rng, options));
  }
  testing::RandomHourglassOptions options;
  options.num_cells = 1 + static_cast<int32_t>(rng() % 8);
  options.skip_chance = 0.3;
  options.output_chance = 0.1;
  MemoryModel model = TestModel(RandomHourglass(rng, options));
  if (trial % 3 == 0) model.constant_bytes = 3;
  return model;
}

// x -> a -> b -> add(a, b) -> c: a's output passes over b, yet b is a cut.
TEST(HourglassPartitionerTest, CutsIncludeOpsSkippedOverByAResidual) {
  Graph g = TestGraph(R"(
    input x 8
    op a Conv x -> ya:10
    op b Conv ya -> yb:10
    op add Add ya yb -> s:10
    op p Conv s -> p1:4
    op q Conv s -> q1:4
    op c Concat p1 q1 -> y:8
    output y
  )");
  MemoryModel model = TestModel(g);
  EXPECT_THAT(HourglassPartitioner().CutOps(model), ElementsAre(0, 1, 2, 5));
  Partition partition = HourglassPartitioner({.merge_up_to_ops = 1}).Split(model);
  ASSERT_EQ(partition.parts.size(), 4u);
  EXPECT_THAT(partition.parts[3].ops, ElementsAre(3, 4, 5));
  // Part {b}: reads ya and keeps it for add (live_at_end), nothing constant.
  const MemoryModel& b = partition.parts[1].model;
  EXPECT_EQ(b.constant_bytes, 0);
  ASSERT_EQ(b.num_tensors(), 2);
  EXPECT_TRUE(b.tensors[0].live_at_end);
  EXPECT_EQ(b.tensors[0].producer, kNoId);
}

TEST(HourglassPartitionerTest, TensorsPassingOverAPartAreConstantThere) {
  Graph g = TestGraph(R"(
    input x 8
    op a Conv x -> ya:10
    op b Conv ya -> yb:20
    op c Conv yb -> yc:30
    op d Add ya yc -> y:10
    output y
  )");
  Partition partition = HourglassPartitioner({.merge_up_to_ops = 1}).Split(TestModel(g));
  ASSERT_EQ(partition.parts.size(), 4u);
  EXPECT_EQ(partition.parts[2].model.constant_bytes, 10);  // ya during c
  EXPECT_EQ(partition.parts[3].model.constant_bytes, 0);
}

TEST(HourglassPartitionerTest, CutsMatchTheDefinitionOnRandomGraphs) {
  std::mt19937_64 rng(5);
  for (int trial = 0; trial < ::ordo::testing::Trials(400); ++trial) {
    MemoryModel model = RandomModel(rng, trial);
    ASSERT_EQ(HourglassPartitioner().CutOps(model), CutsByDefinition(model)) << trial;
  }
}

TEST(HourglassPartitionerTest, MergesSmallPartsAndKeepsAllOps) {
  std::mt19937_64 rng(9);
  for (int trial = 0; trial < ::ordo::testing::Trials(200); ++trial) {
    MemoryModel model = RandomModel(rng, trial);
    const int32_t merge = 1 + trial % 12;
    Partition partition = HourglassPartitioner({.merge_up_to_ops = merge}).Split(model);
    std::vector<int32_t> all;
    for (size_t p = 0; p < partition.parts.size(); ++p) {
      const Part& part = partition.parts[p];
      ASSERT_TRUE(std::is_sorted(part.ops.begin(), part.ops.end()));
      all.insert(all.end(), part.ops.begin(), part.ops.end());
      // Two neighbours that fit together would have been merged.
      if (p > 0) {
        ASSERT_GT(part.ops.size() + partition.parts[p - 1].ops.size(), static_cast<size_t>(merge));
      }
    }
    std::sort(all.begin(), all.end());
    ASSERT_EQ(static_cast<int32_t>(all.size()), model.num_ops());
    for (int32_t i = 0; i < model.num_ops(); ++i) ASSERT_EQ(all[i], i);
  }
}

// The exactness claim of the class comment, step by step: any schedule
// made of part schedules has, at every step, the footprint its part's model
// gives, and the whole peak is the max of the part peaks. Also: every
// schedule of the whole runs the parts as blocks.
TEST(HourglassPartitionerTest, PartFootprintsAreTheWholeFootprints) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < ::ordo::testing::Trials(600); ++trial) {
    MemoryModel model = RandomModel(rng, trial);
    Partition partition = HourglassPartitioner({.merge_up_to_ops = trial % 5}).Split(model);
    std::vector<std::vector<int32_t>> orders;
    std::vector<int64_t> steps;
    int64_t max_part_peak = 0;
    for (const Part& part : partition.parts) {
      orders.push_back(RandomOrder(part.model, rng));
      absl::StatusOr<SimulationResult> sim = Simulate(part.model, orders.back());
      ASSERT_TRUE(sim.ok()) << sim.status();
      steps.insert(steps.end(), sim->step_bytes.begin(), sim->step_bytes.end());
      max_part_peak = std::max(max_part_peak, sim->peak_bytes);
    }
    const std::vector<int32_t> whole = ConcatenatePartOrders(partition, orders);
    absl::StatusOr<SimulationResult> sim = Simulate(model, whole);
    ASSERT_TRUE(sim.ok()) << sim.status();
    ASSERT_EQ(sim->step_bytes, steps) << "trial " << trial;
    ASSERT_EQ(sim->peak_bytes, max_part_peak) << "trial " << trial;
    ASSERT_EQ(InitialBytes(partition.parts[0].model), sim->initial_bytes);

    std::vector<int32_t> part_of(model.num_ops());
    for (size_t p = 0; p < partition.parts.size(); ++p) {
      for (int32_t op : partition.parts[p].ops) part_of[op] = static_cast<int32_t>(p);
    }
    const std::vector<int32_t> any = RandomOrder(model, rng);
    for (size_t k = 1; k < any.size(); ++k) {
      ASSERT_LE(part_of[any[k - 1]], part_of[any[k]]) << "trial " << trial;
    }
  }
}

TEST(HourglassPartitionerTest, EmptyModelIsOneEmptyPart) {
  MemoryModel model;
  model.constant_bytes = 5;
  Partition partition = HourglassPartitioner().Split(model);
  ASSERT_EQ(partition.parts.size(), 1u);
  EXPECT_EQ(partition.parts[0].model.constant_bytes, 5);
  EXPECT_TRUE(ConcatenatePartOrders(partition, {{}}).empty());
}

}  // namespace
}  // namespace ordo
