// Proof by execution of MOTES partitioning (core/rewrite/channel_split.h and
// RewriteForMemory's kPartition search, which also applies spatial tilings):
// the original and the rewritten model run on the same random inputs and
// weights through the naive reference executor and must agree.

#include <algorithm>
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "core/onnx/onnx_import.h"
#include "core/rewrite/channel_split.h"
#include "core/rewrite/early_subsample.h"
#include "core/rewrite/onnx_test_model.h"
#include "core/rewrite/rewrite.h"
#include "core/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/rewrite/execution_checks.h"
#include "tests/rewrite/reference_executor.h"

namespace ordo {
namespace {

// Scale at least 1.0, so near-zero outputs compare absolutely.
constexpr OutputTolerance kTolerance{.relative = 1e-4, .min_scale = 1.0};

// Expand 1x1 -> BN -> Relu -> depthwise 3x3 (multiplier `multiplier`,
// stride `stride`) -> Relu -> [MaxPool] -> project 1x1 (+ bias).
OnnxTestModel Block(std::mt19937& rng, int64_t channels, int64_t multiplier, int64_t stride,
                    bool pool) {
  OnnxTestModel m;
  m.Input("x", {1, 3, 12, 12});
  m.Weight("we", {channels, 3, 1, 1}, &rng);
  m.Weight("be", {channels}, &rng);
  m.Node("Conv", {"x", "we", "be"}, {"e"});
  m.Weight("bn_s", {channels}, &rng);
  m.Weight("bn_b", {channels}, &rng);
  m.Weight("bn_m", {channels}, &rng);
  m.Weight("bn_v", {channels}, nullptr);
  m.Node("BatchNormalization", {"e", "bn_s", "bn_b", "bn_m", "bn_v"}, {"n"});
  m.Node("Relu", {"n"}, {"r"});
  m.Weight("wd", {channels * multiplier, 1, 3, 3}, &rng);
  m.Weight("bd", {channels * multiplier}, &rng);
  onnx::NodeProto& dw = m.Node("Conv", {"r", "wd", "bd"}, {"d"});
  SetIntAttribute(dw, "group", channels);
  SetIntsAttribute(dw, "pads", {1, 1, 1, 1});
  SetIntsAttribute(dw, "strides", {stride, stride});
  m.Node("Relu", {"d"}, {"dr"});
  std::string last = "dr";
  if (pool) {
    onnx::NodeProto& p = m.Node("MaxPool", {"dr"}, {"mp"});
    SetIntsAttribute(p, "kernel_shape", {2, 2});
    SetIntsAttribute(p, "strides", {2, 2});
    last = "mp";
  }
  m.Weight("wp", {5, channels * multiplier, 1, 1}, &rng);
  m.Weight("bp", {5}, &rng);
  m.Node("Conv", {last, "wp", "bp"}, {"y"});
  m.Output("y");
  return m;
}

// BatchNormalization's variance must be positive: the block's "bn_v" has no
// data and is fed as ones.
onnx::ModelProto WithVariance(onnx::ModelProto model, int64_t channels) {
  for (onnx::TensorProto& t : *model.mutable_graph()->mutable_initializer()) {
    if (t.name() != "bn_v") continue;
    t.clear_data_location();
    t.clear_external_data();
    t.clear_float_data();
    for (int64_t i = 0; i < channels; ++i) t.add_float_data(1.0f + 0.1f * i);
  }
  return model;
}

onnx::ModelProto Split(const onnx::ModelProto& model, const std::string& conv, int32_t parts) {
  std::string bytes;
  EXPECT_TRUE(model.SerializeToString(&bytes));
  absl::StatusOr<Graph> graph = ImportOnnx(bytes);
  EXPECT_TRUE(graph.ok()) << graph.status();
  absl::StatusOr<onnx::ModelProto> out = ApplyChannelSplit(model, *graph, {conv, parts});
  EXPECT_TRUE(out.ok()) << out.status();
  return out.ok() ? *out : model;
}

TEST(ChannelSplitExecutionTest, InvertedResidualComputesTheSameOutputs) {
  for (int32_t parts : {2, 3, 4, 8}) {
    std::mt19937 rng(parts);
    const onnx::ModelProto model = WithVariance(Block(rng, 8, 1, 1, false).model(), 8);
    ExpectSameOutputs(model, Split(model, "e_op", parts), parts, absl::StrCat(parts, " parts"),
                      kTolerance);
  }
}

TEST(ChannelSplitExecutionTest, MultiplierStrideAndPool) {
  std::mt19937 rng(11);
  const onnx::ModelProto model = WithVariance(Block(rng, 6, 2, 2, true).model(), 6);
  ExpectSameOutputs(model, Split(model, "e_op", 4), 11, "multiplier 2, stride 2, pool", kTolerance);
}

TEST(ChannelSplitExecutionTest, EndingInAConcat) {
  std::mt19937 rng(12);
  OnnxTestModel m;
  m.Input("x", {1, 3, 6, 6});
  m.Weight("w", {7, 3, 3, 3}, &rng);
  SetIntsAttribute(m.Node("Conv", {"x", "w"}, {"c"}), "pads", {1, 1, 1, 1});
  m.Node("Relu", {"c"}, {"r"});
  m.Node("Add", {"r", "c2"}, {"y"});  // placeholder replaced below
  onnx::ModelProto model = m.model();
  // y = r + r: the chain ends at r, read twice.
  model.mutable_graph()->mutable_node(2)->set_input(1, "r");
  onnx::ValueInfoProto* out = model.mutable_graph()->add_output();
  out->set_name("y");
  out->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  ExpectSameOutputs(model, Split(model, "c_op", 3), 12, "concat end", kTolerance);
}

// Property: random per-channel chains, random slice counts.
TEST(ChannelSplitExecutionTest, RandomChainsComputeTheSameOutputs) {
  for (uint32_t seed = 0; seed < 24; ++seed) {
    std::mt19937 rng(100 + seed);
    const int64_t channels = 2 + rng() % 9;
    OnnxTestModel m;
    m.Input("x", {1, 3, 8, 8});
    m.Weight("w0", {channels, 3, 3, 3}, &rng);
    SetIntsAttribute(m.Node("Conv", {"x", "w0"}, {"t0"}), "pads", {1, 1, 1, 1});
    std::string last = "t0";
    int64_t c = channels;
    int64_t size = 8;
    const int ops = rng() % 4;
    for (int i = 0; i < ops; ++i) {
      const std::string out = absl::StrCat("t", i + 1);
      switch (rng() % 4) {
        case 0:
          m.Node("Relu", {last}, {out});
          break;
        case 1: {
          const std::string w = absl::StrCat("wd", i);
          m.Weight(w, {c, 1, 3, 3}, &rng);
          onnx::NodeProto& dw = m.Node("Conv", {last, w}, {out});
          SetIntAttribute(dw, "group", c);
          SetIntsAttribute(dw, "pads", {1, 1, 1, 1});
          break;
        }
        case 2: {
          if (size < 4) {
            m.Node("Relu", {last}, {out});
            break;
          }
          onnx::NodeProto& p = m.Node("AveragePool", {last}, {out});
          SetIntsAttribute(p, "kernel_shape", {2, 2});
          SetIntsAttribute(p, "strides", {2, 2});
          size /= 2;
          break;
        }
        default: {
          const std::string w = absl::StrCat("wm", i);
          m.Weight(w, {2 * c, 1, 1, 1}, &rng);
          SetIntAttribute(m.Node("Conv", {last, w}, {out}), "group", c);
          c *= 2;
        }
      }
      last = out;
    }
    const bool consumer = rng() % 2 == 0;
    if (consumer) {
      m.Weight("wc", {4, c, 1, 1}, &rng);
      m.Weight("bc", {4}, &rng);
      m.Node("Conv", {last, "wc", "bc"}, {"y"});
      m.Output("y");
    } else {
      m.Node("Sigmoid", {last}, {"s"});
      m.Node("Add", {last, "s"}, {"y"});
      m.Output("y");
    }
    if (ops == 0 && !consumer) continue;  // nothing to carry a split
    const int32_t parts = 2 + static_cast<int32_t>(rng() % (channels - 1));
    ExpectSameOutputs(m.model(), Split(m.model(), "t0_op", parts), seed,
                      absl::StrCat("seed ", seed, ": ", ops, " ops, ", parts, " parts"),
                      kTolerance);
  }
}

// Expand 3x3 -> Relu -> Resize (x2, per channel) -> depthwise 3x3 ->
// [project 1x1 | Sigmoid + Add]: each slice is resampled on its own, so the
// split carries through the Resize. Every supported mode and coordinate
// transformation; uneven slices (7 channels into 2 and 3).
TEST(ChannelSplitExecutionTest, ThroughAResize) {
  struct Mode {
    const char* mode;
    const char* transform;
  };
  uint32_t seed = 40;
  for (const Mode& mode :
       {Mode{"nearest", "asymmetric"}, Mode{"nearest", "half_pixel"}, Mode{"linear", "half_pixel"},
        Mode{"linear", "asymmetric"}, Mode{"linear", "align_corners"}}) {
    for (bool consumer : {true, false}) {
      for (int32_t parts : {2, 3}) {
        const std::string what = absl::StrCat(
            mode.mode, " ", mode.transform, consumer ? "" : ", concat end", ", ", parts, " parts");
        SCOPED_TRACE(what);
        std::mt19937 rng(++seed);
        OnnxTestModel m;
        m.Input("x", {1, 3, 5, 6});
        m.Weight("we", {7, 3, 3, 3}, &rng);
        SetIntsAttribute(m.Node("Conv", {"x", "we"}, {"e"}), "pads", {1, 1, 1, 1});
        m.Node("Relu", {"e"}, {"r"});
        m.FloatWeight("scales", {1, 1, 2, 2});
        onnx::NodeProto& resize = m.Node("Resize", {"r", "", "scales"}, {"u"});
        SetStringAttribute(resize, "mode", mode.mode);
        SetStringAttribute(resize, "coordinate_transformation_mode", mode.transform);
        m.Weight("wd", {7, 1, 3, 3}, &rng);
        onnx::NodeProto& dw = m.Node("Conv", {"u", "wd"}, {"d"});
        SetIntAttribute(dw, "group", 7);
        SetIntsAttribute(dw, "pads", {1, 1, 1, 1});
        if (consumer) {
          m.Weight("wp", {4, 7, 1, 1}, &rng);
          m.Node("Conv", {"d", "wp"}, {"y"});
        } else {
          m.Node("Sigmoid", {"d"}, {"s"});
          m.Node("Add", {"d", "s"}, {"y"});
        }
        m.Output("y");
        ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(m.Bytes()));
        ORDO_ASSERT_OK_AND_ASSIGN(ChannelSplitPlan plan, PlanChannelSplit(graph, {"e_op", parts}));
        ASSERT_THAT(plan.chain, ::testing::Contains(*graph.FindOp("u_op")));
        const onnx::ModelProto split = Split(m.model(), "e_op", parts);
        // Not vacuous: the Resize itself runs once per slice.
        int resizes = 0;
        for (const onnx::NodeProto& node : split.graph().node())
          resizes += node.op_type() == "Resize";
        EXPECT_EQ(resizes, parts);
        ORDO_EXPECT_OK(CheckOnnx(split));
        ExpectSameOutputs(m.model(), split, seed, what, kTolerance);
      }
    }
  }
}

// The whole search (channel splits and spatial tilings) keeps the function.
TEST(PartitionSearchExecutionTest, RewrittenModelComputesTheSameOutputs) {
  for (uint32_t seed : {21u, 22u}) {
    std::mt19937 rng(seed);
    const onnx::ModelProto model = WithVariance(Block(rng, 12, 1, 1, false).model(), 12);
    RewriteOptions options;
    options.mode = RewriteMode::kPartition;
    options.latency.op_overhead_seconds = 0;
    options.schedule_time_limit = absl::Milliseconds(300);
    options.time_limit = absl::Seconds(8);
    ORDO_ASSERT_OK_AND_ASSIGN(RewriteResult result, RewriteForMemory(model, options));
    EXPECT_TRUE(result.weights_carried);
    EXPECT_LT(result.schedule.peak_bytes, result.original_peak_bytes);
    ExpectSameOutputs(model, result.model, seed, absl::StrCat("search, seed ", seed), kTolerance);
  }
}

// FactorizedReduce as NAS exports it: Relu; Pad (no-op pads) -> AvgPool(1,
// stride 2) -> Conv 1x1; x[:, :, 1:, 1:] -> Pad(end 1) -> AvgPool(1, stride
// 2) -> Conv 1x1; and a Slice straight into a stride-2 1x1 Conv; Concat.
OnnxTestModel FactorizedReduce(std::mt19937& rng, int64_t h, int64_t w) {
  OnnxTestModel m;
  m.Input("x", {1, 4, h, w});
  m.Node("Relu", {"x"}, {"r"});
  m.IntWeight("zero_pads", {0, 0, 0, 0, 0, 0, 0, 0});
  m.Node("Pad", {"r", "zero_pads"}, {"p1"});
  onnx::NodeProto& a1 = m.Node("AveragePool", {"p1"}, {"a1"});
  SetIntsAttribute(a1, "kernel_shape", {1, 1});
  SetIntsAttribute(a1, "strides", {2, 2});
  m.Weight("w1", {3, 4, 1, 1}, &rng);
  m.Node("Conv", {"a1", "w1"}, {"c1"});
  m.IntWeight("one_one", {1, 1});
  m.IntWeight("big", {1000, 1000});
  m.IntWeight("hw", {2, 3});
  m.Node("Slice", {"r", "one_one", "big", "hw"}, {"s2"});
  m.IntWeight("end_pads", {0, 0, 0, 0, 0, 0, 1, 1});
  m.Node("Pad", {"s2", "end_pads"}, {"p2"});
  onnx::NodeProto& a2 = m.Node("MaxPool", {"p2"}, {"a2"});
  SetIntsAttribute(a2, "kernel_shape", {1, 1});
  SetIntsAttribute(a2, "strides", {2, 2});
  m.Weight("w2", {3, 4, 1, 1}, &rng);
  m.Node("Conv", {"a2", "w2"}, {"c2"});
  m.IntWeight("w_start", {1});
  m.IntWeight("w_end", {1000});
  m.IntWeight("w_axis", {3});
  m.Node("Slice", {"r", "w_start", "w_end", "w_axis"}, {"s3"});
  m.Weight("w3", {2, 4, 1, 1}, &rng);
  m.Weight("b3", {2}, &rng);
  onnx::NodeProto& c3 = m.Node("Conv", {"s3", "w3", "b3"}, {"c3"});
  SetIntsAttribute(c3, "strides", {2, 2});
  onnx::NodeProto& cat = m.Node("Concat", {"c1", "c2", "c3"}, {"y"});
  SetIntAttribute(cat, "axis", 1);
  m.Output("y");
  return m;
}

std::vector<SubsampleSite> Sites(const onnx::ModelProto& model, Graph* graph_out) {
  std::string bytes;
  EXPECT_TRUE(model.SerializeToString(&bytes));
  absl::StatusOr<Graph> graph = ImportOnnx(bytes);
  EXPECT_TRUE(graph.ok()) << graph.status();
  if (!graph.ok()) return {};
  *graph_out = *std::move(graph);
  return FindSubsampleSites(model, *graph_out);
}

TEST(EarlySubsampleExecutionTest, FactorizedReduceComputesTheSameOutputs) {
  std::mt19937 rng(21);
  const onnx::ModelProto model = FactorizedReduce(rng, 10, 12).model();
  Graph graph;
  const std::vector<SubsampleSite> sites = Sites(model, &graph);
  ASSERT_EQ(sites.size(), 3u);
  absl::StatusOr<onnx::ModelProto> rewritten = ApplyEarlySubsample(model, graph, sites);
  ASSERT_TRUE(rewritten.ok()) << rewritten.status();
  // No Pad, no pool left; the full-size shifted copies are gone.
  for (const onnx::NodeProto& n : rewritten->graph().node()) {
    EXPECT_NE(n.op_type(), "Pad");
    EXPECT_NE(n.op_type(), "AveragePool");
    EXPECT_NE(n.op_type(), "MaxPool");
  }
  std::string bytes;
  ASSERT_TRUE(rewritten->SerializeToString(&bytes));
  ASSERT_TRUE(ImportOnnx(bytes).ok());
  ExpectSameOutputs(model, *rewritten, 21, "factorized reduce", kTolerance);
}

TEST(EarlySubsampleExecutionTest, ChainsReadingPaddedPixelsAreLeftAlone) {
  std::mt19937 rng(22);
  // H = 9: the shifted branch's last output row would read the Pad's zero
  // row, so only the other two branches are sites.
  const onnx::ModelProto model = FactorizedReduce(rng, 9, 12).model();
  Graph graph;
  const std::vector<SubsampleSite> sites = Sites(model, &graph);
  ASSERT_EQ(sites.size(), 2u);
  absl::StatusOr<onnx::ModelProto> rewritten = ApplyEarlySubsample(model, graph, sites);
  ASSERT_TRUE(rewritten.ok()) << rewritten.status();
  ExpectSameOutputs(model, *rewritten, 22, "one chain reads a pad", kTolerance);
}

// The search proposes early subsampling (an identity rewrite) and keeps it.
TEST(EarlySubsampleExecutionTest, SearchKeepsItAndTheFunction) {
  std::mt19937 rng(23);
  const onnx::ModelProto model = FactorizedReduce(rng, 10, 12).model();
  RewriteOptions options;
  options.mode = RewriteMode::kPartition;
  options.schedule_time_limit = absl::Milliseconds(300);
  options.time_limit = absl::Seconds(8);
  ORDO_ASSERT_OK_AND_ASSIGN(RewriteResult result, RewriteForMemory(model, options));
  EXPECT_LT(result.schedule.peak_bytes, result.original_peak_bytes);
  ASSERT_FALSE(result.rewrites.empty());
  EXPECT_THAT(result.rewrites.front().kind, ::testing::HasSubstr("subsample"));
  EXPECT_LE(result.rewritten_macs, result.original_macs);
  ExpectSameOutputs(model, result.model, 23, "search with early subsampling", kTolerance);
}

TEST(EarlySubsampleExecutionTest, ASiteListedTwiceIsRewrittenOnce) {
  std::mt19937 rng(24);
  const onnx::ModelProto model = FactorizedReduce(rng, 10, 12).model();
  Graph graph;
  std::vector<SubsampleSite> sites = Sites(model, &graph);
  ASSERT_EQ(sites.size(), 3u);
  ORDO_ASSERT_OK_AND_ASSIGN(onnx::ModelProto once, ApplyEarlySubsample(model, graph, sites));
  sites.push_back(sites.front());
  ORDO_ASSERT_OK_AND_ASSIGN(onnx::ModelProto twice, ApplyEarlySubsample(model, graph, sites));
  EXPECT_EQ(twice.graph().node_size(), once.graph().node_size());
  EXPECT_EQ(twice.graph().initializer_size(), once.graph().initializer_size());
  ExpectSameOutputs(model, twice, 24, "a site listed twice", kTolerance);
}

TEST(EarlySubsampleExecutionTest, NewTensorsGetTheSourceElementType) {
  std::mt19937 rng(25);
  const onnx::ModelProto model = FactorizedReduce(rng, 10, 12).model();
  Graph graph;
  const std::vector<SubsampleSite> sites = Sites(model, &graph);
  ORDO_ASSERT_OK_AND_ASSIGN(onnx::ModelProto rewritten, ApplyEarlySubsample(model, graph, sites));
  // "r" has no value_info: its type comes from the graph (float32 here).
  int32_t infos = 0;
  for (const onnx::ValueInfoProto& v : rewritten.graph().value_info()) {
    if (v.name().rfind("r_subsampled", 0) != 0) continue;
    ++infos;
    EXPECT_EQ(v.type().tensor_type().elem_type(), onnx::TensorProto::FLOAT) << v.name();
  }
  EXPECT_GT(infos, 0);
}

// Constants a caller may override (initializers also listed as inputs) and
// ops of another domain are not what they seem: no site.
TEST(EarlySubsampleExecutionTest, OverridableConstantsAndForeignDomainsAreNoSites) {
  std::mt19937 rng(26);
  onnx::ModelProto overridable = FactorizedReduce(rng, 10, 12).model();
  onnx::ValueInfoProto* input = overridable.mutable_graph()->add_input();
  input->set_name("w_start");
  input->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::INT64);
  input->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(1);
  Graph graph;
  std::vector<SubsampleSite> sites = Sites(overridable, &graph);
  EXPECT_EQ(sites.size(), 2u);  // the Slice of "w_start" is no longer one
  const std::string& c3 = graph.op(graph.num_ops() - 2).name;  // the strided Conv
  for (const SubsampleSite& site : sites) EXPECT_NE(site.window, c3);

  onnx::ModelProto foreign = FactorizedReduce(rng, 10, 12).model();
  for (onnx::NodeProto& node : *foreign.mutable_graph()->mutable_node()) {
    if (node.op_type() == "MaxPool") node.set_domain("com.example");
  }
  onnx::OperatorSetIdProto* opset = foreign.add_opset_import();
  opset->set_domain("com.example");
  opset->set_version(1);
  // The importer cannot infer a foreign op's shape: declare it.
  onnx::ValueInfoProto* a2 = foreign.mutable_graph()->add_value_info();
  a2->set_name("a2");
  a2->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {1, 4, 5, 6}) {
    a2->mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
  }
  sites = Sites(foreign, &graph);
  EXPECT_EQ(sites.size(), 2u);  // the MaxPool branch is left alone
}

}  // namespace
}  // namespace ordo
