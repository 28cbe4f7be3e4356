#ifndef ORDO_WORKERS_WORKER_SERVER_H_
#define ORDO_WORKERS_WORKER_SERVER_H_

#include <memory>
#include <string>

#include "absl/status/statusor.h"
#include "grpcpp/server.h"
#include "rpc/metrics.h"
#include "rpc/security.h"
#include "rpc/work_queue.h"
#include "workers/worker_service.h"

namespace ordo::worker {

// The ordo-worker process minus flag parsing: the Worker service plus the
// standard gRPC health service (SERVING once started) and server reflection,
// and metrics over HTTP. Start() returns once it listens; Shutdown() stops
// accepting, cancels running tasks after a grace period and returns when
// calls are done. Not copyable; thread-safe.
class WorkerServer {
 public:
  struct Options {
    // host:port to serve on; port 0 picks a free port (see port()).
    std::string listen = "127.0.0.1:0";
    // Tasks scheduled at once (threads of the work queue).
    int threads = 1;
    // host:port of /metrics; empty = no metrics endpoint.
    std::string metrics_listen;
    // Largest request or response.
    int max_message_bytes = 256 << 20;
    WorkerService::Options service;
    // TLS and bearer-token authentication of the port (default: neither).
    rpc::ServerSecurityOptions security;
  };

  // UNAVAILABLE when it cannot listen; INVALID_ARGUMENT for bad `security`
  // files.
  static absl::StatusOr<std::unique_ptr<WorkerServer>> Start(Options options);
  ~WorkerServer();
  WorkerServer(const WorkerServer&) = delete;
  WorkerServer& operator=(const WorkerServer&) = delete;

  int port() const { return port_; }
  int metrics_port() const { return metrics_ ? metrics_->port() : 0; }
  void Shutdown();

 private:
  WorkerServer() = default;

  rpc::ServiceMetrics metrics_registry_;
  std::unique_ptr<rpc::MetricsEndpoint> metrics_;
  std::unique_ptr<rpc::WorkQueue> queue_;
  std::unique_ptr<WorkerService> service_;
  std::unique_ptr<grpc::Server> server_;
  int port_ = 0;
};

}  // namespace ordo::worker

#endif  // ORDO_WORKERS_WORKER_SERVER_H_
