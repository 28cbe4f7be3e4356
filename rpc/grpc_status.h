#ifndef ORDO_RPC_GRPC_STATUS_H_
#define ORDO_RPC_GRPC_STATUS_H_

#include <cstddef>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/status.h"

namespace ordo::rpc {

// Longest error message sent to a client; longer ones are cut at a UTF-8
// boundary and end in "... (truncated)". A message names the node and the
// rule; anything beyond is noise that would bloat every trailer.
inline constexpr size_t kMaxStatusMessageBytes = 1024;

// The one absl::Status -> grpc::Status conversion at the edge (TensorFlow
// Serving's grpc_status_util): same canonical code, message truncated.
grpc::Status ToGrpcStatus(const absl::Status& status,
                          size_t max_message_bytes = kMaxStatusMessageBytes);

// The trailer in which a server tells a client when to send a refused call
// again (gRFC A6, "Pushback"): milliseconds as a decimal integer; a
// negative value means "do not resend". ordo sends it with "server busy"
// only; gRPC's own retries read it, and the shipped clients resend after
// it (client/lib/ordo_client.h).
inline constexpr char kRetryPushbackTrailer[] = "grpc-retry-pushback-ms";

// `status` marked to go out with kRetryPushbackTrailer = `after` (rounded
// to whole milliseconds).
absl::Status WithRetryPushback(absl::Status status, absl::Duration after);
// The pushback WithRetryPushback put on `status`, if any.
std::optional<absl::Duration> RetryPushback(const absl::Status& status);
// Adds kRetryPushbackTrailer to `context` when `status` carries a pushback;
// call before the reactor's Finish.
void AddRetryPushbackTrailer(const absl::Status& status, grpc::ServerContextBase& context);
// A client's reading of the trailer: the pause before resending, or
// nullopt when the value is absent, negative or not an integer (gRFC A6:
// then the call is not resent).
std::optional<absl::Duration> ParseRetryPushback(absl::string_view trailer_value);

// The reverse, for clients of our own services.
absl::Status FromGrpcStatus(const grpc::Status& status);

// "OK", "INVALID_ARGUMENT", ...: the `code` label of request metrics
// (absl::StatusCodeToString; "UNKNOWN" for a code outside the canon).
std::string GrpcCodeName(grpc::StatusCode code);

}  // namespace ordo::rpc

#endif  // ORDO_RPC_GRPC_STATUS_H_
