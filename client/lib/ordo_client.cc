#include "client/lib/ordo_client.h"

#include <algorithm>
#include <chrono>
#include <optional>
#include <string>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "google/protobuf/util/json_util.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"
#include "rpc/grpc_status.h"

namespace ordo::client {
namespace {

// Messages as core/graph/graph_proto.cc's (the CLI's local mode), so a bad
// file reads the same in local and remote mode (tests/data/bad/MANIFEST.txt).
absl::StatusOr<v1::Graph> ParseNativeGraph(absl::string_view bytes, ModelFormat format) {
  v1::Graph graph;
  if (format == ModelFormat::kGraphJson) {
    auto status = google::protobuf::util::JsonStringToMessage(
        google::protobuf::StringPiece(bytes.data(), bytes.size()), &graph);
    if (!status.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("not a valid ordo.v1.Graph JSON document: ", status.message().as_string()));
    }
  } else if (!graph.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError("not a valid ordo.v1.Graph protobuf message");
  }
  return graph;
}

template <typename Request>
absl::Status SetModel(absl::string_view bytes, ModelFormat format, Request& request) {
  if (format == ModelFormat::kOnnx) {
    request.set_onnx_model(std::string(bytes));
    return absl::OkStatus();
  }
  if (format == ModelFormat::kTflite) {
    request.set_tflite_model(std::string(bytes));
    return absl::OkStatus();
  }
  absl::StatusOr<v1::Graph> graph = ParseNativeGraph(bytes, format);
  if (!graph.ok()) return graph.status();
  *request.mutable_graph() = *std::move(graph);
  return absl::OkStatus();
}

// The pause a RESOURCE_EXHAUSTED call asks for in its pushback trailer;
// nullopt for other codes and for refusals without one (a request over a
// limit would fail again).
std::optional<absl::Duration> BusyPushback(const grpc::Status& status,
                                           const grpc::ClientContext& context) {
  if (status.error_code() != grpc::StatusCode::RESOURCE_EXHAUSTED) return std::nullopt;
  const auto& trailers = context.GetServerTrailingMetadata();
  const auto it = trailers.find(rpc::kRetryPushbackTrailer);
  if (it == trailers.end()) return std::nullopt;
  return rpc::ParseRetryPushback(absl::string_view(it->second.data(), it->second.size()));
}

}  // namespace

absl::Status SetRequestModel(absl::string_view bytes, ModelFormat format,
                             v1::CompileRequest& request) {
  return SetModel(bytes, format, request);
}

absl::Status SetRequestModel(absl::string_view bytes, ModelFormat format,
                             v1::EstimateRequest& request) {
  return SetModel(bytes, format, request);
}

OrdoClient::OrdoClient(const std::string& target, Options options) : options_(options) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(options_.max_message_bytes);
  args.SetMaxSendMessageSize(options_.max_message_bytes);
  // A target that resolves to several fronts (a headless Service's DNS
  // name, an ipv4: list) gets calls spread over all of them, and a resent
  // call goes to the next one; over one address it is pick_first's.
  args.SetLoadBalancingPolicyName("round_robin");
  if (options_.retry) {
    args.SetServiceConfigJSON(kRetryServiceConfig);
    args.SetInt(GRPC_ARG_ENABLE_RETRIES, 1);
    // See a restarted server soon after it listens (kRetryServiceConfig).
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
  }
  channel_ = grpc::CreateCustomChannel(target, options_.security.credentials, args);
  stub_ = v1::Compiler::NewStub(channel_);
}

grpc::Status OrdoClient::Call(const std::function<grpc::Status(grpc::ClientContext&)>& attempt,
                              const std::function<bool()>& resendable) const {
  const absl::Time start = absl::Now();
  const absl::Time deadline = start + options_.timeout;
  const absl::Time window_end = std::min(deadline, start + options_.unavailable_window);
  absl::Duration pause = absl::Milliseconds(100);
  while (true) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(deadline));
    options_.security.Apply(context);
    const grpc::Status status = attempt(context);
    if (status.ok() || !options_.retry || !resendable()) return status;
    if (const std::optional<absl::Duration> pushback = BusyPushback(status, context)) {
      // Busy: back when the server said, while the deadline allows.
      if (absl::Now() + *pushback >= deadline) return status;
      absl::SleepFor(*pushback);
      continue;
    }
    if (!IsResentCode(status.error_code()) || absl::Now() + pause >= window_end) return status;
    absl::SleepFor(pause);
    pause = std::min(2 * pause, absl::Seconds(1));
    if (!channel_->WaitForConnected(absl::ToChronoTime(window_end))) return status;
  }
}

absl::StatusOr<v1::CompileResponse> OrdoClient::Compile(const v1::CompileRequest& request) const {
  v1::CompileResponse response;
  const grpc::Status status = Call([&](grpc::ClientContext& context) {
    return stub_->Compile(&context, request, &response);
  });
  if (!status.ok()) return rpc::FromGrpcStatus(status);
  return response;
}

absl::StatusOr<v1::CompileResponse> OrdoClient::CompileStream(
    const v1::CompileRequest& request,
    const std::function<void(const v1::CompileProgress&)>& on_progress) const {
  std::optional<v1::CompileResponse> result;
  bool delivered = false;  // events went to the caller: not resent
  const grpc::Status status = Call(
      [&](grpc::ClientContext& context) {
        std::unique_ptr<grpc::ClientReader<v1::CompileEvent>> reader =
            stub_->CompileStream(&context, request);
        v1::CompileEvent event;
        while (reader->Read(&event)) {
          delivered = true;
          if (event.has_progress() && on_progress) on_progress(event.progress());
          if (event.has_result()) result = std::move(*event.mutable_result());
        }
        return reader->Finish();
      },
      [&] { return !delivered; });
  if (!status.ok()) return rpc::FromGrpcStatus(status);
  if (!result) return absl::InternalError("CompileStream ended without a result");
  return *std::move(result);
}

absl::StatusOr<v1::EstimateResponse> OrdoClient::Estimate(
    const v1::EstimateRequest& request) const {
  v1::EstimateResponse response;
  const grpc::Status status = Call([&](grpc::ClientContext& context) {
    return stub_->Estimate(&context, request, &response);
  });
  if (!status.ok()) return rpc::FromGrpcStatus(status);
  return response;
}

absl::StatusOr<v1::GetInfoResponse> OrdoClient::GetInfo() const {
  v1::GetInfoResponse response;
  const grpc::Status status = Call([&](grpc::ClientContext& context) {
    return stub_->GetInfo(&context, v1::GetInfoRequest(), &response);
  });
  if (!status.ok()) return rpc::FromGrpcStatus(status);
  return response;
}

namespace {

void SetDeadline(grpc::ClientContext& context, absl::Duration timeout) {
  context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
}

}  // namespace

// Not retried: a health check reports whether the server answers now.
absl::StatusOr<bool> OrdoClient::Serving(const std::string& service) const {
  auto health = grpc::health::v1::Health::NewStub(channel_);
  grpc::ClientContext context;
  SetDeadline(context, options_.timeout);
  options_.security.Apply(context);
  grpc::health::v1::HealthCheckRequest request;
  request.set_service(service);
  grpc::health::v1::HealthCheckResponse response;
  grpc::Status status = health->Check(&context, request, &response);
  if (status.error_code() == grpc::StatusCode::NOT_FOUND) return false;  // unknown service
  if (!status.ok()) return rpc::FromGrpcStatus(status);
  return response.status() == grpc::health::v1::HealthCheckResponse::SERVING;
}

}  // namespace ordo::client
