#include "rpc/service_call.h"

#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "grpcpp/support/time.h"
#include "rpc/grpc_status.h"
#include "rpc/log.h"

namespace ordo::rpc {
namespace {

// Finishes from a queue thread; flags cancellation for the body.
class OffloadedReactor final : public grpc::ServerUnaryReactor {
 public:
  explicit OffloadedReactor(std::shared_ptr<std::atomic<bool>> cancelled)
      : cancelled_(std::move(cancelled)) {}
  void OnCancel() override { cancelled_->store(true); }
  void OnDone() override { delete this; }

 private:
  std::shared_ptr<std::atomic<bool>> cancelled_;
};

}  // namespace

CallInfo MakeCallInfo(grpc::CallbackServerContext* context, absl::string_view method) {
  CallInfo call;
  call.method = std::string(method);
  const auto& metadata = context->client_metadata();
  if (auto it = metadata.find("x-request-id"); it != metadata.end() && !it->second.empty() &&
                                               it->second.size() <= 64) {
    call.request_id = std::string(it->second.data(), it->second.size());
  } else {
    call.request_id = NewRequestId();
  }
  if (auto it = metadata.find(std::string(kCacheNamespaceMetadata)); it != metadata.end()) {
    call.cache_namespace = std::string(it->second.data(), it->second.size());
  }
  const std::chrono::system_clock::time_point deadline = context->deadline();
  if (deadline != std::chrono::system_clock::time_point::max()) {
    call.deadline = absl::FromChrono(deadline);
  }
  call.cancelled = std::make_shared<std::atomic<bool>>(false);
  return call;
}

void RecordCallEnd(const CallEnvironment& env, const CallInfo& call, const absl::Status& status,
                   absl::Duration latency) {
  const std::string code = GrpcCodeName(static_cast<grpc::StatusCode>(status.code()));
  if (env.metrics != nullptr) env.metrics->RecordRequest(call.method, code, latency);
  // A busy refusal is flow control the client follows (its pushback), not
  // a fault: at warning level, clients coming back every few hundred ms
  // would bury the warnings that matter.
  const bool expected = status.ok() || RetryPushback(status).has_value();
  Log(expected ? LogLevel::kInfo : LogLevel::kWarning, call.request_id,
      absl::StrFormat("%s %s %.1f ms%s%s", call.method, code, absl::ToDoubleMilliseconds(latency),
                      status.ok() ? "" : ": ", status.message()));
}

absl::Status CheckResponseSize(const google::protobuf::MessageLite& response,
                               const CallEnvironment& env) {
  if (env.max_response_bytes <= 0) return absl::OkStatus();
  const size_t bytes = response.ByteSizeLong();
  if (bytes <= static_cast<size_t>(env.max_response_bytes)) return absl::OkStatus();
  return absl::ResourceExhaustedError(absl::StrCat(
      "the response is ", bytes, " bytes, over this server's limit of ", env.max_response_bytes,
      " (--max-message-mb); ask for less (a returned model is most of a response: "
      "return_reordered_onnx, return_reordered_tflite, or a rewritten model with its weights; "
      "a model sent without weights comes back without them) or raise --max-message-mb on the "
      "server and the client's receive limit"));
}

namespace {

// The status a call ends with: the body's, or the size check's when the
// body succeeded with a response too large to send.
absl::Status SendableStatus(absl::Status status, const google::protobuf::MessageLite& response,
                            const CallEnvironment& env) {
  if (!status.ok()) return status;
  return CheckResponseSize(response, env);
}

// Ends a unary call with `status`, its pushback trailer included.
void FinishUnary(grpc::CallbackServerContext* context, grpc::ServerUnaryReactor* reactor,
                 const absl::Status& status) {
  AddRetryPushbackTrailer(status, *context);
  reactor->Finish(ToGrpcStatus(status));
}

grpc::ServerUnaryReactor* Offload(grpc::CallbackServerContext* context, CallInfo call,
                                  absl::Time start, const CallEnvironment& env,
                                  const google::protobuf::MessageLite& response,
                                  std::function<absl::Status(const CallInfo&)> body) {
  auto* reactor = new OffloadedReactor(call.cancelled);
  if (env.metrics != nullptr) env.metrics->inflight_requests().Increment();
  Log(LogLevel::kDebug, call.request_id, absl::StrCat(call.method, " started"));
  // The context lives until the reactor's OnDone, after Finish.
  env.queue->Schedule(
      [context, reactor, call = std::move(call), env, &response, body = std::move(body), start] {
        const absl::Status status = SendableStatus(body(call), response, env);
        RecordCallEnd(env, call, status, absl::Now() - start);
        if (env.metrics != nullptr) env.metrics->inflight_requests().Decrement();
        FinishUnary(context, reactor, status);
      });
  return reactor;
}

}  // namespace

grpc::ServerUnaryReactor* ServeUnary(grpc::CallbackServerContext* context, absl::string_view method,
                                     const CallEnvironment& env,
                                     const google::protobuf::MessageLite& response,
                                     std::function<absl::Status(const CallInfo&)> body) {
  return Offload(context, MakeCallInfo(context, method), absl::Now(), env, response,
                 std::move(body));
}

grpc::ServerUnaryReactor* ServeUnaryWithFastPath(
    grpc::CallbackServerContext* context, absl::string_view method, const CallEnvironment& env,
    const google::protobuf::MessageLite& response,
    const std::function<std::optional<absl::Status>(const CallInfo&)>& fast,
    std::function<absl::Status(const CallInfo&)> body) {
  CallInfo call = MakeCallInfo(context, method);
  const absl::Time start = absl::Now();
  if (std::optional<absl::Status> answered = fast(call)) {
    const absl::Status status = SendableStatus(*std::move(answered), response, env);
    RecordCallEnd(env, call, status, absl::Now() - start);
    grpc::ServerUnaryReactor* reactor = context->DefaultReactor();
    FinishUnary(context, reactor, status);
    return reactor;
  }
  return Offload(context, std::move(call), start, env, response, std::move(body));
}

}  // namespace ordo::rpc
