#ifndef ORDO_SERVER_WORKER_SUPERVISOR_H_
#define ORDO_SERVER_WORKER_SUPERVISOR_H_

#include <sys/types.h>

#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "server/worker_directory.h"
#include "sys/child_process.h"

namespace ordo::server {

// Runs `workers` ordo-worker child processes on free loopback ports and
// keeps them running: the embedded default of ordo-server.
//
// Each child is started (sys/child_process) as `binary --listen
// 127.0.0.1:0 --threads T extra_args...` in its own process group (a
// terminal's Ctrl-C reaches only the front, which then stops the children),
// with a parent-death SIGTERM so it dies with the front even when the front
// is killed. The child prints `listening on HOST:PORT`; a
// child that does not within `start_timeout` is killed and retried. A
// monitor thread reaps children every `poll_interval`; one that exited is
// restarted (at most once per `restart_backoff` per slot) on a new port and
// its restart count rises. The destructor sends SIGTERM, waits up to 2 s,
// then SIGKILLs. Thread-safe.
class WorkerSupervisor final : public WorkerDirectory {
 public:
  struct Options {
    std::string binary;
    int workers = 1;
    int threads_per_worker = 1;
    // More flags for every child, e.g. --auth-token-file=F so that only the
    // front (which holds the token) can use the children's loopback ports.
    std::vector<std::string> extra_args;
    absl::Duration start_timeout = absl::Seconds(10);
    absl::Duration poll_interval = absl::Milliseconds(100);
    absl::Duration restart_backoff = absl::Milliseconds(200);
  };

  // Starts every child and returns once each has reported its port or
  // failed (a failed slot is retried by the monitor). FAILED_PRECONDITION
  // when the binary does not exist.
  static absl::StatusOr<std::unique_ptr<WorkerSupervisor>> Start(Options options);
  ~WorkerSupervisor() override;
  WorkerSupervisor(const WorkerSupervisor&) = delete;
  WorkerSupervisor& operator=(const WorkerSupervisor&) = delete;

  std::vector<WorkerEndpoint> Workers() const override;
  // Process ids of the running children (for tests and logs).
  std::vector<pid_t> Pids() const;

 private:
  struct Slot {
    // The running child; null while the slot waits for a restart.
    std::unique_ptr<ChildProcess> child;
    std::string address;
    int32_t restarts = 0;
    absl::Time last_start = absl::InfinitePast();
  };

  explicit WorkerSupervisor(Options options) : options_(std::move(options)) {}
  // Spawns into `slot`; leaves `child` null on failure.
  void SpawnLocked(Slot& slot) ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Monitor();

  const Options options_;
  mutable absl::Mutex mu_;
  std::vector<Slot> slots_ ABSL_GUARDED_BY(mu_);
  bool stopping_ ABSL_GUARDED_BY(mu_) = false;
  std::thread monitor_;
};

// The ordo-worker binary to spawn when no path is given: next to
// `self_exe`, then in ../workers/ beside it (the build tree).
std::string DefaultWorkerBinary(const std::string& self_exe);

}  // namespace ordo::server

#endif  // ORDO_SERVER_WORKER_SUPERVISOR_H_
