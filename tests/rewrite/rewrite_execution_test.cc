// Proof by execution of SERENITY's identity rewrites (core/rewrite): the
// original and the rewritten model run on the reference executor with the
// same random inputs and weights (the rewrite splits the weights' data
// itself) and must agree within 1e-4, relative to the largest magnitude of
// each output. Every rewritten model must also pass ONNX's checker and
// import as a valid ordo Graph, and every reported peak must be the
// simulator's for the reported schedule.

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/memory/memory_model.h"
#include "core/memory/simulator.h"
#include "core/onnx/onnx_import.h"
#include "core/rewrite/concat_conv_pattern.h"
#include "core/rewrite/concat_conv_rewrite.h"
#include "core/rewrite/onnx_test_model.h"
#include "core/rewrite/rewrite.h"
#include "core/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/rewrite/execution_checks.h"
#include "tests/rewrite/reference_executor.h"

namespace ordo {
namespace {

using ::testing::ElementsAre;

// Scale at least 1.0, so near-zero outputs compare absolutely.
constexpr OutputTolerance kTolerance{.relative = 1e-4, .min_scale = 1.0};

int CountOps(const Graph& graph, const std::string& type) {
  int n = 0;
  for (const Op& op : graph.ops()) n += op.type == type;
  return n;
}

// Rewrites every site of `model` and checks the result end to end.
onnx::ModelProto RewriteAllAndCheck(const onnx::ModelProto& model, const std::string& what,
                                    int expected_sites) {
  absl::StatusOr<Graph> graph = Import(model);
  EXPECT_TRUE(graph.ok()) << graph.status();
  if (!graph.ok()) return model;
  std::vector<ConcatConvSite> sites = FindConcatConvSites(*graph);
  EXPECT_EQ(static_cast<int>(sites.size()), expected_sites) << what;
  onnx::ModelProto rewritten = model;
  for (const ConcatConvSite& site : sites) {
    absl::StatusOr<onnx::ModelProto> next = ApplyConcatConvRewrite(rewritten, *graph, site);
    EXPECT_TRUE(next.ok()) << what << ": " << next.status();
    if (!next.ok()) return model;
    rewritten = *std::move(next);
  }
  EXPECT_THAT(CheckOnnx(rewritten), ::ordo::testing::IsOk()) << what;
  EXPECT_TRUE(Import(rewritten).ok()) << what << ": " << Import(rewritten).status();
  ExpectSameOutputs(model, rewritten, 7, what, kTolerance);
  return rewritten;
}

// x -> a (3x3 Conv, 4 ch), b (1x1 Conv, 2 ch); Concat(a, b, x) -> Conv.
TEST(RewriteExecutionTest, ChannelWisePartitionOfAStridedPaddedConvWithBias) {
  std::mt19937 rng(1);
  OnnxTestModel m;
  m.Input("x", {1, 3, 9, 9});
  m.Weight("wa", {4, 3, 3, 3}, &rng);
  SetIntsAttribute(m.Node("Conv", {"x", "wa"}, {"a"}), "pads", {1, 1, 1, 1});
  m.Weight("wb", {2, 3, 1, 1}, &rng);
  m.Node("Conv", {"x", "wb"}, {"b"});
  SetIntAttribute(m.Node("Concat", {"a", "b", "x"}, {"cat"}), "axis", 1);
  m.Weight("w", {5, 9, 3, 3}, &rng);
  m.Weight("bias", {5}, &rng);
  onnx::NodeProto& conv = m.Node("Conv", {"cat", "w", "bias"}, {"y"});
  SetIntsAttribute(conv, "strides", {2, 2});
  SetIntsAttribute(conv, "pads", {1, 0, 1, 2});
  SetIntsAttribute(conv, "dilations", {1, 2});
  m.Output("y");
  onnx::ModelProto rewritten = RewriteAllAndCheck(m.model(), "channel-wise", 1);
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(rewritten));
  EXPECT_EQ(CountOps(graph, "Concat"), 0);
  EXPECT_EQ(CountOps(graph, "Conv"), 2 + 3);
  EXPECT_EQ(CountOps(graph, "Add"), 2);
}

// Concat(a, b) -> depthwise Conv with channel multiplier 2 and bias.
TEST(RewriteExecutionTest, KernelWisePartitionOfADepthwiseConvWithMultiplier) {
  std::mt19937 rng(2);
  OnnxTestModel m;
  m.Input("x", {1, 2, 7, 8});
  m.Weight("wa", {3, 2, 1, 1}, &rng);
  m.Node("Conv", {"x", "wa"}, {"a"});
  m.Weight("wb", {2, 2, 1, 1}, &rng);
  m.Node("Conv", {"x", "wb"}, {"b"});
  SetIntAttribute(m.Node("Concat", {"a", "b"}, {"cat"}), "axis", 1);
  m.Weight("w", {10, 1, 3, 3}, &rng);
  m.Weight("bias", {10}, &rng);
  onnx::NodeProto& conv = m.Node("Conv", {"cat", "w", "bias"}, {"y"});
  SetIntAttribute(conv, "group", 5);
  SetIntsAttribute(conv, "strides", {1, 2});
  SetIntsAttribute(conv, "pads", {2, 2, 2, 2});
  SetIntsAttribute(conv, "dilations", {2, 1});
  m.Output("y");
  onnx::ModelProto rewritten = RewriteAllAndCheck(m.model(), "kernel-wise", 1);
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(rewritten));
  EXPECT_EQ(CountOps(graph, "Concat"), 1);  // of the partial outputs
  EXPECT_EQ(CountOps(graph, "Conv"), 2 + 2);
}

// The NAS cell shape: Concat -> Relu -> Identity -> {1x1 Conv, depthwise
// Conv}, and a second Concat that reuses an input of the first.
TEST(RewriteExecutionTest, ChainPushedIntoBranchesAndBothPartitionsAtOnce) {
  std::mt19937 rng(3);
  OnnxTestModel m;
  m.Input("x", {1, 3, 6, 6});
  m.Weight("wa", {2, 3, 3, 3}, &rng);
  SetIntsAttribute(m.Node("Conv", {"x", "wa"}, {"a"}), "pads", {1, 1, 1, 1});
  SetIntsAttribute(m.Node("MaxPool", {"x"}, {"p"}), "kernel_shape", {1, 1});
  SetIntAttribute(m.Node("Concat", {"a", "p", "a"}, {"cat"}), "axis", -3);
  m.Node("Relu", {"cat"}, {"r"});
  m.Node("Identity", {"r"}, {"i"});
  m.Weight("w1", {4, 7, 1, 1}, &rng);
  m.Node("Conv", {"i", "w1"}, {"y1"});
  m.Weight("wd", {7, 1, 3, 3}, &rng);
  onnx::NodeProto& dw = m.Node("Conv", {"i", "wd"}, {"y2"});
  SetIntAttribute(dw, "group", 7);
  SetIntsAttribute(dw, "pads", {1, 1, 1, 1});
  SetIntAttribute(m.Node("Concat", {"x", "a"}, {"cat2"}), "axis", 1);
  m.Weight("w3", {2, 5, 2, 2}, &rng);
  m.Node("Conv", {"cat2", "w3"}, {"y3"});
  m.Output("y1");
  m.Output("y2");
  m.Output("y3");
  onnx::ModelProto rewritten = RewriteAllAndCheck(m.model(), "chain", 2);
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(rewritten));
  EXPECT_EQ(CountOps(graph, "Relu"), 3);
  EXPECT_EQ(CountOps(graph, "Identity"), 3);
}

// DARTS' FactorizedReduce after a cell's Concat: Concat -> Relu -> {1x1
// Conv, Pad -> 1x1/2 AveragePool -> Conv, Slice -> Pad -> AveragePool -> Conv}.
TEST(RewriteExecutionTest, ConcatThroughFactorizedReduce) {
  std::mt19937 rng(4);
  OnnxTestModel m;
  m.Input("x", {1, 3, 8, 8});
  m.Weight("wa", {4, 3, 3, 3}, &rng);
  SetIntsAttribute(m.Node("Conv", {"x", "wa"}, {"a"}), "pads", {1, 1, 1, 1});
  m.Weight("wb", {5, 3, 1, 1}, &rng);
  m.Node("Conv", {"x", "wb"}, {"b"});
  SetIntAttribute(m.Node("Concat", {"a", "b", "x"}, {"cat"}), "axis", 1);
  m.Node("Relu", {"cat"}, {"r"});
  m.Weight("w0", {6, 12, 1, 1}, &rng);
  m.Weight("b0", {6}, &rng);
  m.Node("Conv", {"r", "w0", "b0"}, {"y0"});
  m.IntWeight("pads", {0, 0, 0, 0, 0, 0, 1, 1});
  m.Node("Pad", {"r", "pads"}, {"p1"});
  onnx::NodeProto& pool1 = m.Node("AveragePool", {"p1"}, {"q1"});
  SetIntsAttribute(pool1, "kernel_shape", {1, 1});
  SetIntsAttribute(pool1, "strides", {2, 2});
  m.Weight("w1", {3, 12, 1, 1}, &rng);
  m.Node("Conv", {"q1", "w1"}, {"y1"});
  m.IntWeight("starts", {1, 1});
  m.IntWeight("ends", {1000, 1000});
  m.IntWeight("axes", {2, 3});
  m.Node("Slice", {"r", "starts", "ends", "axes"}, {"s2"});
  m.Node("Pad", {"s2", "pads"}, {"p2"});
  onnx::NodeProto& pool2 = m.Node("AveragePool", {"p2"}, {"q2"});
  SetIntsAttribute(pool2, "kernel_shape", {1, 1});
  SetIntsAttribute(pool2, "strides", {2, 2});
  m.Weight("w2", {3, 12, 1, 1}, &rng);
  m.Node("Conv", {"q2", "w2"}, {"y2"});
  m.Output("y0");
  m.Output("y1");
  m.Output("y2");
  onnx::ModelProto rewritten = RewriteAllAndCheck(m.model(), "factorized reduce", 1);
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(rewritten));
  EXPECT_EQ(CountOps(graph, "Concat"), 0);
  EXPECT_EQ(CountOps(graph, "Pad"), 2 * 3);
  EXPECT_EQ(CountOps(graph, "Slice"), 3);
  EXPECT_EQ(CountOps(graph, "Add"), 3 * 2);
}

// A Slice over the channel axis keeps the dims when it takes all channels,
// so the pattern accepts it, but only its values tell whether it reverses
// them: the rewrite refuses.
TEST(RewriteExecutionTest, RefusesASliceOfTheChannelAxis) {
  std::mt19937 rng(5);
  OnnxTestModel m;
  m.Input("x", {1, 2, 4, 4});
  m.Input("z", {1, 3, 4, 4});
  SetIntAttribute(m.Node("Concat", {"x", "z"}, {"cat"}), "axis", 1);
  m.IntWeight("starts", {-1});
  m.IntWeight("ends", {-1000});
  m.IntWeight("axes", {1});
  m.IntWeight("steps", {-1});
  m.Node("Slice", {"cat", "starts", "ends", "axes", "steps"}, {"rev"});
  m.Weight("w", {2, 5, 1, 1}, &rng);
  m.Node("Conv", {"rev", "w"}, {"y"});
  m.Output("y");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(m.model()));
  std::vector<ConcatConvSite> sites = FindConcatConvSites(graph);
  ASSERT_EQ(sites.size(), 1u);
  EXPECT_THAT(ApplyConcatConvRewrite(m.model(), graph, sites[0]),
              ::ordo::testing::StatusIs(absl::StatusCode::kUnimplemented,
                                        ::testing::HasSubstr("channel axis")));
  // And RewriteForMemory skips it instead of failing.
  ORDO_ASSERT_OK_AND_ASSIGN(RewriteResult result, RewriteForMemory(m.model(), RewriteOptions()));
  EXPECT_TRUE(result.rewrites.empty());
  EXPECT_EQ(result.sites_skipped, 1);
}

// A random small network: convs, pools, activations and Adds on one spatial
// size, then 1-2 Concats of random tensors, each followed by 0-2
// element-wise ops and 1-2 random group-1 or depthwise Convs (sometimes a
// MaxPool too, which makes the site ineligible).
OnnxTestModel RandomConcatModel(std::mt19937& rng, bool with_data) {
  auto uniform = [&rng](int lo, int hi) { return std::uniform_int_distribution<int>(lo, hi)(rng); };
  // Weights draw from their own stream, so that a model with data and one
  // without have the same structure.
  std::mt19937 data_rng(rng());
  std::mt19937* data = with_data ? &data_rng : nullptr;
  OnnxTestModel m;
  const int64_t h = uniform(4, 8), w = uniform(4, 8);
  struct Value {
    std::string name;
    int64_t channels;
  };
  std::vector<Value> values = {{"x", uniform(1, 4)}};
  std::map<std::string, int> reads;
  m.Input("x", {1, values[0].channels, h, w});
  int id = 0;
  auto fresh = [&id](const std::string& base) { return absl::StrCat(base, id++); };
  auto pick = [&]() { return values[uniform(0, static_cast<int>(values.size()) - 1)]; };

  const int body = uniform(2, 5);
  for (int i = 0; i < body; ++i) {
    const Value in = pick();
    const int kind = uniform(0, 4);
    const std::string out = fresh("t");
    if (kind <= 1) {
      const int64_t c = uniform(1, 5);
      const int64_t k = uniform(0, 1) ? 3 : 1;
      const std::string wn = fresh("w");
      m.Weight(wn, {c, in.channels, k, k}, data);
      std::vector<std::string> inputs = {in.name, wn};
      if (uniform(0, 1)) {
        inputs.push_back(fresh("b"));
        m.Weight(inputs.back(), {c}, data);
      }
      onnx::NodeProto& conv = m.Node("Conv", inputs, {out});
      SetIntsAttribute(conv, "pads", {k / 2, k / 2, k / 2, k / 2});
      values.push_back({out, c});
    } else if (kind == 2) {
      m.Node("Relu", {in.name}, {out});
      values.push_back({out, in.channels});
    } else if (kind == 3) {
      onnx::NodeProto& pool = m.Node(uniform(0, 1) ? "MaxPool" : "AveragePool", {in.name}, {out});
      SetIntsAttribute(pool, "kernel_shape", {3, 3});
      SetIntsAttribute(pool, "pads", {1, 1, 1, 1});
      if (pool.op_type() == "AveragePool")
        SetIntAttribute(pool, "count_include_pad", uniform(0, 1));
      values.push_back({out, in.channels});
    } else {
      std::vector<Value> same;
      for (const Value& v : values) {
        if (v.channels == in.channels) same.push_back(v);
      }
      const Value other = same[uniform(0, static_cast<int>(same.size()) - 1)];
      m.Node("Add", {in.name, other.name}, {out});
      ++reads[other.name];
      values.push_back({out, in.channels});
    }
    ++reads[in.name];
  }

  std::vector<std::string> outputs;
  const int concats = uniform(1, 2);
  for (int c = 0; c < concats; ++c) {
    std::vector<std::string> parts;
    int64_t channels = 0;
    const int n = uniform(2, 4);
    for (int i = 0; i < n; ++i) {
      const Value v = pick();
      parts.push_back(v.name);
      channels += v.channels;
      ++reads[v.name];
    }
    std::string end = fresh("cat");
    SetIntAttribute(m.Node("Concat", parts, {end}), "axis", uniform(0, 1) ? 1 : -3);
    // A random tree of per-channel ops below the Concat.
    struct SiteTensor {
      std::string name;
      int64_t h, w;
      int readers = 0;
    };
    std::vector<SiteTensor> site = {{end, h, w}};
    const int per_channel = uniform(0, 3);
    for (int i = 0; i < per_channel; ++i) {
      SiteTensor& src = site[uniform(0, static_cast<int>(site.size()) - 1)];
      SiteTensor next{fresh("pc"), src.h, src.w};
      const int kind = uniform(0, 5);
      if (kind <= 1) {
        m.Node(kind == 0 ? "Relu" : "Identity", {src.name}, {next.name});
      } else if (kind == 2) {
        onnx::NodeProto& pool = m.Node("MaxPool", {src.name}, {next.name});
        SetIntsAttribute(pool, "kernel_shape", {3, 3});
        SetIntsAttribute(pool, "pads", {1, 1, 1, 1});
      } else if (kind == 3) {
        const std::string pads = fresh("pads");
        m.IntWeight(pads, {0, 0, 1, 0, 0, 0, 0, 1});
        m.Node("Pad", {src.name, pads}, {next.name});
        next.h += 1;
        next.w += 1;
      } else if (kind == 4 && src.h > 2 && src.w > 2) {
        const std::string starts = fresh("starts"), ends = fresh("ends"), axes = fresh("axes");
        m.IntWeight(starts, {1, 1});
        m.IntWeight(ends, {1000, 1000});
        m.IntWeight(axes, {2, 3});
        m.Node("Slice", {src.name, starts, ends, axes}, {next.name});
        next.h -= 1;
        next.w -= 1;
      } else {
        // DARTS' FactorizedReduce: a 1x1 average pool with stride 2.
        onnx::NodeProto& pool = m.Node("AveragePool", {src.name}, {next.name});
        SetIntsAttribute(pool, "kernel_shape", {1, 1});
        SetIntsAttribute(pool, "strides", {2, 2});
        next.h = (src.h - 1) / 2 + 1;
        next.w = (src.w - 1) / 2 + 1;
      }
      ++src.readers;
      site.push_back(next);
    }
    auto add_conv = [&](SiteTensor& in) {
      const std::string out = fresh("y");
      const bool depthwise = uniform(0, 2) == 0;
      int64_t k = uniform(1, 3);
      const int64_t stride = uniform(1, 2);
      int64_t dilation = k > 1 ? uniform(1, 2) : 1;
      const int64_t pad = uniform(0, 1);
      if ((k - 1) * dilation + 1 > std::min(in.h, in.w) + 2 * pad) k = dilation = 1;
      const int64_t out_channels = depthwise ? channels * uniform(1, 2) : uniform(1, 6);
      const std::string wn = fresh("w");
      m.Weight(wn, {out_channels, depthwise ? 1 : channels, k, k}, data);
      std::vector<std::string> inputs = {in.name, wn};
      if (uniform(0, 1)) {
        inputs.push_back(fresh("b"));
        m.Weight(inputs.back(), {out_channels}, data);
      }
      onnx::NodeProto& conv = m.Node("Conv", inputs, {out});
      if (depthwise) SetIntAttribute(conv, "group", channels);
      SetIntsAttribute(conv, "strides", {stride, stride});
      SetIntsAttribute(conv, "pads", {pad, pad, pad, pad});
      SetIntsAttribute(conv, "dilations", {dilation, dilation});
      ++in.readers;
      outputs.push_back(out);
    };
    const int readers = uniform(1, 2);
    for (int r = 0; r < readers; ++r) add_conv(site[uniform(0, static_cast<int>(site.size()) - 1)]);
    for (SiteTensor& t : site) {
      if (t.readers == 0) add_conv(t);
    }
    if (uniform(0, 4) == 0) {
      // A per-channel reader whose output leaves the graph: the site no
      // longer qualifies.
      SiteTensor& in = site[uniform(0, static_cast<int>(site.size()) - 1)];
      const std::string out = fresh("pool");
      SetIntsAttribute(m.Node("MaxPool", {in.name}, {out}), "kernel_shape", {1, 1});
      outputs.push_back(out);
    }
    if (outputs.empty()) outputs.push_back(end);
  }
  // Values nothing reads are outputs too, so that no op is dead.
  for (const Value& v : values) {
    if (v.name != "x" && reads[v.name] == 0) outputs.push_back(v.name);
  }
  for (const std::string& out : outputs) m.Output(out);
  return m;
}

TEST(RewriteExecutionTest, RandomModelsWithRandomSubsetsOfSites) {
  int models_rewritten = 0;
  std::set<ConvPartition> partitions_seen;
  for (uint32_t seed = 0; seed < 150; ++seed) {
    std::mt19937 rng(seed);
    OnnxTestModel m = RandomConcatModel(rng, /*with_data=*/true);
    const std::string what = absl::StrCat("seed ", seed);
    ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(m.model()));
    std::vector<ConcatConvSite> sites = FindConcatConvSites(graph);
    onnx::ModelProto rewritten = m.model();
    int applied = 0;
    int kernel_wise = 0;
    for (const ConcatConvSite& site : sites) {
      if (std::uniform_int_distribution<int>(0, 3)(rng) == 0) continue;
      ORDO_ASSERT_OK_AND_ASSIGN(rewritten, ApplyConcatConvRewrite(rewritten, graph, site));
      for (ConvPartition p : site.partitions) {
        partitions_seen.insert(p);
        kernel_wise += p == ConvPartition::kKernelWise;
      }
      ++applied;
    }
    if (applied == 0) continue;
    ++models_rewritten;
    ASSERT_THAT(CheckOnnx(rewritten), ::ordo::testing::IsOk()) << what;
    ORDO_ASSERT_OK_AND_ASSIGN(Graph after, Import(rewritten));
    // Each site loses its Concat; each kernel-wise Conv adds one of its parts.
    EXPECT_EQ(CountOps(after, "Concat"), CountOps(graph, "Concat") - applied + kernel_wise) << what;
    ExpectSameOutputs(m.model(), rewritten, seed, what, kTolerance);
    if (HasFatalFailure()) return;
  }
  // The generator must actually exercise both rewrites.
  EXPECT_GE(models_rewritten, 60);
  EXPECT_THAT(partitions_seen,
              ElementsAre(ConvPartition::kChannelWise, ConvPartition::kKernelWise));
}

// RewriteForMemory end to end on random models: outputs unchanged, the
// peak never rises, each step's peak chains to the next, and the final peak
// is the simulator's for the returned schedule.
TEST(RewriteExecutionTest, RewriteForMemoryOnRandomModels) {
  // Rewritten graphs are wide (a partial Conv per part), and the exact
  // search can take its whole limit on some of them without proving them;
  // a short limit keeps the test quick, and the heuristic schedule it then
  // returns is what the peak comparison uses, as in production.
  RewriteOptions options;
  options.schedule_time_limit = absl::Milliseconds(200);
  int improved = 0;
  for (uint32_t seed = 0; seed < 60; ++seed) {
    std::mt19937 rng(1000 + seed);
    OnnxTestModel m = RandomConcatModel(rng, /*with_data=*/true);
    const std::string what = absl::StrCat("seed ", 1000 + seed);
    ORDO_ASSERT_OK_AND_ASSIGN(RewriteResult result, RewriteForMemory(m.model(), options));
    ASSERT_THAT(CheckOnnx(result.model), ::ordo::testing::IsOk()) << what;
    ORDO_ASSERT_OK_AND_ASSIGN(Graph reimported, Import(result.model));
    ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel memory, BuildMemoryModel(reimported, MemoryOptions()));
    ORDO_ASSERT_OK_AND_ASSIGN(int64_t peak, SimulatePeak(memory, result.schedule.order));
    EXPECT_EQ(peak, result.schedule.peak_bytes) << what;
    EXPECT_LE(peak, result.original_peak_bytes) << what;
    int64_t before = result.original_peak_bytes;
    for (const AppliedRewrite& applied : result.rewrites) {
      EXPECT_EQ(applied.peak_before_bytes, before) << what;
      before = applied.peak_after_bytes;
    }
    EXPECT_EQ(before, peak) << what;
    if (!result.rewrites.empty()) {
      ++improved;
      EXPECT_LT(peak, result.original_peak_bytes) << what;
    }
    ExpectSameOutputs(m.model(), result.model, seed, what, kTolerance);
    if (HasFatalFailure()) return;
  }
  EXPECT_GE(improved, 5);
}

// A weightless model is rewritten exactly like the same model with data,
// minus the data.
TEST(RewriteExecutionTest, WeightlessRewriteMatchesTheRewriteWithData) {
  for (uint32_t seed = 0; seed < 30; ++seed) {
    std::mt19937 rng_data(seed), rng_none(seed);
    OnnxTestModel with = RandomConcatModel(rng_data, true);
    OnnxTestModel without = RandomConcatModel(rng_none, false);
    ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(with.model()));
    ORDO_ASSERT_OK_AND_ASSIGN(Graph graph_none, Import(without.model()));
    onnx::ModelProto a = with.model(), b = without.model();
    const std::vector<ConcatConvSite> sites = FindConcatConvSites(graph);
    ASSERT_EQ(sites.size(), FindConcatConvSites(graph_none).size());
    for (const ConcatConvSite& site : sites) {
      ORDO_ASSERT_OK_AND_ASSIGN(a, ApplyConcatConvRewrite(a, graph, site));
      ORDO_ASSERT_OK_AND_ASSIGN(b, ApplyConcatConvRewrite(b, graph_none, site));
    }
    ASSERT_EQ(a.graph().node_size(), b.graph().node_size());
    for (int i = 0; i < a.graph().node_size(); ++i) {
      EXPECT_EQ(a.graph().node(i).SerializeAsString(), b.graph().node(i).SerializeAsString());
    }
    ASSERT_EQ(a.graph().initializer_size(), b.graph().initializer_size());
    for (int i = 0; i < b.graph().initializer_size(); ++i) {
      const onnx::TensorProto& t = b.graph().initializer(i);
      EXPECT_EQ(t.name(), a.graph().initializer(i).name());
      EXPECT_THAT(t.dims(), ::testing::ElementsAreArray(a.graph().initializer(i).dims()));
      // Float weights; the int64 operands of Pad and Slice always carry data.
      if (t.data_type() != onnx::TensorProto::FLOAT) continue;
      EXPECT_EQ(t.data_location(), onnx::TensorProto::EXTERNAL) << t.name();
      EXPECT_EQ(t.float_data_size(), 0);
    }
    EXPECT_THAT(CheckOnnx(b), ::ordo::testing::IsOk());
  }
}

}  // namespace
}  // namespace ordo
