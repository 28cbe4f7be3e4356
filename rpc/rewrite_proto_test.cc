// Rewriting's fields of the API <-> core: options, the summary, and the
// client's check of a response carrying a rewritten model.
#include <cmath>
#include <string>
#include <vector>

#include "core/compile/rewrite_compile.h"
#include "core/onnx/onnx_import.h"
#include "core/rewrite/onnx_test_model.h"
#include "core/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rpc/compile_proto.h"

namespace ordo::rpc {
namespace {

using ::ordo::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(RewriteProtoTest, OptionsDefaultToNoRewriting) {
  ORDO_ASSERT_OK_AND_ASSIGN(RewriteCompileOptions options, RewriteCompileOptionsFromProto({}, {}));
  EXPECT_EQ(options.mode, RewriteMode::kNone);
  EXPECT_FALSE(options.fit_fallback);
  EXPECT_DOUBLE_EQ(options.max_latency_overhead, 0.05);
  EXPECT_DOUBLE_EQ(options.latency.macs_per_second, LatencyModel().macs_per_second);
  EXPECT_DOUBLE_EQ(options.latency.op_overhead_seconds, LatencyModel().op_overhead_seconds);
  EXPECT_EQ(options.time_limit, absl::Seconds(10));
  EXPECT_EQ(options.beam_width, 0);  // the search's default
  EXPECT_TRUE(options.fusion);
}

TEST(RewriteProtoTest, OptionsRoundTrip) {
  RewriteCompileOptions options;
  for (const char* mode : {"none", "identity", "partition", "all", "auto"}) {
    ORDO_ASSERT_OK(SetRewriteMode(mode, options));
    options.max_latency_overhead = 0;  // explicit zero is kept, not the default
    options.latency = {2e9, 1e-6};
    options.beam_width = 3;
    options.fusion = false;
    v1::CompileOptions proto;
    v1::DeviceSpec device;
    RewriteCompileOptionsToProto(options, proto, device);
    EXPECT_EQ(proto.rewrite(), mode);
    ORDO_ASSERT_OK_AND_ASSIGN(RewriteCompileOptions back,
                              RewriteCompileOptionsFromProto(proto, device));
    EXPECT_EQ(back.mode, options.mode);
    EXPECT_EQ(back.fit_fallback, options.fit_fallback);
    EXPECT_DOUBLE_EQ(back.max_latency_overhead, 0);
    EXPECT_DOUBLE_EQ(back.latency.macs_per_second, 2e9);
    EXPECT_DOUBLE_EQ(back.latency.op_overhead_seconds, 1e-6);
    EXPECT_EQ(proto.beam_width(), 3);
    EXPECT_EQ(back.beam_width, 3);
    EXPECT_TRUE(proto.disable_fusion());
    EXPECT_FALSE(back.fusion);
  }
}

TEST(RewriteProtoTest, BadFieldsAreNamed) {
  v1::CompileOptions options;
  options.set_rewrite("sideways");
  EXPECT_THAT(RewriteCompileOptionsFromProto(options, {}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("options.rewrite: unknown rewrite mode \"sideways\"")));
  options.set_rewrite("identity");
  options.set_max_latency_overhead(-1);
  EXPECT_THAT(
      RewriteCompileOptionsFromProto(options, {}),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("options.max_latency_overhead")));
  options.clear_max_latency_overhead();
  for (int32_t width : {-1, 17, 1 << 30}) {
    options.set_beam_width(width);
    EXPECT_THAT(RewriteCompileOptionsFromProto(options, {}),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("options.beam_width")))
        << width;
  }
  options.set_beam_width(16);
  ORDO_EXPECT_OK(RewriteCompileOptionsFromProto(options, {}).status());
  options.clear_beam_width();
  v1::DeviceSpec device;
  device.set_macs_per_second(-5);
  EXPECT_THAT(RewriteCompileOptionsFromProto(options, device),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("device.macs_per_second")));
  device.set_macs_per_second(0);
  device.set_op_overhead_seconds(INFINITY);
  EXPECT_THAT(
      RewriteCompileOptionsFromProto(options, device),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("device.op_overhead_seconds")));
}

// x -> Relu -> y, as ONNX.
std::string ReluModel(const std::string& output) {
  OnnxTestModel m;
  m.Input("x", {1, 4, 2, 2});
  m.Node("Relu", {"x"}, {output});
  m.Output(output);
  return m.Bytes();
}

TEST(RewriteProtoTest, SummaryAndRewrittenModelRoundTrip) {
  const std::string onnx = ReluModel("y");
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(onnx));
  RealClock clock;
  ORDO_ASSERT_OK_AND_ASSIGN(CompileResult compiled, Compile(graph, CompileOptions(), clock));
  RewriteSummary summary;
  summary.mode = "all";
  summary.fit_fallback = true;
  summary.tensor_larger_than_every_pool = true;
  summary.fallback_from_peak_bytes = 128;
  AppliedRewrite applied;
  applied.kind = "spatial";
  applied.description = "r tiled 2x1 (H x W)";
  applied.peak_before_bytes = 128;
  applied.peak_after_bytes = 96;
  applied.extra_macs = 7;
  applied.extra_ops = 3;
  summary.rewrites = {applied};
  summary.original_peak_bytes = 128;
  summary.original_macs = 10;
  summary.rewritten_macs = 17;
  summary.original_ops = 1;
  summary.rewritten_ops = 4;
  summary.latency_overhead = 0.25;
  summary.note = "no weights";
  summary.fit_mode = true;
  summary.fits = false;
  summary.bottleneck_tensors = {"x", "y"};
  summary.time_limit_hit = true;
  summary.rewritten_model = onnx;  // stands in for a rewritten model

  v1::CompileResponse response = CompileResultToProto(graph, compiled);
  RewriteSummaryToProto(summary, response);
  EXPECT_EQ(response.rewritten_onnx_model(), onnx);
  ASSERT_EQ(response.rewrites_size(), 1);
  EXPECT_EQ(response.rewrites(0).kind(), "spatial");
  EXPECT_TRUE(response.rewrite().has_fits());

  ORDO_ASSERT_OK_AND_ASSIGN(
      RewriteCompileResult back,
      RewriteCompileResultFromProto(graph, CompileOptions(), GraphLimits(), response));
  ASSERT_TRUE(back.rewrite.has_value());
  const RewriteSummary& s = *back.rewrite;
  EXPECT_EQ(s.mode, "all");
  EXPECT_TRUE(s.fit_fallback);
  EXPECT_TRUE(s.tensor_larger_than_every_pool);
  EXPECT_EQ(s.fallback_from_peak_bytes, 128);
  ASSERT_EQ(s.rewrites.size(), 1u);
  EXPECT_EQ(s.rewrites[0].description, "r tiled 2x1 (H x W)");
  EXPECT_EQ(s.rewrites[0].extra_macs, 7);
  EXPECT_EQ(s.rewrites[0].extra_ops, 3);
  EXPECT_EQ(s.rewritten_macs, 17);
  EXPECT_EQ(s.rewritten_ops, 4);
  EXPECT_DOUBLE_EQ(s.latency_overhead, 0.25);
  EXPECT_TRUE(s.fit_mode);
  EXPECT_FALSE(s.fits);
  EXPECT_THAT(s.bottleneck_tensors, ElementsAre("x", "y"));
  EXPECT_TRUE(s.time_limit_hit);
  EXPECT_EQ(back.compile.peak_bytes, compiled.peak_bytes);

  // Not fit mode: `fits` stays unset on the wire.
  summary.fit_mode = false;
  v1::CompileResponse unjudged;
  RewriteSummaryToProto(summary, unjudged);
  EXPECT_FALSE(unjudged.rewrite().has_fits());
}

TEST(RewriteProtoTest, ARewrittenModelWithOtherOutputsIsRefused) {
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(ReluModel("y")));
  RealClock clock;
  ORDO_ASSERT_OK_AND_ASSIGN(CompileResult compiled, Compile(graph, CompileOptions(), clock));
  v1::CompileResponse response = CompileResultToProto(graph, compiled);
  response.mutable_rewrite()->set_mode("identity");
  response.set_rewritten_onnx_model(ReluModel("z"));
  EXPECT_THAT(RewriteCompileResultFromProto(graph, CompileOptions(), GraphLimits(), response),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("response:")));
  response.set_rewritten_onnx_model("not onnx");
  EXPECT_THAT(RewriteCompileResultFromProto(graph, CompileOptions(), GraphLimits(), response),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("does not import")));
}

}  // namespace
}  // namespace ordo::rpc
