// The C++ client's retry policy against a real ordo-server that is not
// listening yet when the call starts (a front restart as a client sees it):
// the UNAVAILABLE window waits for it and the call succeeds; without the
// window the call fails UNAVAILABLE once gRPC's 4 attempts are spent.
#include <future>

#include "client/lib/ordo_client.h"
#include "tests/service/service_harness.h"

namespace ordo::testing_service {
namespace {

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
