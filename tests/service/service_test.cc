// ordo-server and ordo-worker as real processes: compile over the wire,
// caching (in memory and in Redis), bad inputs, a worker killed mid-request,
// health, reflection and metrics. Every wait polls with a deadline.

#include <signal.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <vector>

#include "core/testing/test_paths.h"
#include "tests/service/service_harness.h"

namespace ordo {
namespace {

using ::testing::HasSubstr;
using namespace ::ordo::testing_service;  // NOLINT: the harness is the test's vocabulary


TEST(ServiceTest, CompilesModelsAndSecondCompileHitsTheCache) {
  // Every part to the workers: small_resnet's parts are small enough to be
  // proved in the server otherwise, and this test checks the workers' path.
  Server server({"--local-workers=2", "--in-server-part-budget=0"});
  ASSERT_TRUE(server.started());
  const std::string example = ordo::testing::ExampleModelsDir() + "/small_resnet.onnx";
  v1::CompileResponse first;
  v1::CompileRequest request = OnnxRequest(example, absl::Seconds(2));
  request.mutable_device()->set_on_chip_bytes(4096);
  request.mutable_options()->set_return_reordered_onnx(true);
  ASSERT_TRUE(server.Compile(request, first).ok());
  ExpectValidSchedule(first);
  EXPECT_GT(first.stats().parts(), 0);
  EXPECT_EQ(first.stats().cache_hits(), 0);
  EXPECT_EQ(first.stats().fallback_parts(), 0);
  EXPECT_GE(first.stats().workers_used(), 1);
  EXPECT_EQ(first.stats().in_process_parts(), 0);
  EXPECT_TRUE(first.has_arena());
  EXPECT_GE(first.arena().arena_bytes(), first.arena().lower_bound_bytes());
  EXPECT_TRUE(first.has_traffic());
  EXPECT_FALSE(first.reordered_onnx_model().empty());
  EXPECT_EQ(first.baselines_size(), 3);

  v1::CompileResponse second;
  ASSERT_TRUE(server.Compile(request, second).ok());
  EXPECT_EQ(second.stats().cache_hits(), second.stats().parts());
  EXPECT_EQ(second.stats().cache_misses(), 0);
  EXPECT_TRUE(second.stats().response_cached());  // optimal: the whole answer is kept
  EXPECT_EQ(second.peak_bytes(), first.peak_bytes());
  EXPECT_THAT(second.schedule(), ::testing::ElementsAreArray(first.schedule()));

  grpc::ClientContext context;
  v1::EstimateRequest estimate;
  estimate.set_onnx_model(request.onnx_model());
  v1::EstimateResponse estimated;
  ASSERT_TRUE(server.compiler().Estimate(&context, estimate, &estimated).ok());
  EXPECT_EQ(estimated.cached_peak_bytes(), first.peak_bytes());
  EXPECT_GE(estimated.model_order_peak_bytes(), first.peak_bytes());

  const std::string shared = ordo::testing::SharedModelsDir() + "/resnet18.onnx";
  if (!std::filesystem::exists(shared)) {
    std::printf("skipping shared model: %s not found\n", shared.c_str());
    return;
  }
  v1::CompileResponse resnet;
  ASSERT_TRUE(server.Compile(OnnxRequest(shared, absl::Seconds(2)), resnet).ok());
  ExpectValidSchedule(resnet);
}

TEST(ServiceTest, BadInputsGetPreciseErrorsAndTheServerKeepsServing) {
  Server server({"--local-workers=1", "--max-ops=40"});
  ASSERT_TRUE(server.started());
  v1::CompileResponse response;

  v1::CompileRequest garbage;
  garbage.set_onnx_model("this is not an onnx model");
  grpc::Status status = server.Compile(garbage, response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT) << status.error_message();

  v1::CompileRequest cyclic;
  v1::Graph* graph = cyclic.mutable_graph();
  for (const char* name : {"x", "p", "q"}) {
    v1::Tensor* t = graph->add_tensors();
    t->set_name(name);
    t->set_size_bytes(4);
  }
  graph->add_inputs("x");
  v1::Op* a = graph->add_ops();
  a->set_name("op_a");
  a->set_type("Add");
  a->add_inputs("x");
  a->add_inputs("q");
  a->add_outputs("p");
  v1::Op* b = graph->add_ops();
  b->set_name("op_b");
  b->set_type("Relu");
  b->add_inputs("p");
  b->add_outputs("q");
  graph->add_outputs("q");
  status = server.Compile(cyclic, response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("op_"));
  EXPECT_THAT(status.error_message(), HasSubstr("cycle"));

  v1::CompileRequest big;
  *big.mutable_graph() = WideGraph(25);  // 52 ops > 40
  status = server.Compile(big, response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(status.error_message(), HasSubstr("40"));

  onnx::ModelProto model;
  ASSERT_TRUE(
      model.ParseFromString(ReadFile(ordo::testing::ExampleModelsDir() + "/small_resnet.onnx")));
  auto* dim = model.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()
                  ->mutable_shape()->mutable_dim(0);
  dim->set_dim_param("batch");
  v1::CompileRequest dynamic;
  dynamic.set_onnx_model(model.SerializeAsString());
  status = server.Compile(dynamic, response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("batch"));

  v1::CompileRequest unknown =
      OnnxRequest(ordo::testing::ExampleModelsDir() + "/tiny_cell.onnx", absl::Seconds(1));
  unknown.mutable_options()->set_scheduler("no-such-scheduler");
  status = server.Compile(unknown, response);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("no-such-scheduler"));

  // Still serving.
  v1::CompileResponse ok;
  ASSERT_TRUE(server
                  .Compile(OnnxRequest(ordo::testing::ExampleModelsDir() + "/tiny_cell.onnx",
                                       absl::Seconds(1)),
                           ok)
                  .ok());
  ExpectValidSchedule(ok);
  EXPECT_EQ(server.Health(""), 1);
}

TEST(ServiceTest, SurvivesWorkersKilledMidRequestAndRestartsThem) {
  Server server({"--local-workers=2"});
  ASSERT_TRUE(server.started());
  ASSERT_TRUE(PollUntil([&] { return ChildPids(server.pid()).size() == 2; }, absl::Seconds(10)));
  const std::vector<pid_t> workers = ChildPids(server.pid());

  v1::CompileRequest request;
  *request.mutable_graph() = WideGraph(14);
  request.mutable_options()->set_scheduler("dp");
  request.mutable_options()->mutable_time_limit()->set_seconds(2);
  auto pending = std::async(std::launch::async, [&] {
    v1::CompileResponse response;
    grpc::Status status = server.Compile(request, response);
    return std::make_pair(status, response);
  });
  // Mid-request: the compile is in flight (its part is on a worker).
  ASSERT_TRUE(PollUntil(
      [&] { return MetricValue(server.Metrics(), "ordo_inflight_requests", "") >= 1; },
      absl::Seconds(5)));
  for (pid_t pid : workers) kill(pid, SIGKILL);

  auto [status, response] = pending.get();
  ASSERT_TRUE(status.ok()) << status.error_message();
  ExpectValidSchedule(response);
  EXPECT_EQ(response.ops(), 30);

  // Both slots come back on new processes.
  EXPECT_TRUE(PollUntil(
      [&] {
        v1::GetInfoResponse info = server.Info();
        int healthy = 0, restarts = 0;
        for (const auto& worker : info.workers()) {
          healthy += worker.healthy();
          restarts += worker.restarts();
        }
        return healthy == 2 && restarts >= 2;
      },
      absl::Seconds(10)));
  v1::CompileResponse again;
  EXPECT_TRUE(server
                  .Compile(OnnxRequest(ordo::testing::ExampleModelsDir() + "/tiny_cell.onnx",
                                       absl::Seconds(1)),
                           again)
                  .ok());
}

TEST(ServiceTest, HealthReflectionMetricsAndGracefulShutdown) {
  Server server({"--local-workers=0"});
  ASSERT_TRUE(server.started());
  EXPECT_EQ(server.Health(""), 1);
  EXPECT_EQ(server.Health("ordo.v1.Compiler"), 1);

  // What `grpcurl -plaintext HOST list` asks.
  {
    auto reflection = grpc::reflection::v1alpha::ServerReflection::NewStub(server.channel());
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
    auto stream = reflection->ServerReflectionInfo(&context);
    grpc::reflection::v1alpha::ServerReflectionRequest list;
    list.set_list_services("");
    ASSERT_TRUE(stream->Write(list));
    stream->WritesDone();
    grpc::reflection::v1alpha::ServerReflectionResponse answer;
    ASSERT_TRUE(stream->Read(&answer));
    std::vector<std::string> services;
    for (const auto& service : answer.list_services_response().service()) {
      services.push_back(service.name());
    }
    EXPECT_THAT(services, ::testing::IsSupersetOf({"ordo.v1.Compiler", "grpc.health.v1.Health"}));
    while (stream->Read(&answer)) {
    }
    EXPECT_TRUE(stream->Finish().ok());
  }
  v1::CompileResponse response;
  ASSERT_TRUE(server
                  .Compile(OnnxRequest(ordo::testing::ExampleModelsDir() + "/tiny_cell.onnx",
                                       absl::Seconds(1)),
                           response)
                  .ok());
  const std::string metrics = server.Metrics();
  EXPECT_GE(MetricValue(metrics, "ordo_requests_total", "code=\"OK\",method=\"Compile\""), 1);
  EXPECT_THAT(metrics, HasSubstr("ordo_request_duration_seconds_bucket"));
  EXPECT_THAT(metrics, HasSubstr("ordo_cache_lookups_total"));
  if (system("command -v promtool >/dev/null 2>&1") != 0) {
    std::printf("skipping promtool check: promtool not installed\n");
  } else {
    const std::string path = ::testing::TempDir() + "/ordo_metrics.txt";
    std::ofstream(path) << metrics;
    EXPECT_EQ(system(("promtool check metrics < " + path + " >/dev/null").c_str()), 0)
        << metrics;
  }
  // gRPC 1.51 lets idle client connections hold Shutdown until its grace
  // deadline; a client that is done closes them.
  server.CloseClients();
  const int wait_status = server.Stop(SIGTERM);
  EXPECT_TRUE(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0) << wait_status;
}

TEST(ServiceTest, RedisCacheIsSharedAcrossFrontsAndItsOutageIsSurvived) {
  if (system("command -v redis-server >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "redis-server not installed";
  }
  const int redis_port = FreeLoopbackPort();
  Process redis({"/usr/bin/redis-server", "--port", std::to_string(redis_port), "--save", "",
                 "--appendonly", "no", "--bind", "127.0.0.1", "--loglevel", "warning"});
  ASSERT_TRUE(PollUntil(
      [&] {
        const int fd = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_port = htons(redis_port);
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        const bool ok = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
        close(fd);
        return ok;
      },
      absl::Seconds(10)));
  const std::string flag = absl::StrCat("--redis=redis://127.0.0.1:", redis_port);
  const v1::CompileRequest request =
      OnnxRequest(ordo::testing::ExampleModelsDir() + "/small_resnet.onnx", absl::Seconds(2));
  int32_t parts = 0;
  {
    Server first({"--local-workers=0", flag});
    ASSERT_TRUE(first.started());
    v1::CompileResponse response;
    ASSERT_TRUE(first.Compile(request, response).ok());
    EXPECT_EQ(response.stats().cache_hits(), 0);
    EXPECT_EQ(response.stats().cache_errors(), 0);
    parts = response.stats().parts();
  }
  Server second({"--local-workers=0", flag});
  ASSERT_TRUE(second.started());
  v1::CompileResponse hit;
  ASSERT_TRUE(second.Compile(request, hit).ok());
  EXPECT_EQ(hit.stats().cache_hits(), parts);
  EXPECT_EQ(second.Info().cache(), "redis");

  redis.Stop(SIGKILL);
  // Another alignment: a request the front's response cache has not seen,
  // whose parts are the same (alignment does not change schedules).
  v1::CompileRequest other = request;
  other.mutable_device()->set_alignment_bytes(128);
  v1::CompileResponse without;
  ASSERT_TRUE(second.Compile(other, without).ok());
  ExpectValidSchedule(without);
  EXPECT_EQ(without.peak_bytes(), hit.peak_bytes());
  EXPECT_GT(without.stats().cache_errors(), 0);
  EXPECT_GT(MetricValue(second.Metrics(), "ordo_cache_lookups_total", "result=\"error\""), 0);
}

}  // namespace
}  // namespace ordo
