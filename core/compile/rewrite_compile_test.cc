#include "core/compile/rewrite_compile.h"

#include <atomic>
#include <cmath>
#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/compile/compile_request.h"
#include "core/memory/simulator.h"
#include "core/onnx/onnx_import.h"
#include "core/pools/memory_pools.h"
#include "core/rewrite/onnx_test_model.h"
#include "core/testing/status_matchers.h"
#include "core/testing/test_graph.h"
#include "core/util/status_macros.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;
using ::testing::IsEmpty;
using ::testing::Not;

// Four 32-channel branches concatenated into a 1x1 Conv: one concat->conv
// site whose identity rewrite lowers the peak (core/rewrite/rewrite_test.cc).
std::string WideConcatOnnx() {
  OnnxTestModel m;
  m.Input("x", {1, 8, 16, 16});
  std::vector<std::string> branches;
  for (int i = 0; i < 4; ++i) {
    const std::string w = "w" + std::to_string(i);
    m.Weight(w, {32, 8, 1, 1}, nullptr);
    m.Node("Conv", {"x", w}, {"b" + std::to_string(i)});
    branches.push_back("b" + std::to_string(i));
  }
  SetIntAttribute(m.Node("Concat", branches, {"cat"}), "axis", 1);
  m.Weight("wy", {16, 128, 1, 1}, nullptr);
  m.Node("Conv", {"cat", "wy"}, {"y"});
  m.Output("y");
  return m.Bytes();
}

// A request for `bytes`: an ONNX model, or a native graph when empty.
CompileRequest RequestOf(absl::string_view bytes, CompileOptions options,
                         RewriteCompileOptions rewrite) {
  CompileRequest request;
  request.format = bytes.empty() ? ModelFormat::kGraphProto : ModelFormat::kOnnx;
  request.options = std::move(options);
  request.rewrite = rewrite;
  return request;
}

struct Fixture {
  std::string bytes = WideConcatOnnx();
  Graph graph = *ImportOnnx(bytes);
  RealClock clock;
};

// What every rewriting compile must hold, whatever the mode found: the
// peak never rises, the returned model re-imports with the original's
// interface, and its file order is the returned schedule at the reported
// peak.
void ExpectConsistent(const Graph& original, const RewriteCompileResult& result,
                      int64_t plain_peak) {
  ASSERT_TRUE(result.rewrite.has_value());
  const RewriteSummary& summary = *result.rewrite;
  EXPECT_LE(result.compile.peak_bytes, plain_peak);
  EXPECT_EQ(result.compile.peak_bytes, result.compile.simulation.peak_bytes);
  if (summary.rewrites.empty()) {
    EXPECT_THAT(summary.rewritten_model, IsEmpty());
    EXPECT_EQ(result.graph.num_ops(), original.num_ops());
    return;
  }
  for (const AppliedRewrite& applied : summary.rewrites) {
    EXPECT_LE(applied.peak_after_bytes, applied.peak_before_bytes) << applied.description;
    EXPECT_THAT(applied.kind, Not(IsEmpty()));
  }
  int64_t extra_macs = 0;
  for (const AppliedRewrite& applied : summary.rewrites) extra_macs += applied.extra_macs;
  EXPECT_EQ(summary.rewritten_macs - summary.original_macs, extra_macs) << "extra MACs add up";
  ORDO_ASSERT_OK_AND_ASSIGN(Graph reimported, ImportOnnx(summary.rewritten_model));
  ORDO_EXPECT_OK(CheckSameInterface(original, reimported));
  ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel memory, BuildMemoryModel(reimported, MemoryOptions()));
  std::vector<int32_t> file_order(reimported.num_ops());
  std::iota(file_order.begin(), file_order.end(), 0);
  ORDO_ASSERT_OK_AND_ASSIGN(int64_t peak, SimulatePeak(memory, file_order));
  EXPECT_EQ(peak, result.compile.peak_bytes);
  for (size_t i = 0; i < result.compile.schedule.size(); ++i) {
    EXPECT_EQ(reimported.op(static_cast<OpId>(i)).name,
              result.graph.op(result.compile.schedule[i]).name);
  }
}

TEST(CompileWithRewriteTest, NoneCompilesAsIs) {
  Fixture f;
  ORDO_ASSERT_OK_AND_ASSIGN(
      RewriteCompileResult result,
      CompileWithRewrite(RequestOf(f.bytes, CompileOptions(), RewriteCompileOptions()), f.bytes,
                         f.graph, CompileServices(), f.clock));
  EXPECT_FALSE(result.rewrite.has_value());
  EXPECT_EQ(result.graph.num_ops(), f.graph.num_ops());
}

TEST(CompileWithRewriteTest, EveryModeKeepsThePeakAndReturnsAConsistentModel) {
  Fixture f;
  ORDO_ASSERT_OK_AND_ASSIGN(CompileResult plain, Compile(f.graph, CompileOptions(), f.clock));
  for (RewriteMode mode : {RewriteMode::kIdentity, RewriteMode::kPartition, RewriteMode::kAll}) {
    SCOPED_TRACE(RewriteModeName(mode));
    RewriteCompileOptions rewrite;
    rewrite.mode = mode;
    rewrite.time_limit = absl::Seconds(2);
    ORDO_ASSERT_OK_AND_ASSIGN(RewriteCompileResult result,
                              CompileWithRewrite(RequestOf(f.bytes, CompileOptions(), rewrite),
                                                 f.bytes, f.graph, CompileServices(), f.clock));
    ExpectConsistent(f.graph, result, plain.peak_bytes);
    EXPECT_EQ(result.rewrite->mode, RewriteModeName(mode));
    EXPECT_FALSE(result.rewrite->fit_mode);
    EXPECT_THAT(result.rewrite->note, HasSubstr("no weight data"));
  }
}

// The concat->conv site of WideConcatOnnx with every branch quantized and
// dequantized (QDQ, as onnxruntime's quantize_static writes): rewriting
// does not read the quantization ops, and the note says what to do.
TEST(CompileWithRewriteTest, AQuantizedModelIsToldWhyNothingWasRewritten) {
  OnnxTestModel m;
  m.Input("x", {1, 8, 16, 16});
  m.FloatWeight("scale", {0.1F});
  // Every activation a layer reads goes through QuantizeLinear and
  // DequantizeLinear.
  const auto qdq = [&](const std::string& value) {
    m.Node("QuantizeLinear", {value, "scale"}, {"q_" + value});
    m.Node("DequantizeLinear", {"q_" + value, "scale"}, {"dq_" + value});
    return "dq_" + value;
  };
  const std::string x = qdq("x");
  std::vector<std::string> branches;
  for (int i = 0; i < 4; ++i) {
    const std::string b = "b" + std::to_string(i);
    m.Weight("w" + b, {32, 8, 1, 1}, nullptr);
    m.Node("Conv", {x, "w" + b}, {b});
    branches.push_back(qdq(b));
  }
  SetIntAttribute(m.Node("Concat", branches, {"cat"}), "axis", 1);
  m.Weight("wy", {16, 128, 1, 1}, nullptr);
  m.Node("Conv", {qdq("cat"), "wy"}, {"y"});
  m.Output("y");
  // Searched in every mode: the quantized model and, for contrast, the float
  // one, whose note says nothing of quantization.
  const auto search = [](const std::string& bytes) -> absl::StatusOr<RewriteCompileResult> {
    ORDO_ASSIGN_OR_RETURN(const Graph graph, ImportOnnx(bytes));
    RewriteCompileOptions rewrite;
    rewrite.mode = RewriteMode::kAll;
    rewrite.time_limit = absl::Seconds(2);
    RealClock clock;
    return CompileWithRewrite(RequestOf(bytes, CompileOptions(), rewrite), bytes, graph,
                              CompileServices(), clock);
  };
  ORDO_ASSERT_OK_AND_ASSIGN(RewriteCompileResult quantized, search(m.Bytes()));
  ASSERT_TRUE(quantized.rewrite.has_value());
  EXPECT_THAT(quantized.rewrite->rewrites, IsEmpty());
  EXPECT_THAT(quantized.rewrite->note,
              AllOf(HasSubstr("the model is quantized (12 quantization ops"),
                    HasSubstr("rewrite the float model")));
  ORDO_ASSERT_OK_AND_ASSIGN(RewriteCompileResult float_model, search(WideConcatOnnx()));
  ASSERT_TRUE(float_model.rewrite.has_value());
  EXPECT_THAT(float_model.rewrite->note, Not(HasSubstr("quantized")));
}

TEST(CompileWithRewriteTest, IdentityLowersThePeakOfAConcatConvSite) {
  Fixture f;
  RewriteCompileOptions rewrite;
  rewrite.mode = RewriteMode::kIdentity;
  ORDO_ASSERT_OK_AND_ASSIGN(RewriteCompileResult result,
                            CompileWithRewrite(RequestOf(f.bytes, CompileOptions(), rewrite),
                                               f.bytes, f.graph, CompileServices(), f.clock));
  ASSERT_TRUE(result.rewrite.has_value());
  ASSERT_EQ(result.rewrite->rewrites.size(), 1u);
  EXPECT_EQ(result.rewrite->original_peak_bytes, 4 * 32768 + 131072);
  EXPECT_LT(result.compile.peak_bytes, result.rewrite->original_peak_bytes);
  EXPECT_GT(result.graph.num_ops(), f.graph.num_ops());  // partial convs and adds
}

TEST(CompileWithRewriteTest, ParetoAloneSearchesAndReportsTheNonDominatedRoute) {
  Fixture f;
  RewriteCompileOptions rewrite;
  rewrite.pareto = true;  // mode left at kNone: means "all"
  rewrite.max_latency_overhead = 1.0;
  rewrite.time_limit = absl::Seconds(2);
  ORDO_ASSERT_OK_AND_ASSIGN(RewriteCompileResult result,
                            CompileWithRewrite(RequestOf(f.bytes, CompileOptions(), rewrite),
                                               f.bytes, f.graph, CompileServices(), f.clock));
  ASSERT_TRUE(result.rewrite.has_value());
  const RewriteSummary& summary = *result.rewrite;
  EXPECT_EQ(summary.mode, "all");
  ASSERT_GE(summary.pareto.size(), 2u) << "the identity rewrite lowers the peak";
  // The cheapest first: the input, unless rewrites that cost nothing (here
  // the identity rewrite and line-buffered region fusion) dominate it; then
  // ever lower peaks at ever higher cost.
  EXPECT_LE(summary.pareto.front().peak_bytes, summary.original_peak_bytes);
  EXPECT_LE(summary.pareto.front().latency_overhead, 0.0);
  EXPECT_EQ(summary.pareto.front().rewrites.empty(),
            summary.pareto.front().peak_bytes == summary.original_peak_bytes);
  for (size_t i = 1; i < summary.pareto.size(); ++i) {
    EXPECT_LT(summary.pareto[i].peak_bytes, summary.pareto[i - 1].peak_bytes);
    EXPECT_GT(summary.pareto[i].latency_overhead, summary.pareto[i - 1].latency_overhead);
    EXPECT_THAT(summary.pareto[i].rewrites, Not(IsEmpty()));
    EXPECT_LE(summary.pareto[i].latency_overhead, rewrite.max_latency_overhead);
  }
  // The kept route reaches the last point: the lowest peak found.
  ASSERT_THAT(summary.rewrites, Not(IsEmpty()));
  EXPECT_EQ(summary.pareto.back().peak_bytes, summary.rewrites.back().peak_after_bytes);

  rewrite.pareto = false;
  rewrite.mode = RewriteMode::kAll;
  ORDO_ASSERT_OK_AND_ASSIGN(RewriteCompileResult plain,
                            CompileWithRewrite(RequestOf(f.bytes, CompileOptions(), rewrite),
                                               f.bytes, f.graph, CompileServices(), f.clock));
  EXPECT_THAT(plain.rewrite->pareto, IsEmpty()) << "reported only when asked for";
}

TEST(CompileWithRewriteTest, AutoRewritesOnlyWhenThePlainScheduleDoesNotFit) {
  Fixture f;
  RewriteCompileOptions rewrite;
  ORDO_ASSERT_OK(SetRewriteMode("auto", rewrite));
  rewrite.time_limit = absl::Seconds(2);
  CompileOptions roomy;
  roomy.memory_limit_bytes = 1 << 20;
  ORDO_ASSERT_OK_AND_ASSIGN(RewriteCompileResult fits,
                            CompileWithRewrite(RequestOf(f.bytes, roomy, rewrite), f.bytes, f.graph,
                                               CompileServices(), f.clock));
  EXPECT_FALSE(fits.rewrite.has_value());

  CompileOptions tiny;
  tiny.memory_limit_bytes = 1024;  // below any schedule of this model
  ORDO_ASSERT_OK_AND_ASSIGN(RewriteCompileResult over,
                            CompileWithRewrite(RequestOf(f.bytes, tiny, rewrite), f.bytes, f.graph,
                                               CompileServices(), f.clock));
  ASSERT_TRUE(over.rewrite.has_value());
  EXPECT_TRUE(over.rewrite->fit_fallback);
  EXPECT_EQ(over.rewrite->mode, "all");
  EXPECT_EQ(over.rewrite->fallback_from_peak_bytes, 4 * 32768 + 131072);
  EXPECT_TRUE(over.rewrite->fit_mode);
  EXPECT_FALSE(over.rewrite->fits);
  EXPECT_THAT(over.rewrite->bottleneck_tensors, Not(IsEmpty()));
  ExpectConsistent(f.graph, over, over.rewrite->fallback_from_peak_bytes);
}

// Two banks whose summed capacity is below the input model's peak (four
// 32 KiB branches and their 128 KiB concat live together; the concat fits
// the slow bank alone) but not below the rewritten model's: with pools,
// "auto" must take them as its constraint.
CompileOptions TwoBanks(int64_t fast_bytes, int64_t slow_bytes) {
  CompileOptions options;
  options.pools.pools = {{"fast", fast_bytes, 4e9, 4e9}, {"slow", slow_bytes, 1e8, 1e8}};
  return options;
}

TEST(CompileWithRewriteTest, AutoRewritesUntilTheModelFitsThePools) {
  Fixture f;
  RewriteCompileOptions rewrite;
  ORDO_ASSERT_OK(SetRewriteMode("auto", rewrite));
  rewrite.time_limit = absl::Seconds(5);
  const CompileOptions banks = TwoBanks(64 << 10, 128 << 10);
  ORDO_ASSERT_OK_AND_ASSIGN(CompileResult plain, Compile(f.graph, banks, f.clock));
  ASSERT_TRUE(plain.placement.has_value());
  ASSERT_FALSE(plain.placement->fits()) << "the input alone must not fit the banks";

  ORDO_ASSERT_OK_AND_ASSIGN(RewriteCompileResult result,
                            CompileWithRewrite(RequestOf(f.bytes, banks, rewrite), f.bytes, f.graph,
                                               CompileServices(), f.clock));
  ASSERT_TRUE(result.rewrite.has_value());
  EXPECT_TRUE(result.rewrite->fit_fallback);
  EXPECT_TRUE(result.rewrite->fit_mode);
  EXPECT_TRUE(result.rewrite->fits);
  EXPECT_THAT(result.rewrite->rewrites, Not(IsEmpty()));
  ASSERT_TRUE(result.compile.placement.has_value());
  EXPECT_TRUE(result.compile.placement->fits());
  EXPECT_EQ(FitsDevice(banks, result.compile), std::optional<bool>(true));
  ExpectConsistent(f.graph, result, plain.peak_bytes);
  // The answer is the placement of the returned schedule: every tensor in a
  // bank, within its capacity.
  for (const PoolUsage& pool : result.compile.placement->placement.evaluation.pools) {
    EXPECT_LE(pool.used_bytes, pool.capacity_bytes) << pool.name;
  }
  for (const TensorPlacement& tensor : result.compile.arena.tensors) {
    EXPECT_THAT(tensor.pool, ::testing::AnyOf(0, 1)) << result.graph.tensor(tensor.tensor).name;
  }

  // Banks the model fits as it is: no rewriting.
  ORDO_ASSERT_OK_AND_ASSIGN(
      RewriteCompileResult roomy,
      CompileWithRewrite(RequestOf(f.bytes, TwoBanks(256 << 10, 1 << 20), rewrite), f.bytes,
                         f.graph, CompileServices(), f.clock));
  EXPECT_FALSE(roomy.rewrite.has_value());
  EXPECT_TRUE(roomy.compile.placement->fits());
}

TEST(CompileWithRewriteTest, AutoWithPoolsThatNothingFitsNamesTheOverflowingPool) {
  // No rewrite site (no Conv, no Concat): x and a are 16 KiB each and live
  // together at the Add in every order (y may overwrite a); only the fast
  // bank holds 16 KiB.
  OnnxTestModel m;
  m.Input("x", {1, 4096});
  m.Node("Relu", {"x"}, {"a"});
  m.Node("Add", {"x", "a"}, {"y"});
  m.Output("y");
  const std::string bytes = m.Bytes();
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(bytes));
  RealClock clock;
  RewriteCompileOptions rewrite;
  ORDO_ASSERT_OK(SetRewriteMode("auto", rewrite));
  rewrite.time_limit = absl::Seconds(2);
  const CompileOptions banks = TwoBanks(16 << 10, 8 << 10);
  ORDO_ASSERT_OK_AND_ASSIGN(
      RewriteCompileResult result,
      CompileWithRewrite(RequestOf(bytes, banks, rewrite), bytes, graph, CompileServices(), clock));
  ASSERT_TRUE(result.rewrite.has_value());
  EXPECT_TRUE(result.rewrite->fit_fallback);
  // Every tensor fits some bank: the model as given has a placement.
  EXPECT_FALSE(result.rewrite->tensor_larger_than_every_pool);
  EXPECT_TRUE(result.rewrite->fit_mode);
  EXPECT_FALSE(result.rewrite->fits);
  EXPECT_THAT(result.rewrite->rewrites, IsEmpty());
  EXPECT_THAT(result.rewrite->bottleneck_tensors, ::testing::IsSupersetOf({"x", "a"}));
  ASSERT_TRUE(result.compile.placement.has_value());
  EXPECT_FALSE(result.compile.placement->fits());
  // Which pool overflows and by how much, and why no order can fit.
  EXPECT_THAT(result.compile.placement->overflow, HasSubstr("overflows by 16384 bytes"));
  EXPECT_THAT(result.compile.placement->overflow, HasSubstr("\"fast\""));
  EXPECT_THAT(result.compile.placement->no_order_fits, Not(IsEmpty()));
  EXPECT_EQ(FitsDevice(banks, result.compile), std::optional<bool>(false));
}

// The concat "cat" (128 KiB) is larger than either 64 KiB bank: the model
// as it is has no placement at all (a bad spec without rewriting), but the
// identity rewrite never forms the concat, and what is left fits the banks.
TEST(CompileWithRewriteTest, AutoSplitsATensorLargerThanEveryPool) {
  Fixture f;
  const CompileOptions banks = TwoBanks(64 << 10, 64 << 10);
  const absl::Status refused = Compile(f.graph, banks, f.clock).status();
  ASSERT_THAT(refused, StatusIs(absl::StatusCode::kInvalidArgument,
                                HasSubstr("tensor \"cat\" (131072 bytes) is larger than every")));
  ASSERT_TRUE(IsTensorLargerThanEveryPool(refused));

  RewriteCompileOptions rewrite;
  ORDO_ASSERT_OK(SetRewriteMode("auto", rewrite));
  rewrite.time_limit = absl::Seconds(5);
  ORDO_ASSERT_OK_AND_ASSIGN(RewriteCompileResult result,
                            CompileWithRewrite(RequestOf(f.bytes, banks, rewrite), f.bytes, f.graph,
                                               CompileServices(), f.clock));
  ASSERT_TRUE(result.rewrite.has_value());
  const RewriteSummary& summary = *result.rewrite;
  EXPECT_TRUE(summary.fit_fallback);
  EXPECT_TRUE(summary.tensor_larger_than_every_pool);
  EXPECT_TRUE(summary.fits);
  EXPECT_THAT(summary.rewrites, Not(IsEmpty()));
  EXPECT_EQ(summary.fallback_from_peak_bytes, 4 * 32768 + 131072);
  EXPECT_THAT(summary.note, HasSubstr("the model as it is does not fit: tensor \"cat\""));
  EXPECT_FALSE(result.graph.FindTensor("cat").has_value());
  ASSERT_TRUE(result.compile.placement.has_value());
  EXPECT_TRUE(result.compile.placement->fits());
  EXPECT_EQ(FitsDevice(banks, result.compile), std::optional<bool>(true));
  ExpectConsistent(f.graph, result, summary.fallback_from_peak_bytes);

  // Without "auto" the refusal is the answer, with the way out; a native
  // graph cannot be rewritten, so it gets no such hint.
  EXPECT_THAT(CompileWithRewrite(RequestOf(f.bytes, banks, RewriteCompileOptions()), f.bytes,
                                 f.graph, CompileServices(), f.clock),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       ::testing::AllOf(HasSubstr("larger than every"),
                                        HasSubstr("set options.rewrite to \"auto\""))));
  EXPECT_THAT(CompileWithRewrite(RequestOf("", banks, RewriteCompileOptions()), "", f.graph,
                                 CompileServices(), f.clock),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       ::testing::AllOf(HasSubstr("larger than every"),
                                        Not(HasSubstr("options.rewrite")))));
}

TEST(CompileWithRewriteTest, AutoKeepsTheRefusalWhenNoRewriteSplitsTheTensor) {
  // x (4 KiB) fits a bank; its four-fold concat and the softmax over it
  // (16 KiB each) fit none, and nothing rewrites a softmax over the concat.
  OnnxTestModel m;
  m.Input("x", {1, 1024});
  SetIntAttribute(m.Node("Concat", {"x", "x", "x", "x"}, {"c"}), "axis", 1);
  SetIntAttribute(m.Node("Softmax", {"c"}, {"s"}), "axis", 1);
  onnx::NodeProto& reduce = m.Node("ReduceMax", {"s"}, {"y"});
  SetIntsAttribute(reduce, "axes", {1});
  m.Output("y");
  const std::string bytes = m.Bytes();
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(bytes));
  RealClock clock;
  RewriteCompileOptions rewrite;
  ORDO_ASSERT_OK(SetRewriteMode("auto", rewrite));
  rewrite.time_limit = absl::Seconds(2);
  const CompileOptions banks = TwoBanks(8 << 10, 8 << 10);
  const absl::Status refused = Compile(graph, banks, clock).status();
  ASSERT_TRUE(IsTensorLargerThanEveryPool(refused)) << refused;
  EXPECT_THAT(
      CompileWithRewrite(RequestOf(bytes, banks, rewrite), bytes, graph, CompileServices(), clock),
      StatusIs(absl::StatusCode::kInvalidArgument,
               ::testing::AllOf(HasSubstr("(16384 bytes) is larger than every memory pool"),
                                HasSubstr("rewrite \"auto\" could not make it fit: no rewritten "
                                          "model the search found fits"))));
  // An explicit mode searches without compiling the input first; its
  // refusal says what that search did too.
  for (const char* mode : {"identity", "partition", "all"}) {
    RewriteCompileOptions explicit_mode;
    ORDO_ASSERT_OK(SetRewriteMode(mode, explicit_mode));
    explicit_mode.time_limit = absl::Seconds(2);
    EXPECT_THAT(CompileWithRewrite(RequestOf(bytes, banks, explicit_mode), bytes, graph,
                                   CompileServices(), clock),
                StatusIs(absl::StatusCode::kInvalidArgument,
                         ::testing::AllOf(HasSubstr("is larger than every memory pool"),
                                          HasSubstr(absl::StrCat("rewrite \"", mode,
                                                                 "\" could not make it fit: ")))))
        << mode;
  }
}

// A graph input or output keeps its size through every rewrite, and a pin
// is the user's rule: "auto" does not search, the refusal is the answer.
TEST(CompileWithRewriteTest, AutoDoesNotSearchForAnInputOrPinnedTensorOverEveryPool) {
  Fixture f;
  RewriteCompileOptions rewrite;
  ORDO_ASSERT_OK(SetRewriteMode("auto", rewrite));
  rewrite.time_limit = absl::Seconds(2);
  // x is 8 KiB; "cat" (128 KiB) is over both banks too, but x decides.
  const CompileOptions small = TwoBanks(4 << 10, 4 << 10);
  const absl::Status input = Compile(f.graph, small, f.clock).status();
  EXPECT_THAT(input, StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("tensor \"x\"")));
  EXPECT_FALSE(IsTensorLargerThanEveryPool(input));
  EXPECT_THAT(CompileWithRewrite(RequestOf(f.bytes, small, rewrite), f.bytes, f.graph,
                                 CompileServices(), f.clock),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       ::testing::AllOf(HasSubstr("tensor \"x\""),
                                        Not(HasSubstr("could not make it fit")),
                                        // The fix a device with an input buffer of its
                                        // own has, by the API's name.
                                        HasSubstr("set options.io_outside_arena"))));

  CompileOptions pinned = TwoBanks(64 << 10, 256 << 10);
  pinned.pools.pinned["cat"] = "fast";
  EXPECT_THAT(CompileWithRewrite(RequestOf(f.bytes, pinned, rewrite), f.bytes, f.graph,
                                 CompileServices(), f.clock),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       ::testing::AllOf(HasSubstr("pinned to \"fast\""),
                                        Not(HasSubstr("could not make it fit")),
                                        Not(HasSubstr("io_outside_arena")))));
}

TEST(CompileWithRewriteTest, AutoKeepsThePlainCompileWhenRewritingFails) {
  Fixture f;
  RewriteCompileOptions rewrite;
  ORDO_ASSERT_OK(SetRewriteMode("auto", rewrite));
  rewrite.time_limit = absl::Seconds(2);
  rewrite.limits.max_ops = 1;  // the search's import refuses the model
  CompileOptions tiny;
  tiny.memory_limit_bytes = 1024;
  ORDO_ASSERT_OK_AND_ASSIGN(RewriteCompileResult result,
                            CompileWithRewrite(RequestOf(f.bytes, tiny, rewrite), f.bytes, f.graph,
                                               CompileServices(), f.clock));
  ASSERT_TRUE(result.rewrite.has_value());
  EXPECT_TRUE(result.rewrite->fit_fallback);
  EXPECT_THAT(result.rewrite->note, HasSubstr("rewriting failed"));
  EXPECT_THAT(result.rewrite->rewrites, IsEmpty());
  EXPECT_EQ(result.compile.peak_bytes, result.rewrite->fallback_from_peak_bytes);
  EXPECT_FALSE(result.rewrite->fits);
  EXPECT_EQ(result.graph.num_ops(), f.graph.num_ops());

  // Not in "auto": the error is the answer.
  rewrite.mode = RewriteMode::kIdentity;
  rewrite.fit_fallback = false;
  EXPECT_FALSE(CompileWithRewrite(RequestOf(f.bytes, tiny, rewrite), f.bytes, f.graph,
                                  CompileServices(), f.clock)
                   .ok());
}

TEST(CompileWithRewriteTest, ACancelledRequestStillGetsAValidSchedule) {
  Fixture f;
  std::atomic<bool> cancelled{true};
  CompileServices services;
  services.cancelled = &cancelled;
  RewriteCompileOptions rewrite;
  rewrite.mode = RewriteMode::kAll;
  rewrite.time_limit = absl::Hours(1);  // only the flag stops it
  ORDO_ASSERT_OK_AND_ASSIGN(RewriteCompileResult result,
                            CompileWithRewrite(RequestOf(f.bytes, CompileOptions(), rewrite),
                                               f.bytes, f.graph, services, f.clock));
  ASSERT_TRUE(result.rewrite.has_value());
  EXPECT_TRUE(result.rewrite->time_limit_hit);
  EXPECT_EQ(result.compile.peak_bytes, result.compile.simulation.peak_bytes);
  EXPECT_EQ(result.compile.schedule.size(), static_cast<size_t>(result.graph.num_ops()));
}

TEST(CompileWithRewriteTest, NativeGraphsCannotBeRewritten) {
  Graph graph = ordo::testing::TestGraph(R"(
    input x 4
    op a Relu x -> y:4
    output y
  )");
  RealClock clock;
  RewriteCompileOptions rewrite;
  rewrite.mode = RewriteMode::kIdentity;
  EXPECT_THAT(CompileWithRewrite(RequestOf("", CompileOptions(), rewrite), "", graph,
                                 CompileServices(), clock),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("needs an ONNX model")));
  // "auto" has nothing to fall back to: the graph is compiled as it is.
  ORDO_ASSERT_OK(SetRewriteMode("auto", rewrite));
  CompileOptions tiny;
  tiny.memory_limit_bytes = 1;
  ORDO_ASSERT_OK_AND_ASSIGN(
      RewriteCompileResult result,
      CompileWithRewrite(RequestOf("", tiny, rewrite), "", graph, CompileServices(), clock));
  EXPECT_FALSE(result.rewrite.has_value());
}

TEST(CompileWithRewriteTest, BadOptionsNameTheField) {
  RewriteCompileOptions options;
  EXPECT_THAT(SetRewriteMode("sideways", options),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("sideways")));
  options.max_latency_overhead = -0.1;
  EXPECT_THAT(CheckRewriteCompileOptions(options),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("max_latency_overhead")));
  options.max_latency_overhead = 0.05;
  for (int32_t width : {-1, kMaxRewriteBeamWidth + 1}) {
    options.beam_width = width;
    EXPECT_THAT(CheckRewriteCompileOptions(options),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("beam_width")));
  }
  options.beam_width = 0;
  options.latency.macs_per_second = 0;
  EXPECT_THAT(CheckRewriteCompileOptions(options),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("macs_per_second")));
  options.latency.macs_per_second = 1e9;
  options.latency.op_overhead_seconds = -1;
  EXPECT_THAT(CheckRewriteCompileOptions(options),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("op_overhead_seconds")));
  // Past these ranges a latency may be infinite and an overhead NaN.
  for (const LatencyModel latency : {LatencyModel{4.9e-324, 0}, LatencyModel{1e19, 0},
                                     LatencyModel{1e9, 1e308}, LatencyModel{NAN, 0}}) {
    options.latency = latency;
    EXPECT_THAT(CheckRewriteCompileOptions(options),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("must be from")))
        << latency.macs_per_second << " " << latency.op_overhead_seconds;
  }
  options.latency = {kMinMacsPerSecond, kMaxOpOverheadSeconds};
  ORDO_EXPECT_OK(CheckRewriteCompileOptions(options));
  options.latency = LatencyModel();
  for (const char* name : {"none", "identity", "partition", "all", "auto"}) {
    ORDO_ASSERT_OK(SetRewriteMode(name, options));
    EXPECT_EQ(RewriteModeNameOf(options), name);
  }
}

TEST(CompileWithRewriteTest, InterfaceCheckNamesTheTensor) {
  Graph a = ordo::testing::TestGraph(R"(
    input x 4
    op r Relu x -> y:4
    output y
  )");
  Graph b = ordo::testing::TestGraph(R"(
    input x 4
    op r Relu x -> z:4
    output z
  )");
  ORDO_EXPECT_OK(CheckSameInterface(a, a));
  EXPECT_THAT(CheckSameInterface(a, b),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("\"z\"")));
}

}  // namespace
}  // namespace ordo
