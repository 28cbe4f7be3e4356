#include "server/worker_supervisor.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <optional>

#include "absl/strings/str_cat.h"
#include "rpc/log.h"

namespace ordo::server {
namespace {

// Starts one child and waits for its `listening on` line.
absl::StatusOr<std::unique_ptr<ChildProcess>> SpawnWorker(
    const WorkerSupervisor::Options& options) {
  std::vector<std::string> argv = {options.binary, "--listen=127.0.0.1:0",
                                   absl::StrCat("--threads=", options.threads_per_worker)};
  argv.insert(argv.end(), options.extra_args.begin(), options.extra_args.end());
  ChildProcess::Options spawn;
  spawn.own_process_group = true;
  spawn.parent_death_signal = SIGTERM;
  return ChildProcess::StartListening(std::move(argv), spawn, options.start_timeout);
}

}  // namespace

std::string DefaultWorkerBinary(const std::string& self_exe) {
  const std::filesystem::path dir = std::filesystem::path(self_exe).parent_path();
  for (const std::filesystem::path& candidate :
       {dir / "ordo-worker", dir / ".." / "workers" / "ordo-worker"}) {
    std::error_code error;
    if (std::filesystem::exists(candidate, error)) return candidate.lexically_normal().string();
  }
  return (dir / "ordo-worker").string();
}

absl::StatusOr<std::unique_ptr<WorkerSupervisor>> WorkerSupervisor::Start(Options options) {
  if (access(options.binary.c_str(), X_OK) != 0) {
    return absl::FailedPreconditionError(
        absl::StrCat("worker binary \"", options.binary, "\" is not executable"));
  }
  std::unique_ptr<WorkerSupervisor> supervisor(new WorkerSupervisor(std::move(options)));
  {
    absl::MutexLock lock(&supervisor->mu_);
    supervisor->slots_.resize(std::max(supervisor->options_.workers, 0));
    for (Slot& slot : supervisor->slots_) supervisor->SpawnLocked(slot);
  }
  supervisor->monitor_ = std::thread([s = supervisor.get()] { s->Monitor(); });
  return supervisor;
}

void WorkerSupervisor::SpawnLocked(Slot& slot) {
  slot.last_start = absl::Now();
  absl::StatusOr<std::unique_ptr<ChildProcess>> child = SpawnWorker(options_);
  if (!child.ok()) {
    rpc::Log(rpc::LogLevel::kError, "",
             absl::StrCat("worker ", options_.binary, ": ", child.status().message()));
    return;
  }
  slot.child = *std::move(child);
  slot.address = slot.child->address();
  rpc::Log(rpc::LogLevel::kInfo, "",
           absl::StrCat("worker pid ", slot.child->pid(), " serving on ", slot.address));
}

void WorkerSupervisor::Monitor() {
  absl::MutexLock lock(&mu_);
  while (!mu_.AwaitWithTimeout(absl::Condition(&stopping_), options_.poll_interval)) {
    for (Slot& slot : slots_) {
      if (slot.child != nullptr) {
        const std::optional<int> status = slot.child->Poll();
        if (!status) continue;
        rpc::Log(rpc::LogLevel::kWarning, "",
                 absl::StrCat("worker pid ", slot.child->pid(), " on ", slot.address, " ",
                              DescribeWaitStatus(*status), "; restarting"));
        slot.child.reset();
        ++slot.restarts;
      }
      if (absl::Now() - slot.last_start < options_.restart_backoff) continue;
      // Spawning under the lock keeps Workers() from handing out a dead
      // address; it takes milliseconds.
      SpawnLocked(slot);
    }
  }
}

std::vector<WorkerEndpoint> WorkerSupervisor::Workers() const {
  absl::MutexLock lock(&mu_);
  std::vector<WorkerEndpoint> workers;
  for (const Slot& slot : slots_) {
    workers.push_back({slot.address, slot.child != nullptr, slot.restarts});
  }
  return workers;
}

std::vector<pid_t> WorkerSupervisor::Pids() const {
  absl::MutexLock lock(&mu_);
  std::vector<pid_t> pids;
  for (const Slot& slot : slots_) {
    if (slot.child != nullptr) pids.push_back(slot.child->pid());
  }
  return pids;
}

WorkerSupervisor::~WorkerSupervisor() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  if (monitor_.joinable()) monitor_.join();
  absl::MutexLock lock(&mu_);
  // All at once, then one shared 2 s grace before SIGKILL.
  for (Slot& slot : slots_) {
    if (slot.child != nullptr) kill(slot.child->pid(), SIGTERM);
  }
  const absl::Time deadline = absl::Now() + absl::Seconds(2);
  for (Slot& slot : slots_) {
    if (slot.child == nullptr) continue;
    slot.child->Stop(SIGTERM, std::max(deadline - absl::Now(), absl::ZeroDuration()));
    slot.child.reset();
  }
}

}  // namespace ordo::server
