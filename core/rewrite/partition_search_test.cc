#include "core/rewrite/partition_search.h"

#include <atomic>
#include <memory>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "core/memory/simulator.h"
#include "core/rewrite/onnx_test_model.h"
#include "core/rewrite/rewrite.h"
#include "core/schedule/scheduler_registry.h"
#include "core/testing/fake_clock.h"
#include "core/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::testing::Contains;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// An inverted residual (8 -> 48 -> depthwise -> 8, + skip): the expanded
// tensors around the depthwise Conv hold the peak.
OnnxTestModel InvertedResidual() { return InvertedResidualBlock({}); }

RewriteOptions PartitionOptions() {
  RewriteOptions options;
  options.mode = RewriteMode::kPartition;
  // Tiled copies of this block are many parallel branches, which the exact
  // schedulers take their whole limit on: keep both short.
  options.schedule_time_limit = absl::Milliseconds(300);
  // Every assertion here holds from the search's first rounds: at load 3 a
  // 150 ms limit already finds the split and the fusion (the peaks these
  // tests compare); 3 s leaves a 20x margin for sanitizers and a loaded
  // CI machine, and the search runs to its limit, so a longer one is CI
  // time only.
  options.time_limit = absl::Seconds(3);
  // A graph this small is all op overhead at the default figures; count
  // compute only, as on a large model.
  options.latency.op_overhead_seconds = 0;
  // These tests are about partitioning; fusion on top has tests of its own.
  options.fusion = false;
  return options;
}

void ExpectConsistent(const RewriteResult& result, const RewriteOptions& options) {
  ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel memory, BuildMemoryModel(result.graph, options.memory));
  ORDO_ASSERT_OK_AND_ASSIGN(int64_t peak, SimulatePeak(memory, result.schedule.order));
  EXPECT_EQ(peak, result.schedule.peak_bytes);
  EXPECT_LE(result.schedule.peak_bytes, result.original_peak_bytes);
  EXPECT_LE(result.latency_overhead, options.max_latency_overhead + 1e-12);
  int64_t before = result.original_peak_bytes;
  for (const AppliedRewrite& r : result.rewrites) {
    EXPECT_EQ(r.peak_before_bytes, before) << r.description;
    EXPECT_LT(r.peak_after_bytes, r.peak_before_bytes) << r.description;
    before = r.peak_after_bytes;
  }
  EXPECT_EQ(before, result.schedule.peak_bytes);
}

// expand 1x1 (8 -> 48) at 4x4 -> Resize x4 -> Relu -> project 1x1 (48 -> 8):
// the peak is at the Relu on the upsampled tensor, when the expand Conv's
// output is already dead, so the search finds the Conv to split only by
// walking back through the Resize (a Resize also ends H/W tiling).
TEST(PartitionSearchTest, SplitsChannelsThroughAResize) {
  OnnxTestModel m;
  m.Input("x", {1, 8, 4, 4});
  m.Weight("we", {48, 8, 1, 1}, nullptr);
  m.Node("Conv", {"x", "we"}, {"e"});
  m.FloatWeight("scales", {1, 1, 4, 4});
  m.Node("Resize", {"e", "", "scales"}, {"u"});
  m.Node("Relu", {"u"}, {"r"});
  m.Weight("wp", {8, 48, 1, 1}, nullptr);
  m.Node("Conv", {"r", "wp"}, {"y"});
  m.Output("y");
  const RewriteOptions options = PartitionOptions();
  ORDO_ASSERT_OK_AND_ASSIGN(RewriteResult result, RewriteForMemory(m.model(), options));
  ExpectConsistent(result, options);
  std::vector<std::string> kinds;
  for (const AppliedRewrite& r : result.rewrites) kinds.push_back(r.kind);
  EXPECT_THAT(kinds, Contains("channel"));
  EXPECT_LT(result.schedule.peak_bytes, result.original_peak_bytes);
}

// RewriteOptions::beam_width reaches the partition search: a beam of 2
// returns a result the simulator confirms, no worse than the input and
// within the latency budget. Whether it beats the greedy search is not
// promised.
TEST(PartitionSearchTest, BeamWidthTwoReturnsAVerifiedResult) {
  RewriteOptions options = PartitionOptions();
  options.beam_width = 2;
  options.time_limit = absl::Seconds(3);
  ORDO_ASSERT_OK_AND_ASSIGN(
      RewriteResult result,
      RewriteForMemory(InvertedResidualBlock({.skip = false}).model(), options));
  ExpectConsistent(result, options);
}

TEST(PartitionSearchTest, LowersTheInvertedResidualPeakWithinDelta) {
  const RewriteOptions options = PartitionOptions();
  ORDO_ASSERT_OK_AND_ASSIGN(RewriteResult result,
                            RewriteForMemory(InvertedResidual().model(), options));
  // x (8 KiB) + er and d (48 KiB each) around the depthwise Conv.
  EXPECT_EQ(result.original_peak_bytes, 8192 + 2 * 49152);
  EXPECT_LT(result.schedule.peak_bytes, result.original_peak_bytes * 6 / 10);
  ASSERT_THAT(result.rewrites, Not(IsEmpty()));
  ExpectConsistent(result, options);
  EXPECT_GT(result.original_macs, 0);
  EXPECT_EQ(result.original_ops, 6);
  EXPECT_GT(result.rewritten_ops, result.original_ops);
  EXPECT_FALSE(result.weights_carried);
  EXPECT_FALSE(result.fits);  // not in fit mode
  EXPECT_THAT(result.bottleneck_tensors, IsEmpty());
}

TEST(PartitionSearchTest, RespectsTheLatencyBudget) {
  RewriteOptions options = PartitionOptions();
  // Every split adds ops; at an op overhead this large none is affordable.
  options.latency.op_overhead_seconds = 1;
  options.max_latency_overhead = 0.05;
  ORDO_ASSERT_OK_AND_ASSIGN(RewriteResult result,
                            RewriteForMemory(InvertedResidual().model(), options));
  EXPECT_THAT(result.rewrites, IsEmpty());
  EXPECT_EQ(result.schedule.peak_bytes, result.original_peak_bytes);
  EXPECT_EQ(result.latency_overhead, 0);
}

TEST(PartitionSearchTest, NeverRaisesThePeak) {
  OnnxTestModel m;
  m.Input("x", {1, 4, 8, 8});
  m.Weight("w", {4, 4, 1, 1}, nullptr);
  m.Node("Conv", {"x", "w"}, {"y"});
  m.Output("y");
  const RewriteOptions options = PartitionOptions();
  ORDO_ASSERT_OK_AND_ASSIGN(RewriteResult result, RewriteForMemory(m.model(), options));
  EXPECT_THAT(result.rewrites, IsEmpty());
  EXPECT_EQ(result.schedule.peak_bytes, result.original_peak_bytes);
  ExpectConsistent(result, options);
}

TEST(PartitionSearchTest, FitModeStopsAtTheLimit) {
  RewriteOptions options = PartitionOptions();
  ORDO_ASSERT_OK_AND_ASSIGN(RewriteResult free,
                            RewriteForMemory(InvertedResidual().model(), options));
  options.memory_limit_bytes = (free.original_peak_bytes + free.schedule.peak_bytes) / 2;
  ORDO_ASSERT_OK_AND_ASSIGN(RewriteResult fit,
                            RewriteForMemory(InvertedResidual().model(), options));
  EXPECT_TRUE(fit.fits);
  EXPECT_LE(fit.schedule.peak_bytes, options.memory_limit_bytes);
  EXPECT_THAT(fit.bottleneck_tensors, IsEmpty());
  // The cheapest fitting graph costs no more than the unconstrained search's.
  EXPECT_LE(fit.latency_overhead, free.latency_overhead + 1e-12);
  ExpectConsistent(fit, options);
}

TEST(PartitionSearchTest, FitModeReportsTheBottleneckWhenItCannotFit) {
  RewriteOptions options = PartitionOptions();
  options.memory_limit_bytes = 1024;  // less than the input alone
  ORDO_ASSERT_OK_AND_ASSIGN(RewriteResult result,
                            RewriteForMemory(InvertedResidual().model(), options));
  EXPECT_FALSE(result.fits);
  ASSERT_THAT(result.bottleneck_tensors, Not(IsEmpty()));
  for (const std::string& name : result.bottleneck_tensors) {
    EXPECT_TRUE(result.graph.FindTensor(name).has_value()) << name;
  }
  ExpectConsistent(result, options);
}

TEST(PartitionSearchTest, AlreadyFittingModelIsLeftAlone) {
  RewriteOptions options = PartitionOptions();
  options.mode = RewriteMode::kAll;
  options.memory_limit_bytes = int64_t{1} << 30;
  ORDO_ASSERT_OK_AND_ASSIGN(RewriteResult result,
                            RewriteForMemory(InvertedResidual().model(), options));
  EXPECT_TRUE(result.fits);
  EXPECT_THAT(result.rewrites, IsEmpty());
  EXPECT_EQ(result.rewritten_ops, result.original_ops);
}

TEST(PartitionSearchTest, HonoursTheTimeLimit) {
  // Every read of the clock moves it by a second: the search gets a handful
  // of reads, whatever the machine's speed.
  testing::TickingClock clock(absl::Seconds(1));
  RewriteOptions options = PartitionOptions();
  options.clock = &clock;
  options.time_limit = absl::Seconds(6);
  ORDO_ASSERT_OK_AND_ASSIGN(RewriteResult result,
                            RewriteForMemory(InvertedResidual().model(), options));
  EXPECT_TRUE(result.time_limit_hit);
  EXPECT_LE(result.schedules_run, 6);
  ExpectConsistent(result, options);
}

TEST(PartitionSearchTest, AllModeReportsCostsOfEveryRewrite) {
  RewriteOptions options = PartitionOptions();
  options.mode = RewriteMode::kAll;
  ORDO_ASSERT_OK_AND_ASSIGN(RewriteResult result,
                            RewriteForMemory(InvertedResidual().model(), options));
  ExpectConsistent(result, options);
  int64_t extra_macs = 0;
  int32_t extra_ops = 0;
  for (const AppliedRewrite& r : result.rewrites) {
    EXPECT_THAT((std::vector<std::string>{"channel", "spatial", "identity", "spatial+channel",
                                          "channel+spatial", "fusion"}),
                Contains(r.kind));
    extra_macs += r.extra_macs;
    extra_ops += r.extra_ops;
  }
  EXPECT_EQ(result.rewritten_macs - result.original_macs, extra_macs);
  EXPECT_EQ(result.rewritten_ops - result.original_ops, extra_ops);
}

// Patch-wise fusion on top of partitioning (fusion_search.h): the block is
// one chain after its input, so fusing it streams the expanded tensors.
TEST(PartitionSearchTest, FusionGoesBelowPartitioningAlone) {
  RewriteOptions options = PartitionOptions();
  ORDO_ASSERT_OK_AND_ASSIGN(RewriteResult partitioned,
                            RewriteForMemory(InvertedResidual().model(), options));
  options.fusion = true;
  ORDO_ASSERT_OK_AND_ASSIGN(RewriteResult fused,
                            RewriteForMemory(InvertedResidual().model(), options));
  ExpectConsistent(fused, options);
  EXPECT_LT(fused.schedule.peak_bytes, partitioned.schedule.peak_bytes);
  ASSERT_THAT(fused.rewrites, Not(IsEmpty()));
  EXPECT_EQ(fused.rewrites.back().kind, "fusion");
  int fused_nodes = 0;
  for (const onnx::NodeProto& node : fused.model.graph().node()) {
    fused_nodes += node.domain() == "ai.ordo" ? 1 : 0;
  }
  EXPECT_GE(fused_nodes, 1);
  EXPECT_EQ(fused.model.functions_size(), fused_nodes);
  // The front holds the fused point.
  bool on_front = false;
  for (const ParetoPoint& point : fused.pareto) {
    on_front = on_front || point.peak_bytes == fused.schedule.peak_bytes;
  }
  EXPECT_TRUE(on_front);
}

// A fused stage fills its workspace with ConstantOfShape (opset 9): below
// that the emitted model would be invalid, so the search does not fuse.
TEST(PartitionSearchTest, NoFusionBelowOpsetNine) {
  RewriteOptions options = PartitionOptions();
  options.fusion = true;
  onnx::ModelProto old = InvertedResidual().model();
  for (onnx::OperatorSetIdProto& opset : *old.mutable_opset_import()) {
    if (opset.domain().empty() || opset.domain() == "ai.onnx") opset.set_version(8);
  }
  ORDO_ASSERT_OK_AND_ASSIGN(RewriteResult result, RewriteForMemory(old, options));
  for (const AppliedRewrite& r : result.rewrites) EXPECT_NE(r.kind, "fusion");
  EXPECT_EQ(result.model.functions_size(), 0);
}

TEST(PartitionSearchTest, FusionInFitModeStopsAtAModelThatFits) {
  RewriteOptions options = PartitionOptions();
  ORDO_ASSERT_OK_AND_ASSIGN(RewriteResult partitioned,
                            RewriteForMemory(InvertedResidual().model(), options));
  options.fusion = true;
  options.memory_limit_bytes = partitioned.schedule.peak_bytes - 1;
  ORDO_ASSERT_OK_AND_ASSIGN(RewriteResult fused,
                            RewriteForMemory(InvertedResidual().model(), options));
  ExpectConsistent(fused, options);
  EXPECT_TRUE(fused.fits);
  EXPECT_LE(fused.schedule.peak_bytes, options.memory_limit_bytes);
}

// The shape of a tensor inside the fusible chain, returned as a graph output
// (a constant: Shape folds): no op of the Graph reads "er", but the file's
// Shape node does. Fusing a stage that keeps "er" inside itself would leave
// that node reading a tensor no node writes, and the rewritten model would
// not import (the whole compile failed with 'reads tensor "er", which is not
// defined'); the search rewrites around it instead.
TEST(PartitionSearchTest, FusionLeavesATensorAFoldedNodeReads) {
  RewriteOptions options = PartitionOptions();
  options.fusion = true;
  OnnxTestModel m = InvertedResidual();
  m.Node("Shape", {"er"}, {"er_shape"});
  m.Output("er_shape");
  onnx::ModelProto model = m.model();
  model.mutable_graph()->mutable_output(1)->mutable_type()->mutable_tensor_type()->set_elem_type(
      onnx::TensorProto::INT64);
  ORDO_ASSERT_OK_AND_ASSIGN(RewriteResult result, RewriteForMemory(model, options));
  ExpectConsistent(result, options);
  bool written = false;
  for (const onnx::NodeProto& node : result.model.graph().node()) {
    for (const std::string& output : node.output()) written = written || output == "er";
  }
  EXPECT_TRUE(written);
}

TEST(PartitionSearchTest, ATinyMemoryBudgetStillGivesAValidResult) {
  RewriteOptions options = PartitionOptions();
  options.max_search_bytes = 1;  // every cached candidate is over it
  ORDO_ASSERT_OK_AND_ASSIGN(RewriteResult result,
                            RewriteForMemory(InvertedResidual().model(), options));
  ExpectConsistent(result, options);
  // The beam's states stay held: the search still gets somewhere.
  EXPECT_LT(result.schedule.peak_bytes, result.original_peak_bytes);
}

TEST(PartitionSearchTest, EvaluatorDropsWhatNothingHoldsWhenOverItsBudget) {
  ORDO_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Scheduler> scheduler,
                            BuiltinSchedulers().Create("best"));
  RewriteOptions options = PartitionOptions();
  {
    ModelEvaluator roomy(options, *scheduler);
    ORDO_ASSERT_OK(roomy.Evaluate(InvertedResidual().model(), "a").status());
    ORDO_ASSERT_OK(roomy.Evaluate(InvertedResidual().model(), "b").status());
    EXPECT_EQ(roomy.cache_size(), 2);
    EXPECT_GT(roomy.cached_bytes(), 0);
  }
  options.max_search_bytes = 1;
  ModelEvaluator tight(options, *scheduler);
  ORDO_ASSERT_OK(tight.Evaluate(InvertedResidual().model(), "a").status());  // released
  ORDO_ASSERT_OK_AND_ASSIGN(std::shared_ptr<const EvaluatedModel> held,
                            tight.Evaluate(InvertedResidual().model(), "b"));
  EXPECT_EQ(tight.cache_size(), 1);  // "a" dropped, "b" still held
  ORDO_ASSERT_OK_AND_ASSIGN(std::shared_ptr<const EvaluatedModel> again,
                            tight.Evaluate(InvertedResidual().model(), "b"));
  EXPECT_EQ(again, held);
}

// 4 -> 32 channels, three 3x3 depthwise Convs, back to 4, on 32 x 8: the
// expanded tensors hold the peak, and tiling over H recomputes a halo that
// grows by a row per depthwise Conv (2x1: ~11% more MACs), over a delta of
// 5%. With channel splits off, only cached halos (no extra MACs) can lower
// the peak within delta, and the search must find them by itself.
TEST(PartitionSearchTest, CachesHalosWhenRecomputingThemIsOverDelta) {
  OnnxTestModel m;
  m.Input("x", {1, 4, 32, 8});
  m.Weight("we", {32, 4, 1, 1}, nullptr);
  m.Node("Conv", {"x", "we"}, {"e"});
  std::string last = "e";
  for (int i = 0; i < 3; ++i) {
    const std::string w = absl::StrCat("wd", i), d = absl::StrCat("d", i);
    m.Weight(w, {32, 1, 3, 3}, nullptr);
    onnx::NodeProto& dw = m.Node("Conv", {last, w}, {d});
    SetIntAttribute(dw, "group", 32);
    SetIntsAttribute(dw, "pads", {1, 1, 1, 1});
    m.Node("Relu", {d}, {d + "r"});
    last = d + "r";
  }
  m.Weight("wp", {4, 32, 1, 1}, nullptr);
  m.Node("Conv", {last, "wp"}, {"y"});
  m.Output("y");
  RewriteOptions options = PartitionOptions();
  options.max_latency_overhead = 0.05;
  ORDO_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Scheduler> scheduler,
                            BuiltinSchedulers().Create("best"));
  ModelEvaluator evaluator(options, *scheduler);
  ORDO_ASSERT_OK_AND_ASSIGN(std::shared_ptr<const EvaluatedModel> start,
                            evaluator.Evaluate(m.model(), ""));
  PartitionSearchOptions search;
  search.channel_parts = {};
  search.tilings = {{2, 1}, {4, 1}};
  ORDO_ASSERT_OK_AND_ASSIGN(PartitionSearchResult result,
                            SearchPartitions(start, start->cost, search, evaluator));
  ASSERT_THAT(result.rewrites, Not(IsEmpty()));
  EXPECT_LT(result.best->peak(), start->peak());
  for (const AppliedRewrite& r : result.rewrites) {
    EXPECT_EQ(r.kind, "spatial") << r.description;
    EXPECT_THAT(r.description, HasSubstr("halos cached"));
    EXPECT_EQ(r.extra_macs, 0) << r.description;
  }
  EXPECT_EQ(result.best->cost.macs, start->cost.macs);
  // Recomputing tilings over delta are not even screened.
  EXPECT_EQ(result.over_latency_budget, 0);
}

TEST(PartitionSearchTest, ACancelledSearchReturnsTheInputAtOnce) {
  std::atomic<bool> cancelled{true};
  RewriteOptions options = PartitionOptions();
  options.mode = RewriteMode::kAll;
  options.time_limit = absl::Hours(1);  // only the flag stops it
  options.cancelled = &cancelled;
  ORDO_ASSERT_OK_AND_ASSIGN(RewriteResult result,
                            RewriteForMemory(InvertedResidual().model(), options));
  EXPECT_TRUE(result.time_limit_hit);
  EXPECT_THAT(result.rewrites, IsEmpty());
  EXPECT_EQ(result.schedule.peak_bytes, result.original_peak_bytes);
  ExpectConsistent(result, options);
}

}  // namespace
}  // namespace ordo
