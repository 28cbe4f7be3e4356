#include "server/worker_supervisor.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "rpc/log.h"

namespace ordo::server {
namespace {

struct Child {
  pid_t pid = -1;
  std::string address;
};

// Reads one line from `fd` within `timeout`; empty on timeout or EOF.
std::string ReadLine(int fd, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  std::string line;
  while (true) {
    const int64_t ms = absl::ToInt64Milliseconds(deadline - absl::Now());
    if (ms <= 0) return "";
    pollfd pfd{fd, POLLIN, 0};
    const int ready = poll(&pfd, 1, static_cast<int>(ms));
    if (ready < 0 && errno == EINTR) continue;
    if (ready <= 0) return "";
    char c;
    const ssize_t n = read(fd, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return "";
    if (c == '\n') return line;
    line.push_back(c);
    if (line.size() > 256) return "";
  }
}

Child SpawnWorker(const WorkerSupervisor::Options& options) {
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) return {};
  const std::string threads = absl::StrCat("--threads=", options.threads_per_worker);
  // Built before fork: the child may not allocate.
  std::vector<const char*> argv = {options.binary.c_str(), "--listen=127.0.0.1:0", threads.c_str()};
  for (const std::string& arg : options.extra_args) argv.push_back(arg.c_str());
  argv.push_back(nullptr);
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    return {};
  }
  if (pid == 0) {
    // Child: only async-signal-safe calls until exec.
    setpgid(0, 0);
    prctl(PR_SET_PDEATHSIG, SIGTERM);
    if (getppid() != parent) _exit(1);  // the front died before prctl
    dup2(pipe_fds[1], STDOUT_FILENO);
    sigset_t none;
    sigemptyset(&none);
    sigprocmask(SIG_SETMASK, &none, nullptr);
    execv(options.binary.c_str(), const_cast<char* const*>(argv.data()));
    _exit(127);
  }
  close(pipe_fds[1]);
  std::string line = ReadLine(pipe_fds[0], options.start_timeout);
  close(pipe_fds[0]);
  absl::string_view address = line;
  if (!absl::ConsumePrefix(&address, "listening on ")) {
    kill(pid, SIGKILL);
    waitpid(pid, nullptr, 0);
    rpc::Log(rpc::LogLevel::kError, "",
             absl::StrCat("worker ", options.binary, " did not start (said \"", line, "\")"));
    return {};
  }
  return Child{pid, std::string(address)};
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
  Child child = SpawnWorker(options_);
  slot.pid = child.pid;
  slot.address = child.address;
  if (child.pid > 0) {
    rpc::Log(rpc::LogLevel::kInfo, "",
             absl::StrCat("worker pid ", child.pid, " serving on ", child.address));
  }
}

void WorkerSupervisor::Monitor() {
  absl::MutexLock lock(&mu_);
  while (!mu_.AwaitWithTimeout(absl::Condition(&stopping_), options_.poll_interval)) {
    for (Slot& slot : slots_) {
      if (slot.pid > 0) {
        int status = 0;
        if (waitpid(slot.pid, &status, WNOHANG) != slot.pid) continue;
        rpc::Log(rpc::LogLevel::kWarning, "",
                 absl::StrCat("worker pid ", slot.pid, " on ", slot.address, " exited (",
                              WIFSIGNALED(status) ? "signal " : "status ",
                              WIFSIGNALED(status) ? WTERMSIG(status) : WEXITSTATUS(status),
                              "); restarting"));
        slot.pid = -1;
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
    workers.push_back({slot.address, slot.pid > 0, slot.restarts});
  }
  return workers;
}

std::vector<pid_t> WorkerSupervisor::Pids() const {
  absl::MutexLock lock(&mu_);
  std::vector<pid_t> pids;
  for (const Slot& slot : slots_) {
    if (slot.pid > 0) pids.push_back(slot.pid);
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
  for (Slot& slot : slots_) {
    if (slot.pid > 0) kill(slot.pid, SIGTERM);
  }
  const absl::Time deadline = absl::Now() + absl::Seconds(2);
  for (Slot& slot : slots_) {
    if (slot.pid <= 0) continue;
    while (waitpid(slot.pid, nullptr, WNOHANG) == 0) {
      if (absl::Now() > deadline) {
        kill(slot.pid, SIGKILL);
        waitpid(slot.pid, nullptr, 0);
        break;
      }
      absl::SleepFor(absl::Milliseconds(10));  // polling a child's exit, not synchronising
    }
    slot.pid = -1;
  }
}

}  // namespace ordo::server
