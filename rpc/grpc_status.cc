#include "rpc/grpc_status.h"

#include <string>

#include "absl/status/status.h"
#include "absl/strings/cord.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/util/printable_text.h"

namespace ordo::rpc {

grpc::Status ToGrpcStatus(const absl::Status& status, size_t max_message_bytes) {
  if (status.ok()) return grpc::Status::OK;
  // Messages quote client input (names, option values): one printable
  // line, so a client cannot forge lines in a terminal or a log.
  std::string message = PrintableText(status.message(), std::string::npos);
  if (message.size() > max_message_bytes) {
    size_t cut = max_message_bytes;
    // Do not split a UTF-8 sequence: back up over continuation bytes.
    while (cut > 0 && (static_cast<unsigned char>(message[cut]) & 0xC0) == 0x80) --cut;
    message = absl::StrCat(message.substr(0, cut), "... (truncated)");
  }
  return grpc::Status(static_cast<grpc::StatusCode>(status.code()), message);
}

namespace {

// The absl::Status payload that carries a pushback to the edge.
constexpr char kRetryPushbackPayload[] = "ordo.dev/retry-pushback-ms";

}  // namespace

absl::Status WithRetryPushback(absl::Status status, absl::Duration after) {
  status.SetPayload(kRetryPushbackPayload,
                    absl::Cord(absl::StrCat(absl::ToInt64Milliseconds(after))));
  return status;
}

std::optional<absl::Duration> RetryPushback(const absl::Status& status) {
  const auto payload = status.GetPayload(kRetryPushbackPayload);
  if (!payload) return std::nullopt;
  return ParseRetryPushback(std::string(*payload));
}

void AddRetryPushbackTrailer(const absl::Status& status, grpc::ServerContextBase& context) {
  if (const std::optional<absl::Duration> after = RetryPushback(status)) {
    context.AddTrailingMetadata(kRetryPushbackTrailer,
                                absl::StrCat(absl::ToInt64Milliseconds(*after)));
  }
}

std::optional<absl::Duration> ParseRetryPushback(absl::string_view trailer_value) {
  int64_t ms = 0;
  if (!absl::SimpleAtoi(trailer_value, &ms) || ms < 0) return std::nullopt;
  return absl::Milliseconds(ms);
}

absl::Status FromGrpcStatus(const grpc::Status& status) {
  if (status.ok()) return absl::OkStatus();
  return absl::Status(static_cast<absl::StatusCode>(status.error_code()),
                      status.error_message());
}

std::string GrpcCodeName(grpc::StatusCode code) {
  // gRPC's and absl's canonical codes are the same numbers.
  std::string name = absl::StatusCodeToString(static_cast<absl::StatusCode>(code));
  return name.empty() ? "UNKNOWN" : name;
}

}  // namespace ordo::rpc
