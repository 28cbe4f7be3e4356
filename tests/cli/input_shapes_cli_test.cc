// `ordo compile/estimate/inspect` on exports that need preparing: dynamic
// ones (--input-shape/--dim-param/--batch) and ones made of model-local
// functions; real process, real files, exit codes.
#include <sys/wait.h>
#include <unistd.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/testing/test_paths.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"
#include "tests/cli/compile_json.h"
#include "tests/cli/run_ordo.h"
#include "tests/data/dynamic_batch.h"
#include "tests/data/local_functions.h"

namespace {

using ::ordo::testing::WithDynamicBatch;
using ::testing::ElementsAreArray;
using ::testing::HasSubstr;

using ::ordo::testing::ProcessResult;
using ::ordo::testing::RunOrdo;

nlohmann::json RunJson(const std::string& args) {
  ProcessResult run = RunOrdo(args + " --json");
  EXPECT_EQ(run.exit_code, 0) << args << "\n" << run.out;
  return nlohmann::json::parse(run.out, nullptr, false);
}

ordo::v1::CompileResponse RunCompileJson(const std::string& args) {
  ProcessResult run = RunOrdo(args + " --json");
  EXPECT_EQ(run.exit_code, 0) << args << "\n" << run.out;
  return ordo::ParseCompileJson(run.out);
}

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// A dynamic-batch copy of `path` in the temp folder; removed by the caller.
std::string DynamicCopy(const std::string& path, const std::string& name) {
  const std::string bytes = WithDynamicBatch(ReadFile(path));
  EXPECT_FALSE(bytes.empty()) << path;
  const std::string out = (std::filesystem::temp_directory_path() /
                           absl::StrCat("ordo_input_shapes_", getpid(), "_", name))
                              .string();
  std::ofstream(out, std::ios::binary) << bytes;
  return out;
}

const std::string kShapeSubgraph = ordo::testing::ExampleModelsDir() + "/shape_subgraph.onnx";

// The done-when of issue 14: a dynamic-batch MobileNetV2 with --batch 1 is
// the static export, to the byte and the step.
TEST(InputShapesCliTest, DynamicMobileNetV2WithBatchOneIsTheStaticModel) {
  const std::string static_model = ordo::testing::SharedModelsDir() + "/mobilenet_v2.onnx";
  if (!std::filesystem::exists(static_model)) {
    GTEST_SKIP() << "../shared/models not found; skipping the MobileNetV2 check (" << static_model
                 << ")";
  }
  const std::string dynamic = DynamicCopy(static_model, "mbv2.onnx");
  const ordo::v1::CompileResponse expected = RunCompileJson("compile " + static_model);
  const ordo::v1::CompileResponse batch = RunCompileJson("compile " + dynamic + " --batch 1");
  const ordo::v1::CompileResponse shape =
      RunCompileJson("compile " + dynamic + " --input-shape input=1x3x224x224");
  EXPECT_EQ(batch.options().batch(), 1);
  EXPECT_EQ(shape.options().input_shapes().at("input").dims_size(), 4);
  for (const ordo::v1::CompileResponse* got : {&batch, &shape}) {
    EXPECT_EQ(got->peak_bytes(), expected.peak_bytes());
    EXPECT_EQ(got->status(), expected.status());
    EXPECT_THAT(got->schedule(), ElementsAreArray(expected.schedule()));
    EXPECT_EQ(got->arena().DebugString(), expected.arena().DebugString());
  }
  ProcessResult refused = RunOrdo("compile " + dynamic);
  EXPECT_EQ(refused.exit_code, 2);
  EXPECT_THAT(refused.out, HasSubstr("graph input \"input\": dim 0 is \"batch\" (symbolic)"));
  EXPECT_THAT(refused.out, HasSubstr("add --batch 1 (or --input-shape input=1x3x224x224)"));
  std::filesystem::remove(dynamic);
}

TEST(InputShapesCliTest, BatchScalesThroughFoldedShapeComputations) {
  const std::string dynamic = DynamicCopy(kShapeSubgraph, "shape_subgraph.onnx");
  const ordo::v1::CompileResponse static_report = RunCompileJson("compile " + kShapeSubgraph);
  const ordo::v1::CompileResponse one = RunCompileJson("compile " + dynamic + " --batch 1");
  const ordo::v1::CompileResponse four = RunCompileJson("compile " + dynamic + " --batch 4");
  EXPECT_EQ(one.peak_bytes(), static_report.peak_bytes());
  EXPECT_THAT(one.schedule(), ElementsAreArray(static_report.schedule()));
  // Every activation carries the batch dim, so the peak is four times as big.
  EXPECT_EQ(four.peak_bytes(), 4 * one.peak_bytes());
  EXPECT_EQ(four.ops(), one.ops());
  // The same dim set by its name, and echoed in the options.
  const ordo::v1::CompileResponse named =
      RunCompileJson("compile " + dynamic + " --dim-param batch=4");
  EXPECT_EQ(named.peak_bytes(), four.peak_bytes());
  EXPECT_THAT(named.schedule(), ElementsAreArray(four.schedule()));
  EXPECT_EQ(named.options().dim_params().at("batch"), 4);

  const ordo::v1::EstimateResponse estimate =
      ordo::ParseEstimateJson(RunOrdo("estimate " + dynamic + " --batch 4 --json").out);
  EXPECT_EQ(estimate.lower_bound_bytes(),
            4 * ordo::ParseEstimateJson(RunOrdo("estimate " + kShapeSubgraph + " --json").out)
                    .lower_bound_bytes());
  const nlohmann::json inspect = RunJson("inspect " + dynamic + " --batch 2");
  EXPECT_EQ(inspect["ops"].get<int>(), one.ops()) << inspect.dump();
  std::filesystem::remove(dynamic);
}

TEST(InputShapesCliTest, BadOverridesExitTwoNamingInputDimAndFlag) {
  const std::string dynamic = DynamicCopy(kShapeSubgraph, "bad_overrides.onnx");
  struct Case {
    std::string flags;
    std::string message;
  };
  const Case cases[] = {
      {"", "add --batch 1 (or --input-shape"},
      {"--input-shape image=1x8x16x16",
       "the model has no graph input \"image\"; its graph "
       "inputs are \"x\""},
      {"--input-shape x=1x4x16x16", "dim 1 of graph input \"x\" is static 8"},
      {"--input-shape x=1x8x16", "has rank 4"},
      {"--input-shape x=0x8x16x16", "dim 0 is \"0\"; dims must be positive integers"},
      {"--input-shape x", "write NAME=DIMS"},
      {"--input-shape x=1x8x16x16 --input-shape x=2x8x16x16", "given twice"},
      {"--batch 0", "--batch: not a positive integer"},
      {"--batch many", "--batch: not a positive integer"},
      {"--dim-param batch", "--dim-param batch: write NAME=N"},
      {"--dim-param batch=-1", "write NAME=N with N a positive integer"},
      {"--dim-param seq=4",
       "--dim-param seq=4: no graph input has a symbolic dim named \"seq\"; "
       "the named ones are \"batch\""},
      {"--dim-param batch=1 --dim-param batch=2", "dim \"batch\" is given twice"},
      {"--dim-param batch=2 --input-shape x=1x8x16x16",
       "dim 0 (\"batch\") of graph input \"x\" is 2 by --dim-param batch=2, not 1"},
  };
  for (const Case& c : cases) {
    for (const char* command : {"compile", "estimate", "inspect"}) {
      ProcessResult run = RunOrdo(absl::StrCat(command, " ", dynamic, " ", c.flags));
      EXPECT_EQ(run.exit_code, 2) << command << " " << c.flags << "\n" << run.out;
      EXPECT_THAT(run.out, HasSubstr(c.message)) << command << " " << c.flags;
    }
  }
  // A static model: --batch must agree with it.
  EXPECT_EQ(RunOrdo("compile " + kShapeSubgraph + " --batch 1").exit_code, 0);
  ProcessResult contradicts = RunOrdo("compile " + kShapeSubgraph + " --batch 2");
  EXPECT_EQ(contradicts.exit_code, 2);
  EXPECT_THAT(contradicts.out, HasSubstr("--batch 2: no graph input has a symbolic batch dim"));
  std::filesystem::remove(dynamic);
}

// The whole network as one local function (PyTorch's dynamo exporter wrote
// modules so): compiled inlined, it is the flat model op for op; the
// emitted model is the inlined one. Before, the call was one op and the
// network's activations were missing from the peak.
TEST(InputShapesCliTest, AModelMadeOfLocalFunctionsCompilesInlined) {
  const std::string wrapped = (std::filesystem::temp_directory_path() /
                               absl::StrCat("ordo_input_shapes_", getpid(), "_wrapped.onnx"))
                                  .string();
  std::ofstream(wrapped, std::ios::binary)
      << ordo::testing::WrapInOneFunction(ReadFile(kShapeSubgraph));
  const ordo::v1::CompileResponse flat = RunCompileJson("compile " + kShapeSubgraph);
  const std::string emitted = wrapped + ".out.onnx";
  const ordo::v1::CompileResponse inlined =
      RunCompileJson("compile " + wrapped + " --emit-onnx " + emitted);
  EXPECT_GT(flat.ops(), 1);
  EXPECT_EQ(inlined.ops(), flat.ops());
  EXPECT_EQ(inlined.peak_bytes(), flat.peak_bytes());
  EXPECT_EQ(inlined.arena().arena_bytes(), flat.arena().arena_bytes());
  onnx::ModelProto out;
  ASSERT_TRUE(out.ParseFromString(ReadFile(emitted)));
  EXPECT_EQ(out.functions_size(), 0);
  onnx::ModelProto original;
  ASSERT_TRUE(original.ParseFromString(ReadFile(kShapeSubgraph)));
  EXPECT_EQ(out.graph().node_size(), original.graph().node_size());
  const nlohmann::json inspect = RunJson("inspect " + wrapped);
  EXPECT_EQ(inspect["ops"].get<int>(), flat.ops()) << inspect.dump();
  std::filesystem::remove(wrapped);
  std::filesystem::remove(emitted);
}

TEST(InputShapesCliTest, NativeGraphsHaveNoInputShapesToSet) {
  const std::string json = (std::filesystem::temp_directory_path() /
                            absl::StrCat("ordo_input_shapes_", getpid(), "_graph.json"))
                               .string();
  std::ofstream(json) << R"({"name": "g", "tensors": [{"name": "x", "sizeBytes": "4"},
      {"name": "y", "sizeBytes": "4"}], "ops": [{"name": "a", "type": "Relu",
      "inputs": ["x"], "outputs": ["y"]}], "inputs": ["x"], "outputs": ["y"]})";
  ProcessResult run = RunOrdo("compile " + json + " --batch 1");
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.out, HasSubstr("--input-shape/--dim-param/--batch apply to ONNX models"));
  std::filesystem::remove(json);
}

}  // namespace
