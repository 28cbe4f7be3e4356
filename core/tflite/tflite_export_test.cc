#include "core/tflite/tflite_export.h"

#include <cstring>
#include <string>
#include <vector>

#include "core/compile/compile.h"
#include "core/testing/status_matchers.h"
#include "core/tflite/tflite_import.h"
#include "core/tflite/tflite_model.h"
#include "core/tflite/tflite_test_model.h"
#include "core/util/clock.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "core/onnx/onnx_import.h"
#include "onnx/onnx_pb.h"

namespace ordo {
namespace {

using ::ordo::testing::StatusIs;
using ::ordo::testing::TfliteTestModel;
using ::testing::HasSubstr;
using namespace ::ordo::testing;  // NOLINT: the kTflite* codes

// Two branches from x; the file runs both big producers first, so the best
// order (finish one branch, then the other) has a lower peak.
TfliteTestModel Branches() {
  TfliteTestModel m;
  const int32_t x = m.Tensor({"x", {1, 16}});
  const int32_t w = m.Tensor({"w", {16}, kTfliteInt8, /*weight=*/true});
  const int32_t a = m.Tensor({"a", {1, 1024}});
  const int32_t b = m.Tensor({"b", {1, 1024}});
  const int32_t a2 = m.Tensor({"a2", {1, 16}});
  const int32_t b2 = m.Tensor({"b2", {1, 16}});
  const int32_t y = m.Tensor({"y", {1, 32}});
  m.Operator({kTfliteConv2d, {x, w}, {a}});
  m.Operator({kTfliteConv2d, {x, w}, {b}});
  m.Operator({kTfliteConv2d, {a, w}, {a2}});
  m.Operator({kTfliteConv2d, {b, w}, {b2}});
  m.Operator({kTfliteConcat, {a2, b2}, {y}});
  m.Inputs({x});
  m.Outputs({y});
  return m;
}

CompileResult CompileOf(const Graph& graph) {
  CompileOptions options;
  options.alignment = 16;
  RealClock clock;
  absl::StatusOr<CompileResult> result = Compile(graph, options, clock);
  EXPECT_TRUE(result.ok()) << result.status();
  return *std::move(result);
}

// The offline plan of `bytes` as TFLM reads it: the buffer of the single
// metadata entry named OfflineMemoryAllocation.
std::vector<int32_t> ReadPlan(const std::string& bytes, int* entries) {
  const tflite_fb::Model* model = *VerifiedTfliteModel(bytes);
  std::vector<int32_t> plan;
  *entries = 0;
  for (const tflite_fb::Metadata* m : *model->metadata()) {
    if (m->name()->str() != kOfflineMemoryAllocation) continue;
    ++*entries;
    const auto* data = model->buffers()->Get(m->buffer())->data();
    EXPECT_EQ(reinterpret_cast<uintptr_t>(data->data()) % 16, 0u);
    plan.resize(data->size() / 4);
    std::memcpy(plan.data(), data->data(), data->size());
  }
  return plan;
}

TEST(TfliteExportTest, ReordersOperatorsAndKeepsTheOriginalBytes) {
  const std::string original = Branches().Build();
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportTflite(original));
  const CompileResult result = CompileOf(graph);
  ASSERT_LT(result.peak_bytes, result.baselines[0].peak_bytes);
  ORDO_ASSERT_OK_AND_ASSIGN(std::string emitted,
                            ReorderTfliteModel(original, graph, result.schedule, result.arena));
  // Prepended: the original bytes follow a prefix of a multiple of 16.
  ASSERT_GT(emitted.size(), original.size());
  EXPECT_EQ((emitted.size() - original.size()) % 16, 0u);
  EXPECT_EQ(emitted.substr(emitted.size() - original.size()), original);
  ORDO_ASSERT_OK_AND_ASSIGN(Graph reordered, ImportTflite(emitted));
  ASSERT_EQ(reordered.num_ops(), graph.num_ops());
  for (int32_t k = 0; k < graph.num_ops(); ++k) {
    // Operator k of the new file is the k-th op of the schedule.
    const Op& op = graph.op(result.schedule[k]);
    EXPECT_EQ(reordered.op(k).type, op.type);
    std::vector<std::string> in_new, in_old;
    for (TensorId t : reordered.op(k).inputs) in_new.push_back(reordered.tensor(t).name);
    for (TensorId t : op.inputs) in_old.push_back(graph.tensor(t).name);
    EXPECT_EQ(in_new, in_old) << k;
  }
  // Same tensors, so the same peak for the same order.
  EXPECT_EQ(CompileOf(reordered).baselines[0].peak_bytes, result.peak_bytes);
}

// The weight keeps -1 (TFLM does not plan constants); subgraph 1's tensor,
// which TFLM allocates but never touches (subgraph 0 does not call it),
// sits at 0: at -1 TFLM would stack it above the plan.
TEST(TfliteExportTest, OfflinePlanHoldsOrdoOffsetsAndZeroForTensorsNothingUses) {
  TfliteTestModel model = Branches();
  model.ExtraSubgraph();
  const std::string original = model.Build();
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportTflite(original));
  const CompileResult result = CompileOf(graph);
  ORDO_ASSERT_OK_AND_ASSIGN(std::string emitted,
                            ReorderTfliteModel(original, graph, result.schedule, result.arena));
  int entries = 0;
  const std::vector<int32_t> plan = ReadPlan(emitted, &entries);
  EXPECT_EQ(entries, 1);
  ASSERT_EQ(plan.size(), 3u + 7 + 1);  // 7 tensors in subgraph 0, 1 in subgraph 1
  EXPECT_EQ(plan[0], 0);               // version
  EXPECT_EQ(plan[1], 0);               // subgraph
  EXPECT_EQ(plan[2], 8);               // tensors over all subgraphs
  EXPECT_EQ(plan[3 + 1], -1);          // the weight
  EXPECT_EQ(plan[3 + 7], 0);           // subgraph 1's tensor
  for (const TensorPlacement& p : result.arena.tensors) {
    const std::string& name = graph.tensor(p.tensor).name;
    const std::vector<std::string> names = {"x", "w", "a", "b", "a2", "b2", "y"};
    const int32_t i = static_cast<int32_t>(std::find(names.begin(), names.end(), name) -
                                           names.begin());
    ASSERT_LT(i, 7);
    EXPECT_EQ(plan[3 + i], p.offset) << name;
    EXPECT_EQ(plan[3 + i] % 16, 0) << name;
  }
}

// A subgraph output held in a buffer (a constant the converter kept as an
// output) is read by the runtime from the file: the import leaves it out of
// the schedule with a note, and the emitted plan keeps -1 for it, as for
// every constant.
TEST(TfliteExportTest, AConstantOutputKeepsMinusOneAndIsNoted) {
  TfliteTestModel model = Branches();
  model.Outputs({6, 1});  // y, then the weight w
  const std::string original = model.Build();
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportTflite(original));
  ASSERT_EQ(graph.outputs().size(), 1u);
  EXPECT_EQ(graph.tensor(graph.outputs()[0]).name, "y");
  EXPECT_THAT(graph.notes(), ::testing::ElementsAre(HasSubstr("graph output \"w\" is a constant")));
  const CompileResult result = CompileOf(graph);
  ORDO_ASSERT_OK_AND_ASSIGN(std::string emitted,
                            ReorderTfliteModel(original, graph, result.schedule, result.arena));
  int entries = 0;
  const std::vector<int32_t> plan = ReadPlan(emitted, &entries);
  ASSERT_EQ(plan.size(), 3u + 7);
  EXPECT_EQ(plan[3 + 1], -1);  // the weight
  ORDO_ASSERT_OK_AND_ASSIGN(Graph reordered, ImportTflite(emitted));
  EXPECT_EQ(reordered.outputs().size(), 1u);
}

// TFLM keeps variables in its persistent tail, not at their plan entry: the
// plan closes the variables' blocks, so the planned area is the arena less
// the variables (they lived whole, so nothing else overlapped them).
TEST(TfliteExportTest, VariablesLeaveNoGapInThePlan) {
  TfliteTestModel m;
  const int32_t x = m.Tensor({"x", {1, 64}});
  const int32_t h = m.Tensor({"h", {1, 4096}, kTfliteInt8, false, /*is_variable=*/true});
  const int32_t c = m.Tensor({"c", {1, 2048}, kTfliteInt8, false, /*is_variable=*/true});
  const int32_t a = m.Tensor({"a", {1, 64}});
  const int32_t y = m.Tensor({"y", {1, 64}});
  m.Operator({kTfliteAdd, {x, h}, {a}});
  m.Operator({kTfliteAdd, {a, c}, {y}});
  m.Inputs({x});
  m.Outputs({y});
  const std::string original = m.Build();
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportTflite(original));
  const CompileResult result = CompileOf(graph);
  for (const bool outside : {false, true}) {
    TfliteExportOptions options;
    options.inputs_outputs_outside_plan = outside;
    ORDO_ASSERT_OK_AND_ASSIGN(std::vector<int32_t> plan,
                              TfliteOfflinePlan(original, graph, result.arena, options));
    EXPECT_EQ(plan[3 + h], -1);
    EXPECT_EQ(plan[3 + c], -1);
    int64_t planned_area = 0;
    std::vector<std::pair<int64_t, int64_t>> blocks;
    for (const TensorPlacement& p : result.arena.tensors) {
      const std::string& name = graph.tensor(p.tensor).name;
      const int32_t i = name == "x" ? x : name == "a" ? a : name == "y" ? y : -1;
      if (i < 0 || plan[3 + i] < 0) continue;
      EXPECT_EQ(plan[3 + i] % 16, 0) << name;
      planned_area = std::max<int64_t>(planned_area, plan[3 + i] + p.size);
    }
    EXPECT_EQ(planned_area + 4096 + 2048, result.arena.arena_bytes) << outside;
  }
  // Co-live tensors still do not overlap after the move.
  ORDO_ASSERT_OK_AND_ASSIGN(std::vector<int32_t> plan,
                            TfliteOfflinePlan(original, graph, result.arena));
  for (const TensorPlacement& p : result.arena.tensors) {
    for (const TensorPlacement& q : result.arena.tensors) {
      const std::string& pn = graph.tensor(p.tensor).name;
      const std::string& qn = graph.tensor(q.tensor).name;
      if (p.tensor >= q.tensor || pn == "h" || pn == "c" || qn == "h" || qn == "c") continue;
      if (p.offset == q.offset && p.size == q.size) continue;  // an in-place pair
      if (p.last_step < q.first_step || q.last_step < p.first_step) continue;
      const auto index = [&](const std::string& n) { return n == "x" ? x : n == "a" ? a : y; };
      const int64_t po = plan[3 + index(pn)], qo = plan[3 + index(qn)];
      EXPECT_TRUE(po + p.size <= qo || qo + q.size <= po) << pn << " " << qn;
    }
  }
}

TEST(TfliteExportTest, ReplacesAnExistingPlanAndKeepsOtherMetadata) {
  TfliteTestModel model = Branches();
  model.Metadata(kOfflineMemoryAllocation, std::string(16, '\x01'));
  model.Metadata("min_runtime_version", "1.5.0");
  const std::string original = model.Build();
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportTflite(original));
  const CompileResult result = CompileOf(graph);
  ORDO_ASSERT_OK_AND_ASSIGN(std::string emitted,
                            ReorderTfliteModel(original, graph, result.schedule, result.arena));
  int entries = 0;
  EXPECT_EQ(ReadPlan(emitted, &entries).size(), 3u + 7);
  EXPECT_EQ(entries, 1);
  const tflite_fb::Model* out = *VerifiedTfliteModel(emitted);
  bool kept = false;
  for (const tflite_fb::Metadata* m : *out->metadata()) {
    if (m->name()->str() != "min_runtime_version") continue;
    const auto* data = out->buffers()->Get(m->buffer())->data();
    kept = std::string(reinterpret_cast<const char*>(data->data()), data->size()) == "1.5.0";
  }
  EXPECT_TRUE(kept);
  // Emitting again from the emitted file replaces, never duplicates.
  ORDO_ASSERT_OK_AND_ASSIGN(Graph again, ImportTflite(emitted));
  const CompileResult second = CompileOf(again);
  ORDO_ASSERT_OK_AND_ASSIGN(std::string twice,
                            ReorderTfliteModel(emitted, again, second.schedule, second.arena));
  ReadPlan(twice, &entries);
  EXPECT_EQ(entries, 1);
}

TEST(TfliteExportTest, RefusesBadSchedulesAndAlignments) {
  const std::string original = Branches().Build();
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportTflite(original));
  CompileResult result = CompileOf(graph);
  std::vector<OpId> backwards(result.schedule.rbegin(), result.schedule.rend());
  EXPECT_THAT(ReorderTfliteModel(original, graph, backwards, result.arena),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("before the producer")));
  ArenaPlan eight = result.arena;
  eight.alignment = 8;
  EXPECT_THAT(ReorderTfliteModel(original, graph, result.schedule, eight),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("multiple of 16")));
  ORDO_ASSERT_OK_AND_ASSIGN(Graph other, ImportTflite(Branches().Build()));
  TfliteTestModel chain;
  const int32_t x = chain.Tensor({"x", {4}});
  const int32_t y = chain.Tensor({"y", {4}});
  chain.Operator({kTfliteRelu, {x}, {y}});
  chain.Inputs({x});
  chain.Outputs({y});
  EXPECT_THAT(ReorderTfliteModel(chain.Build(), other, result.schedule, result.arena),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("imported from it")));
}

// TFLM has one arena: a placement across memory pools (offsets per pool,
// which may coincide) is refused, the same arena in one pool is written.
TEST(TfliteExportTest, APlacementAcrossPoolsIsRefusedAndOnePoolIsWritten) {
  const std::string original = Branches().Build();
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportTflite(original));
  CompileResult result = CompileOf(graph);
  ArenaPlan one_pool = result.arena;
  for (TensorPlacement& tensor : one_pool.tensors) tensor.pool = 1;
  ORDO_ASSERT_OK_AND_ASSIGN(std::vector<int32_t> plan,
                            TfliteOfflinePlan(original, graph, one_pool));
  ORDO_ASSERT_OK_AND_ASSIGN(std::vector<int32_t> flat,
                            TfliteOfflinePlan(original, graph, result.arena));
  EXPECT_EQ(plan, flat);
  ArenaPlan two_pools = one_pool;
  two_pools.tensors.back().pool = 0;
  EXPECT_THAT(
      ReorderTfliteModel(original, graph, result.schedule, two_pools),
      StatusIs(absl::StatusCode::kInvalidArgument,
               ::testing::AllOf(HasSubstr("several memory pools"), HasSubstr("--one-arena"))));
}

// The same network as ONNX and as .tflite: x feeds two Relu chains joined
// by a Concat. Both importers must give the same peaks.
TEST(TfliteExportTest, OnnxAndTfliteOfTheSameNetworkHaveTheSamePeak) {
  constexpr int32_t kSoftmax = 25;
  TfliteTestModel tflite;
  const int32_t x = tflite.Tensor({"x", {1, 1024}});
  const int32_t a = tflite.Tensor({"a", {1, 1024}});
  const int32_t b = tflite.Tensor({"b", {1, 1024}});
  const int32_t a2 = tflite.Tensor({"a2", {1, 1024}});
  const int32_t b2 = tflite.Tensor({"b2", {1, 1024}});
  const int32_t y = tflite.Tensor({"y", {1, 2048}});
  tflite.Operator({kSoftmax, {x}, {a}});
  tflite.Operator({kSoftmax, {x}, {b}});
  tflite.Operator({kSoftmax, {a}, {a2}});
  tflite.Operator({kSoftmax, {b}, {b2}});
  tflite.Operator({kTfliteConcat, {a2, b2}, {y}});
  tflite.Inputs({x});
  tflite.Outputs({y});

  onnx::ModelProto onnx;
  onnx.set_ir_version(7);
  onnx.add_opset_import()->set_version(13);
  onnx::GraphProto& g = *onnx.mutable_graph();
  g.set_name("same");
  auto value = [](onnx::ValueInfoProto* info, const std::string& name, int64_t n) {
    info->set_name(name);
    auto* type = info->mutable_type()->mutable_tensor_type();
    type->set_elem_type(onnx::TensorProto::INT8);
    type->mutable_shape()->add_dim()->set_dim_value(1);
    type->mutable_shape()->add_dim()->set_dim_value(n);
  };
  auto node = [&](const std::string& op, const std::vector<std::string>& in,
                  const std::string& out) {
    onnx::NodeProto& n = *g.add_node();
    n.set_op_type(op);
    for (const std::string& i : in) n.add_input(i);
    n.add_output(out);
    return &n;
  };
  value(g.add_input(), "x", 1024);
  value(g.add_output(), "y", 2048);
  for (const auto& [name, n] : std::vector<std::pair<std::string, int64_t>>{
           {"a", 1024}, {"b", 1024}, {"a2", 1024}, {"b2", 1024}}) {
    value(g.add_value_info(), name, n);
  }
  // Not in-place under either name (spec: In-place).
  node("Softmax", {"x"}, "a");
  node("Softmax", {"x"}, "b");
  node("Softmax", {"a"}, "a2");
  node("Softmax", {"b"}, "b2");
  onnx::AttributeProto* axis = node("Concat", {"a2", "b2"}, "y")->add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(1);

  ORDO_ASSERT_OK_AND_ASSIGN(Graph from_tflite, ImportTflite(tflite.Build()));
  ORDO_ASSERT_OK_AND_ASSIGN(Graph from_onnx, ImportOnnx(onnx.SerializeAsString()));
  const CompileResult t = CompileOf(from_tflite);
  const CompileResult o = CompileOf(from_onnx);
  EXPECT_EQ(t.peak_bytes, o.peak_bytes);
  EXPECT_EQ(t.baselines[0].peak_bytes, o.baselines[0].peak_bytes);
  EXPECT_EQ(t.arena.lower_bound_bytes, o.arena.lower_bound_bytes);
}

}  // namespace
}  // namespace ordo
