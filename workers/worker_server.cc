#include "workers/worker_server.h"

#include <chrono>

#include "absl/strings/str_cat.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/health_check_service_interface.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"

namespace ordo::worker {
namespace {
// Below the fronts' keepalive interval (1 s), with room for timer jitter.
constexpr int kMinFrontPingInterval = 500;
}  // namespace

absl::StatusOr<std::unique_ptr<WorkerServer>> WorkerServer::Start(Options options) {
  std::unique_ptr<WorkerServer> server(new WorkerServer());
  if (!options.metrics_listen.empty()) {
    absl::StatusOr<std::unique_ptr<rpc::MetricsEndpoint>> metrics =
        rpc::MetricsEndpoint::Start(options.metrics_listen, server->metrics_registry_.registry());
    if (!metrics.ok()) return metrics.status();
    server->metrics_ = *std::move(metrics);
  }
  server->queue_ = std::make_unique<rpc::WorkQueue>(options.threads);
  server->service_ = std::make_unique<WorkerService>(
      options.service, rpc::CallEnvironment{server->queue_.get(), &server->metrics_registry_,
                                            options.max_message_bytes});

  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials =
      rpc::MakeServerCredentials(options.security);
  if (!credentials.ok()) return credentials.status();
  grpc::EnableDefaultHealthCheckService(true);
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  builder.AddListeningPort(options.listen, *credentials, &server->port_);
  builder.SetMaxReceiveMessageSize(options.max_message_bytes);
  builder.SetMaxSendMessageSize(options.max_message_bytes);
  // Fronts reach workers through one dns:/// channel and re-resolve only
  // when a connection ends: closing connections after a while lets them
  // find workers added by scaling up (in-flight calls get the grace period).
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_MS, 30 * 1000);
  builder.AddChannelArgument(GRPC_ARG_MAX_CONNECTION_AGE_GRACE_MS, 10 * 60 * 1000);
  // Fronts ping each second while a task runs, to notice a silent worker
  // (GrpcPartRunner); gRPC's default (one ping per 5 minutes without data,
  // then GOAWAY "too_many_pings") would end long searches.
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
                             kMinFrontPingInterval);
  builder.RegisterService(server->service_.get());
  server->server_ = builder.BuildAndStart();
  if (server->server_ == nullptr || server->port_ == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", options.listen));
  }
  server->server_->GetHealthCheckService()->SetServingStatus(true);
  server->metrics_registry_.workers_healthy().Set(1);
  return server;
}

void WorkerServer::Shutdown() {
  if (server_ == nullptr) return;
  server_->GetHealthCheckService()->SetServingStatus(false);
  // Running tasks get a moment to finish, then are cancelled (their
  // schedulers see the flag and return).
  server_->Shutdown(std::chrono::system_clock::now() + std::chrono::seconds(2));
  server_->Wait();
  server_.reset();
}

WorkerServer::~WorkerServer() {
  Shutdown();
  queue_.reset();  // joins after the server stopped handing out work
}

}  // namespace ordo::worker
