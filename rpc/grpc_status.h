#ifndef ORDO_RPC_GRPC_STATUS_H_
#define ORDO_RPC_GRPC_STATUS_H_

#include <cstddef>
#include <string>

#include "absl/status/status.h"
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

// The reverse, for clients of our own services.
absl::Status FromGrpcStatus(const grpc::Status& status);

// "OK", "INVALID_ARGUMENT", ...: the `code` label of request metrics
// (absl::StatusCodeToString; "UNKNOWN" for a code outside the canon).
std::string GrpcCodeName(grpc::StatusCode code);

}  // namespace ordo::rpc

#endif  // ORDO_RPC_GRPC_STATUS_H_
