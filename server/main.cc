// ordo-server: the public Compiler service. Parses flags into
// OrdoServer::Options, starts it, prints `listening on HOST:PORT` (and
// `metrics on PORT`) on stdout, and shuts down gracefully on SIGTERM/SIGINT.

#include <malloc.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/time.h"
#include "rpc/log.h"
#include "rpc/security_flags.h"
#include "rpc/service_main.h"
#include "rpc/termination_signals.h"
#include "core/onnx/tensor_shapes.h"
#include "server/namespaced_schedule_cache.h"
#include "server/onnx_inference_helpers.h"
#include "server/ordo_server.h"

ABSL_FLAG(std::string, listen, "localhost:50051", "host:port to serve on; port 0 picks one");
ABSL_FLAG(int, metrics_port, 9464, "port of /metrics (all interfaces); 0 = off");
ABSL_FLAG(std::string, workers, "",
          "remote workers: host:port,... and/or dns:///NAME:PORT (every address of NAME, "
          "re-resolved each second); disables local workers");
ABSL_FLAG(int, local_workers, -1,
          "supervised ordo-worker processes (default: number of cores); 0 = in-process");
ABSL_FLAG(absl::Duration, in_server_part_budget, absl::Milliseconds(10),
          "with workers: schedule small parts on the compile's thread first for at most this "
          "much CPU time of that thread, per part; a part proved optimal in it is not sent to a "
          "worker (0 = every part to workers; at most --max-deadline)");
ABSL_FLAG(int, in_server_part_max_ops, 1000,
          "with workers: parts with more ops go to workers without an attempt in the server");
ABSL_FLAG(std::string, worker_tls_ca, "",
          "PEM CA bundle: reach --workers over TLS, verifying their certificates");
ABSL_FLAG(std::string, worker_tls_cert, "",
          "PEM client certificate for workers that require mutual TLS (with --worker-tls-key)");
ABSL_FLAG(std::string, worker_tls_key, "", "PEM private key of --worker-tls-cert");
ABSL_FLAG(std::string, worker_auth_token_file, "",
          "bearer token (first line) sent to workers; local workers require it "
          "(default: --auth-token-file)");
ABSL_FLAG(std::string, worker_binary, "", "ordo-worker to spawn (default: next to this binary)");
ABSL_FLAG(std::string, redis, "", "redis://host:port[/db] for a shared cache (default: in-memory)");
ABSL_FLAG(absl::Duration, redis_ttl, absl::Hours(168), "expiry of Redis cache entries");
ABSL_FLAG(absl::Duration, redis_timeout, absl::Milliseconds(250),
          "connect and command timeout of Redis calls; a slower Redis is a cache miss");
ABSL_FLAG(int, max_state_mb, 1024,
          "memory one compile's schedule search may use; requests may ask for less");
ABSL_FLAG(int, cache_mb, 256,
          "budget of the in-memory caches (parts and whole answers); 0: no cache unless --redis "
          "gives the part cache");
ABSL_FLAG(std::string, cache_namespace, "",
          "cache namespace of calls without ordo-cache-namespace metadata: their entries "
          "(parts, responses) are kept apart from other namespaces' in the same cache or Redis");
ABSL_FLAG(int, max_message_mb, 256, "largest request or response");
ABSL_FLAG(int64_t, max_ops, 100000, "largest model, in ops");
ABSL_FLAG(int, max_concurrent, 8, "compiles at once; more fail with RESOURCE_EXHAUSTED");
ABSL_FLAG(absl::Duration, default_deadline, absl::Seconds(60), "deadline of calls without one");
ABSL_FLAG(bool, channelz, false,
          "serve grpc.channelz.v1.Channelz (connections to clients and workers) for debugging");
ABSL_FLAG(absl::Duration, max_deadline, absl::Minutes(10), "cap on call deadlines");
ABSL_FLAG(bool, isolate_onnx_inference, true,
          "run libonnx's shape inference of ONNX imports in helper processes (this binary "
          "with --onnx-inference-helper), so that a model that crashes libonnx fails alone "
          "while the server keeps serving; false: in the server's process");

namespace {

// The numeric flags' ranges, one place (exit 2 naming the flag). A value
// out of range was taken silently before: --listen's port 99999 served on
// 34463, --max-message-mb 4096 wrapped to 0, a negative --cache-mb or
// deadline was kept.
absl::Status CheckFlags() {
  using ordo::rpc::CheckFlagPositive;
  using ordo::rpc::CheckFlagRange;
  for (const absl::Status& status :
       {ordo::rpc::CheckSharedServiceFlags(absl::GetFlag(FLAGS_listen),
                                           absl::GetFlag(FLAGS_metrics_port),
                                           absl::GetFlag(FLAGS_max_state_mb)),
        CheckFlagRange("--local-workers", absl::GetFlag(FLAGS_local_workers), -1, 1024),
        CheckFlagRange("--cache-mb", absl::GetFlag(FLAGS_cache_mb), 0, 1 << 20),
        // gRPC's message limits are ints.
        CheckFlagRange("--max-message-mb", absl::GetFlag(FLAGS_max_message_mb), 1, 2047),
        CheckFlagRange("--max-ops", absl::GetFlag(FLAGS_max_ops), 1, 100'000'000),
        CheckFlagRange("--max-concurrent", absl::GetFlag(FLAGS_max_concurrent), 1, 4096),
        CheckFlagPositive("--redis-ttl", absl::GetFlag(FLAGS_redis_ttl)),
        CheckFlagPositive("--redis-timeout", absl::GetFlag(FLAGS_redis_timeout)),
        CheckFlagPositive("--default-deadline", absl::GetFlag(FLAGS_default_deadline)),
        CheckFlagPositive("--max-deadline", absl::GetFlag(FLAGS_max_deadline))}) {
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  // A helper process of OnnxInferenceHelpers: frames on stdin and stdout.
  // Its stdout carries only frames: anything a library prints there goes
  // to stderr instead.
  if (argc == 2 && std::strcmp(argv[1], ordo::server::kOnnxInferenceHelperFlag) == 0) {
    const int frames_out = dup(STDOUT_FILENO);
    dup2(STDERR_FILENO, STDOUT_FILENO);
    return ordo::server::ServeOnnxInferenceHelper(STDIN_FILENO, frames_out);
  }
  // The mallopt settings below tune glibc's malloc, which serves only the
  // sanitizer and fuzzer builds: the Release build links jemalloc (top
  // CMakeLists.txt), for which they are no-ops. Before any thread starts: glibc's default of 8 arenas per core lets
  // every gRPC and work thread keep its own free pages of big requests, so
  // RSS climbs with each large request (hundreds of MiB after a dozen
  // 35 MiB models). Two arenas plus the trim after long calls
  // (rpc/work_queue.h) keep it flat. The cost: threads that search in
  // the front (rewrite searches, --local-workers=0, fallbacks) share two
  // arenas; the overload and soak runs showed no measurable difference.
  mallopt(M_ARENA_MAX, 2);
  // Short calls (Estimate, a cold NAS candidate) allocate and free a few
  // MiB each: the ONNX parse arena, the graph, the memory model. With
  // glibc's defaults those blocks are mmapped, or trimmed back to the system
  // when freed, and page-faulted in again by the next call: 190 faults per
  // Estimate of nasnet_cifar, a third of its CPU time in a VM
  // (onnx_import_bench under `perf stat -e page-faults`). Blocks below
  // 16 MiB now come from the heap and up to 32 MiB of freed heap stays
  // mapped per arena; long calls still trim it all (rpc/work_queue.h), so
  // RSS stays bounded as before.
  mallopt(M_MMAP_THRESHOLD, 16 << 20);
  mallopt(M_TRIM_THRESHOLD, 32 << 20);
  if (!ordo::rpc::InitServiceMain(argc, argv, "ordo-server", "ordo-server [--listen HOST:PORT] [--local-workers N] ...")) return 2;

  if (const absl::Status flags = CheckFlags(); !flags.ok()) {
    std::fprintf(stderr, "ordo-server: %s\n", std::string(flags.message()).c_str());
    return 2;
  }
  ordo::server::OrdoServer::Options options;
  options.listen = absl::GetFlag(FLAGS_listen);
  const int metrics_port = absl::GetFlag(FLAGS_metrics_port);
  options.metrics_listen = metrics_port > 0 ? absl::StrCat("0.0.0.0:", metrics_port) : "";
  for (absl::string_view worker :
       absl::StrSplit(absl::GetFlag(FLAGS_workers), ',', absl::SkipWhitespace())) {
    options.workers.emplace_back(worker);
  }
  const int local_workers = absl::GetFlag(FLAGS_local_workers);
  options.local_workers =
      local_workers >= 0 ? local_workers : static_cast<int>(std::thread::hardware_concurrency());
  options.in_server_part_budget = absl::GetFlag(FLAGS_in_server_part_budget);
  options.in_server_part_max_ops = absl::GetFlag(FLAGS_in_server_part_max_ops);
  // Checked by OrdoServer::Start (INVALID_ARGUMENT: exit code 2).
  options.local_threads = std::max(1, static_cast<int>(std::thread::hardware_concurrency()));
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  const std::string self_exe = n > 0 ? std::string(self, n) : std::string(argv[0]);
  options.worker_binary = absl::GetFlag(FLAGS_worker_binary).empty()
                              ? ordo::server::DefaultWorkerBinary(self_exe)
                              : absl::GetFlag(FLAGS_worker_binary);
  options.security = ordo::rpc::ServerSecurityFromFlags();
  options.worker_security.tls_ca_file = absl::GetFlag(FLAGS_worker_tls_ca);
  options.worker_security.tls_cert_file = absl::GetFlag(FLAGS_worker_tls_cert);
  options.worker_security.tls_key_file = absl::GetFlag(FLAGS_worker_tls_key);
  options.worker_security.auth_token_file = absl::GetFlag(FLAGS_worker_auth_token_file);
  absl::Status security = ordo::rpc::CheckServerSecurity(options.security);
  if (security.ok()) security = ordo::rpc::LoadClientSecurity(options.worker_security).status();
  if (!security.ok()) {
    std::fprintf(stderr, "ordo-server: %s\n", std::string(security.message()).c_str());
    return 2;
  }
  options.redis_url = absl::GetFlag(FLAGS_redis);
  options.redis_ttl = absl::GetFlag(FLAGS_redis_ttl);
  options.redis_timeout = absl::GetFlag(FLAGS_redis_timeout);
  options.limits.max_state_bytes = int64_t{absl::GetFlag(FLAGS_max_state_mb)} << 20;
  options.cache_bytes = int64_t{absl::GetFlag(FLAGS_cache_mb)} << 20;
  options.cache_namespace = absl::GetFlag(FLAGS_cache_namespace);
  if (const absl::Status ns = ordo::server::CheckCacheNamespace(options.cache_namespace,
                                                                "--cache-namespace");
      !ns.ok()) {
    std::fprintf(stderr, "ordo-server: %s\n", std::string(ns.message()).c_str());
    return 2;
  }
  options.limits.max_message_bytes = int64_t{absl::GetFlag(FLAGS_max_message_mb)} << 20;
  options.limits.max_ops = absl::GetFlag(FLAGS_max_ops);
  options.limits.max_concurrent_compiles = absl::GetFlag(FLAGS_max_concurrent);
  options.limits.default_deadline = absl::GetFlag(FLAGS_default_deadline);
  options.limits.max_deadline = absl::GetFlag(FLAGS_max_deadline);
  options.channelz = absl::GetFlag(FLAGS_channelz);

  // Destroyed after the server (declared before it), so no import outlives it.
  std::unique_ptr<ordo::server::OnnxInferenceHelpers> inference_helpers;
  if (absl::GetFlag(FLAGS_isolate_onnx_inference)) {
    inference_helpers = std::make_unique<ordo::server::OnnxInferenceHelpers>(
        ordo::server::OnnxInferenceHelpers::Options{.binary = self_exe});
    ordo::onnx_import::SetShapeInferenceRunner(
        [helpers = inference_helpers.get()](onnx::ModelProto& model, bool strict,
                                            bool check_types) {
          return helpers->Infer(model, strict, check_types);
        });
  }
  absl::StatusOr<std::unique_ptr<ordo::server::OrdoServer>> server =
      ordo::server::OrdoServer::Start(options);
  if (!server.ok()) {
    std::fprintf(stderr, "ordo-server: %s\n", server.status().ToString().c_str());
    return absl::IsInvalidArgument(server.status()) ? 2 : 1;  // a bad flag: 2
  }
  const std::string host = options.listen.substr(0, options.listen.rfind(':'));
  std::printf("listening on %s:%d\n", host.c_str(), (*server)->port());
  if ((*server)->metrics_port() > 0) std::printf("metrics on %d\n", (*server)->metrics_port());
  std::fflush(stdout);
  const int signal_number = ordo::rpc::WaitForTerminationSignal();
  ordo::rpc::Log(ordo::rpc::LogLevel::kInfo, "",
                 absl::StrCat("signal ", signal_number, ": shutting down"));
  (*server)->Shutdown();
  return 0;
}
