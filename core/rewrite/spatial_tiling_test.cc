#include "core/rewrite/spatial_tiling.h"

#include <random>
#include <string>
#include <vector>

#include "core/onnx/onnx_import.h"
#include "core/rewrite/cost_model.h"
#include "core/rewrite/model_edit.h"
#include "core/rewrite/onnx_test_model.h"
#include "core/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::StatusIs;
using ::testing::AllOf;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

std::vector<int64_t> Ints(const onnx::NodeProto& node, const std::string& name) {
  for (const auto& a : node.attribute()) {
    if (a.name() == name) return {a.ints().begin(), a.ints().end()};
  }
  return {};
}

std::vector<const onnx::NodeProto*> NodesOfType(const onnx::ModelProto& model,
                                                const std::string& type) {
  std::vector<const onnx::NodeProto*> nodes;
  for (const auto& n : model.graph().node()) {
    if (n.op_type() == type) nodes.push_back(&n);
  }
  return nodes;
}

// The producer of `tensor` in `model`, or null.
const onnx::NodeProto* ProducerOf(const onnx::ModelProto& model, const std::string& tensor) {
  for (const auto& n : model.graph().node()) {
    for (const auto& o : n.output()) {
      if (o == tensor) return &n;
    }
  }
  return nullptr;
}

// starts, ends, axes of a Slice node.
std::vector<std::vector<int64_t>> SliceOperands(const onnx::ModelProto& model,
                                                const onnx::NodeProto& slice) {
  std::vector<std::vector<int64_t>> out;
  for (int i = 1; i < 4; ++i) {
    out.push_back(ConstantInts(model.graph(), slice.input(i)).value_or(std::vector<int64_t>{}));
  }
  return out;
}

// x [1,2,10,10] -> Conv 3x3 s2 p1 -> Relu -> y [1,4,5,5]
onnx::ModelProto StridedModel() {
  OnnxTestModel m;
  m.Input("x", {1, 2, 10, 10});
  m.Weight("w", {4, 2, 3, 3}, nullptr);
  onnx::NodeProto& conv = m.Node("Conv", {"x", "w"}, {"c"});
  SetIntsAttribute(conv, "strides", {2, 2});
  SetIntsAttribute(conv, "pads", {1, 1, 1, 1});
  m.Node("Relu", {"c"}, {"y"});
  m.Output("y");
  return m.model();
}

TEST(CheckSpatialTilingTest, RejectsBadRegionsNamingTheProblem) {
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(StridedModel()));
  EXPECT_THAT(CheckSpatialTiling(graph, {{}, 2, 1}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("empty")));
  EXPECT_THAT(CheckSpatialTiling(graph, {{"c_op", "nope"}, 2, 1}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"nope\"")));
  EXPECT_THAT(CheckSpatialTiling(graph, {{"c_op"}, 0, 1}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(">= 1")));
  // y has 5 rows.
  EXPECT_THAT(CheckSpatialTiling(graph, {{"c_op", "y_op"}, 6, 1}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"y\"")));
  ORDO_EXPECT_OK(CheckSpatialTiling(graph, {{"c_op", "y_op"}, 5, 5}));
  ORDO_EXPECT_OK(CheckSpatialTiling(graph, {{"c_op", "y_op", "c_op"}, 2, 3}));
}

TEST(CheckSpatialTilingTest, ExplicitRowStartsRiseFromZeroWithinTheRows) {
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(StridedModel()));
  auto with_starts = [](std::vector<int64_t> starts) {
    SpatialTiling tiling{{"c_op", "y_op"}, static_cast<int32_t>(starts.size()), 1};
    tiling.row_starts = std::move(starts);
    return tiling;
  };
  ORDO_EXPECT_OK(CheckSpatialTiling(graph, with_starts({0, 1, 4})));
  // Unbalanced pieces: rows 0, 1-3 and 4 of y, each tile its own halo.
  ORDO_ASSERT_OK_AND_ASSIGN(int64_t extra, SpatialTilingExtraMacs(graph, with_starts({0, 1, 4})));
  EXPECT_GE(extra, 0);
  for (const std::vector<int64_t>& bad :
       std::vector<std::vector<int64_t>>{{1, 2}, {0, 2, 2}, {0, 3, 1}}) {
    EXPECT_THAT(CheckSpatialTiling(graph, with_starts(bad)),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("row_starts")));
  }
  SpatialTiling miscounted = with_starts({0, 2});
  miscounted.parts_h = 3;
  EXPECT_THAT(CheckSpatialTiling(graph, miscounted),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("parts_h = 3")));
  // y has 5 rows: a piece cannot start at row 5.
  EXPECT_THAT(CheckSpatialTiling(graph, with_starts({0, 5})),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"y\"")));
}

TEST(CheckSpatialTilingTest, RejectsARegionAPathLeavesAndReenters) {
  OnnxTestModel m;
  m.Input("x", {1, 2, 8, 8});
  m.Node("Relu", {"x"}, {"a"});
  m.Node("Sigmoid", {"a"}, {"b"});  // outside
  m.Node("Add", {"a", "b"}, {"y"});
  m.Output("y");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(m.model()));
  EXPECT_THAT(CheckSpatialTiling(graph, {{"a_op", "y_op"}, 2, 1}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("not convex"), HasSubstr("y_op"), HasSubstr("b_op"))));
  ORDO_EXPECT_OK(CheckSpatialTiling(graph, {{"a_op", "b_op", "y_op"}, 2, 1}));
}

TEST(CheckSpatialTilingTest, RejectsOpsThatReduceOrMoveRowsNamingThem) {
  OnnxTestModel m;
  m.Input("x", {1, 2, 8, 8});
  m.Node("Relu", {"x"}, {"a"});
  m.Node("GlobalAveragePool", {"a"}, {"g"});
  SetIntAttribute(m.Node("Concat", {"a", "a"}, {"h"}), "axis", 2);
  m.IntWeight("pads", {0, 0, 1, 1, 0, 0, 1, 1});
  m.Node("Pad", {"a", "pads"}, {"p"});
  m.Node("Flatten", {"g"}, {"f"});
  m.Output("f");
  m.Output("h");
  m.Output("p");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(m.model()));
  EXPECT_THAT(CheckSpatialTiling(graph, {{"a_op", "g_op"}, 2, 1}),
              StatusIs(absl::StatusCode::kUnimplemented, HasSubstr("GlobalAveragePool \"g_op\"")));
  EXPECT_THAT(CheckSpatialTiling(graph, {{"a_op", "h_op"}, 2, 1}),
              StatusIs(absl::StatusCode::kUnimplemented,
                       AllOf(HasSubstr("Concat \"h_op\""), HasSubstr("axis 2"))));
  EXPECT_THAT(CheckSpatialTiling(graph, {{"p_op"}, 2, 1}),
              StatusIs(absl::StatusCode::kUnimplemented, HasSubstr("Pad \"p_op\"")));
  EXPECT_THAT(CheckSpatialTiling(graph, {{"f_op"}, 2, 1}),
              StatusIs(absl::StatusCode::kUnimplemented, HasSubstr("Flatten \"f_op\"")));
}

TEST(CheckSpatialTilingTest, RejectsATileWhoseWindowReadsOnlyPadding) {
  // A 1x1 Conv with pad 1: output row 0 reads row -1 only.
  OnnxTestModel m;
  m.Input("x", {1, 2, 4, 4});
  m.Weight("w", {2, 2, 1, 1}, nullptr);
  SetIntsAttribute(m.Node("Conv", {"x", "w"}, {"y"}), "pads", {1, 1, 1, 1});
  m.Output("y");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(m.model()));
  EXPECT_THAT(CheckSpatialTiling(graph, {{"y_op"}, 6, 1}),
              StatusIs(absl::StatusCode::kUnimplemented, HasSubstr("Conv \"y_op\"")));
}

// Output rows [0,2) and [2,5) of a 3x3 stride-2 pad-1 Conv read input rows
// [0,4) (top pad kept) and [3,10) (bottom pad kept, no top pad).
TEST(ApplySpatialTilingTest, StridedConvHaloAndBorderPads) {
  const onnx::ModelProto model = StridedModel();
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(model));
  ORDO_ASSERT_OK_AND_ASSIGN(onnx::ModelProto out,
                            ApplySpatialTiling(model, graph, {{"c_op", "y_op"}, 2, 1}));
  std::vector<const onnx::NodeProto*> convs = NodesOfType(out, "Conv");
  ASSERT_EQ(convs.size(), 2u);
  EXPECT_THAT(Ints(*convs[0], "pads"), ElementsAre(1, 1, 0, 1));
  EXPECT_THAT(Ints(*convs[1], "pads"), ElementsAre(0, 1, 1, 1));
  const onnx::NodeProto* slice0 = ProducerOf(out, convs[0]->input(0));
  const onnx::NodeProto* slice1 = ProducerOf(out, convs[1]->input(0));
  ASSERT_NE(slice0, nullptr);
  ASSERT_NE(slice1, nullptr);
  EXPECT_THAT(SliceOperands(out, *slice0),
              ElementsAre(ElementsAre(0), ElementsAre(4), ElementsAre(2)));
  EXPECT_THAT(SliceOperands(out, *slice1),
              ElementsAre(ElementsAre(3), ElementsAre(10), ElementsAre(2)));
  EXPECT_EQ(convs[0]->input(1), "w");  // weights shared
  std::vector<const onnx::NodeProto*> concats = NodesOfType(out, "Concat");
  ASSERT_EQ(concats.size(), 1u);
  EXPECT_EQ(concats[0]->output(0), "y");

  ORDO_ASSERT_OK_AND_ASSIGN(Graph tiled, Import(out));
  EXPECT_EQ(tiled.num_ops(), 2 + 2 + 2 + 1);
  EXPECT_EQ(tiled.tensor(*tiled.FindTensor("y")).dims, graph.tensor(*graph.FindTensor("y")).dims);
}

// x [1,1,8,5] -> Conv 3x3 p1 -> a -> Conv 3x3 p1 -> y, in 2 parts over H
// with cached halos. Tile 0 computes a rows [0,5) (from x rows [0,6)) and y
// rows [0,4); tile 1 computes only a rows [5,8) (from x rows [4,8)) and
// reads a rows [3,8) as Concat(Slice rows [3,5) of tile 0's a, its own).
// Recomputing would compute a rows [3,5) twice: 2 rows x 5 columns x 9 MACs.
TEST(ApplySpatialTilingTest, CachedHaloIsSlicedFromTheEarlierTile) {
  OnnxTestModel m;
  m.Input("x", {1, 1, 8, 5});
  m.Weight("w1", {1, 1, 3, 3}, nullptr);
  SetIntsAttribute(m.Node("Conv", {"x", "w1"}, {"a"}), "pads", {1, 1, 1, 1});
  m.Weight("w2", {1, 1, 3, 3}, nullptr);
  SetIntsAttribute(m.Node("Conv", {"a", "w2"}, {"y"}), "pads", {1, 1, 1, 1});
  m.Output("y");
  const onnx::ModelProto model = m.model();
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(model));
  const SpatialTiling recompute{{"a_op", "y_op"}, 2, 1};
  const SpatialTiling cache{{"a_op", "y_op"}, 2, 1, HaloMode::kCache};
  ORDO_ASSERT_OK_AND_ASSIGN(int64_t recomputed, SpatialTilingExtraMacs(graph, recompute));
  EXPECT_EQ(recomputed, 2 * 5 * 9);
  ORDO_ASSERT_OK_AND_ASSIGN(int64_t cached, SpatialTilingExtraMacs(graph, cache));
  EXPECT_EQ(cached, 0);
  EXPECT_THAT(CheckSpatialTiling(graph, {{"a_op", "y_op"}, 2, 2, HaloMode::kCache}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("H only")));

  ORDO_ASSERT_OK_AND_ASSIGN(onnx::ModelProto out, ApplySpatialTiling(model, graph, cache));
  std::vector<const onnx::NodeProto*> convs = NodesOfType(out, "Conv");
  ASSERT_EQ(convs.size(), 4u);  // a, y of tile 0; a, y of tile 1
  EXPECT_EQ(convs[0]->output(0), "a_tile0");
  EXPECT_EQ(convs[2]->output(0), "a_tile1");
  EXPECT_THAT(Ints(*convs[0], "pads"), ElementsAre(1, 1, 0, 1));
  EXPECT_THAT(Ints(*convs[1], "pads"), ElementsAre(1, 1, 0, 1));
  EXPECT_THAT(Ints(*convs[2], "pads"), ElementsAre(0, 1, 1, 1));
  EXPECT_THAT(Ints(*convs[3], "pads"), ElementsAre(0, 1, 1, 1));
  EXPECT_EQ(convs[1]->input(0), "a_tile0");  // tile 0 reads its own rows whole
  const onnx::NodeProto* x1 = ProducerOf(out, convs[2]->input(0));
  ASSERT_NE(x1, nullptr);
  EXPECT_EQ(x1->input(0), "x");
  EXPECT_THAT(SliceOperands(out, *x1), ElementsAre(ElementsAre(4), ElementsAre(8), ElementsAre(2)));
  const onnx::NodeProto* joined = ProducerOf(out, convs[3]->input(0));
  ASSERT_NE(joined, nullptr);
  ASSERT_EQ(joined->op_type(), "Concat");
  ASSERT_EQ(joined->input_size(), 2);
  EXPECT_EQ(joined->input(1), "a_tile1");
  const onnx::NodeProto* halo = ProducerOf(out, joined->input(0));
  ASSERT_NE(halo, nullptr);
  EXPECT_EQ(halo->input(0), "a_tile0");
  EXPECT_THAT(SliceOperands(out, *halo),
              ElementsAre(ElementsAre(3), ElementsAre(5), ElementsAre(2)));
  EXPECT_EQ(NodesOfType(out, "Slice").size(), 3u);  // x for each tile, the halo
  const onnx::NodeProto* y = ProducerOf(out, "y");
  ASSERT_NE(y, nullptr);
  EXPECT_EQ(y->op_type(), "Concat");
  EXPECT_THAT(std::vector<std::string>(y->input().begin(), y->input().end()),
              ElementsAre(convs[1]->output(0), convs[3]->output(0)));

  ORDO_ASSERT_OK_AND_ASSIGN(Graph tiled, Import(out));
  EXPECT_EQ(CostOf(tiled).macs, CostOf(graph).macs);
  EXPECT_EQ(tiled.tensor(*tiled.FindTensor("a_tile0")).dims, (std::vector<int64_t>{1, 1, 5, 5}));
  EXPECT_EQ(tiled.tensor(*tiled.FindTensor("a_tile1")).dims, (std::vector<int64_t>{1, 1, 3, 5}));
  EXPECT_EQ(tiled.tensor(*tiled.FindTensor("y")).dims, graph.tensor(*graph.FindTensor("y")).dims);
}

// A 3x3 Conv with dilation 2 and pad 2 over 9 rows, in 3 parts of 3 rows:
// the middle tile reads rows [1, 8) with no pad; the border tiles keep 2.
TEST(ApplySpatialTilingTest, DilatedConvHaloOverW) {
  OnnxTestModel m;
  m.Input("x", {1, 1, 4, 9});
  m.Weight("w", {1, 1, 3, 3}, nullptr);
  onnx::NodeProto& conv = m.Node("Conv", {"x", "w"}, {"y"});
  SetIntsAttribute(conv, "dilations", {2, 2});
  SetIntsAttribute(conv, "pads", {2, 2, 2, 2});
  m.Output("y");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(m.model()));
  ORDO_ASSERT_OK_AND_ASSIGN(onnx::ModelProto out,
                            ApplySpatialTiling(m.model(), graph, {{"y_op"}, 1, 3}));
  std::vector<const onnx::NodeProto*> convs = NodesOfType(out, "Conv");
  ASSERT_EQ(convs.size(), 3u);
  EXPECT_THAT(Ints(*convs[0], "pads"), ElementsAre(2, 2, 2, 0));
  EXPECT_THAT(Ints(*convs[1], "pads"), ElementsAre(2, 0, 2, 0));
  EXPECT_THAT(Ints(*convs[2], "pads"), ElementsAre(2, 0, 2, 2));
  EXPECT_THAT(SliceOperands(out, *ProducerOf(out, convs[0]->input(0))),
              ElementsAre(ElementsAre(0), ElementsAre(5), ElementsAre(3)));
  EXPECT_THAT(SliceOperands(out, *ProducerOf(out, convs[1]->input(0))),
              ElementsAre(ElementsAre(1), ElementsAre(8), ElementsAre(3)));
  EXPECT_THAT(SliceOperands(out, *ProducerOf(out, convs[2]->input(0))),
              ElementsAre(ElementsAre(4), ElementsAre(9), ElementsAre(3)));
  const onnx::NodeProto* concat = ProducerOf(out, "y");
  ASSERT_NE(concat, nullptr);
  EXPECT_EQ(concat->op_type(), "Concat");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph tiled, Import(out));
  EXPECT_EQ(tiled.tensor(*tiled.FindTensor("y")).dims, (std::vector<int64_t>{1, 1, 4, 9}));
}

// 2x2 tiles of a 3x3 pad-1 Conv chain: concatenated over W per row, then
// over H; the intermediate tensor is computed with a one-row halo; every new
// tensor has value_info agreeing with what the importer infers.
TEST(ApplySpatialTilingTest, TwoByTwoImportsWithConsistentShapes) {
  OnnxTestModel m;
  m.Input("x", {1, 2, 7, 6});
  m.Weight("w1", {3, 2, 3, 3}, nullptr);
  SetIntsAttribute(m.Node("Conv", {"x", "w1"}, {"a"}), "pads", {1, 1, 1, 1});
  m.Weight("w2", {2, 3, 3, 3}, nullptr);
  SetIntsAttribute(m.Node("Conv", {"a", "w2"}, {"y"}), "pads", {1, 1, 1, 1});
  m.Node("Relu", {"y"}, {"z"});
  m.Output("z");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(m.model()));
  ORDO_ASSERT_OK_AND_ASSIGN(onnx::ModelProto out,
                            ApplySpatialTiling(m.model(), graph, {{"a_op", "y_op"}, 2, 2}));
  ORDO_ASSERT_OK_AND_ASSIGN(Graph tiled, Import(out));
  EXPECT_EQ(NodesOfType(out, "Conv").size(), 8u);
  EXPECT_EQ(NodesOfType(out, "Concat").size(), 3u);  // 2 rows, then H
  // Tile 0 computes a over rows [0,5) cols [0,4) (3 output rows + halo).
  const onnx::NodeProto* conv0 = NodesOfType(out, "Conv")[0];
  ORDO_ASSERT_OK_AND_ASSIGN(TensorId a0, [&]() -> absl::StatusOr<TensorId> {
    std::optional<TensorId> t = tiled.FindTensor(conv0->output(0));
    if (!t) return absl::NotFoundError(conv0->output(0));
    return *t;
  }());
  EXPECT_EQ(tiled.tensor(a0).dims, (std::vector<int64_t>{1, 3, 4, 4}));
  // value_info the rewrite wrote agrees with the dims of every tensor.
  for (const onnx::ValueInfoProto& v : out.graph().value_info()) {
    std::optional<TensorId> t = tiled.FindTensor(v.name());
    if (!t) continue;
    std::vector<int64_t> dims;
    for (const auto& d : v.type().tensor_type().shape().dim()) dims.push_back(d.dim_value());
    EXPECT_EQ(dims, tiled.tensor(*t).dims) << v.name();
    EXPECT_EQ(v.type().tensor_type().elem_type(), onnx::TensorProto::FLOAT) << v.name();
  }
  // The Relu outside reads the concatenated name.
  EXPECT_EQ(tiled.tensor(*tiled.FindTensor("z")).dims, (std::vector<int64_t>{1, 2, 7, 6}));
  // The region's internal tensor is gone.
  EXPECT_FALSE(tiled.FindTensor("a").has_value());
  // Sorted: the importer keeps file order.
  for (int32_t i = 0; i < tiled.num_ops(); ++i) EXPECT_EQ(tiled.op(i).source_index, i);
}

// A node between the region's nodes that reads a region output moves after
// the block; a Constant the region reads that comes after the region's first
// node moves before it.
TEST(ApplySpatialTilingTest, SplicesTheBlockInTopologicalOrder) {
  OnnxTestModel m;
  m.Input("x", {1, 2, 6, 6});
  m.Node("Relu", {"x"}, {"a"});
  m.Node("Sigmoid", {"a"}, {"s"});  // outside, reads the region output a
  onnx::NodeProto& c = m.Node("Constant", {}, {"k"});
  onnx::AttributeProto* value = c.add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(onnx::TensorProto::FLOAT);
  value->mutable_t()->add_float_data(2.0f);
  m.Node("Mul", {"a", "k"}, {"y"});
  m.Node("Add", {"y", "s"}, {"z"});
  m.Output("z");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(m.model()));
  ORDO_ASSERT_OK_AND_ASSIGN(onnx::ModelProto out,
                            ApplySpatialTiling(m.model(), graph, {{"a_op", "y_op"}, 3, 1}));
  std::vector<std::string> types;
  for (const auto& n : out.graph().node()) types.push_back(n.op_type());
  EXPECT_THAT(types, ElementsAre("Constant", "Slice", "Relu", "Mul", "Slice", "Relu", "Mul",
                                 "Slice", "Relu", "Mul", "Concat", "Concat", "Sigmoid", "Add"));
  ORDO_EXPECT_OK(Import(out).status());
}

TEST(ApplySpatialTilingTest, ModelAndGraphMustAgree) {
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(StridedModel()));
  OnnxTestModel other;
  other.Input("x", {1, 2, 10, 10});
  other.Node("Relu", {"x"}, {"q"});
  other.Output("q");
  EXPECT_THAT(ApplySpatialTiling(other.model(), graph, {{"c_op"}, 2, 1}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("c_op")));
}

}  // namespace
}  // namespace ordo
