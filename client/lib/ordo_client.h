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

// The retry policy every ordo client should use (gRPC service config): a
// call that fails with UNAVAILABLE (server restarting, connection refused
// or reset) is retried up to 4 attempts in all, with exponential back-off
// from 100 ms to 2 s. Nothing else is retried: the other codes describe the
// request (INVALID_ARGUMENT, RESOURCE_EXHAUSTED) and would fail again.
inline constexpr char kRetryServiceConfig[] = R"json({
  "methodConfig": [{
    "name": [{"service": "ordo.v1.Compiler"}],
    "retryPolicy": {
      "maxAttempts": 4,
      "initialBackoff": "0.1s",
      "maxBackoff": "2s",
      "backoffMultiplier": 2,
      "retryableStatusCodes": ["UNAVAILABLE"]
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
    // Use kRetryServiceConfig.
    bool retry = true;
    // Largest response accepted.
    int max_message_bytes = 256 << 20;
    // TLS and bearer token (rpc::LoadClientSecurity); default plaintext.
    rpc::ClientSecurity security = rpc::InsecureClientSecurity();
  };

  // Connects lazily to `target` (host:port, or any gRPC target such as
  // dns:///name:port); no I/O until the first call.
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
  Options options_;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Compiler::Stub> stub_;
};

}  // namespace ordo::client

#endif  // ORDO_CLIENT_LIB_ORDO_CLIENT_H_
