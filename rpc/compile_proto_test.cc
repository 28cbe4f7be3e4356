// CompileResponseOf, the one builder of a compile's response (server and
// `ordo compile --json`): fits, gap, the options and device in force,
// which read back as the request they describe, and the import's notes;
// Estimate's fit verdict.

#include "rpc/compile_proto.h"

#include <vector>

#include "core/compile/compile.h"
#include "core/testing/status_matchers.h"
#include "core/testing/test_graph.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo::rpc {
namespace {

using ::ordo::testing::TestGraph;
using ::testing::ElementsAre;
using ::testing::IsEmpty;

// A request with something other than the default in most fields.
CompileRequest TwoBranchesRequest(int64_t memory_limit_bytes) {
  CompileRequest request;
  request.options.scheduler = "model";
  request.options.memory_limit_bytes = memory_limit_bytes;
  request.options.alignment = 16;
  request.options.time_limit = absl::Seconds(3);
  request.rewrite.max_latency_overhead = 0.1;
  request.input_shapes.batch = 1;
  request.reordered_onnx = true;
  return request;
}

TEST(CompileResponseOfTest, SaysWhetherItFitsAndHowFarFromTheBound) {
  const Graph g = TestGraph(::ordo::testing::kTwoBranchesGraph);
  RealClock clock;
  for (const int64_t limit : {int64_t{0}, int64_t{1}, int64_t{1} << 20}) {
    const CompileRequest request = TwoBranchesRequest(limit);
    ORDO_ASSERT_OK_AND_ASSIGN(const CompileResult result, Compile(g, request.options, clock));
    const v1::CompileResponse response = CompileResponseOf(request, g, result, std::nullopt);
    EXPECT_EQ(response.peak_bytes(), result.peak_bytes);
    ASSERT_GT(response.lower_bound_bytes(), 0);
    EXPECT_DOUBLE_EQ(response.gap(),
                     static_cast<double>(result.peak_bytes - result.lower_bound_bytes) /
                         static_cast<double>(result.lower_bound_bytes));
    EXPECT_EQ(response.has_fits(), limit > 0) << limit;
    if (limit > 0) {
      EXPECT_EQ(response.fits(), result.peak_bytes <= limit) << limit;
    }
    EXPECT_FALSE(response.has_rewrite());
    EXPECT_TRUE(response.model_path().empty());  // the CLI's to set
  }
}

TEST(CompileResponseOfTest, OptionsAndDeviceInForceReadBackAsTheRequest) {
  const Graph g = TestGraph(::ordo::testing::kTwoBranchesGraph);
  RealClock clock;
  const CompileRequest request = TwoBranchesRequest(4096);
  ORDO_ASSERT_OK_AND_ASSIGN(const CompileResult result, Compile(g, request.options, clock));
  const v1::CompileResponse response = CompileResponseOf(request, g, result, std::nullopt);
  EXPECT_EQ(response.options().scheduler(), "model");
  EXPECT_EQ(response.options().time_limit().seconds(), 3);
  EXPECT_TRUE(response.options().inplace());
  EXPECT_EQ(response.options().batch(), 1);
  EXPECT_TRUE(response.options().return_reordered_onnx());
  EXPECT_EQ(response.options().max_state_bytes(), request.options.max_state_bytes);
  EXPECT_EQ(response.device().memory_capacity_bytes(), 4096);
  EXPECT_EQ(response.device().alignment_bytes(), 16);

  ORDO_ASSERT_OK_AND_ASSIGN(const CompileOptions options,
                            CompileOptionsFromProto(response.options(), response.device()));
  EXPECT_EQ(options.scheduler, request.options.scheduler);
  EXPECT_EQ(options.time_limit, request.options.time_limit);
  EXPECT_EQ(options.memory_limit_bytes, request.options.memory_limit_bytes);
  EXPECT_EQ(options.alignment, request.options.alignment);
  EXPECT_EQ(options.memory.inplace, request.options.memory.inplace);
  ORDO_ASSERT_OK_AND_ASSIGN(const RewriteCompileOptions rewrite,
                            RewriteCompileOptionsFromProto(response.options(), response.device()));
  EXPECT_EQ(rewrite.max_latency_overhead, 0.1);
  EXPECT_EQ(rewrite.mode, request.rewrite.mode);
}

TEST(CompileResponseOfTest, ARewriteSummaryAddsItsFields) {
  const Graph g = TestGraph(::ordo::testing::kTwoBranchesGraph);
  RealClock clock;
  const CompileRequest request = TwoBranchesRequest(0);
  ORDO_ASSERT_OK_AND_ASSIGN(const CompileResult result, Compile(g, request.options, clock));
  RewriteSummary summary;
  summary.mode = "identity";
  summary.original_peak_bytes = result.peak_bytes + 10;
  AppliedRewrite& applied = summary.rewrites.emplace_back();
  applied.kind = "identity";
  applied.description = "cat -> conv";
  const v1::CompileResponse response = CompileResponseOf(request, g, result, summary);
  ASSERT_TRUE(response.has_rewrite());
  EXPECT_EQ(response.rewrite().mode(), "identity");
  EXPECT_EQ(response.rewrite().original_peak_bytes(), result.peak_bytes + 10);
  ASSERT_EQ(response.rewrites_size(), 1);
  EXPECT_EQ(response.rewrites(0).description(), "cat -> conv");
}

constexpr char kNote[] = "input \"x\": shape_signature [-1] has dynamic dims; planned at shape [1]";

// x -> Relu -> y, with the import's note kNote.
absl::StatusOr<Graph> NotedGraph() {
  GraphBuilder builder("noted");
  builder.AddTensorBytes("x", 4, TensorKind::kInput);
  builder.AddTensorBytes("y", 4);
  builder.AddOp("relu", "Relu", {"x"}, {"y"});
  builder.AddGraphInput("x");
  builder.AddGraphOutput("y");
  builder.AddNote(kNote);
  return std::move(builder).Build();
}

// What the import told (a TFLite dim planned at its shape) reaches the
// response: the server's answer and `ordo compile --json` carry it, as the
// CLI's text report prints it.
TEST(CompileResponseOfTest, CarriesTheImportsNotes) {
  ORDO_ASSERT_OK_AND_ASSIGN(const Graph noted, NotedGraph());
  RealClock clock;
  const CompileRequest request = TwoBranchesRequest(0);
  ORDO_ASSERT_OK_AND_ASSIGN(const CompileResult result, Compile(noted, request.options, clock));
  EXPECT_THAT(CompileResponseOf(request, noted, result, std::nullopt).import_notes(),
              ElementsAre(kNote));

  const Graph plain = TestGraph(::ordo::testing::kTwoBranchesGraph);
  ORDO_ASSERT_OK_AND_ASSIGN(const CompileResult plain_result,
                            Compile(plain, request.options, clock));
  EXPECT_THAT(CompileResponseOf(request, plain, plain_result, std::nullopt).import_notes(),
              IsEmpty());
}

// Estimate carries them too, in its result and its response, and back.
TEST(EstimateProtoTest, CarriesTheImportsNotes) {
  ORDO_ASSERT_OK_AND_ASSIGN(const Graph noted, NotedGraph());
  const std::string note = kNote;
  ORDO_ASSERT_OK_AND_ASSIGN(const EstimateResult estimate,
                            Estimate(noted, CompileOptions(), nullptr));
  EXPECT_THAT(estimate.import_notes, ElementsAre(note));
  const v1::EstimateResponse response = EstimateResultToProto(estimate);
  EXPECT_THAT(response.import_notes(), ElementsAre(note));
  EXPECT_THAT(EstimateResultFromProto(response).import_notes, ElementsAre(note));

  const Graph plain = TestGraph(::ordo::testing::kTwoBranchesGraph);
  ORDO_ASSERT_OK_AND_ASSIGN(const EstimateResult plain_estimate,
                            Estimate(plain, CompileOptions(), nullptr));
  EXPECT_THAT(EstimateResultToProto(plain_estimate).import_notes(), IsEmpty());
}

// Estimate's verdict against the memory limit (core's one rule) survives
// the response: no limit, a limit the greedy order fits, one between the
// lower bound and greedy's peak, one below the lower bound.
TEST(EstimateProtoTest, TheFitVerdictReadsBackForEveryLimit) {
  const Graph g = TestGraph(::ordo::testing::kTwoBranchesGraph);
  ORDO_ASSERT_OK_AND_ASSIGN(const EstimateResult free, Estimate(g, CompileOptions(), nullptr));
  ASSERT_LE(free.lower_bound_bytes, free.greedy_peak_bytes);
  struct Case {
    int64_t limit;
    EstimateFit fits;
    v1::EstimateFit::Verdict verdict;
  };
  std::vector<Case> cases = {
      {0, EstimateFit::kNoLimit, v1::EstimateFit::VERDICT_UNSPECIFIED},
      {free.greedy_peak_bytes, EstimateFit::kYes, v1::EstimateFit::VERDICT_FITS},
      {free.lower_bound_bytes - 1, EstimateFit::kNo, v1::EstimateFit::VERDICT_DOES_NOT_FIT}};
  if (free.lower_bound_bytes < free.greedy_peak_bytes) {
    cases.push_back({free.greedy_peak_bytes - 1, EstimateFit::kUnknown,
                     v1::EstimateFit::VERDICT_UNKNOWN});
  }
  for (const Case& c : cases) {
    CompileOptions options;
    options.memory_limit_bytes = c.limit;
    ORDO_ASSERT_OK_AND_ASSIGN(const EstimateResult estimate, Estimate(g, options, nullptr));
    EXPECT_EQ(estimate.fits, c.fits) << c.limit;
    const v1::EstimateResponse response = EstimateResultToProto(estimate);
    EXPECT_EQ(response.fit().verdict(), c.verdict) << c.limit;
    EXPECT_EQ(response.fit().memory_limit_bytes(), c.limit);
    const EstimateResult back = EstimateResultFromProto(response);
    EXPECT_EQ(back.fits, c.fits) << c.limit;
    EXPECT_EQ(back.memory_limit_bytes, c.limit);
    EXPECT_EQ(back.lower_bound_bytes, estimate.lower_bound_bytes);
  }
}

}  // namespace
}  // namespace ordo::rpc
