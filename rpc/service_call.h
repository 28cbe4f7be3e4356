#ifndef ORDO_RPC_SERVICE_CALL_H_
#define ORDO_RPC_SERVICE_CALL_H_

#include <atomic>
#include <functional>
#include <memory>
#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "google/protobuf/message_lite.h"
#include "grpcpp/server_context.h"
#include "grpcpp/support/server_callback.h"
#include "rpc/metrics.h"
#include "rpc/work_queue.h"

namespace ordo::rpc {

// What a method body learns about its call.
// Metadata key a client sets to keep its cache entries apart from other
// tenants' (see docs/nas.md, "Cache namespaces").
inline constexpr absl::string_view kCacheNamespaceMetadata = "ordo-cache-namespace";

struct CallInfo {
  std::string method;
  // From the client's `x-request-id` metadata, else fresh.
  std::string request_id;
  // From the client's `ordo-cache-namespace` metadata (may be empty;
  // checked by the service that uses it).
  std::string cache_namespace;
  // The client's deadline (InfiniteFuture when it set none).
  absl::Time deadline = absl::InfiniteFuture();
  // Set when the client cancels or the deadline passes. Shared so it
  // outlives the reactor.
  std::shared_ptr<std::atomic<bool>> cancelled;
};

// Everything every method needs applied once (STYLE: the per-method
// wrapper): where the body runs and what records it.
struct CallEnvironment {
  // Not owned; must outlive every call.
  WorkQueue* queue = nullptr;
  // Not owned; may be null (no metrics). Must outlive every call.
  ServiceMetrics* metrics = nullptr;
  // The largest message this server sends (--max-message-mb); 0: unchecked.
  int64_t max_response_bytes = 0;
};

// OK, or RESOURCE_EXHAUSTED naming the response's size, the limit and the
// fix when `response` is over env.max_response_bytes. Checked before a
// response is written: gRPC would fail the write itself, which ends a
// whole CompileMany stream and leaves the call counted as OK; checked here,
// the one call or candidate fails, with a message that says what to do.
absl::Status CheckResponseSize(const google::protobuf::MessageLite& response,
                               const CallEnvironment& env);

// ServeUnary with a fast path: `fast` runs first, on the reactor thread;
// when it returns a status the call finishes there, recorded as ServeUnary
// records it, and `body` never runs; when it returns nullopt, `body` runs on
// env.queue as in ServeUnary. For answers that cost a fraction of a
// millisecond (a response-cache hit), where waking a queue thread is a
// large part of the latency on a loaded machine. `fast` must be short and
// never block.
grpc::ServerUnaryReactor* ServeUnaryWithFastPath(
    grpc::CallbackServerContext* context, absl::string_view method, const CallEnvironment& env,
    const google::protobuf::MessageLite& response,
    const std::function<std::optional<absl::Status>(const CallInfo&)>& fast,
    std::function<absl::Status(const CallInfo&)> body);

// Serves one unary call of the callback API: runs `body` on env.queue (off
// the reactor thread), then finishes the call with ToGrpcStatus of its
// status. Around it: the request id, a debug log line at the start and an
// info line (warning on error) with code and latency at the end, the
// request metrics and the in-flight gauge. `body` fills `response`, which
// it captured; it must not touch the call after returning. A response over
// the size limit fails the call (CheckResponseSize).
grpc::ServerUnaryReactor* ServeUnary(grpc::CallbackServerContext* context, absl::string_view method,
                                     const CallEnvironment& env,
                                     const google::protobuf::MessageLite& response,
                                     std::function<absl::Status(const CallInfo&)> body);

// The pieces of ServeUnary, for streaming methods.
CallInfo MakeCallInfo(grpc::CallbackServerContext* context, absl::string_view method);
void RecordCallEnd(const CallEnvironment& env, const CallInfo& call, const absl::Status& status,
                   absl::Duration latency);

}  // namespace ordo::rpc

#endif  // ORDO_RPC_SERVICE_CALL_H_
