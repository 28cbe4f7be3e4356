#include "rpc/grpc_status.h"

#include <string>

#include "gtest/gtest.h"

namespace ordo::rpc {
namespace {

TEST(GrpcStatusTest, KeepsCodeAndMessage) {
  const grpc::Status status = ToGrpcStatus(absl::InvalidArgumentError("op \"conv3\": bad"));
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_EQ(status.error_message(), "op \"conv3\": bad");
  EXPECT_TRUE(ToGrpcStatus(absl::OkStatus()).ok());
  EXPECT_EQ(FromGrpcStatus(status), absl::InvalidArgumentError("op \"conv3\": bad"));
}

TEST(GrpcStatusTest, TruncatesLongMessagesAtACharacterBoundary) {
  // 'é' is two bytes; a cut at an odd byte would split one.
  std::string message;
  for (int i = 0; i < 100; ++i) message += "\xc3\xa9";
  const grpc::Status status = ToGrpcStatus(absl::ResourceExhaustedError(message), 11);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_EQ(status.error_message(), message.substr(0, 10) + "... (truncated)");
}

TEST(GrpcStatusTest, APushbackRidesOnTheStatusAndParsesAsGrfcA6Says) {
  const absl::Status busy =
      WithRetryPushback(absl::ResourceExhaustedError("server busy"), absl::Milliseconds(250));
  EXPECT_EQ(RetryPushback(busy), absl::Milliseconds(250));
  EXPECT_EQ(busy.message(), "server busy");
  EXPECT_EQ(RetryPushback(absl::ResourceExhaustedError("too large")), std::nullopt);
  EXPECT_EQ(ParseRetryPushback("0"), absl::ZeroDuration());
  EXPECT_EQ(ParseRetryPushback("1500"), absl::Milliseconds(1500));
  // Negative or not an integer: do not resend.
  EXPECT_EQ(ParseRetryPushback("-1"), std::nullopt);
  EXPECT_EQ(ParseRetryPushback("soon"), std::nullopt);
  EXPECT_EQ(ParseRetryPushback(""), std::nullopt);
}

// The metrics' `code` label: the canonical names.
TEST(GrpcStatusTest, CodeNamesAreTheCanonicalOnes) {
  EXPECT_EQ(GrpcCodeName(grpc::StatusCode::OK), "OK");
  EXPECT_EQ(GrpcCodeName(grpc::StatusCode::INVALID_ARGUMENT), "INVALID_ARGUMENT");
  EXPECT_EQ(GrpcCodeName(grpc::StatusCode::UNAUTHENTICATED), "UNAUTHENTICATED");
}

}  // namespace
}  // namespace ordo::rpc
