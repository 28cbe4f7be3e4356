#include "client/lib/ordo_client.h"

#include <chrono>
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
  if (options_.retry) {
    args.SetServiceConfigJSON(kRetryServiceConfig);
    args.SetInt(GRPC_ARG_ENABLE_RETRIES, 1);
  }
  channel_ = grpc::CreateCustomChannel(target, options_.security.credentials, args);
  stub_ = v1::Compiler::NewStub(channel_);
}

namespace {

void SetDeadline(grpc::ClientContext& context, absl::Duration timeout) {
  context.set_deadline(absl::ToChronoTime(absl::Now() + timeout));
}

}  // namespace

absl::StatusOr<v1::CompileResponse> OrdoClient::Compile(const v1::CompileRequest& request) const {
  grpc::ClientContext context;
  SetDeadline(context, options_.timeout);
  options_.security.Apply(context);
  v1::CompileResponse response;
  grpc::Status status = stub_->Compile(&context, request, &response);
  if (!status.ok()) return rpc::FromGrpcStatus(status);
  return response;
}

absl::StatusOr<v1::CompileResponse> OrdoClient::CompileStream(
    const v1::CompileRequest& request,
    const std::function<void(const v1::CompileProgress&)>& on_progress) const {
  grpc::ClientContext context;
  SetDeadline(context, options_.timeout);
  options_.security.Apply(context);
  std::unique_ptr<grpc::ClientReader<v1::CompileEvent>> reader =
      stub_->CompileStream(&context, request);
  v1::CompileEvent event;
  std::optional<v1::CompileResponse> result;
  while (reader->Read(&event)) {
    if (event.has_progress() && on_progress) on_progress(event.progress());
    if (event.has_result()) result = std::move(*event.mutable_result());
  }
  grpc::Status status = reader->Finish();
  if (!status.ok()) return rpc::FromGrpcStatus(status);
  if (!result) return absl::InternalError("CompileStream ended without a result");
  return *std::move(result);
}

absl::StatusOr<v1::EstimateResponse> OrdoClient::Estimate(
    const v1::EstimateRequest& request) const {
  grpc::ClientContext context;
  SetDeadline(context, options_.timeout);
  options_.security.Apply(context);
  v1::EstimateResponse response;
  grpc::Status status = stub_->Estimate(&context, request, &response);
  if (!status.ok()) return rpc::FromGrpcStatus(status);
  return response;
}

absl::StatusOr<v1::GetInfoResponse> OrdoClient::GetInfo() const {
  grpc::ClientContext context;
  SetDeadline(context, options_.timeout);
  options_.security.Apply(context);
  v1::GetInfoResponse response;
  grpc::Status status = stub_->GetInfo(&context, v1::GetInfoRequest(), &response);
  if (!status.ok()) return rpc::FromGrpcStatus(status);
  return response;
}

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
