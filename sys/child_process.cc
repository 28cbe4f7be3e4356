#include "sys/child_process.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "absl/time/clock.h"

namespace ordo {

namespace {

// The child's side of Start, between fork and exec: only async-signal-safe
// calls, nothing allocated (the parent may have threads holding locks).
[[noreturn]] void ExecChild(const char* path, char* const* argv, int pipe_write, int stdin_read,
                            const ChildProcess::Options& options, pid_t parent) {
  if (options.own_process_group) setpgid(0, 0);
  if (options.parent_death_signal != 0) {
    prctl(PR_SET_PDEATHSIG, options.parent_death_signal);
    if (getppid() != parent) _exit(1);  // the parent died before prctl
  }
  if (stdin_read >= 0) dup2(stdin_read, STDIN_FILENO);
  switch (options.stdout_mode) {
    case ChildProcess::StdoutMode::kPipe:
      dup2(pipe_write, STDOUT_FILENO);
      break;
    case ChildProcess::StdoutMode::kDiscard:
      dup2(open("/dev/null", O_WRONLY | O_CLOEXEC), STDOUT_FILENO);
      break;
    case ChildProcess::StdoutMode::kInherit:
      break;
  }
  if (!options.stderr_path.empty()) {
    const int err = open(options.stderr_path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (err >= 0) dup2(err, STDERR_FILENO);
  }
  // A parent that blocks signals (to take them on one thread) must not
  // pass the mask on: the child would ignore SIGTERM.
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  execv(path, argv);
  _exit(127);
}

}  // namespace

absl::StatusOr<std::unique_ptr<ChildProcess>> ChildProcess::Start(std::vector<std::string> argv,
                                                                  const Options& options) {
  if (argv.empty()) return absl::InvalidArgumentError("no program to start");
  std::string path = argv[0];
  if (options.search_path) {
    absl::StatusOr<std::string> found = FindProgramOnPath(argv[0]);
    if (!found.ok()) return found.status();
    path = *std::move(found);
  }
  // Everything the child needs is built before fork.
  std::vector<char*> args;
  args.reserve(argv.size() + 1);
  for (std::string& arg : argv) args.push_back(arg.data());
  args.push_back(nullptr);
  int fds[2];
  if (pipe2(fds, O_CLOEXEC) != 0) return absl::InternalError("pipe failed");
  int stdin_fds[2] = {-1, -1};  // [0]: the parent's end, [1]: the child's
  if (options.stdin_pipe &&
      socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, stdin_fds) != 0) {
    close(fds[0]);
    close(fds[1]);
    return absl::InternalError("socketpair failed");
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    for (int fd : {fds[0], fds[1], stdin_fds[0], stdin_fds[1]}) {
      if (fd >= 0) close(fd);
    }
    return absl::InternalError("fork failed");
  }
  if (pid == 0) ExecChild(path.c_str(), args.data(), fds[1], stdin_fds[1], options, parent);
  close(fds[1]);
  if (stdin_fds[1] >= 0) close(stdin_fds[1]);
  return std::unique_ptr<ChildProcess>(new ChildProcess(pid, fds[0], stdin_fds[0]));
}

absl::StatusOr<std::string> FindProgramOnPath(absl::string_view program) {
  if (program.find('/') != absl::string_view::npos) return std::string(program);
  const char* env = std::getenv("PATH");
  // glibc's execvp default when PATH is unset.
  const std::string path = env != nullptr ? env : "/bin:/usr/bin";
  for (absl::string_view dir : absl::StrSplit(path, ':')) {
    const std::string candidate = absl::StrCat(dir.empty() ? "." : dir, "/", program);
    struct stat info;
    if (stat(candidate.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
        access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
  }
  return absl::NotFoundError(
      absl::StrCat("program \"", program, "\" not found on PATH (", path, ")"));
}

absl::StatusOr<std::unique_ptr<ChildProcess>> ChildProcess::StartListening(
    std::vector<std::string> argv, const Options& options, absl::Duration timeout) {
  const std::string name = argv.empty() ? "" : argv[0];
  absl::StatusOr<std::unique_ptr<ChildProcess>> child = Start(std::move(argv), options);
  if (!child.ok()) return child.status();
  absl::StatusOr<std::string> address = (*child)->WaitForLine("listening on ", timeout);
  if (!address.ok()) {
    (*child)->Stop(SIGKILL);
    return absl::UnavailableError(
        absl::StrCat(name, " did not start: ", address.status().message()));
  }
  (*child)->address_ = *std::move(address);
  return child;
}

ChildProcess::~ChildProcess() {
  CloseStdin();
  Stop(SIGTERM);
  close(out_);
}

absl::Status ChildProcess::Write(absl::string_view bytes) {
  if (in_ < 0) return absl::FailedPreconditionError("the child has no stdin pipe");
  while (!bytes.empty()) {
    const ssize_t n = send(in_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return absl::UnavailableError("the child's stdin is closed");
    bytes.remove_prefix(static_cast<size_t>(n));
  }
  return absl::OkStatus();
}

void ChildProcess::CloseStdin() {
  if (in_ >= 0) close(in_);
  in_ = -1;
}

absl::StatusOr<std::string> ChildProcess::ReadBytes(size_t count, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  // Bytes a ReadLine buffered come first.
  std::string bytes = std::move(partial_line_);
  partial_line_.clear();
  if (bytes.size() > count) {
    partial_line_ = bytes.substr(count);
    bytes.resize(count);
  }
  size_t have = bytes.size();
  bytes.resize(count);
  // On failure what was read stays buffered for the next read.
  auto fail = [&](absl::Status status) {
    bytes.resize(have);
    partial_line_ = std::move(bytes) + partial_line_;
    return status;
  };
  while (have < count) {
    if (stdout_ended_) return fail(absl::UnavailableError("the child's stdout ended"));
    const absl::Duration left = deadline - absl::Now();
    if (left <= absl::ZeroDuration()) {
      return fail(absl::DeadlineExceededError("the child did not write in time"));
    }
    pollfd pfd{out_, POLLIN, 0};
    const int ready = poll(&pfd, 1, left >= absl::Milliseconds(100)
                                        ? 100
                                        : static_cast<int>(absl::ToInt64Milliseconds(left)) + 1);
    if (ready <= 0) continue;  // also EINTR: re-check the deadline
    const ssize_t n = read(out_, bytes.data() + have, count - have);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      stdout_ended_ = true;
      continue;
    }
    have += static_cast<size_t>(n);
  }
  return bytes;
}

std::optional<std::string> ChildProcess::ReadLine(absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (!stdout_ended_ && absl::Now() < deadline) {
    pollfd pfd{out_, POLLIN, 0};
    if (poll(&pfd, 1, 100) <= 0) continue;  // 100 ms: re-check the deadline
    char c;
    const ssize_t n = read(out_, &c, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n != 1) {
      stdout_ended_ = true;  // EOF: the child exited or closed stdout
      break;
    }
    if (c == '\n') return std::exchange(partial_line_, std::string());
    partial_line_.push_back(c);
  }
  return std::nullopt;
}

absl::StatusOr<std::string> ChildProcess::WaitForLine(absl::string_view prefix,
                                                      absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  std::string last;
  while (std::optional<std::string> line = ReadLine(deadline - absl::Now())) {
    absl::string_view rest = *line;
    if (absl::ConsumePrefix(&rest, prefix)) return std::string(rest);
    last = *std::move(line);
  }
  if (!partial_line_.empty()) last = partial_line_;
  return absl::UnavailableError(absl::StrCat("no \"", prefix, "\" line (last: \"", last, "\")"));
}

std::optional<int> ChildProcess::Poll() {
  if (exit_status_) return exit_status_;
  int status = 0;
  if (waitpid(pid_, &status, WNOHANG) == pid_) exit_status_ = status;
  return exit_status_;
}

int ChildProcess::Wait() {
  if (exit_status_) return *exit_status_;
  int status = 0;
  while (waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
  }
  exit_status_ = status;
  return status;
}

int ChildProcess::Stop(int signal, absl::Duration timeout) {
  if (Poll()) return *exit_status_;
  kill(pid_, signal);
  const absl::Time deadline = absl::Now() + timeout;
  while (!Poll() && absl::Now() < deadline) {
    absl::SleepFor(absl::Milliseconds(20));  // poll interval while it exits
  }
  if (!exit_status_) {
    kill(pid_, SIGKILL);
    int status = 0;
    waitpid(pid_, &status, 0);
    exit_status_ = status;
  }
  return *exit_status_;
}

std::string DescribeWaitStatus(int status) {
  if (WIFEXITED(status)) return absl::StrCat("exited ", WEXITSTATUS(status));
  if (WIFSIGNALED(status)) return absl::StrCat("killed by signal ", WTERMSIG(status));
  return absl::StrCat("wait status ", status);
}

int64_t ResidentBytes(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    absl::string_view rest = line;
    if (!absl::ConsumePrefix(&rest, "VmRSS:")) continue;
    rest = absl::StripAsciiWhitespace(rest);
    int64_t kib = 0;
    if (absl::ConsumeSuffix(&rest, " kB") && absl::SimpleAtoi(rest, &kib)) return kib * 1024;
  }
  return -1;
}

std::vector<pid_t> ChildPids(pid_t parent) {
  std::vector<pid_t> children;
  DIR* proc = opendir("/proc");
  if (proc == nullptr) return children;
  while (dirent* entry = readdir(proc)) {
    pid_t pid = 0;
    if (!absl::SimpleAtoi(entry->d_name, &pid)) continue;
    std::ifstream in(absl::StrCat("/proc/", pid, "/stat"));
    std::string stat;
    std::getline(in, stat);
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses,
    // so parse after the last ')'.
    const size_t close_paren = stat.rfind(')');
    if (close_paren == std::string::npos) continue;
    std::istringstream fields(stat.substr(close_paren + 1));
    char state = 0;
    pid_t ppid = 0;
    if (fields >> state >> ppid && ppid == parent && state != 'Z' && state != 'X') {
      children.push_back(pid);
    }
  }
  closedir(proc);
  return children;
}

int FreeLoopbackPort() {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return -1;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t len = sizeof(addr);
  int port = -1;
  if (bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0 &&
      getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
    port = ntohs(addr.sin_port);
  }
  close(fd);
  return port;
}

bool LoopbackPortOpen(int port) {
  const int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) return false;
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(static_cast<uint16_t>(port));
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  const bool open = connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) == 0;
  close(fd);
  return open;
}

}  // namespace ordo
