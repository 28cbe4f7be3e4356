#ifndef ORDO_SERVER_PROBED_WORKER_DIRECTORY_H_
#define ORDO_SERVER_PROBED_WORKER_DIRECTORY_H_

#include <functional>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "rpc/security.h"
#include "server/worker_directory.h"
#include "server/worker_targets.h"

namespace ordo::server {

// Remote workers given on the command line (WorkerTarget: host:port, or
// dns:///NAME:PORT standing for every address of the name), one thread
// keeping the list current each `interval`:
//  1. resolve: each dns: target is resolved again (ResolveWorkerTarget);
//     an address that appeared is probed from this round on, one that
//     disappeared is dropped (no new task; tasks in flight go on). A name
//     that fails to resolve keeps its last addresses.
//  2. probe (active health): grpc.health.v1 Check to every address, with
//     `timeout`; SERVING marks it healthy, anything else (refused, frozen,
//     NOT_SERVING) unhealthy.
// And from the part runner (passive): a failed task (ReportFailure) marks
// the address unhealthy at once, until a probe finds it serving; a wrong
// answer (ReportWrongAnswer) quarantines it: unhealthy for `quarantine`,
// however well it answers probes, then probed back like any other.
// So a killed or frozen (SIGSTOP) worker stops receiving tasks within one
// failed task, a recovered one (restarted, SIGCONT) gets them again within
// one interval, and a worker added behind a name gets tasks within about
// one interval (plus the resolver's own caching, none with glibc and
// /etc/hosts). Addresses start unhealthy until their first probe answers
// (the first round runs at once). Thread-safe.
class ProbedWorkerDirectory final : public WorkerDirectory {
 public:
  struct Options {
    absl::Duration interval = absl::Seconds(1);
    absl::Duration timeout = absl::Milliseconds(500);
    // How long a worker that answered with a wrong schedule gets no task.
    absl::Duration quarantine = absl::Seconds(60);
    // How probes reach the workers: the part runner's TLS and token.
    rpc::ClientSecurity security = rpc::InsecureClientSecurity();
    // Step 1's resolver (tests replace it).
    std::function<absl::StatusOr<std::vector<std::string>>(const WorkerTarget&)> resolve =
        ResolveWorkerTarget;
  };

  ProbedWorkerDirectory(std::vector<WorkerTarget> targets, Options options);
  ~ProbedWorkerDirectory() override;
  ProbedWorkerDirectory(const ProbedWorkerDirectory&) = delete;
  ProbedWorkerDirectory& operator=(const ProbedWorkerDirectory&) = delete;

  std::vector<WorkerEndpoint> Workers() const override;
  void ReportFailure(const std::string& address) override;
  void ReportWrongAnswer(const std::string& address) override;

 private:
  // One address being probed; owned by the probe thread.
  struct Probed {
    std::string address;
    std::string authority;  // WorkerEndpoint::authority
    std::unique_ptr<grpc::health::v1::Health::Stub> stub;
  };

  void ProbeLoop();
  // Step 1: resolves the targets and brings probed_ in line.
  void Resolve();
  bool Probe(grpc::health::v1::Health::Stub& stub) const;

  const Options options_;
  const std::vector<WorkerTarget> targets_;
  // Probe thread only.
  std::vector<std::vector<std::string>> resolved_;  // per target, last good
  std::vector<bool> resolve_failing_;               // per target
  std::vector<Probed> probed_;

  mutable absl::Mutex mu_;
  std::vector<WorkerEndpoint> workers_ ABSL_GUARDED_BY(mu_);
  // By address: no task before this time (ReportWrongAnswer).
  absl::flat_hash_map<std::string, absl::Time> quarantined_until_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread prober_;
};

}  // namespace ordo::server

#endif  // ORDO_SERVER_PROBED_WORKER_DIRECTORY_H_
