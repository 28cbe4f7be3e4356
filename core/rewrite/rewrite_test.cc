#include "core/rewrite/rewrite.h"

#include <random>
#include <string>
#include <vector>

#include "core/memory/simulator.h"
#include "core/rewrite/onnx_test_model.h"
#include "core/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::IsEmpty;

// Four 32-channel branches concatenated (128 channels) into a 1x1 Conv down
// to 16 channels: the Concat's inputs and output are live together, which
// partial Convs avoid.
OnnxTestModel WideConcatModel() {
  OnnxTestModel m;
  m.Input("x", {1, 8, 16, 16});
  std::vector<std::string> branches;
  for (int i = 0; i < 4; ++i) {
    const std::string w = "w" + std::to_string(i);
    const std::string b = "b" + std::to_string(i);
    m.Weight(w, {32, 8, 1, 1}, nullptr);
    m.Node("Conv", {"x", w}, {b});
    branches.push_back(b);
  }
  SetIntAttribute(m.Node("Concat", branches, {"cat"}), "axis", 1);
  m.Weight("wy", {16, 128, 1, 1}, nullptr);
  m.Weight("by", {16}, nullptr);
  m.Node("Conv", {"cat", "wy", "by"}, {"y"});
  m.Output("y");
  return m;
}

TEST(RewriteForMemoryTest, PartitionsAConcatIntoPartialConvs) {
  ORDO_ASSERT_OK_AND_ASSIGN(RewriteResult result,
                            RewriteForMemory(WideConcatModel().model(), RewriteOptions()));
  // Before: 4 branches (32 KiB each) + their concat (128 KiB) at the
  // Concat's step (x died with the last branch).
  EXPECT_EQ(result.original_peak_bytes, 4 * 32768 + 131072);
  ASSERT_EQ(result.rewrites.size(), 1u);
  const AppliedRewrite& applied = result.rewrites[0];
  EXPECT_EQ(applied.concat, "cat_op");
  EXPECT_THAT(applied.convs, ElementsAre("y_op"));
  EXPECT_THAT(applied.partitions, ElementsAre(ConvPartition::kChannelWise));
  EXPECT_EQ(applied.peak_before_bytes, result.original_peak_bytes);
  EXPECT_EQ(applied.peak_after_bytes, result.schedule.peak_bytes);
  // After: x (8 KiB), one branch (32 KiB), the running sum and a partial
  // (16 KiB each) at most.
  EXPECT_EQ(applied.peak_after_bytes, 8192 + 32768 + 2 * 16384);
  EXPECT_EQ(result.sites_found, 1);

  // The graph has no Concat left, four partial Convs and three Adds, and
  // the reported peak is the simulator's for the returned schedule.
  int concats = 0, convs = 0, adds = 0;
  for (const Op& op : result.graph.ops()) {
    concats += op.type == "Concat";
    convs += op.type == "Conv";
    adds += op.type == "Add";
  }
  EXPECT_EQ(concats, 0);
  EXPECT_EQ(convs, 8);
  EXPECT_EQ(adds, 3);
  ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel memory, BuildMemoryModel(result.graph, MemoryOptions()));
  ORDO_ASSERT_OK_AND_ASSIGN(int64_t peak, SimulatePeak(memory, result.schedule.order));
  EXPECT_EQ(peak, applied.peak_after_bytes);
}

TEST(RewriteForMemoryTest, WeightlessModelsStayWeightless) {
  ORDO_ASSERT_OK_AND_ASSIGN(RewriteResult result,
                            RewriteForMemory(WideConcatModel().model(), RewriteOptions()));
  ASSERT_THAT(result.rewrites, ::testing::SizeIs(1));
  for (const onnx::TensorProto& t : result.model.graph().initializer()) {
    EXPECT_EQ(t.data_location(), onnx::TensorProto::EXTERNAL) << t.name();
    EXPECT_EQ(t.float_data_size(), 0) << t.name();
    EXPECT_FALSE(t.has_raw_data()) << t.name();
  }
}

TEST(RewriteForMemoryTest, KeepsNothingThatDoesNotLowerThePeak) {
  // One 4-channel branch and the input: the Concat is tiny next to the
  // 64-channel Conv output, which bounds the peak either way.
  OnnxTestModel m;
  m.Input("x", {1, 4, 8, 8});
  m.Weight("wa", {4, 4, 1, 1}, nullptr);
  m.Node("Conv", {"x", "wa"}, {"a"});
  SetIntAttribute(m.Node("Concat", {"x", "a"}, {"cat"}), "axis", 1);
  m.Weight("wy", {64, 8, 3, 3}, nullptr);
  SetIntsAttribute(m.Node("Conv", {"cat", "wy"}, {"y"}), "pads", {1, 1, 1, 1});
  m.Output("y");
  ORDO_ASSERT_OK_AND_ASSIGN(RewriteResult result, RewriteForMemory(m.model(), RewriteOptions()));
  EXPECT_EQ(result.sites_found, 1);
  EXPECT_THAT(result.rewrites, IsEmpty());
  EXPECT_EQ(result.schedule.peak_bytes, result.original_peak_bytes);
  EXPECT_EQ(result.model.graph().node_size(), 3);
}

TEST(RewriteForMemoryTest, ModeNoneOnlySchedules) {
  RewriteOptions options;
  options.mode = RewriteMode::kNone;
  ORDO_ASSERT_OK_AND_ASSIGN(RewriteResult result,
                            RewriteForMemory(WideConcatModel().model(), options));
  EXPECT_EQ(result.sites_found, 0);
  EXPECT_THAT(result.rewrites, IsEmpty());
  EXPECT_EQ(result.schedule.peak_bytes, result.original_peak_bytes);
}

TEST(RewriteForMemoryTest, ParsesModes) {
  ORDO_ASSERT_OK_AND_ASSIGN(RewriteMode mode, ParseRewriteMode("identity"));
  EXPECT_EQ(mode, RewriteMode::kIdentity);
  EXPECT_EQ(RewriteModeName(RewriteMode::kNone), "none");
  EXPECT_THAT(ParseRewriteMode("motes"),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("none|identity")));
}

TEST(RewriteForMemoryTest, UnknownSchedulerIsAnError) {
  RewriteOptions options;
  options.scheduler = "nope";
  EXPECT_THAT(RewriteForMemory(WideConcatModel().model(), options),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("nope")));
}

}  // namespace
}  // namespace ordo
