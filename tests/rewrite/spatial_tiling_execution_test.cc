// Proof by execution of spatial tiling (core/rewrite/spatial_tiling.h): the
// original and the tiled model run on the reference executor with the same
// random inputs and weights and must agree within 1e-5 relative to the
// largest magnitude of each output. Tiled models must pass ONNX's checker and
// import as valid ordo Graphs. Covers every op kind a region may hold, 2x1 /
// 3x1 / 2x2 / 3x2 tilings (uneven ones included), both halo modes (cached
// halos over H: every case tiled 2x1 / 3x1, chains of windows with tiles of
// one row, random graphs with up to 8 parts), random small graphs and
// random convex regions, and a slice of MobileNet-V2 from
// ORDO_SHARED_MODELS_DIR (skipped when absent) whose peak under `best` drops.
// The MACs a tiled model adds are SpatialTilingExtraMacs' (none when cached).
// A partition search that keeps cached halos is proved the same way.

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "core/memory/memory_model.h"
#include "core/onnx/onnx_import.h"
#include "core/rewrite/cost_model.h"
#include "core/rewrite/onnx_test_model.h"
#include "core/rewrite/partition_search.h"
#include "core/rewrite/rewrite.h"
#include "core/rewrite/spatial_tiling.h"
#include "core/schedule/scheduler.h"
#include "core/schedule/scheduler_registry.h"
#include "core/testing/status_matchers.h"
#include "core/testing/test_paths.h"
#include "core/util/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/rewrite/execution_checks.h"
#include "tests/rewrite/reference_executor.h"

namespace ordo {
namespace {

// Tiled models must match closely; an all-zero output would prove nothing.
constexpr OutputTolerance kTolerance{.relative = 1e-5, .min_scale = 1e-30, .expect_nonzero = true};
// For random graphs, whose outputs may legitimately be all zeros.
constexpr OutputTolerance kToleranceMaybeZero{.relative = 1e-5, .min_scale = 1e-30};

// Tiles `ops` of `model` and checks the result end to end; the MACs the
// tiled model adds are SpatialTilingExtraMacs' (none with cached halos).
void TileAndCompareWith(const onnx::ModelProto& model, const std::vector<std::string>& ops,
                        int32_t parts_h, int32_t parts_w, HaloMode halo, uint32_t seed) {
  const std::string what = absl::StrCat(parts_h, "x", parts_w, " ", HaloModeName(halo));
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(model));
  const SpatialTiling tiling{ops, parts_h, parts_w, halo};
  ORDO_ASSERT_OK(CheckSpatialTiling(graph, tiling));
  absl::StatusOr<onnx::ModelProto> tiled = ApplySpatialTiling(model, graph, tiling);
  ASSERT_TRUE(tiled.ok()) << what << ": " << tiled.status();
  ASSERT_THAT(CheckOnnx(*tiled), ::ordo::testing::IsOk()) << what;
  ORDO_ASSERT_OK_AND_ASSIGN(Graph tiled_graph, Import(*tiled));
  ORDO_ASSERT_OK_AND_ASSIGN(int64_t extra, SpatialTilingExtraMacs(graph, tiling));
  EXPECT_EQ(CostOf(tiled_graph).macs - CostOf(graph).macs, extra) << what;
  if (halo == HaloMode::kCache) {
    EXPECT_LE(extra, 0) << what;
  }
  std::mt19937 rng(seed);
  ExpectSameOutputs(model, *tiled, RandomInputs(model, rng), what, kTolerance);
}

// Both halo modes where both apply (caching tiles over H only).
void TileAndCompare(const onnx::ModelProto& model, const std::vector<std::string>& ops,
                    int32_t parts_h, int32_t parts_w, uint32_t seed = 7) {
  TileAndCompareWith(model, ops, parts_h, parts_w, HaloMode::kRecompute, seed);
  if (parts_w == 1) TileAndCompareWith(model, ops, parts_h, parts_w, HaloMode::kCache, seed);
}

struct Parts {
  int32_t h;
  int32_t w;
};
const Parts kAllParts[] = {{2, 1}, {3, 1}, {2, 2}, {3, 2}, {1, 3}};

// 3x3 pad 1 -> Relu -> 5x5 stride 2 pad 2 -> 3x3 dilation 2 pad 2 with bias
// -> Relu, on 13 x 11 (no part count divides both).
TEST(SpatialTilingExecutionTest, ConvChainStridedDilatedPadded) {
  std::mt19937 rng(1);
  OnnxTestModel m;
  m.Input("x", {1, 3, 13, 11});
  m.Weight("w1", {4, 3, 3, 3}, &rng);
  SetIntsAttribute(m.Node("Conv", {"x", "w1"}, {"a"}), "pads", {1, 1, 1, 1});
  m.Node("Relu", {"a"}, {"r"});
  m.Weight("w2", {5, 4, 5, 5}, &rng);
  onnx::NodeProto& c2 = m.Node("Conv", {"r", "w2"}, {"b"});
  SetIntsAttribute(c2, "strides", {2, 2});
  SetIntsAttribute(c2, "pads", {2, 2, 2, 2});
  m.Weight("w3", {3, 5, 3, 3}, &rng);
  m.Weight("b3", {3}, &rng);
  onnx::NodeProto& c3 = m.Node("Conv", {"b", "w3", "b3"}, {"c"});
  SetIntsAttribute(c3, "dilations", {2, 2});
  SetIntsAttribute(c3, "pads", {2, 2, 2, 2});
  m.Node("Relu", {"c"}, {"y"});
  m.Output("y");
  for (Parts p : kAllParts) {
    TileAndCompare(m.model(), {"a_op", "r_op", "b_op", "c_op", "y_op"}, p.h, p.w);
    TileAndCompare(m.model(), {"b_op", "c_op"}, p.h, p.w);
  }
}

// Asymmetric pads, a stride-2 conv with no padding whose last input row is
// never read, and auto_pad SAME_UPPER.
TEST(SpatialTilingExecutionTest, AsymmetricPadsUnreadRowsAndAutoPad) {
  std::mt19937 rng(2);
  OnnxTestModel m;
  m.Input("x", {1, 2, 12, 10});
  m.Weight("w1", {3, 2, 3, 3}, &rng);
  onnx::NodeProto& c1 = m.Node("Conv", {"x", "w1"}, {"a"});
  SetIntsAttribute(c1, "strides", {2, 2});  // 12 rows -> 5: row 11 unread
  m.Weight("w2", {3, 3, 3, 2}, &rng);
  SetIntsAttribute(m.Node("Conv", {"a", "w2"}, {"b"}), "pads", {2, 0, 0, 1});
  m.Weight("w3", {2, 3, 3, 3}, &rng);
  onnx::NodeProto& c3 = m.Node("Conv", {"b", "w3"}, {"y"});
  onnx::AttributeProto* a = c3.add_attribute();
  a->set_name("auto_pad");
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s("SAME_UPPER");
  SetIntsAttribute(c3, "strides", {2, 1});
  m.Output("y");
  for (Parts p : {Parts{2, 1}, Parts{3, 2}, Parts{2, 2}}) {
    TileAndCompare(m.model(), {"a_op", "b_op", "y_op"}, p.h, p.w);
  }
}

// Depthwise 3x3 stride 2 (channel multiplier 2) -> BN -> Clip (ReLU6) ->
// pointwise Conv.
TEST(SpatialTilingExecutionTest, DepthwiseBatchNormClip) {
  std::mt19937 rng(3);
  OnnxTestModel m;
  m.Input("x", {1, 4, 11, 9});
  m.Weight("wd", {8, 1, 3, 3}, &rng);
  onnx::NodeProto& dw = m.Node("Conv", {"x", "wd"}, {"d"});
  SetIntAttribute(dw, "group", 4);
  SetIntsAttribute(dw, "strides", {2, 2});
  SetIntsAttribute(dw, "pads", {1, 1, 1, 1});
  m.Weight("scale", {8}, &rng);
  m.Weight("bias", {8}, &rng);
  m.Weight("mean", {8}, &rng);
  m.Weight("var", {8}, &rng);
  m.Node("BatchNormalization", {"d", "scale", "bias", "mean", "var"}, {"n"});
  m.Node("Clip", {"n", "lo", "hi"}, {"c"});
  m.Weight("wp", {3, 8, 1, 1}, &rng);
  m.Node("Conv", {"c", "wp"}, {"y"});
  m.Output("y");
  // Variances positive; Clip bounds as scalar initializers.
  onnx::ModelProto model = m.model();
  onnx::GraphProto* g = model.mutable_graph();
  for (auto& t : *g->mutable_initializer()) {
    if (t.name() != "var") continue;
    for (float& v : *t.mutable_float_data()) v = std::fabs(v) + 0.5f;
  }
  for (auto [name, value] : {std::pair{"lo", 0.0f}, std::pair{"hi", 0.5f}}) {
    onnx::TensorProto* t = g->add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto::FLOAT);
    t->add_float_data(value);
  }
  for (Parts p : kAllParts) TileAndCompare(model, {"d_op", "n_op", "c_op", "y_op"}, p.h, p.w);
}

// MaxPool 3x3 s2 p1; AveragePool 3x3 s1 p1 counting pads; ceil_mode pools
// on odd sizes (max, and average with and without counted pads).
TEST(SpatialTilingExecutionTest, Pooling) {
  std::mt19937 rng(4);
  OnnxTestModel m;
  m.Input("x", {1, 2, 15, 13});
  onnx::NodeProto& p1 = m.Node("MaxPool", {"x"}, {"a"});
  SetIntsAttribute(p1, "kernel_shape", {3, 3});
  SetIntsAttribute(p1, "strides", {2, 2});
  SetIntsAttribute(p1, "pads", {1, 1, 1, 1});
  onnx::NodeProto& p2 = m.Node("AveragePool", {"a"}, {"b"});
  SetIntsAttribute(p2, "kernel_shape", {3, 3});
  SetIntsAttribute(p2, "pads", {1, 1, 1, 1});
  SetIntAttribute(p2, "count_include_pad", 1);
  onnx::NodeProto& p3 = m.Node("AveragePool", {"b"}, {"c"});
  SetIntsAttribute(p3, "kernel_shape", {2, 2});
  SetIntsAttribute(p3, "strides", {2, 2});
  SetIntAttribute(p3, "ceil_mode", 1);
  onnx::NodeProto& p4 = m.Node("AveragePool", {"b"}, {"d"});
  SetIntsAttribute(p4, "kernel_shape", {3, 3});
  SetIntsAttribute(p4, "strides", {2, 2});
  SetIntsAttribute(p4, "pads", {1, 1, 1, 1});
  SetIntAttribute(p4, "ceil_mode", 1);
  SetIntAttribute(p4, "count_include_pad", 1);
  onnx::NodeProto& p5 = m.Node("MaxPool", {"b"}, {"e"});
  SetIntsAttribute(p5, "kernel_shape", {2, 2});
  SetIntsAttribute(p5, "strides", {2, 2});
  SetIntAttribute(p5, "ceil_mode", 1);
  m.Output("c");
  m.Output("d");
  m.Output("e");
  for (Parts p : kAllParts) {
    TileAndCompare(m.model(), {"a_op", "b_op", "c_op", "d_op", "e_op"}, p.h, p.w);
  }
}

// t = 1x1 Conv(x); two 3x3 convs on t; y = Add(b, t): t is computed over
// the hull of both readers (halo 2) and the Add reads it through a Slice.
TEST(SpatialTilingExecutionTest, ResidualAddReadsTheHullThroughASlice) {
  std::mt19937 rng(5);
  OnnxTestModel m;
  m.Input("x", {1, 3, 10, 9});
  m.Weight("w0", {4, 3, 1, 1}, &rng);
  m.Node("Conv", {"x", "w0"}, {"t"});
  m.Weight("w1", {4, 4, 3, 3}, &rng);
  SetIntsAttribute(m.Node("Conv", {"t", "w1"}, {"a"}), "pads", {1, 1, 1, 1});
  m.Node("Relu", {"a"}, {"r"});
  m.Weight("w2", {4, 4, 3, 3}, &rng);
  SetIntsAttribute(m.Node("Conv", {"r", "w2"}, {"b"}), "pads", {1, 1, 1, 1});
  m.Node("Add", {"b", "t"}, {"y"});
  m.Output("y");
  const std::vector<std::string> region = {"t_op", "a_op", "r_op", "b_op", "y_op"};
  for (Parts p : kAllParts) TileAndCompare(m.model(), region, p.h, p.w);
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(m.model()));
  ORDO_ASSERT_OK_AND_ASSIGN(onnx::ModelProto tiled,
                            ApplySpatialTiling(m.model(), graph, {region, 2, 1}));
  // Per tile: a Slice of x for the 1x1 conv and one of t for the Add.
  int slices = 0;
  for (const auto& n : tiled.graph().node()) slices += n.op_type() == "Slice";
  EXPECT_EQ(slices, 4);
}

// Branches with different receptive fields joined by a channel Concat, the
// region's input read by both (and a region output that is also read
// inside).
TEST(SpatialTilingExecutionTest, ChannelConcatOfBranches) {
  std::mt19937 rng(6);
  OnnxTestModel m;
  m.Input("x", {1, 2, 9, 12});
  m.Weight("w1", {3, 2, 3, 3}, &rng);
  SetIntsAttribute(m.Node("Conv", {"x", "w1"}, {"a"}), "pads", {1, 1, 1, 1});
  m.Weight("w2", {2, 2, 5, 5}, &rng);
  SetIntsAttribute(m.Node("Conv", {"x", "w2"}, {"b"}), "pads", {2, 2, 2, 2});
  SetIntAttribute(m.Node("Concat", {"a", "b", "x"}, {"cat"}), "axis", 1);
  m.Weight("w3", {3, 7, 3, 3}, &rng);
  SetIntsAttribute(m.Node("Conv", {"cat", "w3"}, {"y"}), "pads", {1, 1, 1, 1});
  m.Output("y");
  m.Output("a");
  for (Parts p : kAllParts) TileAndCompare(m.model(), {"a_op", "b_op", "cat_op", "y_op"}, p.h, p.w);
}

// SE block: y = Conv(x); s = Sigmoid(Conv(GAP(y))); z = Mul(y, s) * w
// (a [C,1,1] weight), then a 3x3 Conv. The region after the GAP reads s
// whole; the region before it is tiled separately.
TEST(SpatialTilingExecutionTest, SqueezeExcitationBroadcastMul) {
  std::mt19937 rng(7);
  OnnxTestModel m;
  m.Input("x", {1, 4, 10, 10});
  m.Weight("w0", {4, 4, 3, 3}, &rng);
  SetIntsAttribute(m.Node("Conv", {"x", "w0"}, {"y"}), "pads", {1, 1, 1, 1});
  m.Node("GlobalAveragePool", {"y"}, {"g"});
  m.Weight("ws", {4, 4, 1, 1}, &rng);
  m.Node("Conv", {"g", "ws"}, {"q"});
  m.Node("Sigmoid", {"q"}, {"s"});
  m.Node("Mul", {"y", "s"}, {"z"});
  m.Weight("k", {4, 1, 1}, &rng);
  m.Node("Mul", {"z", "k"}, {"zk"});
  m.Weight("w1", {2, 4, 3, 3}, &rng);
  SetIntsAttribute(m.Node("Conv", {"zk", "w1"}, {"out"}), "pads", {1, 1, 1, 1});
  m.Output("out");
  for (Parts p : kAllParts) {
    TileAndCompare(m.model(), {"z_op", "zk_op", "out_op"}, p.h, p.w);
    TileAndCompare(m.model(), {"y_op"}, p.h, p.w);
  }
  // The GAP cannot join, and taking y's producer with the Mul is not convex.
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(m.model()));
  EXPECT_THAT(CheckSpatialTiling(graph, {{"y_op", "z_op"}, 2, 1}),
              ::ordo::testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                        ::testing::HasSubstr("not convex")));
}

// Cached halos that chain through five windows (3x3, 5x5 dilated 2 over H, a
// stride-2 max pool, 3x3 strided over W, a ceil-mode average pool) and a
// residual Add, with tiles down to one output row: the dilated Conv's halo
// (4 rows above) then reaches back over several earlier tiles' pieces of its
// input. Every part count up to the rows is exact and adds no MACs.
TEST(SpatialTilingExecutionTest, CachedHalosSpanSeveralTiles) {
  std::mt19937 rng(8);
  OnnxTestModel m;
  m.Input("x", {1, 2, 29, 7});
  m.Weight("w1", {3, 2, 3, 3}, &rng);
  SetIntsAttribute(m.Node("Conv", {"x", "w1"}, {"a"}), "pads", {1, 1, 1, 1});
  m.Weight("w2", {3, 3, 5, 5}, &rng);
  onnx::NodeProto& c2 = m.Node("Conv", {"a", "w2"}, {"b"});
  SetIntsAttribute(c2, "dilations", {2, 1});
  SetIntsAttribute(c2, "pads", {4, 2, 4, 2});
  m.Node("Add", {"a", "b"}, {"s"});
  onnx::NodeProto& p1 = m.Node("MaxPool", {"s"}, {"p"});
  SetIntsAttribute(p1, "kernel_shape", {3, 3});
  SetIntsAttribute(p1, "strides", {2, 1});
  SetIntsAttribute(p1, "pads", {1, 1, 1, 1});
  m.Weight("w3", {4, 3, 3, 3}, &rng);
  onnx::NodeProto& c3 = m.Node("Conv", {"p", "w3"}, {"c"});
  SetIntsAttribute(c3, "strides", {1, 2});
  SetIntsAttribute(c3, "pads", {1, 1, 1, 1});
  m.Node("Relu", {"c"}, {"r"});
  onnx::NodeProto& p2 = m.Node("AveragePool", {"r"}, {"y"});
  SetIntsAttribute(p2, "kernel_shape", {2, 2});
  SetIntsAttribute(p2, "strides", {1, 2});
  SetIntAttribute(p2, "ceil_mode", 1);
  m.Output("y");
  const std::vector<std::string> region = {"a_op", "b_op", "s_op", "p_op", "c_op", "r_op", "y_op"};
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(m.model()));
  const int64_t rows = graph.tensor(*graph.FindTensor("y")).dims[2];
  for (int32_t parts = 2; parts <= rows; ++parts) {
    TileAndCompareWith(m.model(), region, parts, 1, HaloMode::kCache, 7);
    if (::testing::Test::HasFatalFailure()) return;
  }
  // One output row per tile (two rows of a): b's reads of a join pieces of
  // three or more tiles.
  EXPECT_EQ(rows, 14);
  ORDO_ASSERT_OK_AND_ASSIGN(
      onnx::ModelProto tiled,
      ApplySpatialTiling(m.model(), graph,
                         {region, static_cast<int32_t>(rows), 1, HaloMode::kCache}));
  int widest_join = 0, a_pieces = 0;
  for (const auto& n : tiled.graph().node()) {
    if (n.op_type() == "Concat" && n.attribute(0).i() == 2 && n.output(0) != "y") {
      widest_join = std::max(widest_join, n.input_size());
    }
    if (n.op_type() == "Conv" && n.output(0).rfind("a_tile", 0) == 0) ++a_pieces;
  }
  EXPECT_GE(widest_join, 3);
  // The last tiles find every row of a computed already: no Conv for it.
  EXPECT_LT(a_pieces, rows);
  // Caching tiles over H only.
  EXPECT_THAT(CheckSpatialTiling(graph, {region, 2, 2, HaloMode::kCache}),
              ::ordo::testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                        ::testing::HasSubstr("parts_w")));
}

// The partition search's own choice: on an expansion, three 3x3 depthwise
// Convs and a projection (recomputed halos over delta, channel splits off),
// it keeps a tiling with cached halos, which computes the same values with
// no extra MACs.
TEST(SpatialTilingExecutionTest, SearchChoosesCachedHalosThatComputeTheSameValues) {
  std::mt19937 rng(9);
  OnnxTestModel m;
  m.Input("x", {1, 4, 32, 8});
  m.Weight("we", {32, 4, 1, 1}, &rng);
  m.Node("Conv", {"x", "we"}, {"e"});
  std::string last = "e";
  for (int i = 0; i < 3; ++i) {
    const std::string w = absl::StrCat("wd", i), d = absl::StrCat("d", i);
    m.Weight(w, {32, 1, 3, 3}, &rng);
    onnx::NodeProto& dw = m.Node("Conv", {last, w}, {d});
    SetIntAttribute(dw, "group", 32);
    SetIntsAttribute(dw, "pads", {1, 1, 1, 1});
    m.Node("Relu", {d}, {d + "r"});
    last = d + "r";
  }
  m.Weight("wp", {4, 32, 1, 1}, &rng);
  m.Node("Conv", {last, "wp"}, {"y"});
  m.Output("y");
  RewriteOptions options;
  options.mode = RewriteMode::kPartition;
  options.schedule_time_limit = absl::Milliseconds(300);
  options.time_limit = absl::Seconds(10);
  options.latency.op_overhead_seconds = 0;  // compute only, as on a large model
  options.max_latency_overhead = 0.05;
  ORDO_ASSERT_OK_AND_ASSIGN(std::unique_ptr<Scheduler> scheduler,
                            BuiltinSchedulers().Create("best"));
  ModelEvaluator evaluator(options, *scheduler);
  ORDO_ASSERT_OK_AND_ASSIGN(std::shared_ptr<const EvaluatedModel> start,
                            evaluator.Evaluate(m.model(), ""));
  PartitionSearchOptions search;
  search.channel_parts = {};
  ORDO_ASSERT_OK_AND_ASSIGN(PartitionSearchResult result,
                            SearchPartitions(start, start->cost, search, evaluator));
  ASSERT_FALSE(result.rewrites.empty());
  EXPECT_LT(result.best->peak(), start->peak());
  EXPECT_THAT(result.rewrites.front().description, ::testing::HasSubstr("halos cached"));
  EXPECT_EQ(result.best->cost.macs, start->cost.macs);
  ORDO_ASSERT_OK(CheckOnnx(result.best->model));
  ExpectSameOutputs(m.model(), result.best->model, 5, "searched", kTolerance);
}

// ---------------------------------------------------------------------------
// Random graphs: conv / pool / relu / add / concat on small NCHW tensors,
// random convex regions (an interval of the topological order, or a random
// subset CheckSpatialTiling accepts), random parts. Whenever Check accepts,
// Apply must succeed and compute the same outputs; whenever it refuses,
// Apply must refuse with the same status.

struct RandomTensor {
  std::string name;
  std::vector<int64_t> dims;
};

onnx::ModelProto RandomModel(std::mt19937& rng, int32_t num_ops) {
  auto pick = [&](int64_t lo, int64_t hi) {
    return std::uniform_int_distribution<int64_t>(lo, hi)(rng);
  };
  OnnxTestModel m;
  std::vector<RandomTensor> tensors;
  const std::vector<int64_t> in = {1, pick(1, 3), pick(5, 14), pick(5, 14)};
  m.Input("x", in);
  tensors.push_back({"x", in});
  for (int32_t i = 0; i < num_ops; ++i) {
    const std::string out = absl::StrCat("t", i);
    // Prefer recent tensors, so chains get deep.
    const RandomTensor src =
        tensors[std::max<int64_t>(0, static_cast<int64_t>(tensors.size()) - 1 - pick(0, 2))];
    const int64_t kind = pick(0, 9);
    const int64_t h = src.dims[2], w = src.dims[3];
    if (kind <= 3) {  // Conv
      const int64_t k = std::vector<int64_t>{1, 3, 5}[pick(0, 2)];
      const int64_t s = pick(1, 2), d = k > 1 ? pick(1, 2) : 1;
      const int64_t extent = (k - 1) * d + 1;
      std::vector<int64_t> pads = {pick(0, extent / 2), pick(0, extent / 2), pick(0, extent / 2),
                                   pick(0, extent / 2)};
      if (h + pads[0] + pads[2] < extent || w + pads[1] + pads[3] < extent) {
        pads = {extent / 2, extent / 2, extent / 2, extent / 2};
      }
      const int64_t group = pick(0, 3) == 0 ? src.dims[1] : 1;
      const int64_t cout = group * pick(1, 2) + (group == 1 ? pick(0, 2) : 0);
      const std::string wname = absl::StrCat("w", i);
      m.Weight(wname, {cout, src.dims[1] / group, k, k}, &rng);
      std::vector<std::string> inputs = {src.name, wname};
      if (pick(0, 1) == 0) {
        m.Weight(wname + "b", {cout}, &rng);
        inputs.push_back(wname + "b");
      }
      onnx::NodeProto& node = m.Node("Conv", inputs, {out});
      SetIntsAttribute(node, "strides", {s, s});
      SetIntsAttribute(node, "dilations", {d, d});
      SetIntsAttribute(node, "pads", pads);
      SetIntAttribute(node, "group", group);
      tensors.push_back({out,
                         {1, cout, (h + pads[0] + pads[2] - extent) / s + 1,
                          (w + pads[1] + pads[3] - extent) / s + 1}});
    } else if (kind <= 5 && std::min(h, w) >= 3) {  // pooling
      const bool max = pick(0, 1) == 0;
      const int64_t k = pick(2, 3), s = pick(1, 2), p = pick(0, 1);
      // ceil_mode only where the last window starts inside the input (as
      // PyTorch exports it), so no window reads padding only.
      auto last_start = [&](int64_t n) { return ((n + 2 * p - k + s - 1) / s) * s - p; };
      const bool ceil = pick(0, 2) == 0 && last_start(h) < h && last_start(w) < w;
      onnx::NodeProto& node = m.Node(max ? "MaxPool" : "AveragePool", {src.name}, {out});
      SetIntsAttribute(node, "kernel_shape", {k, k});
      SetIntsAttribute(node, "strides", {s, s});
      SetIntsAttribute(node, "pads", {p, p, p, p});
      if (!max) SetIntAttribute(node, "count_include_pad", pick(0, 1));
      if (ceil) SetIntAttribute(node, "ceil_mode", 1);
      auto size = [&](int64_t n) {
        const int64_t span = n + 2 * p - k;
        return (ceil ? (span + s - 1) / s : span / s) + 1;
      };
      tensors.push_back({out, {1, src.dims[1], size(h), size(w)}});
    } else if (kind <= 6) {
      m.Node("Relu", {src.name}, {out});
      tensors.push_back({out, src.dims});
    } else {  // Add / Concat of two tensors of the same H, W (else Relu)
      std::vector<RandomTensor> partners;
      for (const RandomTensor& t : tensors) {
        if (t.name != src.name && t.dims[2] == h && t.dims[3] == w &&
            (kind == 9 || t.dims[1] == src.dims[1])) {
          partners.push_back(t);
        }
      }
      if (partners.empty()) {
        m.Node("Relu", {src.name}, {out});
        tensors.push_back({out, src.dims});
        continue;
      }
      const RandomTensor other = partners[pick(0, static_cast<int64_t>(partners.size()) - 1)];
      if (kind == 9) {
        SetIntAttribute(m.Node("Concat", {src.name, other.name}, {out}), "axis", 1);
        tensors.push_back({out, {1, src.dims[1] + other.dims[1], h, w}});
      } else {
        m.Node("Add", {src.name, other.name}, {out});
        tensors.push_back({out, src.dims});
      }
    }
  }
  // Every tensor nobody reads is an output.
  std::set<std::string> read;
  for (const auto& n : m.model().graph().node()) {
    for (const auto& i : n.input()) read.insert(i);
  }
  for (size_t i = 1; i < tensors.size(); ++i) {
    if (!read.count(tensors[i].name)) m.Output(tensors[i].name);
  }
  return m.model();
}

TEST(SpatialTilingExecutionTest, RandomGraphsAndRegions) {
  std::mt19937 rng(2026);
  int tiled = 0, refused = 0, cached = 0;
  for (int round = 0; round < 450; ++round) {
    const onnx::ModelProto model =
        RandomModel(rng, static_cast<int32_t>(std::uniform_int_distribution<>(2, 7)(rng)));
    absl::StatusOr<Graph> graph = Import(model);
    ASSERT_TRUE(graph.ok()) << round << ": " << graph.status();
    const int32_t n = graph->num_ops();
    std::vector<std::string> region;
    if (round % 2 == 0) {
      const int32_t first = std::uniform_int_distribution<>(0, n - 1)(rng);
      const int32_t last = std::uniform_int_distribution<>(first, n - 1)(rng);
      for (int32_t i = first; i <= last; ++i) region.push_back(graph->op(i).name);
    } else {
      for (int32_t i = 0; i < n; ++i) {
        if (std::uniform_int_distribution<>(0, 1)(rng) == 1) region.push_back(graph->op(i).name);
      }
      if (region.empty()) region.push_back(graph->op(0).name);
    }
    // Every third round caches halos, with up to 8 parts over H (tiles
    // smaller than the halos).
    const HaloMode halo = round % 3 == 2 ? HaloMode::kCache : HaloMode::kRecompute;
    const int32_t ph = std::uniform_int_distribution<>(1, halo == HaloMode::kCache ? 8 : 4)(rng);
    const int32_t pw = halo == HaloMode::kCache ? 1 : std::uniform_int_distribution<>(1, 3)(rng);
    const SpatialTiling tiling{region, ph, pw, halo};
    const absl::Status check = CheckSpatialTiling(*graph, tiling);
    absl::StatusOr<onnx::ModelProto> result = ApplySpatialTiling(model, *graph, tiling);
    const std::string what =
        absl::StrCat("round ", round, " (", ph, "x", pw, " ", HaloModeName(halo), ", ",
                     region.size(), " of ", n, " ops)");
    if (!check.ok()) {
      ++refused;
      EXPECT_EQ(result.status().code(), check.code()) << what << ": " << check;
      // Refusals are about the region, never the generator's ops.
      EXPECT_THAT(check.code(), ::testing::AnyOf(absl::StatusCode::kInvalidArgument,
                                                 absl::StatusCode::kUnimplemented))
          << what;
      if (std::getenv("ORDO_PRINT_REFUSALS") != nullptr) std::cout << what << ": " << check << "\n";
      continue;
    }
    ASSERT_TRUE(result.ok()) << what << ": " << result.status();
    absl::StatusOr<Graph> tiled_graph = Import(*result);
    ASSERT_THAT(tiled_graph.status(), ::ordo::testing::IsOk()) << what;
    absl::StatusOr<int64_t> extra = SpatialTilingExtraMacs(*graph, tiling);
    ASSERT_TRUE(extra.ok()) << what << ": " << extra.status();
    EXPECT_EQ(CostOf(*tiled_graph).macs - CostOf(*graph).macs, *extra) << what;
    if (halo == HaloMode::kCache) {
      ++cached;
      EXPECT_LE(*extra, 0) << what;
    }
    std::mt19937 feed_rng(round);
    // Random Relu chains may zero an output: not checked for magnitude.
    ExpectSameOutputs(model, *result, RandomInputs(model, feed_rng), what, kToleranceMaybeZero);
    if (::testing::Test::HasFatalFailure()) return;
    ++tiled;
  }
  std::cout << "random regions: " << tiled << " tiled and checked (" << cached
            << " with cached halos), " << refused << " refused\n";
  EXPECT_GT(tiled, 220);
  EXPECT_GT(cached, 60);
}

// ---------------------------------------------------------------------------
// MobileNet-V2's first blocks (weights filled with random values; the
// ReLU6 bounds set to 0 and 6): tiling the stem through block 2's stride-2
// depthwise conv, where the peak of the whole model sits (96 x 112 x 112 in,
// 96 x 56 x 56 out), computes the same values and lowers the peak under
// `best`.

std::string ModelPath(const std::string& name) {
  return ordo::testing::SharedModelsDir() + "/" + name + ".onnx";
}

absl::StatusOr<int64_t> BestPeak(const Graph& graph) {
  ORDO_ASSIGN_OR_RETURN(MemoryModel memory, BuildMemoryModel(graph, MemoryOptions()));
  ORDO_ASSIGN_OR_RETURN(std::unique_ptr<Scheduler> best, BuiltinSchedulers().Create("best"));
  ScheduleLimits limits;
  limits.deadline = limits.Now() + absl::Seconds(60);
  ORDO_ASSIGN_OR_RETURN(ScheduleResult schedule, best->Schedule(memory, limits));
  return schedule.peak_bytes;
}

TEST(SpatialTilingExecutionTest, MobileNetV2FirstBlocks) {
  if (!std::filesystem::exists(ModelPath("mobilenet_v2"))) {
    GTEST_SKIP() << "../shared/models not found; skipping the MobileNet-V2 tiling check ("
                 << ordo::testing::SharedModelsDir() << ")";
  }
  onnx::ModelProto full;
  {
    std::ifstream file(ModelPath("mobilenet_v2"), std::ios::binary);
    std::stringstream bytes;
    bytes << file.rdbuf();
    ASSERT_TRUE(full.ParseFromString(bytes.str()));
  }
  ORDO_ASSERT_OK_AND_ASSIGN(Graph full_graph, Import(full));
  // The first ops up to block 3's projection (the op after the stride-2
  // depthwise conv's activation); the model cut there.
  int32_t last = -1;
  for (const Op& op : full_graph.ops()) {
    const std::vector<int64_t>& d = full_graph.tensor(op.outputs[0]).dims;
    if (d.size() == 4 && d[2] == 56 && op.type != "Conv") {
      last = op.source_index;
      break;
    }
  }
  ASSERT_GE(last, 0) << "no 56x56 activation in mobilenet_v2";
  onnx::ModelProto model = full;
  onnx::GraphProto* g = model.mutable_graph();
  g->mutable_node()->DeleteSubrange(last + 1, g->node_size() - last - 1);
  g->clear_output();
  onnx::ValueInfoProto* output = g->add_output();
  output->set_name(full.graph().node(last).output(0));
  output->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  // Random weights; Clip bounds 0 and 6.
  std::map<std::string, float> clip_bounds;
  for (const auto& n : g->node()) {
    if (n.op_type() != "Clip") continue;
    if (n.input_size() > 1) clip_bounds[n.input(1)] = 0.0f;
    if (n.input_size() > 2) clip_bounds[n.input(2)] = 6.0f;
  }
  std::mt19937 rng(12);
  std::uniform_real_distribution<float> uniform(-0.2f, 0.2f);
  TensorMap feeds;
  for (const onnx::TensorProto& t : g->initializer()) {
    if (t.data_type() != onnx::TensorProto::FLOAT) continue;
    FloatTensor value;
    value.dims.assign(t.dims().begin(), t.dims().end());
    int64_t count = 1;
    for (int64_t d : value.dims) count *= d;
    for (int64_t i = 0; i < count; ++i) value.values.push_back(uniform(rng));
    if (auto it = clip_bounds.find(t.name()); it != clip_bounds.end()) {
      value.values.assign(count, it->second);
    }
    feeds[t.name()] = std::move(value);
  }
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(model));
  std::vector<std::string> region;
  for (const Op& op : graph.ops()) region.push_back(op.name);
  ORDO_ASSERT_OK_AND_ASSIGN(int64_t before, BestPeak(graph));
  std::mt19937 image_rng(13);
  TensorMap inputs = RandomInputs(model, image_rng);
  for (auto& [name, value] : feeds) inputs[name] = value;
  for (HaloMode halo : {HaloMode::kRecompute, HaloMode::kCache}) {
    const SpatialTiling tiling{region, 4, 1, halo};
    const std::string what = absl::StrCat("mobilenet_v2 4x1 ", HaloModeName(halo));
    ORDO_ASSERT_OK(CheckSpatialTiling(graph, tiling));
    ORDO_ASSERT_OK_AND_ASSIGN(onnx::ModelProto tiled, ApplySpatialTiling(model, graph, tiling));
    ORDO_ASSERT_OK(CheckOnnx(tiled));
    ORDO_ASSERT_OK_AND_ASSIGN(Graph tiled_graph, Import(tiled));
    ExpectSameOutputs(model, tiled, inputs, what, kTolerance);
    const int64_t extra_macs = CostOf(tiled_graph).macs - CostOf(graph).macs;
    ORDO_ASSERT_OK_AND_ASSIGN(int64_t after, BestPeak(tiled_graph));
    std::cout << what << ": first " << graph.num_ops() << " ops -> " << tiled_graph.num_ops()
              << " ops, extra MACs " << extra_macs << ", best peak " << before << " -> " << after
              << " bytes\n";
    EXPECT_LT(after, before) << what;
    if (halo == HaloMode::kCache) {
      EXPECT_EQ(extra_macs, 0) << what;
    } else {
      EXPECT_GT(extra_macs, 0) << what;
    }
  }
}

}  // namespace
}  // namespace ordo
