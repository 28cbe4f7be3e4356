// Proof by execution of patch-wise fusion (core/rewrite/patch_fusion.h):
// - every plan of the fusion front of random window chains (with Relu, and
//   with SiLU composites for Relu), of an EfficientNet-like SiLU stem, of a
//   squeeze-and-excitation block and of an inverted residual block gives a model that passes ONNX's
//   checker, imports, and computes what the original computes on the reference executor (fused
//   nodes call their local functions);
// - the chains run one output row at a time (spatial tiling into one-row
//   tiles with recomputed halos, what a kPixel stage computes per output
//   row) compute what the original computes, and add exactly the MACs a
//   kPixel stage states (patch_fusion_test checks the two counts agree);
// - runs caching a layer, executed as bands over the later layers and as the
//   pieces of the cached layer's rows each band computes first over the
//   earlier ones, compute what the original computes with exactly the MACs
//   the run states.

#include <algorithm>
#include <map>
#include <numeric>
#include <random>
#include <string>
#include <tuple>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/memory/memory_model.h"
#include "core/onnx/onnx_import.h"
#include "core/rewrite/cost_model.h"
#include "core/rewrite/onnx_test_model.h"
#include "core/rewrite/patch_fusion.h"
#include "core/rewrite/region_fusion.h"
#include "core/rewrite/spatial_tiling.h"
#include "core/testing/status_matchers.h"
#include "core/testing/trials.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/rewrite/execution_checks.h"

namespace ordo {
namespace {

constexpr OutputTolerance kTolerance{.relative = 1e-5, .min_scale = 1e-30};

// `model` with its top-level nodes in the importer's op order, which runs:
// the reference executor runs a graph in file order (function bodies are
// left as they are, so they are still checked as emitted).
onnx::ModelProto InRunOrder(const onnx::ModelProto& model) {
  const std::string bytes = model.SerializeAsString();
  absl::StatusOr<Graph> graph = ImportOnnx(bytes);
  EXPECT_TRUE(graph.ok()) << graph.status();
  if (!graph.ok()) return model;
  std::vector<OpId> order(graph->num_ops());
  std::iota(order.begin(), order.end(), 0);
  absl::StatusOr<std::string> sorted = ReorderOnnxNodes(bytes, *graph, order);
  EXPECT_TRUE(sorted.ok()) << sorted.status();
  onnx::ModelProto out;
  if (!sorted.ok() || !out.ParseFromString(*sorted)) return model;
  return out;
}

// Every plan of the front, fused and run against the original (with
// `run_order`, both with their top-level nodes put in run order first).
void FuseEveryPlanAndCompare(const onnx::ModelProto& model, const std::string& what,
                             bool run_order = false) {
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(model));
  ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel memory, BuildMemoryModel(graph, MemoryOptions{}));
  ORDO_ASSERT_OK_AND_ASSIGN(std::vector<FusionPlan> plans, FusionFront(graph, memory));
  // Each whole chain as one stage, in every run (cached and recomputed
  // layers included), too (the front may not fuse anything when fusing
  // never lowers the peak).
  for (const std::vector<OpId>& chain : FindFusibleChains(graph)) {
    for (const StageRun& run : StageRuns(graph, chain)) {
      ORDO_ASSERT_OK_AND_ASSIGN(StageCost cost, CostOfStage(graph, memory, chain, run));
      plans.push_back({{{chain, run}}, 0, cost.extra_macs});
    }
  }
  int32_t fused_plans = 0;
  for (const FusionPlan& plan : plans) {
    const std::string case_name = absl::StrCat(what, ", ", plan.stages.size(), " stage(s)");
    ORDO_ASSERT_OK_AND_ASSIGN(onnx::ModelProto fused, ApplyPatchFusion(model, graph, memory, plan));
    ASSERT_THAT(CheckOnnx(fused), ::ordo::testing::IsOk()) << case_name;
    ORDO_ASSERT_OK_AND_ASSIGN(Graph fused_graph, Import(fused));
    EXPECT_EQ(CostOf(fused_graph).macs, CostOf(graph).macs + plan.extra_macs) << case_name;
    if (run_order) {
      ExpectSameOutputs(InRunOrder(model), InRunOrder(fused), /*seed=*/11, case_name, kTolerance);
    } else {
      ExpectSameOutputs(model, fused, /*seed=*/11, case_name, kTolerance);
    }
    fused_plans += plan.stages.empty() ? 0 : 1;
  }
  EXPECT_GE(fused_plans, 1) << what;
}

TEST(PatchFusionExecutionTest, FusedRandomChainsComputeWhatTheOriginalsCompute) {
  const int32_t trials = ::ordo::testing::Trials(20);
  for (int32_t trial = 0; trial < trials; ++trial) {
    const onnx::ModelProto model =
        RandomWindowChain(900 + trial, 2 + trial % 5, 8 + trial % 6, /*with_data=*/true).model();
    FuseEveryPlanAndCompare(model, absl::StrCat("chain ", trial));
  }
}

// The activations of opsets 18-24 (Gelu both ways, Mish, Swish) and the
// older ones the other tests leave out, in place of every Relu of random
// chains at opset 24: fused stages keep each op with its attributes.
TEST(PatchFusionExecutionTest, FusedChainsOfEveryUnaryActivationComputeWhatTheOriginalsCompute) {
  struct Activation {
    std::string type;
    std::string attribute;  // a string attribute "name=value", or ""
  };
  const std::vector<Activation> activations = {{"Gelu", ""},    {"Gelu", "approximate=tanh"},
                                               {"Mish", ""},    {"Swish", ""},
                                               {"Tanh", ""},    {"Elu", ""},
                                               {"Selu", ""},    {"Softplus", ""},
                                               {"Softsign", ""}};
  for (size_t a = 0; a < activations.size(); ++a) {
    const Activation& activation = activations[a];
    const std::string what = absl::StrCat(activation.type, " ", activation.attribute);
    // The first chain from this activation's seeds that has a Relu.
    onnx::ModelProto model;
    int32_t replaced = 0;
    for (uint32_t seed = 1900 + 100 * a; replaced == 0 && seed < 2000 + 100 * a; ++seed) {
      model = RandomWindowChain(seed, 3 + a % 3, 9, /*with_data=*/true).model();
      for (onnx::NodeProto& node : *model.mutable_graph()->mutable_node()) {
        if (node.op_type() != "Relu") continue;
        node.set_op_type(activation.type);
        if (!activation.attribute.empty()) {
          const size_t equals = activation.attribute.find('=');
          SetStringAttribute(node, activation.attribute.substr(0, equals),
                             activation.attribute.substr(equals + 1));
        }
        ++replaced;
      }
    }
    ASSERT_GT(replaced, 0) << what << ": no chain with a Relu to replace";
    model.mutable_opset_import(0)->set_version(24);
    ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(model));
    int32_t fused_activations = 0;
    for (const std::vector<OpId>& chain : FindFusibleChains(graph)) {
      fused_activations += std::count_if(chain.begin(), chain.end(), [&](OpId op) {
        return graph.op(op).type == activation.type;
      });
    }
    EXPECT_GT(fused_activations, 0) << what;
    FuseEveryPlanAndCompare(model, what);
  }
}

// SiLU (x * Sigmoid(x)) and x * HardSigmoid(x) layers, composites of two
// ops: the fused node's function body keeps both, so the fused model
// computes what the original computes.
TEST(PatchFusionExecutionTest, FusedSiluChainsComputeWhatTheOriginalsCompute) {
  const int32_t trials = ::ordo::testing::Trials(20);
  int32_t gated_chains = 0;
  for (int32_t trial = 0; trial < trials; ++trial) {
    const onnx::ModelProto model = WithSiluForRelu(
        RandomWindowChain(900 + trial, 2 + trial % 5, 8 + trial % 6, /*with_data=*/true).model(),
        trial % 3 == 0 ? "HardSigmoid" : "Sigmoid", trial % 2 == 0);
    ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(model));
    for (const std::vector<OpId>& chain : FindFusibleChains(graph)) {
      gated_chains += std::any_of(chain.begin(), chain.end(),
                                  [&](OpId op) { return graph.op(op).type == "Mul"; });
    }
    FuseEveryPlanAndCompare(model, absl::StrCat("SiLU chain ", trial));
  }
  EXPECT_GE(gated_chains, 3);
}

TEST(PatchFusionExecutionTest, FusedSiluStemComputesWhatTheOriginalComputes) {
  for (bool gate_first : {false, true}) {
    FuseEveryPlanAndCompare(SiluStem(gate_first, /*with_data=*/true).model(),
                            gate_first ? "Mul(Sigmoid(x), x) stem" : "Mul(x, Sigmoid(x)) stem");
  }
}

// A file whose nodes are not in run order (each Mul listed before the
// Sigmoid it reads; the importer orders the ops itself): every fused body
// must still be in an order that runs, and compute what the original does.
TEST(PatchFusionExecutionTest, FusedBodiesRunWhenTheFileIsNotInRunOrder) {
  onnx::ModelProto model = SiluStem(/*gate_first=*/false, /*with_data=*/true).model();
  onnx::GraphProto& graph = *model.mutable_graph();
  for (const char* name : {"c", "cs", "ca", "d", "ds"}) {
    onnx::ValueInfoProto& value = *graph.add_value_info();
    value.set_name(name);
    onnx::TypeProto_Tensor& type = *value.mutable_type()->mutable_tensor_type();
    type.set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t dim : {1, 8, 16, 16}) type.mutable_shape()->add_dim()->set_dim_value(dim);
  }
  int32_t swapped = 0;
  for (int32_t i = 0; i + 1 < graph.node_size(); ++i) {
    if (graph.node(i).op_type() == "Sigmoid" && graph.node(i + 1).op_type() == "Mul") {
      graph.mutable_node()->SwapElements(i, i + 1);
      ++swapped;
      ++i;
    }
  }
  ASSERT_EQ(swapped, 2);
  FuseEveryPlanAndCompare(model, "stem with each Mul before its Sigmoid in the file",
                          /*run_order=*/true);
}

// An SE block: the fused node of Mul(h, scale) and what follows reads the
// scale whole, as the original Mul broadcasts it.
TEST(PatchFusionExecutionTest, FusedSqueezeExcitationComputesWhatTheOriginalComputes) {
  for (bool scale_first : {false, true}) {
    FuseEveryPlanAndCompare(SqueezeExcitationBlock(scale_first, /*with_data=*/true).model(),
                            scale_first ? "Mul(scale, h) SE block" : "Mul(h, scale) SE block");
  }
}

// A broadcast side in the middle of a stage, and a composite whose ops are
// not next to each other in the file: s = Sigmoid(GlobalAveragePool(x)) is
// computed from the stage's input before the stage; t = Conv 1x1(x) ->
// SiLU (its Sigmoid listed before an unrelated node, its Mul after) ->
// Mul(., s) -> Conv 3x3 -> y. The fused node reads x and s and must run
// after s's producer; its body must run too.
TEST(PatchFusionExecutionTest, ASideInMidStageAndASplitCompositeComputeWhatTheOriginalComputes) {
  std::mt19937 rng(31);
  OnnxTestModel m;
  m.Input("x", {1, 8, 8, 8});
  m.Node("GlobalAveragePool", {"x"}, {"g"});
  m.Weight("wt", {8, 8, 1, 1}, &rng);
  m.Node("Conv", {"x", "wt"}, {"t"});
  m.Node("Sigmoid", {"t"}, {"ts"});
  m.Node("Sigmoid", {"g"}, {"s"});  // unrelated to the composite, between its ops
  m.Node("Mul", {"t", "ts"}, {"ta"});
  m.Node("Mul", {"ta", "s"}, {"m"});
  m.Weight("wy", {4, 8, 3, 3}, &rng);
  SetIntsAttribute(m.Node("Conv", {"m", "wy"}, {"y"}), "pads", {1, 1, 1, 1});
  m.Output("y");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(m.model()));
  bool whole = false;
  for (const std::vector<OpId>& chain : FindFusibleChains(graph)) {
    whole = whole || chain.size() == 4;  // t, its SiLU, the scaling Mul, y
  }
  EXPECT_TRUE(whole) << "the chain runs through the composite and the side";
  FuseEveryPlanAndCompare(m.model(), "mid-stage side, split composite");
}

// `model` with random float data in every float initializer.
onnx::ModelProto WithRandomWeights(onnx::ModelProto model, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (onnx::TensorProto& t : *model.mutable_graph()->mutable_initializer()) {
    if (t.data_type() != onnx::TensorProto::FLOAT) continue;
    t.clear_external_data();
    t.clear_data_location();
    t.clear_raw_data();
    int64_t count = 1;
    for (int64_t d : t.dims()) count *= d;
    for (int64_t i = 0; i < count; ++i) t.add_float_data(uniform(rng));
  }
  return model;
}

TEST(PatchFusionExecutionTest, FusedInvertedResidualComputesWhatTheOriginalComputes) {
  FuseEveryPlanAndCompare(
      WithRandomWeights(InvertedResidualBlock({.expanded = 24, .bias = true}).model(), 5),
      "inverted residual");
}

TEST(PatchFusionExecutionTest, ChainsRunOneOutputRowAtATime) {
  const int32_t trials = ::ordo::testing::Trials(20);
  for (int32_t trial = 0; trial < trials; ++trial) {
    const onnx::ModelProto model =
        RandomWindowChain(1300 + trial, 2 + trial % 5, 8 + trial % 6, /*with_data=*/true).model();
    ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(model));
    ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel memory, BuildMemoryModel(graph, MemoryOptions{}));
    const std::vector<std::vector<OpId>> chains = FindFusibleChains(graph);
    ASSERT_EQ(chains.size(), 1);
    const int64_t rows = graph.tensor(graph.op(chains[0].back()).outputs[0]).dims[2];
    if (rows < 2) continue;  // one tile is the chain unchanged
    SpatialTiling tiling;
    for (OpId op : chains[0]) tiling.ops.push_back(graph.op(op).name);
    tiling.parts_h = static_cast<int32_t>(rows);
    ORDO_ASSERT_OK_AND_ASSIGN(onnx::ModelProto by_rows, ApplySpatialTiling(model, graph, tiling));
    ORDO_ASSERT_OK_AND_ASSIGN(Graph by_rows_graph, Import(by_rows));
    ORDO_ASSERT_OK_AND_ASSIGN(StageCost pixel,
                              CostOfStage(graph, memory, chains[0], StageRun{StageCaching::kPixel, 1}));
    EXPECT_EQ(CostOf(by_rows_graph).macs - CostOf(graph).macs, pixel.extra_macs) << trial;
    ExpectSameOutputs(model, by_rows, /*seed=*/13, absl::StrCat("rows ", trial), kTolerance);
  }
}

// Where each band of `band` output rows of a run caching layer `cached`
// starts computing rows of that layer's output (the rows of it no earlier
// band computed), and whether those pieces cover its rows without a gap.
struct NewRowPieces {
  std::vector<int64_t> starts;
  bool exact = true;  // no row skipped between pieces, none left at the bottom
};

NewRowPieces PiecesOfCachedLayer(const Graph& graph, const std::vector<OpId>& chain,
                                 int32_t cached, int64_t band) {
  NewRowPieces pieces;
  const int64_t rows = graph.tensor(graph.op(chain.back()).outputs[0]).dims[2];
  int64_t done = 0;
  for (int64_t y = 0; y < rows; y += band) {
    int64_t lo = y, hi = std::min(rows, y + band);
    for (int32_t l = static_cast<int32_t>(chain.size()) - 1; l > cached; --l) {
      const Op& op = graph.op(chain[l]);
      std::tie(lo, hi) = ChainLayerWindow(graph, chain[l])
                             ->InputRange(0, lo, hi, graph.tensor(op.inputs[0]).dims[2]);
    }
    if (hi <= done) continue;
    pieces.exact = pieces.exact && lo <= done;
    pieces.starts.push_back(std::max(lo, done));
    done = hi;
  }
  pieces.exact = pieces.exact && done == graph.tensor(graph.op(chain[cached]).outputs[0]).dims[2];
  return pieces;
}

TEST(PatchFusionExecutionTest, CachedLayerRunsExecuteBandByBand) {
  // A pixel run caching layer c, executed: the layers after c tiled into
  // bands of B output rows (halos recomputed), then layers 0..c tiled into
  // the pieces of c's rows each band computes first (their halos
  // recomputed). Same outputs as the original, and exactly the extra MACs
  // the run states.
  const int32_t trials = ::ordo::testing::Trials(12);
  // Every band height StageRuns gives cached runs, each executed somewhere.
  std::map<int64_t, int32_t> compared;
  for (int32_t trial = 0; trial < trials; ++trial) {
    const onnx::ModelProto model =
        RandomWindowChain(1700 + trial, 2 + trial % 5, 8 + trial % 6, /*with_data=*/true).model();
    ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(model));
    ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel memory, BuildMemoryModel(graph, MemoryOptions{}));
    const std::vector<OpId> chain = FindFusibleChains(graph).at(0);
    const int32_t n = static_cast<int32_t>(chain.size());
    const int64_t rows = graph.tensor(graph.op(chain.back()).outputs[0]).dims[2];
    for (int64_t band : {1, 2, 3, 4}) {
      for (int32_t cached = 0; cached + 1 < n; ++cached) {
        const std::string what = absl::StrCat("chain ", trial, ", band ", band, ", cached ", cached);
        const NewRowPieces pieces = PiecesOfCachedLayer(graph, chain, cached, band);
        if (!pieces.exact) continue;  // the tiler computes every row of a tiled tensor
        SpatialTiling tail;
        for (int32_t l = cached + 1; l < n; ++l) tail.ops.push_back(graph.op(chain[l]).name);
        for (int64_t y = 0; y < rows; y += band) tail.row_starts.push_back(y);
        tail.parts_h = static_cast<int32_t>(tail.row_starts.size());
        ORDO_ASSERT_OK_AND_ASSIGN(onnx::ModelProto tail_tiled, ApplySpatialTiling(model, graph, tail));
        ORDO_ASSERT_OK_AND_ASSIGN(Graph tail_graph, Import(tail_tiled));
        SpatialTiling head;
        for (int32_t l = 0; l <= cached; ++l) head.ops.push_back(graph.op(chain[l]).name);
        head.row_starts = pieces.starts;
        head.parts_h = static_cast<int32_t>(pieces.starts.size());
        ORDO_ASSERT_OK_AND_ASSIGN(onnx::ModelProto by_bands,
                                  ApplySpatialTiling(tail_tiled, tail_graph, head));
        ORDO_ASSERT_OK_AND_ASSIGN(Graph by_bands_graph, Import(by_bands));
        ORDO_ASSERT_OK_AND_ASSIGN(
            StageCost cost, CostOfStage(graph, memory, chain,
                                        StageRun{StageCaching::kPixel, static_cast<int32_t>(band), cached}));
        EXPECT_EQ(CostOf(by_bands_graph).macs - CostOf(graph).macs, cost.extra_macs) << what;
        ExpectSameOutputs(model, by_bands, /*seed=*/19, what, kTolerance);
        ++compared[band];
      }
    }
  }
  for (int64_t band : {1, 2, 3, 4}) EXPECT_GE(compared[band], trials / 2) << "band " << band;
}

// Every tensor of `model` made internal in turn, from no regions, and the
// regions fused and run against the original after each step that works:
// branches, joins and regions merging as they grow.
void FuseGrowingRegionsAndCompare(const onnx::ModelProto& model, const std::string& what) {
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(model));
  ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel memory, BuildMemoryModel(graph, MemoryOptions{}));
  const StreamWindows windows = StreamableOps(graph, &model.graph());
  std::vector<std::vector<OpId>> regions;
  int32_t fused_models = 0;
  for (TensorId t = 0; t < graph.num_tensors(); ++t) {
    std::optional<std::vector<std::vector<OpId>>> next =
        InternalizeTensor(graph, windows, regions, t);
    if (!next) continue;
    regions = *std::move(next);
    const std::string case_name = absl::StrCat(what, ", ", graph.tensor(t).name, " internal");
    ORDO_ASSERT_OK_AND_ASSIGN(onnx::ModelProto fused,
                              ApplyRegionFusion(model, graph, memory, regions));
    ASSERT_THAT(CheckOnnx(fused), ::ordo::testing::IsOk()) << case_name;
    ORDO_ASSERT_OK_AND_ASSIGN(Graph fused_graph, Import(fused));
    EXPECT_EQ(CostOf(fused_graph).macs, CostOf(graph).macs) << case_name;
    ExpectSameOutputs(model, fused, /*seed=*/17, case_name, kTolerance);
    // The same regions in three column strips: the function bodies are the
    // same nodes; the node states the recomputed MACs.
    const std::vector<int32_t> strips(regions.size(), 3);
    int64_t extra_macs = 0;
    for (const std::vector<OpId>& region : regions) {
      ORDO_ASSERT_OK_AND_ASSIGN(RegionCost cost, CostOfRegion(graph, memory, windows, region, 3));
      extra_macs += cost.extra_macs;
    }
    ORDO_ASSERT_OK_AND_ASSIGN(onnx::ModelProto in_strips,
                              ApplyRegionFusion(model, graph, memory, regions, strips));
    ASSERT_THAT(CheckOnnx(in_strips), ::ordo::testing::IsOk()) << case_name << ", strips";
    ORDO_ASSERT_OK_AND_ASSIGN(Graph strips_graph, Import(in_strips));
    EXPECT_EQ(CostOf(strips_graph).macs, CostOf(graph).macs + extra_macs) << case_name;
    ExpectSameOutputs(model, in_strips, /*seed=*/17, case_name + ", strips", kTolerance);
    ++fused_models;
  }
  EXPECT_GE(fused_models, 1) << what;
}

TEST(PatchFusionExecutionTest, FusedRegionsComputeWhatTheOriginalComputes) {
  FuseGrowingRegionsAndCompare(
      WithRandomWeights(InvertedResidualBlock({.expanded = 24, .bias = true}).model(), 7),
      "inverted residual");
  // Two branches of different depth joined by a Concat and an Add.
  OnnxTestModel m;
  std::mt19937 rng(8);
  m.Input("x", {1, 3, 10, 10});
  m.Weight("w0", {4, 3, 3, 3}, &rng);
  m.Weight("w1", {4, 4, 3, 3}, &rng);
  m.Weight("w2", {8, 8, 1, 1}, &rng);
  SetIntsAttribute(m.Node("Conv", {"x", "w0"}, {"a"}), "pads", {1, 1, 1, 1});
  m.Node("Relu", {"a"}, {"r"});
  SetIntsAttribute(m.Node("Conv", {"r", "w1"}, {"b"}), "pads", {1, 1, 1, 1});
  SetIntAttribute(m.Node("Concat", {"a", "b"}, {"c"}), "axis", 1);
  m.Node("Conv", {"c", "w2"}, {"d"});
  m.Node("Add", {"c", "d"}, {"y"});
  m.Output("y");
  FuseGrowingRegionsAndCompare(m.model(), "branches");

  // NAS cells' FactorizedReduce: a shifted path (Pad, Slice) beside a plain one.
  OnnxTestModel f;
  f.Input("x", {1, 2, 8, 8});
  f.IntWeight("pads", {0, 0, 0, 0, 0, 0, 1, 1});
  f.IntWeight("starts", {1, 1});
  f.IntWeight("ends", {9, 9});
  f.IntWeight("axes", {2, 3});
  f.Weight("w", {2, 2, 1, 1}, &rng);
  f.Node("Relu", {"x"}, {"r"});
  SetIntsAttribute(f.Node("Conv", {"r", "w"}, {"a"}), "strides", {2, 2});
  f.Node("Pad", {"r", "pads"}, {"padded"});
  f.Node("Slice", {"padded", "starts", "ends", "axes"}, {"shifted"});
  SetIntsAttribute(f.Node("Conv", {"shifted", "w"}, {"b"}), "strides", {2, 2});
  SetIntAttribute(f.Node("Concat", {"a", "b"}, {"y"}), "axis", 1);
  f.Output("y");
  FuseGrowingRegionsAndCompare(f.model(), "factorized reduce");
}

}  // namespace
}  // namespace ordo
