#include "server/ordo_server.h"

#include <algorithm>
#include <chrono>
#include <functional>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "core/cache/lru_schedule_cache.h"
#include "core/parts/local_first_part_runner.h"
#include "grpcpp/ext/channelz_service_plugin.h"
#include "grpcpp/ext/health_check_service_server_builder_option.h"
#include "grpcpp/ext/proto_server_reflection_plugin.h"
#include "grpcpp/security/server_credentials.h"
#include "grpcpp/server_builder.h"
#include "rpc/log.h"
#include "rpc/server_reflection_v1.h"
#include "server/cache/redis_schedule_cache.h"
#include "ordo/v1/worker_service.grpc.pb.h"
#include "server/grpc_part_runner.h"
#include "server/namespaced_schedule_cache.h"
#include "server/probed_worker_directory.h"

namespace ordo::server {
namespace {

// The shortest interval between client pings the front accepts.
constexpr int kMinClientPingIntervalMs = 1000;

// How the front reaches its workers. Remote ones: as the flags say. Local
// ones listen on loopback only, so TLS adds nothing there; a token (the
// workers' own, else the front's) keeps other local users out.
rpc::ClientSecurityOptions WorkerSecurityFiles(const OrdoServer::Options& options) {
  if (!options.workers.empty()) return options.worker_security;
  if (options.worker_security.tls()) {
    rpc::Log(rpc::LogLevel::kWarning, "",
             "--worker-tls-* apply to --workers; local workers are reached on loopback");
  }
  rpc::ClientSecurityOptions local;
  local.auth_token_file = !options.worker_security.auth_token_file.empty()
                              ? options.worker_security.auth_token_file
                              : options.security.auth_token_file;
  return local;
}

// Bearer tokens in plaintext can be read by anyone on the path; allowed
// (inside a trusted network it is the operator's call), but said out loud.
void WarnAboutPlaintextTokens(const OrdoServer::Options& options) {
  if (!options.security.auth_token_file.empty() && options.security.tls_cert_file.empty()) {
    rpc::Log(rpc::LogLevel::kWarning, "",
             "--auth-token-file without --tls-cert: clients send their tokens in plaintext");
  }
  if (!options.workers.empty() && !options.worker_security.auth_token_file.empty() &&
      !options.worker_security.tls()) {
    rpc::Log(rpc::LogLevel::kWarning, "",
             "--worker-auth-token-file without --worker-tls-ca: the worker token travels in "
             "plaintext");
  }
}

// The attempt budget is capped at max_deadline: no request may run longer,
// so a larger (or infinite) budget is a mistake, not a setting.
absl::Status CheckInServerPartOptions(const OrdoServer::Options& options) {
  const absl::Duration budget = options.in_server_part_budget;
  const absl::Duration cap = options.limits.max_deadline;
  if (budget < absl::ZeroDuration() || budget == absl::InfiniteDuration() || budget > cap) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--in-server-part-budget (in_server_part_budget) is ", absl::FormatDuration(budget),
        ": it must be between 0 (every part to workers) and --max-deadline (",
        absl::FormatDuration(cap), ")"));
  }
  if (options.in_server_part_max_ops < 0) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--in-server-part-max-ops (in_server_part_max_ops) is ", options.in_server_part_max_ops,
        ": it must not be negative (0 tries no part in the server)"));
  }
  return absl::OkStatus();
}

// An eviction listener for the part cache and both whole-answer caches:
// counts each evicted key as `event` under its namespace (the key's
// prefix). `metrics` must outlive the caches.
std::function<void(absl::string_view key)> CountEvictionsAs(rpc::ServiceMetrics* metrics,
                                                            std::string event) {
  return [metrics, event = std::move(event)](absl::string_view key) {
    metrics->AddNamespaceCacheEvents(NamespacedScheduleCache::NamespaceOfKey(key), event);
  };
}

}  // namespace

absl::StatusOr<std::unique_ptr<OrdoServer>> OrdoServer::Start(const Options& options) {
  if (absl::Status in_server = CheckInServerPartOptions(options); !in_server.ok()) {
    return in_server;
  }
  WarnAboutPlaintextTokens(options);
  // Security files are read first: a bad one fails before anything starts.
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> credentials =
      rpc::MakeServerCredentials(options.security);
  if (!credentials.ok()) return credentials.status();
  const rpc::ClientSecurityOptions worker_files = WorkerSecurityFiles(options);
  absl::StatusOr<rpc::ClientSecurity> worker_security = rpc::LoadClientSecurity(worker_files);
  if (!worker_security.ok()) return worker_security.status();

  std::unique_ptr<OrdoServer> server(new OrdoServer());
  server->shutdown_grace_ = options.shutdown_grace;
  if (!options.metrics_listen.empty()) {
    absl::StatusOr<std::unique_ptr<rpc::MetricsEndpoint>> endpoint =
        rpc::MetricsEndpoint::Start(options.metrics_listen, server->metrics_.registry());
    if (!endpoint.ok()) return endpoint.status();
    server->metrics_endpoint_ = *std::move(endpoint);
  }

  if (!options.redis_url.empty()) {
    RedisScheduleCache::Options redis;
    absl::Status parsed = RedisScheduleCache::ParseUrl(options.redis_url, redis);
    if (!parsed.ok()) return parsed;
    redis.ttl = options.redis_ttl;
    redis.connect_timeout = options.redis_timeout;
    redis.command_timeout = options.redis_timeout;
    server->cache_ = std::make_unique<RedisScheduleCache>(redis);
  } else if (options.cache_bytes > 0) {
    // Part-cache evictions per namespace, as the whole-answer caches' below.
    // Redis evicts by itself and is not counted (docs/nas.md, "Cache
    // namespaces").
    server->cache_ = std::make_unique<LruScheduleCache>(
        options.cache_bytes, CountEvictionsAs(&server->metrics_, "part_eviction"));
  }
  // Without Redis, --cache-mb=0 means no part cache either (GetInfo says
  // "none"): a cache that can hold nothing would still cost every call its
  // parts' canonical keys and lookups (about 5% of a cold Estimate's server
  // CPU on nasnet_cifar).

  int worker_slots = 0;
  if (!options.workers.empty()) {
    std::vector<WorkerTarget> targets;
    for (const std::string& worker : options.workers) {
      absl::StatusOr<WorkerTarget> target = ParseWorkerTarget(worker);
      if (!target.ok()) return target.status();
      // A name may stand for many workers: allow some parallelism.
      worker_slots += target->name.empty() ? 1 : 8;
      targets.push_back(*std::move(target));
    }
    ProbedWorkerDirectory::Options probes;
    probes.security = *worker_security;
    server->directory_ = std::make_unique<ProbedWorkerDirectory>(std::move(targets), probes);
  } else if (options.local_workers > 0) {
    WorkerSupervisor::Options supervisor;
    supervisor.binary = options.worker_binary;
    supervisor.workers = options.local_workers;
    // Local workers log into the front's stderr: at the front's level.
    supervisor.extra_args.push_back(absl::StrCat("--log-level=", rpc::LogLevelName()));
    // The front's cap travels with every task; the worker's own cap must not
    // be lower, or a front given more than the worker default would be
    // capped silently.
    supervisor.extra_args.push_back(
        absl::StrCat("--max-state-mb=", (options.limits.max_state_bytes + (1 << 20) - 1) >> 20));
    if (!worker_files.auth_token_file.empty()) {
      supervisor.extra_args.push_back(
          absl::StrCat("--auth-token-file=", worker_files.auth_token_file));
    }
    absl::StatusOr<std::unique_ptr<WorkerSupervisor>> started =
        WorkerSupervisor::Start(supervisor);
    if (!started.ok()) return started.status();
    worker_slots = options.local_workers;
    server->directory_ = *std::move(started);
  }
  if (server->directory_ != nullptr) {
    GrpcPartRunner::Options runner;
    runner.max_in_flight = worker_slots;
    runner.max_message_bytes = static_cast<int>(options.limits.max_message_bytes);
    runner.security = *worker_security;
    server->remote_runner_ = std::make_unique<GrpcPartRunner>(server->directory_.get(), runner,
                                                              &server->metrics_);
    LocalFirstPartRunner::Options local_first;
    local_first.budget = options.in_server_part_budget;
    local_first.total_budget = kInServerPartBudgetsPerCall * options.in_server_part_budget;
    local_first.max_ops = options.in_server_part_max_ops;
    local_first.max_state_bytes = std::min(local_first.max_state_bytes,
                                           options.limits.max_state_bytes);
    local_first.on_attempt = [metrics = &server->metrics_](bool kept) {
      metrics->AddWorkerTasks(kept ? "in_server" : "in_server_unproved", 1);
    };
    local_first.on_refused_claim = [](const PartTask& task, const absl::Status& error) {
      rpc::Log(rpc::LogLevel::kError, task.request_id,
               absl::StrCat("in-server attempt on a part of ", task.model->num_ops(),
                            " ops: optimal claim refused (a scheduler bug; sent to a worker): ",
                            error.ToString()));
    };
    server->runner_ = std::make_unique<LocalFirstPartRunner>(server->remote_runner_.get(),
                                                             std::move(local_first));
  } else {
    server->runner_ = std::make_unique<ThreadPartRunner>(options.local_threads);
  }

  // Compiles hold a queue thread for their whole run; the limit keeps them
  // from starving Estimate and GetInfo, which get threads of their own.
  server->queue_ =
      std::make_unique<rpc::WorkQueue>(options.limits.max_concurrent_compiles + 2);
  CompilerService::Dependencies deps;
  deps.runner = server->runner_.get();
  deps.cache = server->cache_.get();
  // Evictions from both whole-answer caches, per namespace (a key's prefix).
  const CacheEvictionListener count_eviction = CountEvictionsAs(&server->metrics_, "eviction");
  // A quarter of the cache budget, at most 64 MiB; --cache-mb=0 turns both
  // off: no caches at all, so a call spends nothing on keys, copies and
  // canonical forms that a cache of size zero would only throw away.
  const int64_t whole_answer_bytes = std::min<int64_t>(options.cache_bytes / 4, int64_t{64} << 20);
  if (whole_answer_bytes > 0) {
    server->responses_ = std::make_unique<ResponseCache>(whole_answer_bytes, count_eviction);
    deps.responses = server->responses_.get();
    // As much again for results keyed up to names (re-exports of a model).
    server->name_free_results_ =
        std::make_unique<NameFreeResultCache>(whole_answer_bytes, count_eviction);
    deps.name_free_results = server->name_free_results_.get();
  }
  deps.workers = server->directory_.get();
  deps.cache_namespace = options.cache_namespace;
  deps.clock = &server->clock_;
  deps.env = rpc::CallEnvironment{server->queue_.get(), &server->metrics_};
  server->service_ = std::make_unique<CompilerService>(options.limits, deps);

  if (options.channelz) grpc::channelz::experimental::InitChannelzService();
  grpc::reflection::InitProtoReflectionServerBuilderPlugin();
  grpc::ServerBuilder builder;
  // HealthService replaces gRPC's default one (which has no List).
  builder.SetOption(std::make_unique<grpc::HealthCheckServiceServerBuilderOption>(nullptr));
  builder.RegisterService(&server->health_);
  rpc::AddServerReflectionV1(builder);
  builder.AddListeningPort(options.listen, *credentials, &server->port_);
  builder.SetMaxReceiveMessageSize(static_cast<int>(options.limits.max_message_bytes));
  builder.SetMaxSendMessageSize(static_cast<int>(options.limits.max_message_bytes));
  // Clients' HTTP/2 keepalive (grpc-go and grpc-java, load balancers:
  // 10-30 s; NAS loops' idle channels) is welcome: gRPC's default, one ping
  // per 5 minutes without data and then GOAWAY "too_many_pings", ended
  // long compiles as UNAVAILABLE, which clients retry from the start (a
  // probe: a 45 s rewrite with 10 s pings failed at 40 s).
  builder.AddChannelArgument(GRPC_ARG_HTTP2_MIN_RECV_PING_INTERVAL_WITHOUT_DATA_MS,
                             kMinClientPingIntervalMs);
  builder.AddChannelArgument(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 1);
  builder.RegisterService(server->service_.get());
  server->server_ = builder.BuildAndStart();
  if (server->server_ == nullptr || server->port_ == 0) {
    return absl::UnavailableError(absl::StrCat("cannot listen on ", options.listen));
  }
  // In-process scheduling backs every runner, so the server can schedule
  // from now on; workers only make it faster.
  server->health_.SetStatus("", true);
  server->health_.SetStatus(v1::Compiler::service_full_name(), true);

  // Keeps ordo_workers_healthy and the workers' health status current.
  server->health_reporter_ = std::thread([s = server.get()] {
    absl::MutexLock lock(&s->mu_);
    do {
      int healthy = 0;
      if (s->directory_ != nullptr) {
        for (const WorkerEndpoint& worker : s->directory_->Workers()) healthy += worker.healthy;
        s->health_.SetStatus(v1::Worker::service_full_name(), healthy > 0);
      }
      s->metrics_.workers_healthy().Set(healthy);
    } while (!s->mu_.AwaitWithTimeout(absl::Condition(&s->stopping_), absl::Seconds(1)));
  });
  rpc::Log(
      rpc::LogLevel::kInfo, "",
      absl::StrCat("ordo-server on port ", server->port_, ", cache ",
                   server->cache_ ? server->cache_->kind() : absl::string_view("none"), ", ",
                   server->directory_ ? absl::StrCat(worker_slots, " worker(s)")
                                      : std::string("in-process scheduling"),
                   ", ", rpc::DescribeServerSecurity(options.security)));
  return server;
}

void OrdoServer::Shutdown() {
  {
    absl::MutexLock lock(&mu_);
    if (stopping_) return;
    stopping_ = true;
  }
  if (health_reporter_.joinable()) health_reporter_.join();
  health_.Shutdown();
  if (server_ != nullptr) {
    server_->Shutdown(absl::ToChronoTime(absl::Now() + shutdown_grace_));
    server_->Wait();
    rpc::Log(rpc::LogLevel::kInfo, "", "gRPC server stopped");
  }
  queue_.reset();      // bodies have finished: their calls are done
  runner_.reset();
  directory_.reset();  // stops supervised workers
}

OrdoServer::~OrdoServer() { Shutdown(); }

}  // namespace ordo::server
