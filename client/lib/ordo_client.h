#ifndef ORDO_CLIENT_LIB_ORDO_CLIENT_H_
#define ORDO_CLIENT_LIB_ORDO_CLIENT_H_

#include <functional>
#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "core/compile/import_model.h"
#include "grpcpp/channel.h"
#include "ordo/v1/compiler_service.grpc.pb.h"
#include "rpc/security.h"

namespace ordo::client {

// The retry policy every ordo client should use, in two layers, for
// UNAVAILABLE (server restarting or draining, connection refused or reset)
// and CANCELLED (which this client never causes itself: gRPC cancels a
// call that reaches a front in the instant it shuts down, grpc/grpc#41785).
// Nothing was computed, and every Compiler method is a pure function of its
// request, so resending is safe. Besides, a RESOURCE_EXHAUSTED that carries
// the server's pushback trailer (rpc::kRetryPushbackTrailer: "server busy",
// over --max-concurrent) is resent after the pause it names, as long as the
// call's deadline allows. Nothing else is retried: the other codes describe
// the request (INVALID_ARGUMENT, RESOURCE_EXHAUSTED over a size limit) and
// would fail again.
//  1. gRPC's service config (below): up to 4 attempts, exponential back-off
//     from 100 ms to 2 s with full jitter (at most 0.7 s in all): absorbs a
//     connection reset or a single refused connect.
//  2. The UNAVAILABLE window (OrdoClient::Options::unavailable_window, 10 s
//     from the call's start): when layer 1 gives up, the client pauses
//     (100 ms, doubling to 1 s), waits for the channel to connect again
//     (at most until the window ends) and resends; so a server restarted
//     within a few seconds is never seen by the caller. The channel
//     reconnects every 100 ms to 1 s (not gRPC's 1 s to 120 s), so it sees
//     the new server soon after it listens.
// All attempts share the call's one deadline (Options::timeout).
// Whether a call that ended with `code` is resent (both layers).
inline bool IsResentCode(grpc::StatusCode code) {
  return code == grpc::StatusCode::UNAVAILABLE || code == grpc::StatusCode::CANCELLED;
}
inline constexpr char kRetryServiceConfig[] = R"json({
  "methodConfig": [{
    "name": [{"service": "ordo.v1.Compiler"}],
    "retryPolicy": {
      "maxAttempts": 4,
      "initialBackoff": "0.1s",
      "maxBackoff": "2s",
      "backoffMultiplier": 2,
      "retryableStatusCodes": ["UNAVAILABLE", "CANCELLED"]
    }
  }]
})json";

// Sets `model` of a CompileRequest or EstimateRequest from a model file's
// bytes: ONNX goes as bytes; ordo's native graph (binary or JSON) is parsed
// into an ordo.v1.Graph. INVALID_ARGUMENT when a native graph does not parse.
absl::Status SetRequestModel(absl::string_view bytes, ModelFormat format,
                             v1::CompileRequest& request);
absl::Status SetRequestModel(absl::string_view bytes, ModelFormat format,
                             v1::EstimateRequest& request);

// A client of ordo-server's public API (ordo.v1.Compiler) and of the
// standard health service. Errors come back as absl::Status with the
// server's code and message. Thread-safe: one client serves many threads.
class OrdoClient {
 public:
  struct Options {
    // Per-call deadline.
    absl::Duration timeout = absl::Seconds(120);
    // Use the retry policy (kRetryServiceConfig and the window).
    bool retry = true;
    // How long after its start a call failing UNAVAILABLE is still resent
    // (layer 2 of the retry policy); zero: layer 1 only.
    absl::Duration unavailable_window = absl::Seconds(10);
    // Largest response accepted.
    int max_message_bytes = 256 << 20;
    // TLS and bearer token (rpc::LoadClientSecurity); default plaintext.
    rpc::ClientSecurity security = rpc::InsecureClientSecurity();
  };

  // Connects lazily to `target` (host:port, or any gRPC target such as
  // dns:///name:port); no I/O until the first call. Calls go round-robin
  // over every address the target resolves to (several fronts behind a
  // headless Service: deploy/k8s), so a busy front's resent call may land
  // on another.
  explicit OrdoClient(const std::string& target, Options options);
  explicit OrdoClient(const std::string& target) : OrdoClient(target, Options{}) {}

  absl::StatusOr<v1::CompileResponse> Compile(const v1::CompileRequest& request) const;
  // Calls `on_progress` for each progress event; returns the final result.
  absl::StatusOr<v1::CompileResponse> CompileStream(
      const v1::CompileRequest& request,
      const std::function<void(const v1::CompileProgress&)>& on_progress) const;
  absl::StatusOr<v1::EstimateResponse> Estimate(const v1::EstimateRequest& request) const;
  absl::StatusOr<v1::GetInfoResponse> GetInfo() const;
  // True when grpc.health.v1 answers SERVING for `service` ("" = the whole
  // server); an error when the server cannot be reached.
  absl::StatusOr<bool> Serving(const std::string& service) const;

 private:
  // Runs one RPC under the retry policy: `attempt` makes one call on the
  // context it is given (deadline and credentials set); `resendable` says
  // whether a failed attempt may be resent (a stream that delivered events
  // may not).
  grpc::Status Call(const std::function<grpc::Status(grpc::ClientContext&)>& attempt,
                    const std::function<bool()>& resendable = [] { return true; }) const;

  Options options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Compiler::Stub> stub_;
};

}  // namespace ordo::client

#endif  // ORDO_CLIENT_LIB_ORDO_CLIENT_H_
