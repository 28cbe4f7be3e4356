// The gRPC conventions current clients expect, on gRPC 1.51: server
// reflection v1 beside v1alpha (each spoken by a client that knows only
// that version), health Check/Watch/List, channelz behind --channelz.
// Real ordo-server and ordo-worker processes on loopback.
#include <signal.h>

#include <condition_variable>
#include <filesystem>
#include <fstream>
#include <mutex>

#include "core/testing/test_paths.h"
#include "google/protobuf/descriptor.h"
#include "google/protobuf/descriptor.pb.h"
#include "grpc/reflection/v1/reflection.grpc.pb.h"
#include "grpcpp/generic/generic_stub.h"
#include "grpcpp/support/byte_buffer.h"
#include "tests/service/service_harness.h"

namespace ordo::testing_service {
namespace {

using ::testing::Contains;
using ::testing::IsSupersetOf;
using ::testing::Not;
using HealthStatus = grpc::health::v1::HealthCheckResponse;

std::string WorkerAddress(Process& worker) {
  std::string line = worker.ReadLine(absl::Seconds(20));
  absl::string_view rest = line;
  EXPECT_TRUE(absl::ConsumePrefix(&rest, "listening on ")) << line;
  return std::string(rest);
}

// One request/response exchange per call on a v1 stream, as grpcurl does.
class ReflectionV1Client {
 public:
  explicit ReflectionV1Client(std::shared_ptr<grpc::Channel> channel)
      : stub_(grpc::reflection::v1::ServerReflection::NewStub(channel)) {
    context_.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
    stream_ = stub_->ServerReflectionInfo(&context_);
  }
  grpc::reflection::v1::ServerReflectionResponse Ask(
      const grpc::reflection::v1::ServerReflectionRequest& request) {
    grpc::reflection::v1::ServerReflectionResponse response;
    EXPECT_TRUE(stream_->Write(request));
    EXPECT_TRUE(stream_->Read(&response));
    return response;
  }
  std::vector<std::string> Services() {
    grpc::reflection::v1::ServerReflectionRequest request;
    request.set_list_services("");
    std::vector<std::string> names;
    const grpc::reflection::v1::ServerReflectionResponse response = Ask(request);
    for (const auto& service : response.list_services_response().service()) {
      names.push_back(service.name());
    }
    return names;
  }
  grpc::Status Close() {
    stream_->WritesDone();
    return stream_->Finish();
  }

 private:
  std::unique_ptr<grpc::reflection::v1::ServerReflection::Stub> stub_;
  grpc::ClientContext context_;
  std::unique_ptr<grpc::ClientReaderWriter<grpc::reflection::v1::ServerReflectionRequest,
                                           grpc::reflection::v1::ServerReflectionResponse>>
      stream_;
};

TEST(GrpcConventionsTest, ReflectionV1DescribesTheCompilerToAV1OnlyClient) {
  Server server({"--local-workers=0"});
  ASSERT_TRUE(server.started());
  ReflectionV1Client client(server.channel());
  EXPECT_THAT(client.Services(),
              IsSupersetOf({"ordo.v1.Compiler", "grpc.health.v1.Health",
                            "grpc.reflection.v1.ServerReflection",
                            "grpc.reflection.v1alpha.ServerReflection"}));

  // What `grpcurl describe ordo.v1.Compiler` does: the file with the
  // symbol and its imports, enough to build a pool and find the method.
  grpc::reflection::v1::ServerReflectionRequest symbol;
  symbol.set_host("ordo");
  symbol.set_file_containing_symbol("ordo.v1.Compiler");
  const auto files = client.Ask(symbol);
  EXPECT_EQ(files.valid_host(), "ordo");
  EXPECT_EQ(files.original_request().file_containing_symbol(), "ordo.v1.Compiler");
  ASSERT_GT(files.file_descriptor_response().file_descriptor_proto_size(), 1);
  std::vector<google::protobuf::FileDescriptorProto> protos;
  for (const std::string& bytes : files.file_descriptor_response().file_descriptor_proto()) {
    ASSERT_TRUE(protos.emplace_back().ParseFromString(bytes));
  }
  EXPECT_EQ(protos.front().name(), "ordo/v1/compiler_service.proto");
  // As a client does: build each file once all its imports are built.
  google::protobuf::DescriptorPool pool;
  for (size_t built = 0, round = 0; built < protos.size() && round < protos.size(); ++round) {
    for (const auto& proto : protos) {
      if (pool.FindFileByName(proto.name()) != nullptr) continue;
      bool ready = true;
      for (const std::string& import : proto.dependency()) {
        ready = ready && pool.FindFileByName(import) != nullptr;
      }
      if (ready && pool.BuildFile(proto) != nullptr) ++built;
    }
  }
  EXPECT_NE(pool.FindMethodByName("ordo.v1.Compiler.Compile"), nullptr);

  grpc::reflection::v1::ServerReflectionRequest by_name;
  by_name.set_file_by_filename("grpc/health/v1/health.proto");
  const auto health = client.Ask(by_name);
  ASSERT_EQ(health.file_descriptor_response().file_descriptor_proto_size(), 1);

  // A miss is an answer, not the end of the stream.
  grpc::reflection::v1::ServerReflectionRequest missing;
  missing.set_file_containing_symbol("ordo.v1.NoSuchThing");
  const auto error = client.Ask(missing);
  EXPECT_EQ(error.error_response().error_code(), grpc::StatusCode::NOT_FOUND);
  EXPECT_THAT(error.error_response().error_message(), ::testing::HasSubstr("ordo.v1.NoSuchThing"));
  EXPECT_THAT(client.Services(), Contains("ordo.v1.Compiler"));
  EXPECT_TRUE(client.Close().ok());
}

int ThreadsOf(pid_t pid) {
  int threads = 0;
  for ([[maybe_unused]] const auto& task :
       std::filesystem::directory_iterator(absl::StrCat("/proc/", pid, "/task"))) {
    ++threads;
  }
  return threads;
}

TEST(GrpcConventionsTest, IdleReflectionV1StreamsHoldNoThreads) {
  // grpcurl sessions and IDEs keep their reflection stream open between
  // requests; a thread each would let open sessions grow the front.
  Server server({"--local-workers=0"});
  ASSERT_TRUE(server.started());
  ReflectionV1Client warm(server.channel());  // the pools' threads start
  ASSERT_THAT(warm.Services(), Contains("ordo.v1.Compiler"));
  const int before = ThreadsOf(server.pid());
  constexpr int kStreams = 48;
  std::vector<std::unique_ptr<ReflectionV1Client>> open;
  for (int i = 0; i < kStreams; ++i) {
    open.push_back(std::make_unique<ReflectionV1Client>(server.channel()));
    ASSERT_THAT(open.back()->Services(), Contains("ordo.v1.Compiler"));
  }
  EXPECT_LT(ThreadsOf(server.pid()) - before, kStreams / 4);
  v1::CompileResponse response;
  v1::CompileRequest request;
  *request.mutable_graph() = WideGraph(3);
  EXPECT_TRUE(server.Compile(request, response).ok());
  for (auto& client : open) EXPECT_TRUE(client->Close().ok());
  EXPECT_TRUE(warm.Close().ok());
}

TEST(GrpcConventionsTest, ReflectionV1alphaStillServesAV1alphaOnlyClient) {
  Server server({"--local-workers=0"});
  ASSERT_TRUE(server.started());
  auto stub = grpc::reflection::v1alpha::ServerReflection::NewStub(server.channel());
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(10));
  auto stream = stub->ServerReflectionInfo(&context);
  grpc::reflection::v1alpha::ServerReflectionRequest request;
  request.set_list_services("");
  ASSERT_TRUE(stream->Write(request));
  grpc::reflection::v1alpha::ServerReflectionResponse response;
  ASSERT_TRUE(stream->Read(&response));
  std::vector<std::string> names;
  for (const auto& service : response.list_services_response().service()) {
    names.push_back(service.name());
  }
  EXPECT_THAT(names, IsSupersetOf({"ordo.v1.Compiler", "grpc.reflection.v1.ServerReflection"}));
  stream->WritesDone();
  EXPECT_TRUE(stream->Finish().ok());
}

// Reads the next status of a Watch stream; -1 when the stream ended.
int NextStatus(grpc::ClientReader<HealthStatus>& stream) {
  HealthStatus status;
  return stream.Read(&status) ? status.status() : -1;
}

TEST(GrpcConventionsTest, HealthWatchFollowsTheWorkersAndTheDrainAndListShowsAll) {
  Process worker({ordo::testing::WorkerBinary(), "--listen=127.0.0.1:0", "--log-level=warning"});
  const std::string address = WorkerAddress(worker);
  Server server({"--workers=" + address});
  ASSERT_TRUE(server.started());
  auto health = grpc::health::v1::Health::NewStub(server.channel());

  grpc::ClientContext pool_context, front_context;
  pool_context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  front_context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(60));
  grpc::health::v1::HealthCheckRequest pool_request, front_request;
  pool_request.set_service("ordo.v1.Worker");
  auto pool = health->Watch(&pool_context, pool_request);
  auto front = health->Watch(&front_context, front_request);
  EXPECT_EQ(NextStatus(*front), HealthStatus::SERVING);

  // The pool: unknown or not serving until the first probe, then serving.
  int status = NextStatus(*pool);
  while (status == HealthStatus::SERVICE_UNKNOWN || status == HealthStatus::NOT_SERVING) {
    status = NextStatus(*pool);
  }
  EXPECT_EQ(status, HealthStatus::SERVING);

  {
    grpc::ClientContext context;
    grpc::health::v1::HealthListResponse all;
    ASSERT_TRUE(health->List(&context, {}, &all).ok());
    EXPECT_EQ(all.statuses().at("").status(), HealthStatus::SERVING);
    EXPECT_EQ(all.statuses().at("ordo.v1.Compiler").status(), HealthStatus::SERVING);
    EXPECT_EQ(all.statuses().at("ordo.v1.Worker").status(), HealthStatus::SERVING);
  }
  EXPECT_EQ(server.Health("no.such.Service"), -1);  // NOT_FOUND

  // A frozen worker stops answering probes: the pool goes NOT_SERVING, the
  // front itself stays SERVING (it schedules in-process), and back.
  kill(worker.pid(), SIGSTOP);
  EXPECT_EQ(NextStatus(*pool), HealthStatus::NOT_SERVING);
  EXPECT_EQ(server.Health(""), HealthStatus::SERVING);
  kill(worker.pid(), SIGCONT);
  EXPECT_EQ(NextStatus(*pool), HealthStatus::SERVING);

  // Draining: watchers hear NOT_SERVING, then the server ends their
  // streams itself (so open Watch calls do not hold the shutdown).
  kill(server.pid(), SIGTERM);
  EXPECT_EQ(NextStatus(*front), HealthStatus::NOT_SERVING);
  EXPECT_EQ(NextStatus(*front), -1);
  EXPECT_EQ(front->Finish().error_code(), grpc::StatusCode::UNAVAILABLE);
  EXPECT_EQ(NextStatus(*pool), HealthStatus::NOT_SERVING);
  EXPECT_EQ(NextStatus(*pool), -1);
  pool->Finish();
  server.CloseClients();
  health.reset();
  const int wait_status = server.Stop(0);  // reaps the process SIGTERM stops
  EXPECT_TRUE(WIFEXITED(wait_status) && WEXITSTATUS(wait_status) == 0) << wait_status;
}

// Calls a Channelz method with an empty request without its .proto, as a
// generic client; the serialized answer.
grpc::Status CallChannelz(std::shared_ptr<grpc::Channel> channel, const std::string& method,
                          std::string& answer) {
  grpc::GenericStub stub(channel);
  grpc::ClientContext context;
  context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(5));
  grpc::Slice empty_message("");
  grpc::ByteBuffer request(&empty_message, 1), response;
  grpc::Status status;
  std::mutex mu;
  std::condition_variable done_cv;
  bool done = false;
  stub.UnaryCall(&context, "/grpc.channelz.v1.Channelz/" + method, grpc::StubOptions(),
                 &request, &response, [&](grpc::Status s) {
                   std::lock_guard<std::mutex> lock(mu);
                   status = s;
                   done = true;
                   done_cv.notify_one();
                 });
  std::unique_lock<std::mutex> lock(mu);
  done_cv.wait(lock, [&] { return done; });
  std::vector<grpc::Slice> slices;
  if (status.ok() && response.Dump(&slices).ok()) {
    for (const grpc::Slice& slice : slices) {
      answer.append(reinterpret_cast<const char*>(slice.begin()), slice.size());
    }
  }
  return status;
}

TEST(GrpcConventionsTest, ChannelzOnlyWithItsFlag) {
  {
    Server server({"--local-workers=0"});
    ASSERT_TRUE(server.started());
    ReflectionV1Client client(server.channel());
    EXPECT_THAT(client.Services(), Not(Contains("grpc.channelz.v1.Channelz")));
    client.Close();
    std::string answer;
    EXPECT_EQ(CallChannelz(server.channel(), "GetServers", answer).error_code(),
              grpc::StatusCode::UNIMPLEMENTED);
  }
  Server server({"--local-workers=0", "--channelz"});
  ASSERT_TRUE(server.started());
  ReflectionV1Client client(server.channel());
  EXPECT_THAT(client.Services(), Contains("grpc.channelz.v1.Channelz"));
  client.Close();
  std::string answer;
  ASSERT_TRUE(CallChannelz(server.channel(), "GetServers", answer).ok());
  EXPECT_FALSE(answer.empty());  // at least this server
}

// Clients with HTTP/2 keepalive (grpc-go, grpc-java, load balancers; here
// a ping each second) keep their long calls: gRPC's default server policy
// (one ping per 5 minutes without data) answered the third ping with
// GOAWAY "too_many_pings" and the compile failed UNAVAILABLE after ~5 s.
TEST(GrpcConventionsTest, KeepalivePingsDoNotEndALongCompile) {
  const std::string path = ordo::testing::SharedModelsDir() + "/randwire1.onnx";
  if (!std::ifstream(path).good()) GTEST_SKIP() << path << " is absent: ../shared not beside";
  Server server({"--local-workers=1"});
  ASSERT_TRUE(server.started());
  grpc::ChannelArguments arguments;
  arguments.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS, 1000);
  arguments.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS, 5000);
  arguments.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
  arguments.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  auto stub = v1::Compiler::NewStub(
      grpc::CreateCustomChannel(server.address(), grpc::InsecureChannelCredentials(), arguments));
  v1::CompileRequest request = OnnxRequest(path, absl::Seconds(7));
  request.mutable_options()->set_rewrite("all");  // searches to its 7 s limit
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(60)));
  v1::CompileResponse response;
  const absl::Time start = absl::Now();
  const grpc::Status status = stub->Compile(&context, request, &response);
  EXPECT_TRUE(status.ok()) << status.error_message() << " after " << absl::Now() - start;
  EXPECT_GT(absl::Now() - start, absl::Seconds(5));  // long enough for the old policy to end it
}

}  // namespace
}  // namespace ordo::testing_service
