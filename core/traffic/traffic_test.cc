#include "core/traffic/traffic.h"

#include <algorithm>
#include <limits>
#include <random>

#include "core/memory/simulator.h"
#include "core/testing/status_matchers.h"
#include "core/testing/test_graph.h"
#include "core/testing/trials.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::RandomTopologicalOrder;

using ::ordo::testing::StatusIs;
using ::ordo::testing::TestGraph;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<int32_t> ModelOrder(const MemoryModel& model) {
  std::vector<int32_t> order(model.num_ops());
  for (int32_t op = 0; op < model.num_ops(); ++op) order[op] = op;
  return order;
}


TrafficResult Traffic(const MemoryModel& model, const std::vector<int32_t>& order,
                      int64_t on_chip_bytes, bool record = false) {
  absl::StatusOr<TrafficResult> result = EstimateTraffic(model, order, {on_chip_bytes, record});
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? *std::move(result) : TrafficResult{};
}

// x -> t1 -> t2 -> t3, and d reads t1 again with t3. Peak 30 at step 2.
const char kChain[] = R"(
  input x 10
  op a Conv x -> t1:10
  op b Conv t1 -> t2:10
  op c Conv t2 -> t3:10
  op d Conv t1 t3 -> y:10
  output y
)";

// Tensors placed off the chip for good: each write once, each read per
// reader; the graph input's first read and the output's write are fixed.
TEST(PlacedTrafficTest, OffChipTensorsAreWrittenOnceAndReadByEachReader) {
  const MemoryModel model = *BuildMemoryModel(TestGraph(kChain), {});
  const int32_t x = 0, t1 = 1, t2 = 2, y = 4;
  std::vector<bool> off_chip(model.num_tensors(), false);
  TrafficResult none = PlacedTraffic(model, off_chip, 1000);
  EXPECT_EQ(none.total_bytes, 0);
  EXPECT_EQ(none.on_chip_bytes, 1000);
  EXPECT_EQ(none.fixed_read_bytes, 10);
  EXPECT_EQ(none.fixed_write_bytes, 10);
  off_chip[t1] = true;  // written by a, read by b and d
  off_chip[t2] = true;  // written by b, read by c
  TrafficResult placed = PlacedTraffic(model, off_chip, 1000);
  EXPECT_EQ(placed.write_bytes, 20);
  EXPECT_EQ(placed.read_bytes, 30);
  EXPECT_EQ(placed.total_bytes, 50);
  off_chip.assign(model.num_tensors(), false);
  off_chip[x] = true;  // its one read is the fixed cost
  off_chip[y] = true;  // its write is the fixed cost
  EXPECT_EQ(PlacedTraffic(model, off_chip, 1000).total_bytes, 0);
}

TEST(EstimateTrafficTest, NothingMovesWhenThePeakFits) {
  const MemoryModel model = *BuildMemoryModel(TestGraph(kChain), {});
  const TrafficResult result = Traffic(model, ModelOrder(model), 30, /*record=*/true);
  EXPECT_EQ(result.read_bytes, 0);
  EXPECT_EQ(result.write_bytes, 0);
  EXPECT_EQ(result.total_bytes, 0);
  EXPECT_EQ(result.fixed_read_bytes, 10);   // x once
  EXPECT_EQ(result.fixed_write_bytes, 10);  // y once
  EXPECT_EQ(result.streamed_steps, 0);
  EXPECT_THAT(result.resident_bytes, ElementsAre(20, 20, 30, 30));
}

// C = 20, by the rules:
//   step 0: x (fixed read) + t1 = 20; x dies.
//   step 1: t1 + t2 = 20.
//   step 2: + t3 = 30 > 20: evict t1 (read again at step 3): write 10.
//   step 3: read t1 back: 10; + y = 30, and only d's own tensors are left:
//           d is streamed; t1 (dead after d, free) goes.
TEST(EstimateTrafficTest, EvictsWritesReadsBackAndStreams) {
  const MemoryModel model = *BuildMemoryModel(TestGraph(kChain), {});
  const TrafficResult result = Traffic(model, ModelOrder(model), 20, /*record=*/true);
  EXPECT_EQ(result.on_chip_bytes, 20);
  EXPECT_EQ(result.read_bytes, 10);
  EXPECT_EQ(result.write_bytes, 10);
  EXPECT_EQ(result.total_bytes, 20);
  EXPECT_EQ(result.streamed_steps, 1);
  EXPECT_EQ(result.streamed_bytes, 10);
  EXPECT_THAT(result.resident_bytes, ElementsAre(20, 20, 20, 20));
}

// Belady's choice. C = 30; at step 1 x + u + v + w = 40 and one of u (read
// at step 3) and v (read at step 2) must go: u, read later, is written and
// read back at step 3.
TEST(EstimateTrafficTest, EvictsTheFurthestNextUse) {
  const MemoryModel model = *BuildMemoryModel(TestGraph(R"(
    input x 10
    op a Conv x -> u:10 v:10
    op b Conv x -> w:10
    op c Conv v -> p:10
    op d Conv u p -> y:10
    output y
  )"),
                                              {});
  const TrafficResult result = Traffic(model, ModelOrder(model), 30);
  EXPECT_EQ(result.write_bytes, 10);
  EXPECT_EQ(result.read_bytes, 10);
  EXPECT_EQ(result.streamed_steps, 0);
}

TEST(EstimateTrafficTest, InplaceOutputsTakeOverTheirSource) {
  const MemoryModel model = *BuildMemoryModel(TestGraph(R"(
    input x 10
    op a Conv x -> t:10
    op b Relu t -> r:10
    op c Conv r -> y:10
    output y
  )"),
                                              {});
  // Peak 20 (Relu in place): nothing moves at C = 20.
  ASSERT_EQ(*SimulatePeak(model, ModelOrder(model)), 20);
  EXPECT_EQ(Traffic(model, ModelOrder(model), 20).total_bytes, 0);
}

TEST(EstimateTrafficTest, RejectsNegativeCapacityAndInvalidSchedules) {
  const MemoryModel model = *BuildMemoryModel(TestGraph(kChain), {});
  EXPECT_THAT(EstimateTraffic(model, ModelOrder(model), {-1, false}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("non-negative")));
  EXPECT_THAT(EstimateTraffic(model, {1, 0, 2, 3}, {100, false}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("before its producer")));
}

// Belady's rule is a heuristic for mixed sizes: here more on-chip memory
// costs more traffic. C = 5: at step 0 (in0 3 + t0 1 + t0b 3 = 7) t0b, the
// smallest tensor that makes room among those read furthest away, streams
// out (write 3) and comes back at step 2 (read 3): 6. C = 6: t0 is enough
// at step 0 (write 1), but t1 at step 1 then forces t0b out too (write 3),
// and both come back (read 4): 8.
TEST(EstimateTrafficTest, MixedSizesCanDefeatMonotonicity) {
  const MemoryModel model = *BuildMemoryModel(TestGraph(R"(
    input in0 3
    op op0 Conv in0 -> t0:1 t0b:3
    op op1 Conv in0 -> t1:1
    op op2 Conv t0 t0b -> t2:4 t2b:4
    output t1
    output t2
    output t2b
  )"),
                                              {});
  EXPECT_EQ(Traffic(model, ModelOrder(model), 5).total_bytes, 6);
  EXPECT_EQ(Traffic(model, ModelOrder(model), 6).total_bytes, 8);
}

// The same rules with a free choice of victim at every eviction: the
// minimum traffic over all eviction choices (exponential; tiny cases only).
class BruteForceTraffic {
 public:
  BruteForceTraffic(const MemoryModel& model, const std::vector<int32_t>& order, int64_t capacity)
      : model_(model), order_(order), capacity_(capacity), simulation_(*Simulate(model, order)) {}

  // {minimum read bytes, minimum read + write bytes}, each over all choices.
  std::pair<int64_t, int64_t> Minimum() {
    State start;
    start.resident.assign(model_.num_tensors(), false);
    start.has_copy.assign(model_.num_tensors(), false);
    start.read_once.assign(model_.num_tensors(), false);
    for (int32_t t = 0; t < model_.num_tensors(); ++t) {
      start.has_copy[t] = model_.tensors[t].producer == kNoId;
    }
    BeginStep(start, 0);
    return {best_read_, best_total_};
  }

 private:
  struct State {
    std::vector<bool> resident, has_copy, read_once;
    int64_t bytes = 0, read = 0, write = 0;
  };
  int32_t NextUse(int32_t t, int32_t step) const {
    for (int32_t s = step + 1; s < static_cast<int32_t>(order_.size()); ++s) {
      const std::vector<int32_t>& inputs = model_.ops[order_[s]].inputs;
      if (std::count(inputs.begin(), inputs.end(), t)) return s;
    }
    return std::numeric_limits<int32_t>::max();
  }
  bool InStep(int32_t t, int32_t step) const {
    const MemoryModel::OpInfo& op = model_.ops[order_[step]];
    return std::count(op.inputs.begin(), op.inputs.end(), t) ||
           std::count(op.outputs.begin(), op.outputs.end(), t);
  }
  void BeginStep(State s, int32_t step) {
    if (step == static_cast<int32_t>(order_.size())) {
      best_read_ = std::min(best_read_, s.read);
      best_total_ = std::min(best_total_, s.read + s.write);
      return;
    }
    const MemoryModel::OpInfo& op = model_.ops[order_[step]];
    for (int32_t t : op.inputs) {
      if (s.resident[t]) continue;
      if (model_.tensors[t].producer == kNoId && !s.read_once[t]) {
        s.read_once[t] = true;
      } else {
        s.read += model_.tensors[t].bytes;
      }
      s.resident[t] = true;
      s.bytes += model_.tensors[t].bytes;
    }
    for (int32_t t : op.outputs) {
      const int32_t source = simulation_.inplace_source[t];
      if (source != kNoId && s.resident[source]) {
        s.resident[source] = false;
        s.bytes -= model_.tensors[source].bytes;
      }
      s.resident[t] = true;
      s.bytes += model_.tensors[t].bytes;
    }
    Evict(s, step, /*streaming=*/false);
  }
  void Evict(const State& s, int32_t step, bool streaming) {
    if (s.bytes <= capacity_) return EndStep(s, step);
    bool any = false;
    for (int32_t t = 0; t < model_.num_tensors(); ++t) {
      if (!s.resident[t] || (!streaming && InStep(t, step))) continue;
      any = true;
      State next = s;
      if (NextUse(t, step) != std::numeric_limits<int32_t>::max() && !next.has_copy[t]) {
        if (!model_.tensors[t].live_at_end) next.write += model_.tensors[t].bytes;
        next.has_copy[t] = true;
      }
      next.resident[t] = false;
      next.bytes -= model_.tensors[t].bytes;
      Evict(next, step, streaming);
    }
    if (!any && !streaming) Evict(s, step, /*streaming=*/true);
  }
  void EndStep(State s, int32_t step) {
    const MemoryModel::OpInfo& op = model_.ops[order_[step]];
    for (int32_t t : op.inputs) {
      if (s.resident[t] && NextUse(t, step) == std::numeric_limits<int32_t>::max() &&
          !model_.tensors[t].live_at_end) {
        s.resident[t] = false;
        s.bytes -= model_.tensors[t].bytes;
      }
    }
    for (int32_t t : op.outputs) {
      const MemoryModel::TensorInfo& info = model_.tensors[t];
      if (s.resident[t] && info.consumers.empty() && !info.live_at_end) {
        s.resident[t] = false;
        s.bytes -= info.bytes;
      }
    }
    BeginStep(s, step + 1);
  }

  const MemoryModel& model_;
  const std::vector<int32_t>& order_;
  const int64_t capacity_;
  const SimulationResult simulation_;
  int64_t best_read_ = std::numeric_limits<int64_t>::max();
  int64_t best_total_ = std::numeric_limits<int64_t>::max();
};

// Belady's furthest-next-use rule is the optimal offline replacement for
// equal-size tensors (reads); for any sizes no choice of victims beats the
// optimum, and the brute force explores Belady's choices too.
TEST(EstimateTrafficTest, MatchesBruteForceOptimalReplacementOnTinyGraphs) {
  std::mt19937_64 rng(17);
  for (int iteration = 0; iteration < ::ordo::testing::Trials(240); ++iteration) {
    const bool equal_sizes = iteration % 2 == 0;
    testing::RandomDagOptions options;
    options.num_ops = 2 + iteration % 4;
    options.num_inputs = 1 + iteration % 2;
    options.min_bytes = equal_sizes ? 10 : 1;
    options.max_bytes = 10;
    const MemoryModel model = *BuildMemoryModel(testing::RandomDag(rng, options), {});
    const std::vector<int32_t> order = RandomTopologicalOrder(model, rng);
    const int64_t peak = *SimulatePeak(model, order);
    for (int64_t capacity = 0; capacity <= peak; capacity += equal_sizes ? 10 : 3) {
      const TrafficResult belady = Traffic(model, order, capacity);
      const auto [min_read, min_total] = BruteForceTraffic(model, order, capacity).Minimum();
      EXPECT_GE(belady.total_bytes, min_total) << "iteration " << iteration;
      if (equal_sizes) {
        EXPECT_EQ(belady.read_bytes, min_read) << "iteration " << iteration << ", C = " << capacity;
      }
    }
  }
}

TEST(EstimateTrafficTest, IsZeroFromThePeakUpAndStaysWithinCapacity) {
  std::mt19937_64 rng(23);
  for (int iteration = 0; iteration < ::ordo::testing::Trials(200); ++iteration) {
    testing::RandomDagOptions options;
    options.num_ops = 1 + iteration % 30;
    options.num_inputs = 1 + iteration % 3;
    options.max_bytes = 500;
    const Graph graph = testing::RandomDag(rng, options);
    const MemoryModel model = *BuildMemoryModel(graph, {});
    const std::vector<int32_t> order = RandomTopologicalOrder(model, rng);
    const int64_t peak = *SimulatePeak(model, order);
    int64_t fixed_read = 0, fixed_write = 0;
    for (const Tensor& t : graph.tensors()) {
      if (t.kind == TensorKind::kInput && !t.consumers.empty()) fixed_read += t.bytes;
      if (t.is_graph_output && t.producer != kNoId) fixed_write += t.bytes;
    }
    for (int64_t capacity : {peak, peak + 1, 2 * peak}) {
      const TrafficResult result = Traffic(model, order, capacity);
      EXPECT_EQ(result.total_bytes, 0) << "iteration " << iteration;
      EXPECT_EQ(result.streamed_steps, 0);
      EXPECT_EQ(result.fixed_read_bytes, fixed_read);
      EXPECT_EQ(result.fixed_write_bytes, fixed_write);
    }
    for (int64_t capacity : {int64_t{0}, peak / 3, peak / 2, peak - 1}) {
      const TrafficResult result = Traffic(model, order, capacity, /*record=*/true);
      ASSERT_EQ(result.resident_bytes.size(), order.size());
      for (int64_t bytes : result.resident_bytes) EXPECT_LE(bytes, capacity);
      EXPECT_EQ(result.total_bytes, result.read_bytes + result.write_bytes);
    }
  }
}

// For equal sizes Belady's rule is a stack algorithm (what fits in C also
// fits in C + 1), so reads never grow with C.
TEST(EstimateTrafficTest, ReadsShrinkMonotonicallyWithCapacityForEqualSizes) {
  std::mt19937_64 rng(29);
  for (int iteration = 0; iteration < ::ordo::testing::Trials(200); ++iteration) {
    testing::RandomDagOptions options;
    options.num_ops = 2 + iteration % 40;
    options.num_inputs = 1 + iteration % 3;
    options.min_bytes = options.max_bytes = 64;
    const MemoryModel model = *BuildMemoryModel(testing::RandomDag(rng, options), {});
    const std::vector<int32_t> order = RandomTopologicalOrder(model, rng);
    const int64_t peak = *SimulatePeak(model, order);
    int64_t previous = std::numeric_limits<int64_t>::max();
    for (int64_t capacity = 0; capacity <= peak; capacity += 64) {
      const int64_t read = Traffic(model, order, capacity).read_bytes;
      EXPECT_LE(read, previous) << "iteration " << iteration << ", C = " << capacity;
      previous = read;
    }
  }
}

}  // namespace
}  // namespace ordo
