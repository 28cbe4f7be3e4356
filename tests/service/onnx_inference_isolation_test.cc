// libonnx's shape inference in helper processes (server/onnx_inference_helpers.h),
// with real helpers (ordo-server --onnx-inference-helper) and a real server:
// the helpers give the declarations inference gives in process, a model
// that crashes libonnx fails alone and the next one is served, and the
// helpers end with the server however it ends.

#include <signal.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "core/onnx/tensor_shapes.h"
#include "core/testing/test_paths.h"
#include "server/onnx_inference_helpers.h"
#include "tests/service/service_harness.h"

namespace ordo {
namespace {

using namespace ::ordo::testing_service;  // NOLINT: the harness is the test's vocabulary
using ::testing::AnyOf;
using ::testing::HasSubstr;
using server::OnnxInferenceHelpers;

OnnxInferenceHelpers::Options HelperOptions() { return {.binary = ordo::testing::ServerBinary()}; }

onnx::ModelProto Parse(const std::string& path) {
  onnx::ModelProto model;
  EXPECT_TRUE(model.ParseFromString(ReadFile(path))) << path;
  return model;
}

// x -> Flatten -> Conv with a rank-4 weight and no kernel_shape: libonnx
// 1.12's convolution inference reads past the input's dims on it (the
// importer's schemas check the ranks first).
onnx::ModelProto ConvOfAFlatten() {
  onnx::ModelProto model;
  model.set_ir_version(7);
  model.add_opset_import()->set_version(13);
  onnx::GraphProto& graph = *model.mutable_graph();
  graph.set_name("conv_of_a_flatten");
  onnx::ValueInfoProto& x = *graph.add_input();
  x.set_name("x");
  x.mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {1, 16, 4, 4}) {
    x.mutable_type()->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
  }
  onnx::TensorProto& w = *graph.add_initializer();
  w.set_name("w");
  w.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {16, 256, 1, 1}) w.add_dims(d);
  w.set_raw_data(std::string(16 * 256 * 4, '\0'));
  onnx::NodeProto& flatten = *graph.add_node();
  flatten.set_op_type("Flatten");
  flatten.add_input("x");
  flatten.add_output("flat");
  onnx::NodeProto& conv = *graph.add_node();
  conv.set_op_type("Conv");
  conv.set_name("conv");
  conv.add_input("flat");
  conv.add_input("w");
  conv.add_output("y");
  graph.add_output()->set_name("y");
  return model;
}

// Every dynamic opset-17 export: the whole model after the helper's
// inference equals the model after the same inference in this process,
// lenient and strict.
TEST(OnnxInferenceIsolationTest, HelpersGiveTheDeclarationsOfInferenceInProcess) {
  OnnxInferenceHelpers helpers(HelperOptions());
  int compared = 0;
  for (const auto& entry : std::filesystem::directory_iterator(ordo::testing::ExportsDir())) {
    const std::string path = entry.path().string();
    if (!absl::EndsWith(path, "_op17_dynamic.onnx")) continue;
    for (bool strict : {false, true}) {
      onnx::ModelProto here = Parse(path), there = here;
      const absl::Status in_process = onnx_import::InferShapesHere(here, strict, false);
      const absl::Status in_helper = helpers.Infer(there, strict, false);
      EXPECT_EQ(in_helper.ToString(), in_process.ToString()) << path;
      if (in_process.ok()) EXPECT_EQ(there.SerializeAsString(), here.SerializeAsString()) << path;
      ++compared;
    }
  }
  if (compared == 0) GTEST_SKIP() << "no exports in " << ordo::testing::ExportsDir();
  // A model with its weights inline: the answer changes declarations only.
  onnx::ModelProto model = ConvOfAFlatten();
  model.mutable_graph()->mutable_node(1)->set_input(0, "x");  // a valid Conv now
  onnx::ModelProto here = model, there = model;
  ASSERT_TRUE(onnx_import::InferShapesHere(here, false, false).ok());
  ASSERT_TRUE(helpers.Infer(there, false, false).ok());
  EXPECT_EQ(there.SerializeAsString(), here.SerializeAsString());
  EXPECT_EQ(there.graph().initializer(0).raw_data().size(), 16u * 256 * 4);
  EXPECT_EQ(helpers.failures(), 0);
}

// The fault the importer's schemas now check for, with libonnx's own
// schemas in the helper: the helper dies, the call is an error saying so,
// and the next call gets a new helper.
TEST(OnnxInferenceIsolationTest, AModelThatCrashesLibonnxFailsAloneAndTheNextIsServed) {
  ASSERT_EQ(setenv("ORDO_TEST_UNPATCHED_ONNX_SCHEMAS", "1", 1), 0);
  OnnxInferenceHelpers helpers(HelperOptions());
  onnx::ModelProto crashing = ConvOfAFlatten();
  const absl::Status crashed = helpers.Infer(crashing, false, false);
  EXPECT_EQ(crashed.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(crashed.message(), HasSubstr("ONNX shape inference crashed on this model"));
  // SIGSEGV; under ASan its handler reports and exits 1 instead.
  EXPECT_THAT(crashed.message(),
              AnyOf(HasSubstr("killed by signal 11"), HasSubstr("that exited 1")));
  EXPECT_EQ(helpers.failures(), 1);
  onnx::ModelProto valid = ConvOfAFlatten();
  valid.mutable_graph()->mutable_node(1)->set_input(0, "x");
  EXPECT_TRUE(helpers.Infer(valid, false, false).ok());
  EXPECT_EQ(valid.graph().output(0).type().tensor_type().shape().dim_size(), 4);
  ASSERT_EQ(unsetenv("ORDO_TEST_UNPATCHED_ONNX_SCHEMAS"), 0);
}

// A helper binary that does not run as one (here /bin/true) is not a
// crash of every model: the inference runs in the calling process.
TEST(OnnxInferenceIsolationTest, WithoutAWorkingHelperBinaryInferenceRunsInProcess) {
  OnnxInferenceHelpers helpers({.binary = "/bin/true"});
  onnx::ModelProto valid = ConvOfAFlatten(), here;
  valid.mutable_graph()->mutable_node(1)->set_input(0, "x");
  here = valid;
  onnx::ModelProto again = valid;
  ASSERT_TRUE(helpers.Infer(valid, false, false).ok());
  ASSERT_TRUE(onnx_import::InferShapesHere(here, false, false).ok());
  EXPECT_EQ(valid.SerializeAsString(), here.SerializeAsString());
  ASSERT_TRUE(helpers.Infer(again, false, false).ok());  // in process at once
  EXPECT_EQ(again.SerializeAsString(), here.SerializeAsString());
  EXPECT_EQ(helpers.failures(), 0);
}

bool IsInferenceHelper(pid_t pid) {
  return absl::StrContains(ReadFile(absl::StrCat("/proc/", pid, "/cmdline")),
                           server::kOnnxInferenceHelperFlag);
}

// Exited, or a zombie nobody reaps yet.
bool HasExited(pid_t pid) {
  const std::string stat = ReadFile(absl::StrCat("/proc/", pid, "/stat"));
  const size_t close = stat.rfind(')');
  return stat.empty() || close == std::string::npos || stat.substr(close + 2, 1) == "Z";
}

// A helper killed while idle (an operator, the OOM killer) is not the next
// model's fault: that call gets a new helper.
TEST(OnnxInferenceIsolationTest, AHelperKilledWhileIdleIsReplaced) {
  OnnxInferenceHelpers helpers(HelperOptions());
  onnx::ModelProto valid = ConvOfAFlatten();
  valid.mutable_graph()->mutable_node(1)->set_input(0, "x");
  onnx::ModelProto first = valid;
  ASSERT_TRUE(helpers.Infer(first, false, false).ok());
  std::vector<pid_t> idle;
  for (pid_t child : ChildPids(getpid())) {
    if (IsInferenceHelper(child)) idle.push_back(child);
  }
  ASSERT_EQ(idle.size(), 1u);
  kill(idle[0], SIGKILL);
  ASSERT_TRUE(PollUntil([&] { return HasExited(idle[0]); }, absl::Seconds(10)));
  onnx::ModelProto second = valid;
  EXPECT_TRUE(helpers.Infer(second, false, false).ok());
  EXPECT_EQ(second.SerializeAsString(), first.SerializeAsString());
  EXPECT_EQ(helpers.failures(), 0);
}

// A compile that needs inference runs it in a helper of the server; the
// helper ends when the server is killed (its stdin ends with it).
TEST(OnnxInferenceIsolationTest, TheServerInfersInHelpersThatEndWithIt) {
  const std::string path = ordo::testing::ExportsDir() + "/resnet18_op13_dynamic.onnx";
  if (!std::filesystem::exists(path)) GTEST_SKIP() << path << " is absent";
  Server server({"--local-workers=0"});
  ASSERT_TRUE(server.started());
  v1::CompileRequest request = OnnxRequest(path, absl::Seconds(5));
  request.mutable_options()->set_batch(2);
  v1::CompileResponse response;
  ASSERT_TRUE(server.Compile(request, response).ok());
  EXPECT_GT(response.peak_bytes(), 0);
  std::vector<pid_t> helpers;
  for (pid_t child : ChildPids(server.pid())) {
    if (IsInferenceHelper(child)) helpers.push_back(child);
  }
  ASSERT_FALSE(helpers.empty());
  server.Stop(SIGKILL);
  EXPECT_TRUE(PollUntil(
      [&] {
        for (pid_t helper : helpers) {
          if (!HasExited(helper)) return false;
        }
        return true;
      },
      absl::Seconds(10)));
}

}  // namespace
}  // namespace ordo
