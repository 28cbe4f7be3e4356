#ifndef ORDO_SERVER_PROBED_WORKER_DIRECTORY_H_
#define ORDO_SERVER_PROBED_WORKER_DIRECTORY_H_

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "rpc/security.h"
#include "server/worker_directory.h"

namespace ordo::server {

// Remote workers given on the command line (host:port, or a resolver target
// such as dns:///ordo-worker:50052 standing for many behind round_robin),
// with their health known from two sources:
//  - active: a thread sends grpc.health.v1 Check to every address each
//    `interval`, with `timeout`; SERVING marks it healthy, anything else
//    (refused, frozen, NOT_SERVING) unhealthy;
//  - passive: the part runner reports a failed task (ReportFailure), which
//    marks the address unhealthy at once, until a probe finds it serving.
// So a killed or frozen (SIGSTOP) worker stops receiving tasks within one
// failed task, and a recovered one (restarted, SIGCONT) gets them again
// within one interval. Every address starts unhealthy until its first
// probe answers (the first round runs at once). Thread-safe.
class ProbedWorkerDirectory final : public WorkerDirectory {
 public:
  struct Options {
    absl::Duration interval = absl::Seconds(1);
    absl::Duration timeout = absl::Milliseconds(500);
    // How probes reach the workers: the part runner's TLS and token.
    rpc::ClientSecurity security = rpc::InsecureClientSecurity();
  };

  ProbedWorkerDirectory(std::vector<std::string> addresses, Options options);
  ~ProbedWorkerDirectory() override;
  ProbedWorkerDirectory(const ProbedWorkerDirectory&) = delete;
  ProbedWorkerDirectory& operator=(const ProbedWorkerDirectory&) = delete;

  std::vector<WorkerEndpoint> Workers() const override;
  void ReportFailure(const std::string& address) override;

 private:
  void ProbeLoop();
  bool Probe(grpc::health::v1::Health::Stub& stub) const;

  const Options options_;
  std::vector<std::unique_ptr<grpc::health::v1::Health::Stub>> stubs_;
  mutable absl::Mutex mu_;
  std::vector<WorkerEndpoint> workers_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread prober_;
};

}  // namespace ordo::server

#endif  // ORDO_SERVER_PROBED_WORKER_DIRECTORY_H_
