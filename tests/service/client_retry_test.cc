// The C++ client's retry policy against a real ordo-server that is not
// listening yet when the call starts (a front restart as a client sees it):
// the UNAVAILABLE window waits for it and the call succeeds; without the
// window the call fails UNAVAILABLE once gRPC's 4 attempts are spent. And
// against a fake front that cancels calls, as a real one does to the calls
// arriving while it shuts down.
#include <atomic>
#include <future>

#include "client/lib/ordo_client.h"
#include "grpcpp/server_builder.h"
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

}  // namespace
}  // namespace ordo::testing_service
