// The C++ client's retry policy against a real ordo-server that is not
// listening yet when the call starts (a front restart as a client sees it):
// the UNAVAILABLE window waits for it and the call succeeds; without the
// window the call fails UNAVAILABLE once gRPC's 4 attempts are spent. And
// against a fake front that cancels calls, as a real one does to the calls
// arriving while it shuts down. And against a real server that is busy:
// the refusal says when to come back, and the client comes back then.
#include <atomic>
#include <future>

#include "absl/strings/numbers.h"
#include "client/lib/ordo_client.h"
#include "core/testing/test_paths.h"
#include "grpcpp/server_builder.h"
#include "rpc/grpc_status.h"
#include "server/compile_admission.h"
#include "tests/service/service_harness.h"

namespace ordo::testing_service {
namespace {

// A Compiler whose GetInfo fails CANCELLED `failures` times, then answers:
// what a client sees of a front that shuts down as its call arrives (gRPC
// cancels calls not yet given to a handler, grpc/grpc#41785). A real
// server shows it about once in hundreds of calls around a SIGTERM, too
// rarely to test; this fake returns the status from its handler instead,
// which is what the client sees: these tests check the client's policy,
// not gRPC's shutdown.
class CancellingCompiler final : public v1::Compiler::Service {
 public:
  explicit CancellingCompiler(int failures) : failures_(failures) {}
  grpc::Status GetInfo(grpc::ServerContext*, const v1::GetInfoRequest*,
                       v1::GetInfoResponse* response) override {
    if (calls_.fetch_add(1) < failures_) return {grpc::StatusCode::CANCELLED, "CANCELLED"};
    response->set_version("fake");
    return grpc::Status::OK;
  }
  int calls() const { return calls_.load(); }

 private:
  const int failures_;
  std::atomic<int> calls_{0};
};

// GetInfo through the shipped client against a CancellingCompiler.
struct CancelledCalls {
  absl::StatusOr<v1::GetInfoResponse> answer;
  int calls = 0;
};
CancelledCalls GetInfoFromACancellingFront(int failures) {
  CancellingCompiler compiler(failures);
  int port = 0;
  grpc::ServerBuilder builder;
  builder.AddListeningPort("127.0.0.1:0", grpc::InsecureServerCredentials(), &port);
  builder.RegisterService(&compiler);
  std::unique_ptr<grpc::Server> server = builder.BuildAndStart();
  CancelledCalls result;
  result.answer = client::OrdoClient(absl::StrCat("127.0.0.1:", port)).GetInfo();
  server->Shutdown();
  result.calls = compiler.calls();
  return result;
}

TEST(ClientRetryTest, ACallCancelledByTheServerIsResent) {
  const CancelledCalls once = GetInfoFromACancellingFront(1);
  ASSERT_TRUE(once.answer.ok()) << once.answer.status();
  EXPECT_EQ(once.answer->version(), "fake");
  EXPECT_EQ(once.calls, 2);
  // Beyond gRPC's 4 attempts, the window (layer 2) resends.
  const CancelledCalls often = GetInfoFromACancellingFront(6);
  ASSERT_TRUE(often.answer.ok()) << often.answer.status();
  EXPECT_EQ(often.calls, 7);
}

TEST(ClientRetryTest, ACallWaitsForAServerThatStartsWithinTheWindow) {
  const int port = FreeLoopbackPort();
  const client::OrdoClient client(absl::StrCat("127.0.0.1:", port));
  const absl::Time start = absl::Now();
  auto info = std::async(std::launch::async, [&] { return client.GetInfo(); });
  absl::SleepFor(absl::Seconds(3));  // refused connections meanwhile
  Server front({absl::StrCat("--listen=127.0.0.1:", port), "--local-workers=0"});
  ASSERT_TRUE(front.started());
  const absl::StatusOr<v1::GetInfoResponse> answer = info.get();
  EXPECT_TRUE(answer.ok()) << answer.status();
  EXPECT_LT(absl::Now() - start, absl::Seconds(10));
}

TEST(ClientRetryTest, WithoutTheWindowACallToNoServerFailsUnavailable) {
  client::OrdoClient::Options options;
  options.unavailable_window = absl::ZeroDuration();
  const client::OrdoClient client(absl::StrCat("127.0.0.1:", FreeLoopbackPort()), options);
  const absl::Time start = absl::Now();
  const absl::StatusOr<v1::GetInfoResponse> answer = client.GetInfo();
  EXPECT_TRUE(absl::IsUnavailable(answer.status())) << answer.status();
  EXPECT_LT(absl::Now() - start, absl::Seconds(3));
}

// One compile at a time, held by a search that runs its whole time limit:
// a second call is refused "server busy" with a pushback trailer; the
// shipped client resends after it and gets through once the slot is free,
// unless retries are off or its deadline ends first.
TEST(ClientRetryTest, ABusyServerSaysWhenToComeBackAndTheClientDoes) {
  Server server({"--local-workers=0", "--max-concurrent=1", "--cache-mb=0"});
  ASSERT_TRUE(server.started());
  v1::CompileRequest slow;
  *slow.mutable_graph() = WideGraph(40);  // runs its whole time limit
  slow.mutable_options()->set_scheduler("dp");
  slow.mutable_options()->mutable_time_limit()->set_seconds(3);
  const absl::Time start = absl::Now();
  // Through the shipped client, so that a poll below that happens to hold
  // the slot as the holder arrives only delays it.
  auto holder = std::async(std::launch::async,
                           [&] { return client::OrdoClient(server.address()).Compile(slow); });
  // Each request new (a time limit of its own), so that no answer comes
  // from the response cache, which needs no slot.
  const std::string tiny_cell = ReadFile(ordo::testing::ExampleModelsDir() + "/tiny_cell.onnx");
  int requests = 0;
  auto tiny = [&] {
    v1::CompileRequest request;
    request.set_onnx_model(tiny_cell);
    request.mutable_options()->mutable_time_limit()->set_seconds(1);
    request.mutable_options()->mutable_time_limit()->set_nanos(++requests);
    return request;
  };
  // The raw refusal, once the holder has the slot.
  grpc::Status refused;
  std::string pushback;
  ASSERT_TRUE(PollUntil(
      [&] {
        grpc::ClientContext context;
        v1::CompileResponse response;
        refused = server.compiler().Compile(&context, tiny(), &response);
        const auto& trailers = context.GetServerTrailingMetadata();
        const auto it = trailers.find(rpc::kRetryPushbackTrailer);
        pushback = it == trailers.end() ? "" : std::string(it->second.data(), it->second.size());
        return refused.error_code() == grpc::StatusCode::RESOURCE_EXHAUSTED;
      },
      absl::Seconds(5)));
  EXPECT_THAT(refused.error_message(), ::testing::HasSubstr("server busy"));
  int64_t ms = -1;
  ASSERT_TRUE(absl::SimpleAtoi(pushback, &ms)) << "trailer: \"" << pushback << "\"";
  EXPECT_GE(absl::Milliseconds(ms), server::kMinBusyPushback);
  EXPECT_LT(absl::Milliseconds(ms), server::kMaxBusyPushback);
  // CompileStream ends the same way, trailer included (its own reactor).
  {
    grpc::ClientContext context;
    auto events = server.compiler().CompileStream(&context, tiny());
    v1::CompileEvent event;
    EXPECT_FALSE(events->Read(&event)) << "no event before the refusal";
    EXPECT_EQ(events->Finish().error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_EQ(context.GetServerTrailingMetadata().count(rpc::kRetryPushbackTrailer), 1u);
  }

  const std::string target = server.address();
  client::OrdoClient::Options no_retry;
  no_retry.retry = false;
  const absl::Time before_no_retry = absl::Now();
  EXPECT_TRUE(
      absl::IsResourceExhausted(client::OrdoClient(target, no_retry).Compile(tiny()).status()));
  EXPECT_LT(absl::Now() - before_no_retry, absl::Milliseconds(500)) << "refused at once";
  // A deadline that ends while the server is still busy: the last refusal,
  // returned before the deadline, not DEADLINE_EXCEEDED.
  client::OrdoClient::Options short_deadline;
  short_deadline.timeout = absl::Milliseconds(700);
  const absl::Time before_short = absl::Now();
  EXPECT_TRUE(absl::IsResourceExhausted(
      client::OrdoClient(target, short_deadline).Compile(tiny()).status()));
  EXPECT_LT(absl::Now() - before_short, absl::Milliseconds(700) + absl::Milliseconds(200));
  // With the policy: waits out the holder (about 3 s) and is answered.
  const absl::StatusOr<v1::CompileResponse> served = client::OrdoClient(target).Compile(tiny());
  ASSERT_TRUE(served.ok()) << served.status();
  EXPECT_GT(served->peak_bytes(), 0);
  EXPECT_TRUE(holder.get().ok());
  EXPECT_GE(absl::Now() - start, absl::Seconds(2)) << "the first call held the slot";
}

// Two fronts behind one target (as a headless Service's name resolves to
// every front): the client's calls reach both, and while one is busy a
// resent call goes to the other instead of waiting for the busy one.
TEST(ClientRetryTest, CallsGoRoundRobinOverTheFrontsAndPassABusyOneBy) {
  Server busy({"--local-workers=0", "--max-concurrent=1", "--cache-mb=0"});
  Server free({"--local-workers=0", "--max-concurrent=1", "--cache-mb=0"});
  ASSERT_TRUE(busy.started());
  ASSERT_TRUE(free.started());
  const client::OrdoClient client(absl::StrCat("ipv4:", busy.address(), ",", free.address()));
  for (int i = 0; i < 8; ++i) ASSERT_TRUE(client.GetInfo().ok());
  for (Server* front : {&busy, &free}) {
    EXPECT_GE(
        MetricValue(front->Metrics(), "ordo_requests_total", "code=\"OK\",method=\"GetInfo\""), 2)
        << front->address();
  }
  v1::CompileRequest slow;
  *slow.mutable_graph() = WideGraph(40);  // runs its whole time limit
  slow.mutable_options()->set_scheduler("dp");
  slow.mutable_options()->mutable_time_limit()->set_seconds(3);
  const absl::Time held_from = absl::Now();
  auto holder = std::async(std::launch::async, [&] {
    v1::CompileResponse response;
    return busy.Compile(slow, response, absl::Seconds(30));
  });
  ASSERT_TRUE(
      PollUntil([&] { return MetricValue(busy.Metrics(), "ordo_inflight_requests", "") >= 1; },
                absl::Seconds(2)));
  const std::string tiny_cell = ReadFile(ordo::testing::ExampleModelsDir() + "/tiny_cell.onnx");
  for (int i = 0; i < 4; ++i) {
    v1::CompileRequest tiny;
    tiny.set_onnx_model(tiny_cell);
    tiny.mutable_options()->mutable_time_limit()->set_nanos(i + 1);  // no cache hit
    const absl::StatusOr<v1::CompileResponse> answer = client.Compile(tiny);
    ASSERT_TRUE(answer.ok()) << answer.status();
  }
  EXPECT_LT(absl::Now() - held_from, absl::Seconds(3)) << "answered while one front was busy";
  EXPECT_GE(MetricValue(busy.Metrics(), "ordo_requests_total",
                        "code=\"RESOURCE_EXHAUSTED\",method=\"Compile\""),
            1);
  EXPECT_TRUE(holder.get().ok());
}

}  // namespace
}  // namespace ordo::testing_service
