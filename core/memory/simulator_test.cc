#include "core/memory/simulator.h"

#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/memory/memory_model.h"
#include "core/testing/status_matchers.h"
#include "core/testing/test_graph.h"
#include "core/testing/trials.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::StatusIs;
using ::ordo::testing::kInPlaceChainGraph;
using ::ordo::testing::TestGraph;
using ::ordo::testing::TestModel;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

SimulationResult SimulateOk(const MemoryModel& model, const std::vector<int32_t>& order) {
  absl::StatusOr<SimulationResult> result = Simulate(model, order);
  EXPECT_TRUE(result.ok()) << result.status();
  return *std::move(result);
}

// x -> a -> y -> b -> z ; chain, no in-place (Conv).
TEST(SimulatorTest, ChainCountsInputsAndOutputsOfEachStep) {
  Graph g = TestGraph(R"(
    input x 10
    op a Conv x -> y:20
    op b Conv y -> z:5
    output z
  )");
  SimulationResult r = SimulateOk(TestModel(g), {0, 1});
  EXPECT_EQ(r.initial_bytes, 10);
  EXPECT_THAT(r.step_bytes, ElementsAre(30, 25));
  EXPECT_EQ(r.peak_bytes, 30);
  EXPECT_EQ(r.peak_step, 0);
}

TEST(SimulatorTest, InplaceOpOverwritesDyingInputOfSameSize) {
  Graph g = TestGraph(kInPlaceChainGraph);
  SimulationResult with = SimulateOk(TestModel(g), {0, 1, 2});
  EXPECT_THAT(with.step_bytes, ElementsAre(30, 20, 21));
  EXPECT_EQ(with.inplace_source[*g.FindTensor("z")], *g.FindTensor("y"));
  SimulationResult without = SimulateOk(TestModel(g, {.inplace = false}), {0, 1, 2});
  EXPECT_THAT(without.step_bytes, ElementsAre(30, 40, 21));
  EXPECT_EQ(without.inplace_source[*g.FindTensor("z")], kNoId);
}

// The lists are searched by bisection: their first and last names, names
// between, the TFLite spellings, and near misses.
TEST(SimulatorTest, InplaceOpTypesAreExactlyTheListedNames) {
  for (absl::string_view type : {"Abs", "Xor", "Relu", "Reshape", "Add", "Where", "ABS", "TANH",
                                 "RELU6", "SELECT_V2", "ADD_N", "QuantizeLinear",
                                 "DequantizeLinear", "QUANTIZE", "DEQUANTIZE"}) {
    EXPECT_TRUE(IsInplaceOpType(type)) << type;
  }
  for (absl::string_view type : {"Conv", "relu", "Relu ", "", "A", "Zzz", "MaxPool", "CONV_2D",
                                 "Concat", "MatMul"}) {
    EXPECT_FALSE(IsInplaceOpType(type)) << type;
  }
}

TEST(SimulatorTest, InplaceNeedsLastUseAndSameSize) {
  // y is read later by c, so r cannot overwrite it at its step; s has a
  // different output size, so it never runs in place.
  Graph g = TestGraph(R"(
    input x 10
    op a Conv x -> y:20
    op r Relu y -> z:20
    op s Relu z -> q:7
    op c Add y q -> w:20
    output w
  )");
  SimulationResult r = SimulateOk(TestModel(g), {0, 1, 2, 3});
  // step 0: x+y = 30; step 1: y+z = 40 (y still needed); step 2: y+z+q = 47;
  // step 3: y+q+w - y (Add overwrites y, its first input, last use) = 27.
  EXPECT_THAT(r.step_bytes, ElementsAre(30, 40, 47, 27));
}

// A QDQ model at int8 sizes (--activation-dtype int8): each Quantize or
// Dequantize writes over its input, so the peak is the int8 graph's a
// runtime fuses the pairs into (the conv's input and output, 3 + 8); at
// the declared float sizes nothing is shared.
TEST(SimulatorTest, QuantizeDequantizePairsShareABlockAtOneSize) {
  Graph int8 = TestGraph(R"(
    input x 3
    op q QuantizeLinear x -> xq:3
    op d DequantizeLinear xq -> xd:3
    op c Conv xd -> y:8
    op q2 QuantizeLinear y -> yq:8
    op d2 DequantizeLinear yq -> z:8
    output z
  )");
  EXPECT_THAT(SimulateOk(TestModel(int8), {0, 1, 2, 3, 4}).step_bytes,
              ElementsAre(3, 3, 11, 8, 8));
  Graph declared = TestGraph(R"(
    input x 12
    op q QuantizeLinear x -> xq:3
    op d DequantizeLinear xq -> xd:12
    op c Conv xd -> y:32
    op q2 QuantizeLinear y -> yq:8
    op d2 DequantizeLinear yq -> z:32
    output z
  )");
  EXPECT_THAT(SimulateOk(TestModel(declared), {0, 1, 2, 3, 4}).step_bytes,
              ElementsAre(15, 15, 44, 40, 40));
}

TEST(SimulatorTest, MultiOutputUnusedOutputFreedAtItsStep) {
  Graph g = TestGraph(R"(
    input x 4
    op split Split x -> a:2 b:2 unused:100
    op f Conv a -> c:1
    op g Conv b c -> d:1
    output d
  )");
  SimulationResult r = SimulateOk(TestModel(g), {0, 1, 2});
  EXPECT_THAT(r.step_bytes, ElementsAre(108, 5, 4));
  EXPECT_EQ(r.intervals[*g.FindTensor("unused")].last, 0);
}

TEST(SimulatorTest, GraphOutputConsumedByOthersStaysLiveToTheEnd) {
  Graph g = TestGraph(R"(
    input x 4
    op a Conv x -> y:8
    op b Relu y -> z:8
    output y
    output z
  )");
  // y is a graph output: Relu may not overwrite it.
  SimulationResult r = SimulateOk(TestModel(g), {0, 1});
  EXPECT_THAT(r.step_bytes, ElementsAre(12, 16));
  EXPECT_EQ(r.intervals[*g.FindTensor("y")].last, 1);
}

TEST(SimulatorTest, WeightsExcludedUnlessCounted) {
  Graph g = TestGraph(R"(
    input x 4
    weight w 100
    op a Conv x w -> y:8
    output y
  )");
  EXPECT_EQ(SimulateOk(TestModel(g), {0}).peak_bytes, 12);
  SimulationResult counted = SimulateOk(TestModel(g, {.count_weights = true}), {0});
  EXPECT_EQ(counted.initial_bytes, 104);
  EXPECT_EQ(counted.peak_bytes, 112);
}

TEST(SimulatorTest, ActivationElementOverrideScalesTypedTensors) {
  GraphBuilder builder;
  builder.AddTensor("x", DataType::kFloat32, {1, 8}, TensorKind::kInput);
  builder.AddGraphInput("x");
  builder.AddTensor("y", DataType::kFloat32, {1, 16});
  builder.AddOp("a", "Conv", {"x"}, {"y"});
  builder.AddGraphOutput("y");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph g, std::move(builder).Build());
  EXPECT_EQ(SimulateOk(TestModel(g), {0}).peak_bytes, 96);
  EXPECT_EQ(SimulateOk(TestModel(g, {.activation_element_bytes = 1}), {0}).peak_bytes, 24);
}

TEST(SimulatorTest, PeakBeforeFirstStepCountsAllGraphInputs) {
  Graph g = TestGraph(R"(
    input x 50
    input unused 60
    op a Conv x -> y:1
    output y
  )");
  SimulationResult r = SimulateOk(TestModel(g), {0});
  EXPECT_EQ(r.initial_bytes, 110);
  EXPECT_EQ(r.peak_bytes, 110);
  EXPECT_EQ(r.peak_step, -1);
}

// Spec: Option: model input and output outside the arena.
TEST(SimulatorTest, IoOutsideArenaCountsNeitherGraphInputsNorOutputs) {
  Graph g = TestGraph(R"(
    input x 10
    input unused 60
    op a Conv x -> y:20
    op r Relu y -> z:20
    op b Conv z -> w:5
    output w
  )");
  const MemoryModel model = TestModel(g, {.io_outside_arena = true});
  SimulationResult r = SimulateOk(model, {0, 1, 2});
  EXPECT_EQ(r.initial_bytes, 0);
  // a: y only; r: z over y in place; b: z only (w is outside).
  EXPECT_THAT(r.step_bytes, ElementsAre(20, 20, 20));
  EXPECT_EQ(r.peak_bytes, 20);
  EXPECT_EQ(MemoryLowerBound(model), 20);
  EXPECT_EQ(InitialBytes(model), 0);
  // Nothing to place: no live interval, so no arena block.
  EXPECT_FALSE(r.has_interval[*g.FindTensor("x")]);
  EXPECT_FALSE(r.has_interval[*g.FindTensor("w")]);
  EXPECT_TRUE(r.has_interval[*g.FindTensor("y")]);
  // The default accounting counts them: x + unused before step 0.
  EXPECT_EQ(SimulateOk(TestModel(g), {0, 1, 2}).peak_bytes, 70);
}

TEST(SimulatorTest, IoOutsideArenaKeepsInplaceOffTheExternalBuffers) {
  // r reads the graph input: it cannot overwrite a buffer outside the
  // arena, so z costs its full size; s writes the graph output elsewhere.
  Graph g = TestGraph(R"(
    input x 8
    op r Relu x -> z:8
    op s Sigmoid z -> w:8
    output w
  )");
  const MemoryModel model = TestModel(g, {.io_outside_arena = true});
  SimulationResult r = SimulateOk(model, {0, 1});
  EXPECT_THAT(r.step_bytes, ElementsAre(8, 8));
  EXPECT_EQ(r.inplace_source[*g.FindTensor("z")], kNoId);
}

TEST(SimulatorTest, RejectsInvalidSchedules) {
  Graph g = TestGraph(R"(
    input x 1
    op a Conv x -> y:1
    op b Conv y -> z:1
    output z
  )");
  MemoryModel model = TestModel(g);
  EXPECT_THAT(Simulate(model, {1, 0}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("before its producer")));
  EXPECT_THAT(Simulate(model, {0}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("has 1 ops")));
  EXPECT_THAT(Simulate(model, {0, 0}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("twice")));
  EXPECT_THAT(Simulate(model, {0, 7}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("out of range")));
}

TEST(MemoryModelTest, RejectsTotalsThatCouldOverflow) {
  GraphBuilder builder;
  builder.AddTensorBytes("x", int64_t{1} << 61, TensorKind::kInput);
  builder.AddGraphInput("x");
  builder.AddTensorBytes("y", int64_t{1} << 61);
  builder.AddTensorBytes("z", int64_t{1} << 61);
  builder.AddOp("a", "Conv", {"x"}, {"y"});
  builder.AddOp("b", "Conv", {"y"}, {"z"});
  ORDO_ASSERT_OK_AND_ASSIGN(Graph g, std::move(builder).Build());
  EXPECT_THAT(BuildMemoryModel(g, {}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("exceed 2^62")));
}

// Totals within 2^62 whose reads are not: off-chip traffic reads a tensor
// once per reader, and six readers of 2^61 bytes once made it negative.
TEST(MemoryModelTest, RejectsReadsThatCouldOverflowTheTraffic) {
  GraphBuilder builder;
  builder.AddTensorBytes("x", int64_t{1} << 61, TensorKind::kInput);
  builder.AddGraphInput("x");
  std::vector<std::string> outputs;
  for (int i = 0; i < 6; ++i) {
    outputs.push_back(absl::StrCat("y", i));
    builder.AddTensorBytes(outputs.back(), 4);
    builder.AddOp(absl::StrCat("r", i), "Relu", {"x"}, {outputs.back()});
  }
  builder.AddTensorBytes("w", 24);
  builder.AddOp("cat", "Concat", outputs, {"w"});
  builder.AddGraphOutput("w");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph g, std::move(builder).Build());
  EXPECT_THAT(BuildMemoryModel(g, {}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("tensor \"x\": tensor bytes times their readers exceed 2^62")));
}

TEST(SimulatorTest, LowerBoundIsLargestSingleStepNeed) {
  Graph g = TestGraph(R"(
    input x 10
    op a Conv x -> y:20
    op r Relu y -> z:20
    op b Conv z -> w:3
    output w
  )");
  // a: 10+20, r: 20+20-20 (in place), b: 20+3.
  EXPECT_EQ(MemoryLowerBound(TestModel(g)), 30);
  EXPECT_EQ(MemoryLowerBound(TestModel(g, {.inplace = false})), 40);
}

TEST(SimulatorTest, PeakNeverBelowLowerBoundOnRandomGraphs) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 200; ++i) {
    Graph g = ::ordo::testing::RandomDag(rng, {.num_ops = 12});
    MemoryModel model = TestModel(g);
    std::vector<int32_t> order(g.num_ops());
    for (int32_t k = 0; k < g.num_ops(); ++k) order[k] = k;
    SimulationResult r = SimulateOk(model, order);
    EXPECT_GE(r.peak_bytes, MemoryLowerBound(model));
    for (int32_t step = 0; step < g.num_ops(); ++step) {
      // No step costs less than its op's own need (OpStepBytes: every
      // input live, in place where the op may overwrite).
      EXPECT_GE(r.step_bytes[step], OpStepBytes(model, order[step]));
    }
  }
}

}  // namespace
}  // namespace ordo
