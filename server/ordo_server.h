#ifndef ORDO_SERVER_ORDO_SERVER_H_
#define ORDO_SERVER_ORDO_SERVER_H_

#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/parts/part_runner.h"
#include "core/cache/schedule_cache.h"
#include "core/util/clock.h"
#include "grpcpp/server.h"
#include "rpc/metrics.h"
#include "rpc/security.h"
#include "server/response_cache.h"
#include "rpc/work_queue.h"
#include "server/compiler_service.h"
#include "server/health_service.h"
#include "server/worker_directory.h"
#include "server/worker_supervisor.h"

namespace ordo::server {

// ordo-server minus flag parsing: the public Compiler service, its part
// runner (supervised local workers, remote workers or threads), its schedule
// cache (in-memory LRU or Redis), the gRPC health service (HealthService:
// Check, Watch, List), server reflection (v1alpha from gRPC, v1 from
// rpc/server_reflection_v1), channelz on request, and /metrics.
//
// Health: "" and "ordo.v1.Compiler" are SERVING from Start until Shutdown
// (in-process scheduling backs every runner, so the front can always
// answer); "ordo.v1.Worker", present when the front has workers, is
// SERVING while at least one of them is healthy (checked each second), so
// a watcher sees the pool go and come back without the front leaving a
// load balancer for it.
//
// Start() returns once everything listens; Shutdown() (idempotent; also
// run by the destructor) reports NOT_SERVING (ending Watch streams), stops accepting, lets running
// calls finish for `shutdown_grace` and cancels the rest, then stops the
// workers. Not copyable; thread-safe.
class OrdoServer {
 public:
  // The CPU time of all in-server attempts of one round of parts, in
  // Options::in_server_part_budget: small parts wait at most this long
  // before the unproved ones reach the workers.
  static constexpr int kInServerPartBudgetsPerCall = 4;

  struct Options {
    // host:port of the Compiler service; port 0 picks a free one (port()).
    std::string listen = "localhost:50051";
    // host:port of /metrics; empty = off.
    std::string metrics_listen = "0.0.0.0:9464";
    // Remote workers: "host:port" entries and/or "dns:///NAME:PORT" ones
    // (every address of NAME, re-resolved each probe interval: see
    // WorkerTarget). When set, no local workers are spawned.
    std::vector<std::string> workers;
    // Supervised ordo-worker children when `workers` is empty; 0 schedules
    // in this process's threads.
    int local_workers = 1;
    // The ordo-worker binary (DefaultWorkerBinary when empty).
    std::string worker_binary;
    // Threads for in-process scheduling (local_workers 0 and fallbacks).
    int local_threads = 2;
    // With workers: parts of at most `in_server_part_max_ops` ops are first
    // scheduled on the compile's own thread, each for at most
    // `in_server_part_budget` of that thread's CPU time, and all of one
    // round for at most kInServerPartBudgetsPerCall times it (the others go
    // to workers untried); a part proved optimal there never goes to a
    // worker (LocalFirstPartRunner). Zero budget: every part goes to
    // workers. At most limits.max_deadline (Start: INVALID_ARGUMENT).
    absl::Duration in_server_part_budget = absl::Milliseconds(10);
    int in_server_part_max_ops = 1000;
    // "redis://host:port[/db]" for the part cache; empty = the in-memory LRU
    // cache of cache_bytes (none when cache_bytes is 0).
    std::string redis_url;
    absl::Duration redis_ttl = absl::Hours(24 * 7);
    // Connect and command timeout of each Redis call: a slow or stalled
    // Redis costs a lookup at most this, then counts as a miss.
    absl::Duration redis_timeout = absl::Milliseconds(250);
    // Budget of the in-memory caches (parts, unless Redis holds them, and
    // whole answers); 0: no in-memory cache at all.
    int64_t cache_bytes = int64_t{256} << 20;
    // Namespace of the cache entries of calls that name none (their
    // `ordo-cache-namespace` metadata); empty: the shared one.
    std::string cache_namespace;
    CompilerLimits limits;
    absl::Duration shutdown_grace = absl::Seconds(5);
    // TLS and bearer-token authentication of the public port.
    rpc::ServerSecurityOptions security;
    // How the front reaches remote `workers`: TLS (CA, client certificate)
    // and the bearer token they require. Supervised local workers listen on
    // 127.0.0.1 only and are reached in plaintext; they require a token
    // when this one or `security` has a token file (this one first).
    rpc::ClientSecurityOptions worker_security;
    // Serve grpc.channelz.v1.Channelz (connections, calls, sockets of this
    // process, including its channels to workers). Process-wide once on.
    bool channelz = false;
  };

  // UNAVAILABLE when a port cannot be bound; INVALID_ARGUMENT for a bad
  // Redis URL or unreadable security files; FAILED_PRECONDITION when the worker binary is missing.
  static absl::StatusOr<std::unique_ptr<OrdoServer>> Start(const Options& options);
  ~OrdoServer();
  OrdoServer(const OrdoServer&) = delete;
  OrdoServer& operator=(const OrdoServer&) = delete;

  int port() const { return port_; }
  int metrics_port() const { return metrics_endpoint_ ? metrics_endpoint_->port() : 0; }
  void Shutdown();

 private:
  OrdoServer() = default;

  RealClock clock_;
  rpc::ServiceMetrics metrics_;
  std::unique_ptr<rpc::MetricsEndpoint> metrics_endpoint_;
  std::unique_ptr<ScheduleCache> cache_;
  std::unique_ptr<ResponseCache> responses_;
  std::unique_ptr<NameFreeResultCache> name_free_results_;
  std::unique_ptr<WorkerDirectory> directory_;
  // The workers' runner, and the runner the service uses (in front of it).
  std::unique_ptr<PartRunner> remote_runner_;
  std::unique_ptr<PartRunner> runner_;
  std::unique_ptr<rpc::WorkQueue> queue_;
  std::unique_ptr<CompilerService> service_;
  // Declared before server_: services outlive the server that calls them.
  HealthService health_;
  std::unique_ptr<grpc::Server> server_;
  std::thread health_reporter_;
  absl::Mutex mu_;
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  absl::Duration shutdown_grace_;
  int port_ = 0;
};

}  // namespace ordo::server

#endif  // ORDO_SERVER_ORDO_SERVER_H_
