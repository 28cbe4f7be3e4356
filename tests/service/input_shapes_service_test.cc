// Models that need preparing through a real ordo-server, from gRPC and from
// `ordo --server`: CompileOptions.input_shapes, .dim_params and .batch
// (dynamic exports compile, another shape is another cache entry, bad
// overrides are INVALID_ARGUMENT and the server keeps serving), and models
// made of local functions (compiled inlined).

#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/testing/test_paths.h"
#include "nlohmann/json.hpp"
#include "tests/cli/compile_json.h"
#include "tests/cli/run_ordo.h"
#include "tests/data/dynamic_batch.h"
#include "tests/data/local_functions.h"
#include "tests/service/service_harness.h"

namespace ordo {
namespace {

using namespace ::ordo::testing_service;  // NOLINT: the harness is the test's vocabulary
using ::testing::HasSubstr;

const std::string kShapeSubgraph = ordo::testing::ExampleModelsDir() + "/shape_subgraph.onnx";

v1::CompileRequest DynamicRequest() {
  v1::CompileRequest request = OnnxRequest(kShapeSubgraph, absl::Seconds(5));
  request.set_onnx_model(testing::WithDynamicBatch(request.onnx_model()));
  return request;
}

TEST(InputShapesServiceTest, BatchAndInputShapesCompileADynamicExport) {
  Server server({"--local-workers=1"});
  ASSERT_TRUE(server.started());
  v1::CompileResponse expected;
  ASSERT_TRUE(server.Compile(OnnxRequest(kShapeSubgraph, absl::Seconds(5)), expected).ok());

  v1::CompileRequest request = DynamicRequest();
  v1::CompileResponse refused;
  grpc::Status status = server.Compile(request, refused);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("add --batch 1 (or --input-shape x=1x8x16x16)"));

  request.mutable_options()->set_batch(1);
  v1::CompileResponse batch_one;
  ASSERT_TRUE(server.Compile(request, batch_one).ok());
  ExpectValidSchedule(batch_one);
  EXPECT_EQ(batch_one.peak_bytes(), expected.peak_bytes());
  EXPECT_EQ(batch_one.schedule().size(), expected.schedule().size());
  for (int i = 0; i < expected.schedule_size(); ++i) {
    EXPECT_EQ(batch_one.schedule(i), expected.schedule(i)) << "step " << i;
  }

  // Another shape is another model: not the cached batch-1 response.
  request.mutable_options()->set_batch(0);
  for (int64_t dim : {4, 8, 16, 16}) {
    (*request.mutable_options()->mutable_input_shapes())["x"].add_dims(dim);
  }
  v1::CompileResponse batch_four;
  ASSERT_TRUE(server.Compile(request, batch_four).ok());
  EXPECT_FALSE(batch_four.stats().response_cached());
  EXPECT_EQ(batch_four.peak_bytes(), 4 * expected.peak_bytes());

  v1::EstimateRequest estimate;
  estimate.set_onnx_model(request.onnx_model());
  estimate.mutable_options()->set_batch(4);
  v1::EstimateResponse estimated;
  grpc::ClientContext context;
  ASSERT_TRUE(server.compiler().Estimate(&context, estimate, &estimated).ok());
  EXPECT_EQ(estimated.lower_bound_bytes(), 4 * expected.lower_bound_bytes());
}

TEST(InputShapesServiceTest, AModelMadeOfLocalFunctionsCompilesInlined) {
  Server server({"--local-workers=1"});
  ASSERT_TRUE(server.started());
  v1::CompileResponse flat;
  ASSERT_TRUE(server.Compile(OnnxRequest(kShapeSubgraph, absl::Seconds(5)), flat).ok());
  v1::CompileRequest request = OnnxRequest(kShapeSubgraph, absl::Seconds(5));
  request.set_onnx_model(testing::WrapInOneFunction(request.onnx_model()));
  request.mutable_options()->set_return_reordered_onnx(true);
  v1::CompileResponse inlined;
  ASSERT_TRUE(server.Compile(request, inlined).ok());
  ExpectValidSchedule(inlined);
  EXPECT_GT(flat.ops(), 1);
  EXPECT_EQ(inlined.ops(), flat.ops());
  EXPECT_EQ(inlined.peak_bytes(), flat.peak_bytes());
  onnx::ModelProto reordered;
  ASSERT_TRUE(reordered.ParseFromString(inlined.reordered_onnx_model()));
  EXPECT_EQ(reordered.functions_size(), 0);

  v1::EstimateRequest estimate;
  estimate.set_onnx_model(request.onnx_model());
  v1::EstimateResponse estimated;
  grpc::ClientContext context;
  ASSERT_TRUE(server.compiler().Estimate(&context, estimate, &estimated).ok());
  EXPECT_EQ(estimated.ops(), flat.ops());
}

TEST(InputShapesServiceTest, BadOverridesAreInvalidArgumentAndTheServerKeepsServing) {
  Server server({"--local-workers=1"});
  ASSERT_TRUE(server.started());
  struct Case {
    std::string input;
    std::vector<int64_t> dims;
    int64_t batch;
    std::string message;
  };
  const Case cases[] = {
      {"image", {1, 8, 16, 16}, 0, "no graph input \"image\""},
      {"x", {1, 9, 16, 16}, 0, "dim 1 of graph input \"x\" is static 8"},
      {"x", {1, 8, 16}, 0, "has rank 4"},
      {"x", {1, 8, -16, 16}, 0, "dim 2 is -16; dims must be positive"},
      {"", {}, -3, "--batch -3: must be positive"},
  };
  for (const Case& c : cases) {
    v1::CompileRequest request = DynamicRequest();
    if (!c.input.empty()) {
      (*request.mutable_options()->mutable_input_shapes())[c.input].mutable_dims()->Add(
          c.dims.begin(), c.dims.end());
    }
    request.mutable_options()->set_batch(c.batch);
    v1::CompileResponse response;
    grpc::Status status = server.Compile(request, response);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << c.message;
    EXPECT_THAT(status.error_message(), HasSubstr(c.message));
  }
  v1::CompileRequest native;
  *native.mutable_graph() = WideGraph(2);
  native.mutable_options()->set_batch(1);
  v1::CompileResponse response;
  grpc::Status status = server.Compile(native, response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(),
              HasSubstr("options.input_shapes / options.dim_params / options.batch apply to ONNX models"));
  EXPECT_EQ(server.Health(""), 1);
  v1::CompileRequest good = DynamicRequest();
  good.mutable_options()->set_batch(2);
  EXPECT_TRUE(server.Compile(good, response).ok());
}

using ::ordo::testing::ProcessResult;
using ::ordo::testing::RunOrdo;

TEST(InputShapesServiceTest, CliServerModeSendsTheOverrides) {
  Server server({"--local-workers=1"});
  ASSERT_TRUE(server.started());
  const std::string dynamic = (std::filesystem::temp_directory_path() /
                               absl::StrCat("ordo_input_shapes_service_", getpid(), ".onnx"))
                                  .string();
  std::ofstream(dynamic, std::ios::binary) << DynamicRequest().onnx_model();
  const std::string remote = " --server " + server.address();
  for (const char* command : {"compile", "estimate"}) {
    ProcessResult local = RunOrdo(absl::StrCat(command, " ", dynamic, " --batch 3 --json"));
    ProcessResult served =
        RunOrdo(absl::StrCat(command, " ", dynamic, " --batch 3 --json", remote));
    ASSERT_EQ(local.exit_code, 0) << local.out;
    ASSERT_EQ(served.exit_code, 0) << served.out;
    if (std::string(command) == "compile") {
      const v1::CompileResponse a = ParseCompileJson(local.out);
      const v1::CompileResponse b = ParseCompileJson(served.out);
      EXPECT_EQ(a.peak_bytes(), b.peak_bytes());
      EXPECT_EQ(a.lower_bound_bytes(), b.lower_bound_bytes());
      EXPECT_EQ(a.schedule().size(), b.schedule().size());
      for (int i = 0; i < a.schedule_size() && i < b.schedule_size(); ++i) {
        EXPECT_EQ(a.schedule(i), b.schedule(i)) << i;
      }
      EXPECT_EQ(b.options().batch(), 3);
      continue;
    }
    const nlohmann::json a = nlohmann::json::parse(local.out);
    const nlohmann::json b = nlohmann::json::parse(served.out);
    EXPECT_EQ(a["lower_bound_bytes"], b["lower_bound_bytes"]) << command;
  }
  ProcessResult refused = RunOrdo("compile " + dynamic + remote);
  EXPECT_EQ(refused.exit_code, 2) << refused.out;
  EXPECT_THAT(refused.out, HasSubstr("--batch 1"));
  std::filesystem::remove(dynamic);
}

}  // namespace
}  // namespace ordo
