// ordo-worker: serves the internal Worker service (one part per call).
// Prints `listening on HOST:PORT` on stdout once it serves, so a parent that
// passed port 0 learns the port.

#include <cstdio>
#include <thread>

#include "absl/flags/flag.h"
#include "absl/flags/parse.h"
#include "absl/flags/usage.h"
#include "absl/strings/str_cat.h"
#include "rpc/log.h"
#include "rpc/security_flags.h"
#include "rpc/service_main.h"
#include "rpc/termination_signals.h"
#include "workers/worker_server.h"

ABSL_FLAG(std::string, listen, "127.0.0.1:0", "host:port to serve on; port 0 picks one");
ABSL_FLAG(int, threads, 1, "parts scheduled at once");
ABSL_FLAG(int, max_state_mb, 1024,
          "search memory per task (MiB): the default for tasks that do not set one, and the cap "
          "for those that do");
ABSL_FLAG(int, metrics_port, 0, "port of /metrics (all interfaces, for Prometheus in another pod); 0 = off");

int main(int argc, char** argv) {
  if (!ordo::rpc::InitServiceMain(argc, argv, "ordo-worker",
                                  "ordo-worker [--listen HOST:PORT] [--threads N] [--max-state-mb N] "
                                  "[--tls-cert F --tls-key F] [--auth-token-file F]")) {
    return 2;
  }

  for (const absl::Status& status :
       {ordo::rpc::CheckSharedServiceFlags(absl::GetFlag(FLAGS_listen),
                                           absl::GetFlag(FLAGS_metrics_port),
                                           absl::GetFlag(FLAGS_max_state_mb)),
        ordo::rpc::CheckFlagRange("--threads", absl::GetFlag(FLAGS_threads), 1, 1024)}) {
    if (!status.ok()) {
      std::fprintf(stderr, "ordo-worker: %s\n", std::string(status.message()).c_str());
      return 2;
    }
  }
  ordo::worker::WorkerServer::Options options;
  options.listen = absl::GetFlag(FLAGS_listen);
  options.threads = absl::GetFlag(FLAGS_threads);
  options.service.max_state_bytes = int64_t{absl::GetFlag(FLAGS_max_state_mb)} << 20;
  if (absl::GetFlag(FLAGS_metrics_port) > 0) {
    options.metrics_listen = absl::StrCat("0.0.0.0:", absl::GetFlag(FLAGS_metrics_port));
  }
  options.security = ordo::rpc::ServerSecurityFromFlags();
  if (absl::Status security = ordo::rpc::CheckServerSecurity(options.security); !security.ok()) {
    std::fprintf(stderr, "ordo-worker: %s\n", std::string(security.message()).c_str());
    return 2;
  }
  absl::StatusOr<std::unique_ptr<ordo::worker::WorkerServer>> server =
      ordo::worker::WorkerServer::Start(options);
  if (!server.ok()) {
    std::fprintf(stderr, "ordo-worker: %s\n", server.status().ToString().c_str());
    return 1;
  }
  const std::string host = options.listen.substr(0, options.listen.rfind(':'));
  std::printf("listening on %s:%d\n", host.c_str(), (*server)->port());
  std::fflush(stdout);
  ordo::rpc::Log(ordo::rpc::LogLevel::kInfo, "",
                 absl::StrCat("ordo-worker serving on port ", (*server)->port()));
  const int signal_number = ordo::rpc::WaitForTerminationSignal();
  ordo::rpc::Log(ordo::rpc::LogLevel::kInfo, "",
                 absl::StrCat("signal ", signal_number, ": shutting down"));
  (*server)->Shutdown();
  return 0;
}
