// Rewriting through the service: a real ordo-server compiles with
// CompileOptions.rewrite, returns the rewritten model whose schedule the
// client re-simulates, refuses bad fields by name; the `ordo` CLI does the
// same with --server as locally.

#include <sys/wait.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <numeric>
#include <string>
#include <vector>

#include "core/memory/simulator.h"
#include "core/onnx/onnx_import.h"
#include "core/rewrite/onnx_test_model.h"
#include "tests/cli/compile_json.h"
#include "rpc/compile_proto.h"
#include "tests/cli/run_ordo.h"
#include "tests/service/service_harness.h"

namespace ordo {
namespace {

using ::testing::HasSubstr;
using namespace ::ordo::testing_service;  // NOLINT: the harness is the test's vocabulary

// Four 32-channel branches concatenated into a 1x1 Conv: one concat->conv
// site whose identity rewrite lowers the peak.
std::string ConcatConvModel() {
  OnnxTestModel m;
  m.Input("x", {1, 8, 16, 16});
  std::vector<std::string> branches;
  for (int i = 0; i < 4; ++i) {
    const std::string w = absl::StrCat("w", i);
    m.Weight(w, {32, 8, 1, 1}, nullptr);
    m.Node("Conv", {"x", w}, {absl::StrCat("b", i)});
    branches.push_back(absl::StrCat("b", i));
  }
  SetIntAttribute(m.Node("Concat", branches, {"cat"}), "axis", 1);
  m.Weight("wy", {16, 128, 1, 1}, nullptr);
  m.Node("Conv", {"cat", "wy"}, {"y"});
  m.Output("y");
  return m.Bytes();
}

v1::CompileRequest RewriteRequest(const std::string& onnx, const std::string& mode) {
  v1::CompileRequest request;
  request.set_onnx_model(onnx);
  request.mutable_options()->mutable_time_limit()->set_seconds(2);
  request.mutable_options()->set_rewrite(mode);
  return request;
}

// The client's checks: the rewritten model imports, reads and writes what
// the original does, and the schedule re-simulates to the reported peak.
// `options` are the request's as the client reads them (its pools, say).
void ExpectVerifiedRewrite(const std::string& onnx, const v1::CompileResponse& response,
                           const CompileOptions& options = CompileOptions()) {
  absl::StatusOr<Graph> original = ImportOnnx(onnx);
  ASSERT_TRUE(original.ok()) << original.status();
  absl::StatusOr<RewriteCompileResult> result =
      rpc::RewriteCompileResultFromProto(*original, options, GraphLimits(), response);
  ASSERT_TRUE(result.ok()) << result.status();
  ASSERT_TRUE(result->rewrite.has_value());
  EXPECT_EQ(result->compile.peak_bytes, response.peak_bytes());
  EXPECT_LE(response.peak_bytes(), response.rewrite().original_peak_bytes());
  int64_t extra_macs = 0;
  for (const v1::AppliedRewrite& applied : response.rewrites()) {
    EXPECT_LE(applied.peak_after_bytes(), applied.peak_before_bytes());
    EXPECT_FALSE(applied.kind().empty());
    extra_macs += applied.extra_macs();
  }
  EXPECT_EQ(extra_macs, response.rewrite().rewritten_macs() - response.rewrite().original_macs());
  if (response.rewritten_onnx_model().empty()) {
    EXPECT_EQ(response.rewrites_size(), 0);
    return;
  }
  // The rewritten model's file order is the schedule.
  absl::StatusOr<Graph> rewritten = ImportOnnx(response.rewritten_onnx_model());
  ASSERT_TRUE(rewritten.ok()) << rewritten.status();
  absl::StatusOr<MemoryModel> memory = BuildMemoryModel(*rewritten, MemoryOptions());
  ASSERT_TRUE(memory.ok());
  std::vector<int32_t> file_order(rewritten->num_ops());
  std::iota(file_order.begin(), file_order.end(), 0);
  absl::StatusOr<int64_t> peak = SimulatePeak(*memory, file_order);
  ASSERT_TRUE(peak.ok()) << peak.status();
  EXPECT_EQ(*peak, response.peak_bytes());
}

TEST(RewriteServiceTest, IdentityReturnsARewrittenModelWhoseScheduleResimulates) {
  Server server({"--local-workers=1"});
  ASSERT_TRUE(server.started());
  const std::string onnx = ConcatConvModel();
  v1::CompileResponse response;
  grpc::Status status = server.Compile(RewriteRequest(onnx, "identity"), response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ExpectValidSchedule(response);
  EXPECT_EQ(response.rewrite().mode(), "identity");
  ASSERT_EQ(response.rewrites_size(), 1);
  EXPECT_EQ(response.rewrites(0).concat(), "cat_op");
  EXPECT_FALSE(response.rewritten_onnx_model().empty());
  EXPECT_LT(response.peak_bytes(), response.rewrite().original_peak_bytes());
  EXPECT_FALSE(response.rewrite().has_fits());  // no capacity: not fit mode
  ExpectVerifiedRewrite(onnx, response);

  // A rewritten model that does not produce the original's output is
  // refused by the client.
  onnx::ModelProto tampered;
  ASSERT_TRUE(tampered.ParseFromString(response.rewritten_onnx_model()));
  tampered.mutable_graph()->mutable_output(0)->set_name("not_y");
  v1::CompileResponse forged = response;
  forged.set_rewritten_onnx_model(tampered.SerializeAsString());
  absl::StatusOr<Graph> original = ImportOnnx(onnx);
  ASSERT_TRUE(original.ok());
  EXPECT_FALSE(
      rpc::RewriteCompileResultFromProto(*original, CompileOptions(), GraphLimits(), forged).ok());

  // The same request again: the response cache answers when the first was
  // final (optimal, search within its limit); the key covers the mode.
  v1::CompileResponse again;
  ASSERT_TRUE(server.Compile(RewriteRequest(onnx, "identity"), again).ok());
  if (response.status() == v1::SCHEDULE_STATUS_OPTIMAL && !response.rewrite().time_limit_hit()) {
    EXPECT_TRUE(again.stats().response_cached());
  }
  EXPECT_EQ(again.rewritten_onnx_model(), response.rewritten_onnx_model());
  v1::CompileResponse plain;
  ASSERT_TRUE(server.Compile(RewriteRequest(onnx, "none"), plain).ok());
  EXPECT_FALSE(plain.has_rewrite());
  EXPECT_TRUE(plain.rewritten_onnx_model().empty());
  EXPECT_GT(plain.peak_bytes(), response.peak_bytes());
}

TEST(RewriteServiceTest, CompileStreamReportsTheRewriteSearchThenTheResult) {
  Server server({"--local-workers=1"});
  ASSERT_TRUE(server.started());
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(60)));
  auto stream = server.compiler().CompileStream(&context, RewriteRequest(ConcatConvModel(), "all"));
  std::vector<v1::CompileEvent> events;
  for (v1::CompileEvent event; stream->Read(&event);) events.push_back(event);
  const grpc::Status status = stream->Finish();
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_FALSE(events.empty());
  ASSERT_TRUE(events.back().has_result());
  EXPECT_FALSE(events.back().result().rewrites().empty());
  // The search reports as its first schedule starts, before the rewritten
  // model's compile, whose stages end with FINISHED.
  std::vector<v1::CompileStage> stages;
  for (size_t i = 0; i + 1 < events.size(); ++i) stages.push_back(events[i].progress().stage());
  ASSERT_FALSE(stages.empty());
  EXPECT_EQ(stages.front(), v1::COMPILE_STAGE_REWRITING);
  EXPECT_EQ(events.front().progress().rewrite_schedules(), 1);
  EXPECT_EQ(stages.back(), v1::COMPILE_STAGE_FINISHED);
}

TEST(RewriteServiceTest, EveryModeKeepsThePeakAndVerifies) {
  Server server({"--local-workers=1"});
  ASSERT_TRUE(server.started());
  const std::string onnx = ConcatConvModel();
  for (const char* mode : {"partition", "all"}) {
    SCOPED_TRACE(mode);
    v1::CompileRequest request = RewriteRequest(onnx, mode);
    request.mutable_options()->set_max_latency_overhead(0.5);
    request.mutable_device()->set_macs_per_second(1e8);
    request.mutable_device()->set_op_overhead_seconds(1e-5);
    v1::CompileResponse response;
    grpc::Status status = server.Compile(request, response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(response.rewrite().mode(), mode);
    ExpectVerifiedRewrite(onnx, response);
  }
  // "auto" over the capacity: fit mode, the verdict and the bottleneck.
  v1::CompileRequest request = RewriteRequest(onnx, "auto");
  request.mutable_device()->set_memory_capacity_bytes(1024);
  v1::CompileResponse response;
  ASSERT_TRUE(server.Compile(request, response).ok());
  EXPECT_TRUE(response.rewrite().fit_fallback());
  EXPECT_EQ(response.rewrite().mode(), "all");
  ASSERT_TRUE(response.rewrite().has_fits());
  EXPECT_FALSE(response.rewrite().fits());
  EXPECT_GT(response.rewrite().bottleneck_tensors_size(), 0);
  EXPECT_FALSE(response.fits());
  ExpectVerifiedRewrite(onnx, response);
}

TEST(RewriteServiceTest, BadRewriteFieldsAreInvalidArgumentNamingTheField) {
  Server server({"--local-workers=1"});
  ASSERT_TRUE(server.started());
  const std::string onnx = ConcatConvModel();
  struct Case {
    v1::CompileRequest request;
    std::string field;
  };
  std::vector<Case> cases;
  cases.push_back({RewriteRequest(onnx, "sideways"), "options.rewrite"});
  cases.push_back({RewriteRequest(onnx, "identity"), "options.max_latency_overhead"});
  cases.back().request.mutable_options()->set_max_latency_overhead(-0.5);
  for (int32_t width : {-1, 17}) {
    cases.push_back({RewriteRequest(onnx, "partition"), "options.beam_width"});
    cases.back().request.mutable_options()->set_beam_width(width);
  }
  cases.push_back({RewriteRequest(onnx, "identity"), "device.macs_per_second"});
  cases.back().request.mutable_device()->set_macs_per_second(-1);
  cases.push_back({RewriteRequest(onnx, "identity"), "device.op_overhead_seconds"});
  cases.back().request.mutable_device()->set_op_overhead_seconds(std::nan(""));
  v1::CompileRequest native;
  *native.mutable_graph() = WideGraph(2);
  native.mutable_options()->set_rewrite("identity");
  cases.push_back({native, "onnx_model"});
  for (const Case& c : cases) {
    v1::CompileResponse response;
    grpc::Status status = server.Compile(c.request, response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.field;
    EXPECT_THAT(status.error_message(), HasSubstr(c.field));
  }
  EXPECT_EQ(server.Health(""), 1);
}

// The concat "cat" (128 KiB) is larger than both 64 KiB banks: refused as
// a bad spec without rewriting; with "auto" the server rewrites it away and
// places the rest, and the client's checks hold; the server keeps serving.
TEST(RewriteServiceTest, AutoSplitsATensorLargerThanEveryPool) {
  Server server({"--local-workers=1"});
  ASSERT_TRUE(server.started());
  const std::string onnx = ConcatConvModel();
  v1::CompileRequest request = RewriteRequest(onnx, "none");
  for (const char* name : {"fast", "slow"}) {
    v1::MemoryPoolSpec* pool = request.mutable_device()->add_pools();
    pool->set_name(name);
    pool->set_capacity_bytes(64 << 10);
  }
  v1::CompileResponse refused;
  grpc::Status status = server.Compile(request, refused);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("tensor \"cat\" (131072 bytes) is larger"));
  EXPECT_THAT(status.error_message(), HasSubstr("set options.rewrite to \"auto\""));

  request.mutable_options()->set_rewrite("auto");
  request.mutable_options()->mutable_time_limit()->set_seconds(5);
  v1::CompileResponse response;
  status = server.Compile(request, response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_TRUE(response.fits());
  EXPECT_TRUE(response.rewrite().fit_fallback());
  EXPECT_GT(response.rewrites_size(), 0);
  EXPECT_THAT(response.rewrite().note(), HasSubstr("the model as it is does not fit"));
  for (const v1::PoolUsageReport& pool : response.placement().pools()) {
    EXPECT_LE(pool.used_bytes(), pool.capacity_bytes()) << pool.name();
  }
  absl::StatusOr<CompileRequest> asked = rpc::CompileRequestFromProto(request);
  ASSERT_TRUE(asked.ok()) << asked.status();
  ExpectVerifiedRewrite(onnx, response, asked->options);
  EXPECT_EQ(server.Health(""), 1);
}

using ::ordo::testing::ProcessResult;
using ::ordo::testing::RunOrdo;

TEST(RewriteServiceTest, CliServerModeRewritesLikeLocalMode) {
  Server server({"--local-workers=1"});
  ASSERT_TRUE(server.started());
  const std::filesystem::path dir =
      std::filesystem::temp_directory_path() / absl::StrCat("ordo_rewrite_service_test_", getpid());
  std::filesystem::create_directories(dir);
  const std::string model = (dir / "concat_conv.onnx").string();
  std::ofstream(model, std::ios::binary) << ConcatConvModel();
  const std::string out = (dir / "rewritten.onnx").string();

  ProcessResult remote = RunOrdo(absl::StrCat("compile ", model, " --json --rewrite identity --server ",
                                      server.address(), " --rewritten-model ", out));
  ASSERT_EQ(remote.exit_code, 0) << remote.out;
  ProcessResult local = RunOrdo(absl::StrCat("compile ", model, " --json --rewrite identity"));
  ASSERT_EQ(local.exit_code, 0) << local.out;
  const v1::CompileResponse r = ParseCompileJson(remote.out);
  const v1::CompileResponse l = ParseCompileJson(local.out);
  EXPECT_EQ(r.peak_bytes(), l.peak_bytes());
  EXPECT_EQ(r.rewrites_size(), 1);
  EXPECT_EQ(r.rewrite().original_peak_bytes(), l.rewrite().original_peak_bytes());
  EXPECT_EQ(r.ops(), l.ops());  // the rewritten model's
  EXPECT_TRUE(r.rewritten_onnx_model().empty());  // written to --rewritten-model instead
  // The written model runs the server's schedule in file order.
  ProcessResult reload = RunOrdo(absl::StrCat("compile ", out, " --json --scheduler model"));
  ASSERT_EQ(reload.exit_code, 0) << reload.out;
  EXPECT_EQ(ParseCompileJson(reload.out).peak_bytes(), r.peak_bytes());

  ProcessResult tiny = RunOrdo(absl::StrCat("compile ", model, " --memory-limit 1KiB --time-limit 2s",
                                    " --server ", server.address()));
  EXPECT_EQ(tiny.exit_code, 3) << tiny.out;
  EXPECT_THAT(tiny.out, HasSubstr("bottleneck tensors"));
  // The beam width travels with the request (CompileOptions.beam_width).
  ProcessResult beam = RunOrdo(absl::StrCat("compile ", model, " --json --rewrite partition --beam-width 2",
                                    " --time-limit 2s --server ", server.address()));
  ASSERT_EQ(beam.exit_code, 0) << beam.out;
  const v1::CompileResponse beamed = ParseCompileJson(beam.out);
  EXPECT_EQ(beamed.rewrite().mode(), "partition");
  EXPECT_EQ(beamed.options().beam_width(), 2);
  ProcessResult bad =
      RunOrdo(absl::StrCat("compile ", model, " --rewrite sideways --server ", server.address()));
  EXPECT_EQ(bad.exit_code, 2) << bad.out;
  EXPECT_THAT(bad.out, HasSubstr("--rewrite"));
  std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ordo
