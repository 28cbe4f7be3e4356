// The `ordo` binary as a user runs it: real process, real files, exit codes.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/rewrite/onnx_test_model.h"
#include "core/testing/test_paths.h"
#include "core/tflite/tflite_test_model.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "onnx/onnx_pb.h"
#include "rpc/pools_proto.h"
#include "tests/cli/compile_json.h"
#include "tests/cli/run_ordo.h"

namespace {

using ::testing::Contains;
using ::testing::ElementsAre;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;
using ::testing::Not;

using ::ordo::testing::ProcessResult;
using ::ordo::testing::RunOrdo;
using ::ordo::ParseCompileJson;
namespace v1 = ::ordo::v1;

std::string Example(const std::string& name) {
  return absl::StrCat(ordo::testing::ExampleModelsDir(), "/", name);
}

std::filesystem::path TempPath(const std::string& name) {
  return std::filesystem::temp_directory_path() /
         absl::StrCat("ordo_cli_test_", getpid(), "_", name);
}

std::string WriteTemp(const std::string& name, const std::string& contents) {
  std::filesystem::path path = TempPath(name);
  std::ofstream(path, std::ios::binary) << contents;
  return path.string();
}

TEST(OrdoCliTest, CompileJsonOnEveryExampleModel) {
  int models = 0;
  for (const auto& entry : std::filesystem::directory_iterator(ordo::testing::ExampleModelsDir())) {
    if (entry.path().extension() != ".onnx") continue;
    ++models;
    ProcessResult run = RunOrdo(absl::StrCat("compile ", entry.path().string(), " --json"));
    ASSERT_EQ(run.exit_code, 0) << run.out;
    const v1::CompileResponse report = ParseCompileJson(run.out);
    EXPECT_GT(report.ops(), 0);
    EXPECT_GE(report.peak_bytes(), report.lower_bound_bytes());
    EXPECT_EQ(report.schedule_size(), report.ops());
    EXPECT_EQ(report.profile().step_bytes_size(), report.ops());
    EXPECT_EQ(report.model_path(), entry.path().string());
    EXPECT_EQ(report.options().scheduler(), "best");  // the default in force
    std::vector<std::string> names;
    for (const v1::BaselinePeak& baseline : report.baselines()) {
      names.push_back(baseline.name());
      EXPECT_GE(baseline.peak_bytes(), report.peak_bytes()) << baseline.name();
    }
    EXPECT_THAT(names, ElementsAre("model_order", "kahn", "rpo"));
    // The mapping's documented forms: int64 as a string, enums by name.
    EXPECT_THAT(run.out, HasSubstr(absl::StrCat("\"peak_bytes\": \"", report.peak_bytes(), "\"")));
    EXPECT_THAT(run.out, HasSubstr("\"status\": \"SCHEDULE_STATUS_"));
  }
  EXPECT_GE(models, 2);
}

TEST(OrdoCliTest, HumanSummaryAndMemoryLimit) {
  // --rewrite none: report that it does not fit, exit 0 (without it, the
  // limit turns on the fit-mode fallback; see the rewrite tests below).
  ProcessResult run = RunOrdo(absl::StrCat("compile ", Example("small_resnet.onnx"),
                                 " --memory-limit 1B --scheduler greedy --rewrite none"));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("DOES NOT FIT"));
  EXPECT_THAT(run.out, HasSubstr("model_order"));
}

// A limit past a day (an infinite one included) is taken as a day, as the
// service takes it; it once failed the JSON mapping (bench/flag-sweep).
TEST(OrdoCliTest, TimeLimitsPastADayAreADay) {
  for (const char* limit : {"inf", "99999999999999999999", "48h"}) {
    ProcessResult run = RunOrdo(
        absl::StrCat("compile ", Example("tiny_cell.onnx"), " --json --time-limit ", limit));
    ASSERT_EQ(run.exit_code, 0) << limit << "\n" << run.out;
    EXPECT_EQ(ParseCompileJson(run.out).options().time_limit().seconds(), 24 * 3600) << limit;
  }
}

TEST(OrdoCliTest, EmitOnnxReloadsWithTheSamePeak) {
  std::string out = TempPath("reordered.onnx").string();
  ProcessResult first = RunOrdo(absl::StrCat("compile ", Example("tiny_cell.onnx"),
                                   " --json --emit-onnx ", out));
  ASSERT_EQ(first.exit_code, 0) << first.out;
  // The emitted file runs the chosen schedule in file order.
  ProcessResult again = RunOrdo(absl::StrCat("compile ", out, " --json --scheduler model"));
  ASSERT_EQ(again.exit_code, 0) << again.out;
  const v1::CompileResponse a = ParseCompileJson(first.out);
  const v1::CompileResponse b = ParseCompileJson(again.out);
  EXPECT_EQ(a.peak_bytes(), b.peak_bytes());
  EXPECT_THAT(b.schedule(), ElementsAreArray(a.schedule()));
  std::filesystem::remove(out);
}

TEST(OrdoCliTest, BadInputExitsTwoWithAMessage) {
  std::string garbage = WriteTemp("garbage.onnx", "this is not a model \xff\xfe");
  std::string truncated;
  {
    std::ifstream in(Example("small_resnet.onnx"), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    truncated = WriteTemp("truncated.onnx", bytes.substr(0, bytes.size() / 2));
  }
  std::string bad_json = WriteTemp("bad.json", R"({"ops": [{"name": "a", "type": "Relu",
      "inputs": ["ghost"], "outputs": ["y"]}], "tensors": [{"name": "y", "sizeBytes": 4}]})");
  for (const std::string& args :
       {absl::StrCat("compile ", garbage), absl::StrCat("compile ", truncated),
        absl::StrCat("compile ", bad_json), std::string("compile /no/such/model.onnx"),
        absl::StrCat("compile ", Example("tiny_cell.onnx"), " --scheduler nope"),
        absl::StrCat("compile ", Example("tiny_cell.onnx"), " --memory-limit lots"),
        absl::StrCat("compile ", Example("tiny_cell.onnx"), " --bogus"),
        absl::StrCat("compile ", Example("tiny_cell.onnx"), " --time-limit -3s"),
        absl::StrCat("compile ", Example("tiny_cell.onnx"), " --max-ops 3"),
        absl::StrCat("compile ", Example("tiny_cell.onnx"), " --alignment 4611686018427387904"),
        absl::StrCat("compile ", ordo::testing::SourceDir(),
                     "/tests/data/bad/activation_total_overflows.onnx"),
        std::string("frobnicate"), std::string("")}) {
    ProcessResult run = RunOrdo(args);
    EXPECT_EQ(run.exit_code, 2) << args << "\n" << run.out;
    EXPECT_FALSE(run.out.empty()) << args;
  }
  EXPECT_THAT(RunOrdo(absl::StrCat("compile ", bad_json)).out, HasSubstr("ghost"));
  for (const std::string& path : {garbage, truncated, bad_json}) std::filesystem::remove(path);
}

TEST(OrdoCliTest, ArenaTrafficAndOutDir) {
  std::filesystem::path dir = TempPath("out");
  ProcessResult run = RunOrdo(absl::StrCat("compile ", Example("tiny_cell.onnx"),
                                           " --json --on-chip 64KiB --arena tflite --out-dir ",
                                           dir.string()));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const v1::CompileResponse report = ParseCompileJson(run.out);
  EXPECT_EQ(report.arena().planner(), "tflite");
  EXPECT_GE(report.arena().arena_bytes(), report.arena().lower_bound_bytes());
  ASSERT_FALSE(report.arena_baselines().empty());
  EXPECT_EQ(report.arena_baselines(0).planner(), "tflite");
  EXPECT_GE(report.arena_baselines(0).model_order_arena_bytes(), 0);
  EXPECT_EQ(report.traffic().on_chip_bytes(), 64 * 1024);
  EXPECT_EQ(report.device().on_chip_bytes(), 64 * 1024);
  EXPECT_EQ(report.traffic().total_bytes(),
            report.traffic().read_bytes() + report.traffic().write_bytes());
  for (const char* file : {"schedule.json", "arena.json", "memory.svg"}) {
    EXPECT_TRUE(std::filesystem::exists(dir / file)) << file;
  }
  // schedule.json is the report; arena.json its arena, in the same mapping.
  auto read = [](const std::filesystem::path& path) {
    std::ifstream in(path);
    return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  };
  EXPECT_EQ(ParseCompileJson(read(dir / "schedule.json")).peak_bytes(), report.peak_bytes());
  v1::ArenaPlan arena;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(read(dir / "arena.json"), &arena).ok());
  EXPECT_EQ(arena.arena_bytes(), report.arena().arena_bytes());
  EXPECT_EQ(arena.tensors_size(), report.arena().tensors_size());
  std::ifstream svg(dir / "memory.svg");
  std::string head(5, ' ');
  svg.read(head.data(), 5);
  EXPECT_EQ(head, "<svg ");
  EXPECT_EQ(RunOrdo(absl::StrCat("compile ", Example("tiny_cell.onnx"), " --arena nope")).exit_code,
            2);
  std::filesystem::remove_all(dir);
}

// memory.png is drawn by rsvg-convert found on PATH (sys/child_process's
// PATH search); without it the SVG alone is written and the run succeeds.
TEST(OrdoCliTest, OutDirDrawsThePngOnlyWithRsvgConvertOnPath) {
  const std::string model = Example("tiny_cell.onnx");
  if (system("command -v rsvg-convert >/dev/null 2>&1") == 0) {
    const std::filesystem::path with = TempPath("with_rsvg");
    ASSERT_EQ(RunOrdo(absl::StrCat("compile ", model, " --out-dir ", with.string())).exit_code, 0);
    std::ifstream png(with / "memory.png", std::ios::binary);
    std::string magic(4, ' ');
    png.read(magic.data(), 4);
    EXPECT_EQ(magic, "\x89PNG");
    std::filesystem::remove_all(with);
  }
  const std::filesystem::path without = TempPath("without_rsvg");
  const std::string path = getenv("PATH") != nullptr ? getenv("PATH") : "";
  setenv("PATH", "/nonexistent", 1);  // popen's /bin/sh and OrdoBinary() are absolute
  const ProcessResult run = RunOrdo(absl::StrCat("compile ", model, " --out-dir ", without.string()));
  setenv("PATH", path.c_str(), 1);
  EXPECT_EQ(run.exit_code, 0) << run.out;
  EXPECT_TRUE(std::filesystem::exists(without / "memory.svg"));
  EXPECT_FALSE(std::filesystem::exists(without / "memory.png"));
  std::filesystem::remove_all(without);
}

// Four 32-channel branches concatenated into a 1x1 Conv: a concat->conv
// site the identity rewrite turns into partial convs (core/rewrite).
std::string WriteConcatConvModel() {
  ordo::OnnxTestModel m;
  m.Input("x", {1, 8, 16, 16});
  std::vector<std::string> branches;
  for (int i = 0; i < 4; ++i) {
    const std::string w = absl::StrCat("w", i);
    m.Weight(w, {32, 8, 1, 1}, nullptr);
    m.Node("Conv", {"x", w}, {absl::StrCat("b", i)});
    branches.push_back(absl::StrCat("b", i));
  }
  ordo::SetIntAttribute(m.Node("Concat", branches, {"cat"}), "axis", 1);
  m.Weight("wy", {16, 128, 1, 1}, nullptr);
  m.Node("Conv", {"cat", "wy"}, {"y"});
  m.Output("y");
  return WriteTemp("concat_conv.onnx", m.Bytes());
}

// Whatever a mode finds: the peak does not rise, every kept rewrite is
// listed with its cost, and the written model runs the reported schedule in
// file order at the reported peak.
void ExpectConsistentRewrite(const v1::CompileResponse& report,
                             const std::string& rewritten_path) {
  ASSERT_TRUE(report.has_rewrite()) << report.DebugString();
  const v1::RewriteSummary& rewrite = report.rewrite();
  EXPECT_LE(report.peak_bytes(), rewrite.original_peak_bytes());
  int64_t extra_macs = 0;
  for (const v1::AppliedRewrite& applied : report.rewrites()) {
    EXPECT_LE(applied.peak_after_bytes(), applied.peak_before_bytes());
    extra_macs += applied.extra_macs();
  }
  EXPECT_EQ(extra_macs, rewrite.rewritten_macs() - rewrite.original_macs());
  // The model itself goes to --rewritten-model, not into the JSON.
  EXPECT_TRUE(report.rewritten_onnx_model().empty());
  ProcessResult again =
      RunOrdo(absl::StrCat("compile ", rewritten_path, " --json --scheduler model"));
  ASSERT_EQ(again.exit_code, 0) << again.out;
  const v1::CompileResponse reloaded = ParseCompileJson(again.out);
  EXPECT_EQ(reloaded.peak_bytes(), report.peak_bytes());
  EXPECT_THAT(reloaded.schedule(), ElementsAreArray(report.schedule()));
}

TEST(OrdoCliTest, RewriteIdentityWritesAModelThatRunsTheScheduleAtThePeak) {
  const std::string model = WriteConcatConvModel();
  const std::string out = TempPath("rewritten.onnx").string();
  ProcessResult run = RunOrdo(absl::StrCat("compile ", model,
                                           " --json --rewrite identity --rewritten-model ", out));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const v1::CompileResponse report = ParseCompileJson(run.out);
  ExpectConsistentRewrite(report, out);
  EXPECT_EQ(report.rewrite().mode(), "identity");
  EXPECT_EQ(report.options().rewrite(), "identity");
  ASSERT_EQ(report.rewrites_size(), 1);
  EXPECT_EQ(report.rewrites(0).kind(), "identity");
  EXPECT_LT(report.peak_bytes(), report.rewrite().original_peak_bytes());
  EXPECT_THAT(report.rewrite().note(), HasSubstr("no weight data"));
  EXPECT_FALSE(report.rewrite().has_fits());  // no --memory-limit: not fit mode

  ProcessResult text = RunOrdo(absl::StrCat("compile ", model, " --rewrite identity"));
  ASSERT_EQ(text.exit_code, 0) << text.out;
  EXPECT_THAT(text.out, HasSubstr("1 rewrite(s) kept"));

  ProcessResult none = RunOrdo(absl::StrCat("compile ", model, " --json"));
  ASSERT_EQ(none.exit_code, 0) << none.out;
  EXPECT_FALSE(ParseCompileJson(none.out).has_rewrite());
  std::filesystem::remove(out);
  std::filesystem::remove(model);
}

TEST(OrdoCliTest, EveryRewriteModeKeepsThePeak) {
  const std::string model = WriteConcatConvModel();
  for (const char* mode : {"identity", "partition", "all"}) {
    const std::string out = TempPath(absl::StrCat(mode, ".onnx")).string();
    ProcessResult run = RunOrdo(absl::StrCat(
        "compile ", model, " --json --rewrite ", mode, " --time-limit 2s",
        " --max-latency-overhead 0.5 --macs-per-second 4e8 --op-overhead-seconds 1e-5",
        " --rewritten-model ", out));
    ASSERT_EQ(run.exit_code, 0) << mode << "\n" << run.out;
    const v1::CompileResponse report = ParseCompileJson(run.out);
    EXPECT_EQ(report.rewrite().mode(), mode);
    ExpectConsistentRewrite(report, out);
    std::filesystem::remove(out);
  }
  std::filesystem::remove(model);
}

// Partition rewriting fuses the block's layer chain (patch-wise fusion,
// docs/rewriting.md) unless --no-fusion; both results are consistent and the
// fused model, written out, compiles again to the reported peak.
TEST(OrdoCliTest, PartitionFusesLayerChainsUnlessNoFusion) {
  const std::string model =
      WriteTemp("block.onnx", ordo::InvertedResidualBlock({.skip = false}).Bytes());
  auto kinds_of = [](const v1::CompileResponse& report) {
    std::vector<std::string> kinds;
    for (const v1::AppliedRewrite& applied : report.rewrites()) kinds.push_back(applied.kind());
    return kinds;
  };
  int64_t fused_peak = 0;
  for (const char* flag : {"", " --no-fusion"}) {
    const std::string out = TempPath("block_rewritten.onnx").string();
    ProcessResult run = RunOrdo(absl::StrCat(
        "compile ", model, " --json --rewrite partition --time-limit 2s",
        " --max-latency-overhead 0.5 --op-overhead-seconds 0 --rewritten-model ", out, flag));
    ASSERT_EQ(run.exit_code, 0) << flag << "\n" << run.out;
    const v1::CompileResponse report = ParseCompileJson(run.out);
    ExpectConsistentRewrite(report, out);
    if (*flag == '\0') {
      EXPECT_THAT(kinds_of(report), Contains("fusion"));
      fused_peak = report.peak_bytes();
    } else {
      EXPECT_TRUE(report.options().disable_fusion());
      EXPECT_THAT(kinds_of(report), Not(Contains("fusion")));
      EXPECT_GT(report.peak_bytes(), fused_peak);
    }
    std::filesystem::remove(out);
  }
  std::filesystem::remove(model);
}

// A wider beam is a search knob only: the result is as consistent as the
// greedy one's (whether it is lower is not promised).
TEST(OrdoCliTest, BeamWidthTwoKeepsThePeak) {
  const std::string model = WriteConcatConvModel();
  const std::string out = TempPath("beam2.onnx").string();
  ProcessResult run = RunOrdo(
      absl::StrCat("compile ", model, " --json --rewrite partition --beam-width 2 --time-limit 2s",
                   " --max-latency-overhead 0.5 --rewritten-model ", out));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const v1::CompileResponse report = ParseCompileJson(run.out);
  EXPECT_EQ(report.rewrite().mode(), "partition");
  EXPECT_EQ(report.options().beam_width(), 2);
  ExpectConsistentRewrite(report, out);
  std::filesystem::remove(out);
  std::filesystem::remove(model);
}

TEST(OrdoCliTest, MemoryLimitFallsBackToRewritingAndFailsNamingTheBottleneck) {
  const std::string model = WriteConcatConvModel();
  // Fits as is: no rewriting.
  ProcessResult roomy = RunOrdo(absl::StrCat("compile ", model, " --json --memory-limit 1MiB"));
  ASSERT_EQ(roomy.exit_code, 0) << roomy.out;
  const v1::CompileResponse roomy_report = ParseCompileJson(roomy.out);
  EXPECT_FALSE(roomy_report.has_rewrite());
  EXPECT_TRUE(roomy_report.fits());
  EXPECT_EQ(roomy_report.device().memory_capacity_bytes(), 1 << 20);

  // 1 KiB is below any schedule, rewritten or not: rewrite all in fit mode,
  // say so, exit 3 naming what is live at the peak.
  ProcessResult tiny =
      RunOrdo(absl::StrCat("compile ", model, " --memory-limit 1KiB --time-limit 2s"));
  EXPECT_EQ(tiny.exit_code, 3) << tiny.out;
  EXPECT_THAT(tiny.out, HasSubstr("rewrote with --rewrite all (fit mode)"));
  EXPECT_THAT(tiny.out, HasSubstr("does not fit --memory-limit"));
  EXPECT_THAT(tiny.out, HasSubstr("bottleneck tensors"));
  EXPECT_THAT(tiny.out, HasSubstr("x"));  // the input is live at every step
  std::filesystem::remove(model);
}

// With memory pools, "auto" takes the banks as its constraint: the input
// model (peak 256 KiB) cannot be placed in 64 + 128 KiB, its rewritten
// form can; banks too small for any rewritten form exit 3 naming the pool
// that overflows and by how much.
TEST(OrdoCliTest, RewriteAutoMakesTheModelFitThePools) {
  const std::string model = WriteConcatConvModel();
  const std::string banks = " --pool fast:64KiB:4GB/s --pool slow:128KiB:100MB/s";
  ProcessResult plain = RunOrdo(absl::StrCat("compile ", model, " --json", banks));
  ASSERT_EQ(plain.exit_code, 0) << plain.out;
  const v1::CompileResponse as_is = ParseCompileJson(plain.out);
  ASSERT_TRUE(as_is.has_fits());
  EXPECT_FALSE(as_is.fits());
  EXPECT_FALSE(as_is.has_rewrite());

  const std::string out = TempPath("pools_fit.onnx").string();
  ProcessResult run =
      RunOrdo(absl::StrCat("compile ", model, " --json --rewrite auto --time-limit 5s", banks,
                           " --rewritten-model ", out));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const v1::CompileResponse report = ParseCompileJson(run.out);
  EXPECT_TRUE(report.fits());
  EXPECT_TRUE(report.rewrite().fit_fallback());
  EXPECT_TRUE(report.rewrite().fits());
  EXPECT_FALSE(report.rewrites().empty());
  for (const v1::PoolUsageReport& pool : report.placement().pools()) {
    EXPECT_LE(pool.used_bytes(), pool.capacity_bytes()) << pool.DebugString();
  }
  ExpectConsistentRewrite(report, out);
  std::filesystem::remove(out);

  // Banks smaller than the concat itself: a bad spec as the model is (exit
  // 2 naming the tensor), a fit once "auto" has rewritten the concat away.
  const std::string halves = " --pool fast:64KiB:4GB/s --pool slow:64KiB:100MB/s";
  ProcessResult refused = RunOrdo(absl::StrCat("compile ", model, halves));
  EXPECT_EQ(refused.exit_code, 2) << refused.out;
  EXPECT_THAT(refused.out, HasSubstr("tensor \"cat\" (131072 bytes) is larger than every"));
  EXPECT_THAT(refused.out, HasSubstr("set --rewrite to \"auto\""));
  ProcessResult split = RunOrdo(
      absl::StrCat("compile ", model, " --json --rewrite auto --time-limit 5s", halves,
                   " --rewritten-model ", out));
  ASSERT_EQ(split.exit_code, 0) << split.out;
  const v1::CompileResponse split_report = ParseCompileJson(split.out);
  EXPECT_TRUE(split_report.fits());
  EXPECT_THAT(split_report.rewrite().note(), HasSubstr("tensor \"cat\""));
  ExpectConsistentRewrite(split_report, out);
  std::filesystem::remove(out);

  // A softmax over a concat, both over every bank: no rewrite removes them,
  // so the refusal stands (exit 2) and says what rewriting did.
  ordo::OnnxTestModel soft;
  soft.Input("x", {1, 1024});
  ordo::SetIntAttribute(soft.Node("Concat", {"x", "x", "x", "x"}, {"c"}), "axis", 1);
  ordo::SetIntAttribute(soft.Node("Softmax", {"c"}, {"s"}), "axis", 1);
  ordo::SetIntsAttribute(soft.Node("ReduceMax", {"s"}, {"y"}), "axes", {1});
  soft.Output("y");
  const std::string softmax = WriteTemp("concat_softmax.onnx", soft.Bytes());
  ProcessResult stands = RunOrdo(absl::StrCat("compile ", softmax,
                                              " --rewrite auto --time-limit 2s --pool a:8KiB "
                                              "--pool b:8KiB"));
  EXPECT_EQ(stands.exit_code, 2) << stands.out;
  EXPECT_THAT(stands.out, HasSubstr("is larger than every memory pool"));
  EXPECT_THAT(stands.out, HasSubstr("could not make it fit"));
  std::filesystem::remove(softmax);

  std::filesystem::remove(model);

  // No rewrite site: x and relu(x), 16 KiB each, are live together at the
  // Add in every form of this model; only one bank holds 16 KiB.
  ordo::OnnxTestModel add;
  add.Input("x", {1, 4096});
  add.Node("Relu", {"x"}, {"a"});
  add.Node("Add", {"x", "a"}, {"y"});
  add.Output("y");
  const std::string small = WriteTemp("relu_add.onnx", add.Bytes());
  ProcessResult tiny = RunOrdo(absl::StrCat("compile ", small,
                                            " --rewrite auto --time-limit 2s --pool fast:16KiB "
                                            "--pool slow:8KiB"));
  EXPECT_EQ(tiny.exit_code, 3) << tiny.out;
  EXPECT_THAT(tiny.out, HasSubstr("does not fit the memory pools"));
  EXPECT_THAT(tiny.out, HasSubstr("overflows by 16384 bytes"));
  EXPECT_THAT(tiny.out, HasSubstr("bottleneck tensors"));
  std::filesystem::remove(small);
}

// A real model whose best order does not fit, rewritten until it does:
// the fallback's whole path (plain compile, search in fit mode, compile of
// the rewritten model, written file) on MobileNetV2.
TEST(OrdoCliTest, MemoryLimitFallbackMakesMobileNetV2Fit) {
  const std::string model = ordo::testing::SharedModelsDir() + "/mobilenet_v2.onnx";
  if (!std::filesystem::exists(model)) GTEST_SKIP() << model << " not found";
  const std::string out = TempPath("mobilenet_v2_fit.onnx").string();
  // Its best order peaks at 5.74 MiB; 4 MiB needs a rewrite.
  ProcessResult run = RunOrdo(absl::StrCat("compile ", model,
                                           " --json --memory-limit 4MiB --time-limit 10s",
                                           " --rewritten-model ", out));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const v1::CompileResponse report = ParseCompileJson(run.out);
  EXPECT_TRUE(report.fits());
  EXPECT_LE(report.peak_bytes(), 4 << 20);
  EXPECT_TRUE(report.rewrite().fit_fallback());
  EXPECT_GT(report.rewrite().fallback_from_peak_bytes(), 4 << 20);
  EXPECT_TRUE(report.rewrite().fits());
  EXPECT_LE(report.rewrite().latency_overhead(), 0.05);
  ExpectConsistentRewrite(report, out);
  std::filesystem::remove(out);
}

TEST(OrdoCliTest, BadRewriteArgumentsExitTwoNamingTheFlag) {
  const std::string model = WriteConcatConvModel();
  const std::string native = WriteTemp("native.json", R"({"ops": [{"name": "a", "type": "Relu",
      "inputs": ["x"], "outputs": ["y"]}], "tensors": [{"name": "x", "sizeBytes": 4},
      {"name": "y", "sizeBytes": 4}], "inputs": ["x"], "outputs": ["y"]})");
  for (const auto& [args, expected] : std::vector<std::pair<std::string, std::string>>{
           {absl::StrCat("compile ", model, " --rewrite sideways"), "--rewrite"},
           {absl::StrCat("compile ", model, " --max-latency-overhead -0.1"),
            "--max-latency-overhead"},
           {absl::StrCat("compile ", model, " --max-latency-overhead lots"),
            "--max-latency-overhead"},
           {absl::StrCat("compile ", model, " --rewrite all --beam-width 0"), "--beam-width"},
           {absl::StrCat("compile ", model, " --rewrite all --beam-width 17"), "--beam-width"},
           {absl::StrCat("compile ", model, " --rewrite all --beam-width two"), "--beam-width"},
           {absl::StrCat("compile ", model, " --rewrite all --beam-width 2.5"), "--beam-width"},
           {absl::StrCat("compile ", model, " --rewrite all --macs-per-second 0"),
            "--macs-per-second"},
           {absl::StrCat("compile ", model, " --rewrite all --op-overhead-seconds -1"),
            "--op-overhead-seconds"},
           {absl::StrCat("compile ", model, " --rewrite all --op-overhead-seconds 1e308"),
            "--op-overhead-seconds: not a number from 0 to 1000"},
           {absl::StrCat("compile ", model, " --rewrite all --macs-per-second 1e-300"),
            "--macs-per-second"},
           {absl::StrCat("compile ", native, " --rewrite identity"), "needs an ONNX model"},
           {absl::StrCat("compile ", native, " --rewritten-model /tmp/x.onnx"),
            "needs an ONNX input model"},
           // Checked before the compile, like every request-level rule.
           {absl::StrCat("compile ", model, " --emit-tflite /tmp/x.tflite"),
            "--emit-tflite: needs a TFLite input model"}}) {
    ProcessResult run = RunOrdo(args);
    EXPECT_EQ(run.exit_code, 2) << args << "\n" << run.out;
    EXPECT_THAT(run.out, HasSubstr(expected)) << args;
  }
  // A native graph with a memory limit is compiled as is ("auto" has
  // nothing to rewrite).
  ProcessResult native_limit = RunOrdo(absl::StrCat("compile ", native, " --memory-limit 1B"));
  EXPECT_EQ(native_limit.exit_code, 0) << native_limit.out;
  EXPECT_THAT(native_limit.out, HasSubstr("DOES NOT FIT"));
  std::filesystem::remove(model);
  std::filesystem::remove(native);
}

TEST(OrdoCliTest, InspectAndSchedulers) {
  ProcessResult inspect = RunOrdo(absl::StrCat("inspect ", Example("tiny_cell.onnx"), " --json"));
  ASSERT_EQ(inspect.exit_code, 0) << inspect.out;
  EXPECT_GT(nlohmann::json::parse(inspect.out)["ops"].get<int>(), 0);
  ProcessResult schedulers = RunOrdo("schedulers");
  EXPECT_EQ(schedulers.exit_code, 0);
  EXPECT_THAT(schedulers.out, HasSubstr("greedy"));
}

// A converter's dynamic batch (shape_signature -1, shape 1) is planned at
// `shape`, as TFLite Micro runs it, and the import's note says so in the
// text reports of `compile` and `estimate`, in their --json and in
// `ordo inspect`.
TEST(OrdoCliTest, ATfliteDynamicBatchIsPlannedAtItsShapeAndSaysSo) {
  const std::string model =
      WriteTemp("dynamic_batch.tflite", ordo::testing::DynamicBatchTfliteModel());
  const std::string note = ordo::testing::kDynamicBatchTfliteNote;
  for (const char* command : {"compile", "estimate"}) {
    ProcessResult text = RunOrdo(absl::StrCat(command, " ", model));
    ASSERT_EQ(text.exit_code, 0) << text.out;
    EXPECT_THAT(text.out, HasSubstr(absl::StrCat("\nnote          ", note, "\n"))) << command;
  }
  ProcessResult json = RunOrdo(absl::StrCat("compile ", model, " --json"));
  ASSERT_EQ(json.exit_code, 0) << json.out;
  EXPECT_THAT(ParseCompileJson(json.out).import_notes(), ElementsAre(note));
  ProcessResult estimate = RunOrdo(absl::StrCat("estimate ", model, " --json"));
  ASSERT_EQ(estimate.exit_code, 0) << estimate.out;
  EXPECT_THAT(nlohmann::json::parse(estimate.out)["import_notes"].get<std::vector<std::string>>(),
              ElementsAre(note));
  ProcessResult inspect = RunOrdo(absl::StrCat("inspect ", model, " --json"));
  ASSERT_EQ(inspect.exit_code, 0) << inspect.out;
  EXPECT_THAT(nlohmann::json::parse(inspect.out)["notes"].get<std::vector<std::string>>(),
              ElementsAre(note));
  std::filesystem::remove(model);
}

// A graph output held in an initializer (a detector's anchors) compiles:
// the text and JSON reports carry the note, and the reordered and rewritten
// models keep it as an output, where the application reads it.
TEST(OrdoCliTest, AConstantGraphOutputIsNotedAndKeptInTheWrittenModels) {
  ordo::OnnxTestModel m;
  m.Input("x", {1, 8, 16, 16});
  m.Weight("w", {16, 8, 3, 3}, nullptr);
  ordo::SetIntsAttribute(m.Node("Conv", {"x", "w"}, {"c"}), "pads", {1, 1, 1, 1});
  m.Node("Relu", {"c"}, {"y"});
  m.FloatWeight("anchors", {1, 2, 3, 4});
  m.Output("y");
  m.Output("anchors");
  const std::string model = WriteTemp("constant_output.onnx", m.Bytes());
  const std::string reordered = WriteTemp("constant_output.ordo.onnx", "");
  const std::string rewritten = WriteTemp("constant_output.rewritten.onnx", "");
  const char* note_start = "graph output \"anchors\" is a constant";
  ProcessResult text = RunOrdo(absl::StrCat("compile ", model));
  ASSERT_EQ(text.exit_code, 0) << text.out;
  EXPECT_THAT(text.out, HasSubstr(absl::StrCat("\nnote          ", note_start)));
  ProcessResult json = RunOrdo(absl::StrCat("compile ", model, " --json --emit-onnx ", reordered,
                                            " --rewrite partition --rewritten-model ", rewritten));
  ASSERT_EQ(json.exit_code, 0) << json.out;
  EXPECT_THAT(ParseCompileJson(json.out).import_notes(), ElementsAre(HasSubstr(note_start)));
  for (const std::string& written : {reordered, rewritten}) {
    onnx::ModelProto proto;
    std::ifstream file(written, std::ios::binary);
    ASSERT_TRUE(proto.ParseFromIstream(&file)) << written;
    std::vector<std::string> outputs;
    for (const onnx::ValueInfoProto& output : proto.graph().output()) {
      outputs.push_back(output.name());
    }
    EXPECT_THAT(outputs, ElementsAre("y", "anchors")) << written;
  }
  for (const std::string& path : {model, reordered, rewritten}) std::filesystem::remove(path);
}

// plan.h (--out-dir): a C header firmware includes. A C compiler must take
// it (-std=c99 -pedantic -Werror), and the values it holds must be the
// compile's own (arena.json, schedule.json): pools, offsets, sizes and the
// op order, with tensor names that need escaping in C, two pools whose
// macros would collide and a pool name that would end a comment.
std::string RunShell(const std::string& command, int* exit_code) {
  FILE* pipe = popen((command + " 2>&1").c_str(), "r");
  std::string out;
  std::array<char, 4096> buffer;
  size_t n;
  while (pipe != nullptr && (n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) {
    out.append(buffer.data(), n);
  }
  const int status = pipe != nullptr ? pclose(pipe) : -1;
  *exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  return out;
}

TEST(OrdoCliTest, PlanHeaderCompilesAndHoldsThePlan) {
  if (!std::filesystem::exists("/usr/bin/cc")) GTEST_SKIP() << "no C compiler at /usr/bin/cc";
  // A chain whose tensor names need escaping in a C string literal (an
  // escaped byte followed by a digit, which a hex escape would swallow).
  const std::vector<std::string> names = {"in\"put",
                                          "back\\slash",
                                          "\xc3\xa9t\xc3\xa9"
                                          "7",
                                          "end*/comment",
                                          "tri??=graph",
                                          "out"};
  nlohmann::json graph;
  graph["name"] = "odd \"names\"";
  graph["inputs"] = {names[0]};
  graph["outputs"] = {names.back()};
  for (size_t i = 0; i < names.size(); ++i) {
    graph["tensors"].push_back({{"name", names[i]}, {"sizeBytes", 4096 * (1 + i % 3)}});
    if (i > 0) {
      graph["ops"].push_back({{"name", absl::StrCat("op\"", i)},
                              {"type", "Conv"},
                              {"inputs", {names[i - 1]}},
                              {"outputs", {names[i]}}});
    }
  }
  const std::string model = WriteTemp("odd_names.json", graph.dump());
  const std::filesystem::path dir = TempPath("plan_header");
  std::filesystem::remove_all(dir);
  ProcessResult run = RunOrdo(absl::StrCat("compile ", model, " --out-dir ", dir.string(),
                                           " --pool fast:12KiB:4GB/s --pool FAST:1MiB:1GB/s",
                                           " --pool 'slow*/bank:1MiB:0.1GB/s'"));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  std::ofstream(dir / "check.c") << R"(#include <stdio.h>
#include "plan.h"
int main(void) {
  int i;
  printf("%d %d %d %d\n", ORDO_PLAN_FITS, ORDO_POOL_COUNT, ORDO_POOL_FAST, ORDO_POOL_FAST_1);
  printf("%ld %ld\n", (long)ORDO_POOL_FAST_BYTES, (long)ORDO_POOL_FAST_1_BYTES);
  for (i = 0; i < ORDO_TENSOR_COUNT; ++i) {
    printf("%s\t%u\t%lu\t%lu\n", ordo_tensors[i].name, (unsigned)ordo_tensors[i].pool,
           (unsigned long)ordo_tensors[i].offset, (unsigned long)ordo_tensors[i].bytes);
  }
  for (i = 0; i < ORDO_SCHEDULE_LENGTH; ++i) printf("%s\n", ordo_schedule[i]);
  return 0;
}
)";
  int exit_code = 0;
  const std::string built =
      RunShell(absl::StrCat("/usr/bin/cc -std=c99 -pedantic -Wall -Werror -o ",
                            (dir / "check").string(), " ", (dir / "check.c").string()),
               &exit_code);
  ASSERT_EQ(exit_code, 0) << built;
  const std::string printed = RunShell((dir / "check").string(), &exit_code);
  ASSERT_EQ(exit_code, 0) << printed;

  // What the header should hold, from the compile's own files.
  std::ifstream arena_file(dir / "arena.json");
  const nlohmann::json arena = nlohmann::json::parse(arena_file);
  std::ifstream schedule_file(dir / "schedule.json");
  const nlohmann::json report = nlohmann::json::parse(schedule_file);
  std::string expected = "1 3 0 1\n";
  int64_t used[3] = {0, 0, 0};
  std::string tensors;
  for (const nlohmann::json& t : arena["tensors"]) {
    const std::string name = t.value("pool", "");
    const int pool = name == "fast" ? 0 : name == "FAST" ? 1 : 2;
    const int64_t offset = std::stoll(t.value("offset_bytes", "0"));
    const int64_t bytes = std::stoll(t["size_bytes"].get<std::string>());
    used[pool] = std::max(used[pool], offset + bytes);
    absl::StrAppend(&tensors, t["tensor"].get<std::string>(), "\t", pool, "\t", offset, "\t", bytes,
                    "\n");
  }
  absl::StrAppend(&expected, used[0], " ", used[1], "\n", tensors);
  for (const nlohmann::json& op : report["schedule"]) {
    absl::StrAppend(&expected, op.get<std::string>(), "\n");
  }
  EXPECT_EQ(printed, expected);

  // A plan that does not fit stops the build that includes it, unless asked.
  std::filesystem::remove_all(dir);
  run =
      RunOrdo(absl::StrCat("compile ", model, " --out-dir ", dir.string(), " --memory-limit 1KiB"));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  std::ofstream(dir / "unfit.c")
      << "#include \"plan.h\"\nint main(void) { return ORDO_PLAN_FITS; }\n";
  const std::string refused =
      RunShell(absl::StrCat("/usr/bin/cc -std=c99 -c -o /dev/null ", (dir / "unfit.c").string()),
               &exit_code);
  EXPECT_NE(exit_code, 0);
  EXPECT_THAT(refused, HasSubstr("ordo: this plan does not fit the device"));
  RunShell(absl::StrCat("/usr/bin/cc -std=c99 -pedantic -Werror -DORDO_PLAN_ALLOW_UNFIT -c -o "
                        "/dev/null ",
                        (dir / "unfit.c").string()),
           &exit_code);
  EXPECT_EQ(exit_code, 0);
  std::filesystem::remove_all(dir);
  std::filesystem::remove(model);
}

// Memory pools (docs/pools.md): placement report, presets and bad specs.
TEST(OrdoCliPoolsTest, JsonReportsThePlacementAndEachTensorsPool) {
  ProcessResult run = RunOrdo(absl::StrCat(
      "compile ", Example("small_resnet.onnx"),
      " --pool fast:64KiB:4GB/s --pool slow:64MiB:0.1GB/s:50MB/s:off-chip --json"));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const v1::CompileResponse report = ParseCompileJson(run.out);
  const v1::PoolPlacementReport& placement = report.placement();
  ASSERT_EQ(placement.pools_size(), 2);
  EXPECT_EQ(placement.pools(0).name(), "fast");
  EXPECT_EQ(placement.pools(0).capacity_bytes(), 64 * 1024);
  EXPECT_TRUE(report.fits());
  EXPECT_EQ(placement.fits(), report.fits());
  EXPECT_GE(placement.modelled_time_seconds(), placement.lower_bound_seconds() * (1 - 1e-9));
  std::vector<std::string> baselines;
  for (const v1::PoolBaselineReport& baseline : placement.baselines()) {
    baselines.push_back(baseline.name());
    if (baseline.name() == "single_pool" || !baseline.fits()) continue;
    EXPECT_LE(placement.modelled_time_seconds(),
              baseline.modelled_time_seconds() * (1 + 1e-9))
        << baseline.name();
  }
  EXPECT_THAT(baselines, ::testing::IsSupersetOf({"internal_first", "usmp_greedy",
                                                  "single_pool", "one_arena"}));
  double seconds = 0;
  for (const v1::PoolUsageReport& pool : placement.pools()) {
    EXPECT_LE(pool.used_bytes(), pool.capacity_bytes());
    seconds += pool.modelled_time_seconds();
  }
  EXPECT_NEAR(seconds, placement.modelled_time_seconds(), 1e-12);
  // The slow pool is off the chip: its tensors are the off-chip traffic
  // (with pools there is no model-order traffic to compare with).
  EXPECT_FALSE(report.has_model_order_traffic());
  EXPECT_EQ(report.traffic().on_chip_bytes(), 64 * 1024);
  ASSERT_EQ(report.device().pools_size(), 2);
  EXPECT_TRUE(report.device().pools(1).off_chip());
  ASSERT_FALSE(report.arena().tensors().empty());
  for (const v1::TensorPlacement& tensor : report.arena().tensors()) {
    EXPECT_TRUE(tensor.pool() == "fast" || tensor.pool() == "slow") << tensor.pool();
  }
}

// --one-arena without --emit-tflite: any runtime that plans one arena.
TEST(OrdoCliPoolsTest, OneArenaPutsTheWholeArenaInTheFastestPoolThatHoldsIt) {
  ProcessResult run = RunOrdo(absl::StrCat(
      "compile ", Example("small_resnet.onnx"),
      " --pool fast:64KiB:4GB/s --pool slow:64MiB:0.1GB/s --one-arena --json"));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  const v1::CompileResponse report = ParseCompileJson(run.out);
  EXPECT_TRUE(report.device().one_arena());
  EXPECT_TRUE(report.fits());
  EXPECT_EQ(report.placement().algorithm(), "one arena in \"slow\"");
  ASSERT_GT(report.arena().tensors_size(), 0);
  for (const v1::TensorPlacement& tensor : report.arena().tensors()) {
    EXPECT_EQ(tensor.pool(), "slow") << tensor.tensor();
  }
  EXPECT_EQ(report.placement().pools(0).used_bytes(), 0);
  EXPECT_EQ(report.placement().pools(1).used_bytes(), report.arena().arena_bytes());
}

// `ordo estimate` with banks: a verdict without a search, and why.
TEST(OrdoCliPoolsTest, EstimateSaysWhetherTheBanksFitAndWhy) {
  const std::string model = Example("small_resnet.onnx");
  ProcessResult json =
      RunOrdo(absl::StrCat("estimate ", model, " --device stm32h743 --activation-dtype int8 --json"));
  ASSERT_EQ(json.exit_code, 0) << json.out;
  const v1::EstimateResponse response = ordo::ParseEstimateJson(json.out);
  EXPECT_EQ(response.fit().verdict(), v1::EstimateFit::VERDICT_FITS);
  EXPECT_THAT(response.fit().pools_reason(), HasSubstr("fits the pools"));
  ProcessResult text = RunOrdo(absl::StrCat("estimate ", model, " --pool a:64 --pool b:64"));
  EXPECT_EQ(text.exit_code, 2) << text.out;  // the graph input fits no bank: a bad spec
  EXPECT_THAT(text.out, HasSubstr("larger than every memory pool"));
  EXPECT_THAT(text.out, HasSubstr("set --io-outside-arena"));  // as compile says
  // One arena, as the API's DeviceSpec.one_arena: every order's peak is at
  // least 128 KiB (the spec's bound), so no 96 KiB bank holds an arena.
  ProcessResult one = RunOrdo(absl::StrCat(
      "estimate ", model, " --pool a:96KiB --pool b:96KiB --one-arena --json"));
  ASSERT_EQ(one.exit_code, 0) << one.out;
  const v1::EstimateResponse one_arena = ordo::ParseEstimateJson(one.out);
  EXPECT_EQ(one_arena.fit().verdict(), v1::EstimateFit::VERDICT_DOES_NOT_FIT);
  EXPECT_THAT(one_arena.fit().pools_reason(), HasSubstr("one arena"));
}

TEST(OrdoCliPoolsTest, DevicePresetHumanSummaryHasOneLinePerPool) {
  ProcessResult run = RunOrdo(absl::StrCat("compile ", Example("small_resnet.onnx"),
                                           " --device i.MX-RT1170 --activation-dtype int8"));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  for (const char* pool : {"pool dtcm", "pool ocram", "pool hyperram", "placement"}) {
    EXPECT_THAT(run.out, HasSubstr(pool));
  }
  ProcessResult devices = RunOrdo("devices");
  ASSERT_EQ(devices.exit_code, 0) << devices.out;
  for (const char* name :
       {"stm32h743", "imxrt1170", "esp32s3", "rp2040", "stm32f746", "nrf5340", "rp2350"}) {
    EXPECT_THAT(devices.out, HasSubstr(name));
  }
  ProcessResult flagged = RunOrdo("devices --xml");
  EXPECT_EQ(flagged.exit_code, 2);
  EXPECT_THAT(flagged.out, HasSubstr("takes no arguments but --json, got \"--xml\""));
}

// `ordo devices --json` is GetInfo's device_presets, and each preset's pools
// are those `--device` places over: the same figures as the `--pool` flags
// the text lists, and a compile with those flags equals one with --device.
TEST(OrdoCliPoolsTest, DevicesJsonIsGetInfosPresetsAndTheirPoolsAreTheDevices) {
  ProcessResult devices = RunOrdo("devices --json");
  ASSERT_EQ(devices.exit_code, 0) << devices.out;
  v1::GetInfoResponse parsed;
  ASSERT_TRUE(google::protobuf::util::JsonStringToMessage(devices.out, &parsed).ok())
      << devices.out;
  v1::GetInfoResponse expected;
  ::ordo::rpc::DevicePresetsToProto(expected);
  ASSERT_EQ(parsed.device_presets_size(), expected.device_presets_size());
  for (int i = 0; i < parsed.device_presets_size(); ++i) {
    EXPECT_EQ(parsed.device_presets(i).DebugString(), expected.device_presets(i).DebugString());
  }
  const v1::DevicePresetInfo& esp32 = parsed.device_presets(2);
  ASSERT_EQ(esp32.name(), "esp32s3");
  std::string pools;
  for (const v1::MemoryPoolSpec& pool : esp32.pools()) {
    absl::StrAppend(&pools, " --pool ", pool.name(), ":", pool.capacity_bytes(), ":",
                    static_cast<int64_t>(pool.read_bytes_per_second()), ":",
                    static_cast<int64_t>(pool.write_bytes_per_second()),
                    pool.off_chip() ? ":off-chip" : "");
  }
  const std::string compile =
      "compile " + Example("small_resnet.onnx") + " --activation-dtype int8 --json";
  const ProcessResult by_name_run = RunOrdo(compile + " --device esp32s3");
  const ProcessResult by_pools_run = RunOrdo(compile + pools);
  ASSERT_EQ(by_name_run.exit_code, 0) << by_name_run.out;
  ASSERT_EQ(by_pools_run.exit_code, 0) << by_pools_run.out;
  const v1::CompileResponse by_name = ParseCompileJson(by_name_run.out);
  const v1::CompileResponse by_pools = ParseCompileJson(by_pools_run.out);
  EXPECT_EQ(by_name.placement().modelled_time_seconds(),
            by_pools.placement().modelled_time_seconds());
  EXPECT_EQ(by_name.arena().DebugString(), by_pools.arena().DebugString());
}

TEST(OrdoCliPoolsTest, BadPoolSpecsExitTwoNamingThePoolOrTensor) {
  const std::string model = Example("small_resnet.onnx");
  const std::pair<std::string, std::string> cases[] = {
      {"--device z80", "unknown device \"z80\""},
      {"--pool a:1KiB --pool a:2KiB", "\"a\" is given twice"},
      {"--pool a:0", "pool \"a\""},
      {"--pool a:1KiB:fast", "\"fast\""},
      {"--pool a:64MiB --pin nosuch:a", "\"nosuch\""},
      {"--pool a:64MiB --pin x:b", "unknown memory pool \"b\""},
      {"--pool a:64 --pool b:64", "larger than every memory pool"},
      {"--device stm32h743 --pool a:1KiB", "not both"},
      {"--device esp32s3 --on-chip 64KiB", "mark the external pools off-chip"},
      {"--one-arena", "--one-arena needs memory pools"},
      {"--placement-effort thorough", "--placement-effort needs memory pools"},
      {"--device stm32h743 --placement-effort best", "unknown effort \"best\""},
      {"--pool a:64MiB:1.6Gbps", "lowercase b is bits"},
      {"--pool a:64MiB --pool b:64MiB --pin x:a --pin x:b", "\"x\" is pinned twice"},
      {"--pool a:64MiB --pin x:a --io-outside-arena", "outside the arena by --io-outside-arena"},
  };
  for (const auto& [flags, message] : cases) {
    ProcessResult run = RunOrdo(absl::StrCat("compile ", model, " ", flags));
    EXPECT_EQ(run.exit_code, 2) << flags << ": " << run.out;
    EXPECT_THAT(run.out, HasSubstr(message)) << flags;
  }
}

// A graph input larger than every bank is refused (exit 2), with the fix
// a device with a camera buffer of its own has: the input outside the pools.
TEST(OrdoCliPoolsTest, AnInputOverEveryPoolSuggestsKeepingItOutsideThePools) {
  ordo::OnnxTestModel wide;
  wide.Input("x", {1, 8192});  // 32 KiB
  ordo::SetIntsAttribute(wide.Node("ReduceMax", {"x"}, {"y"}), "axes", {1});
  wide.Output("y");
  const std::string model = WriteTemp("wide_input.onnx", wide.Bytes());
  const std::string pools = " --pool a:8KiB --pool b:8KiB";
  ProcessResult refused = RunOrdo(absl::StrCat("compile ", model, pools));
  EXPECT_EQ(refused.exit_code, 2) << refused.out;
  EXPECT_THAT(refused.out, HasSubstr("tensor \"x\" (32768 bytes) is larger than every memory pool"));
  EXPECT_THAT(refused.out, HasSubstr("set --io-outside-arena"));
  EXPECT_THAT(refused.out, ::testing::Not(HasSubstr("--rewrite")));
  ProcessResult outside = RunOrdo(absl::StrCat("compile ", model, pools, " --io-outside-arena"));
  EXPECT_EQ(outside.exit_code, 0) << outside.out;
  std::filesystem::remove(model);
}

}  // namespace
