#ifndef ORDO_SYS_CHILD_PROCESS_H_
#define ORDO_SYS_CHILD_PROCESS_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace ordo {

// A child process of a benchmark or an integration test (ordo-server,
// ordo-worker, redis-server): started with execv, its stdout on a pipe the
// parent reads line by line, its stderr inherited or appended to a file. The destructor sends SIGTERM and reaps
// it (a child that was already stopped or reaped is left alone). Not
// thread-safe; Linux only.
class ChildProcess {
 public:
  struct Options {
    // Where the child's stderr goes; empty = the parent's stderr.
    std::string stderr_path;
    // Send stdout to /dev/null instead of the pipe (for chatty children
    // nobody reads: a full pipe would block them).
    bool discard_stdout = false;
  };

  // Forks and execs argv (argv[0] is a path). INTERNAL when fork or pipe
  // fails; an exec failure shows as the child exiting with status 127.
  static absl::StatusOr<std::unique_ptr<ChildProcess>> Start(std::vector<std::string> argv,
                                                             const Options& options);
  static absl::StatusOr<std::unique_ptr<ChildProcess>> Start(std::vector<std::string> argv) {
    return Start(std::move(argv), Options{});
  }
  ~ChildProcess();
  ChildProcess(const ChildProcess&) = delete;
  ChildProcess& operator=(const ChildProcess&) = delete;

  // The next stdout line (without its newline); nullopt when none is
  // complete within `timeout` or stdout ended (a partial line stays
  // buffered for the next call).
  std::optional<std::string> ReadLine(absl::Duration timeout);

  // Reads stdout lines until one starts with `prefix`; returns the rest of
  // that line. UNAVAILABLE naming the last line read when none does within
  // `timeout` or stdout ends.
  absl::StatusOr<std::string> WaitForLine(absl::string_view prefix, absl::Duration timeout);

  // Starts argv and waits for its `listening on HOST:PORT` line (ordo-server
  // and ordo-worker print it once they serve); returns HOST:PORT via
  // address().
  static absl::StatusOr<std::unique_ptr<ChildProcess>> StartListening(
      std::vector<std::string> argv, const Options& options,
      absl::Duration timeout = absl::Seconds(30));
  const std::string& address() const { return address_; }

  pid_t pid() const { return pid_; }
  // The wait status when the child has exited (reaping it), else nullopt.
  std::optional<int> Poll();
  // Sends `signal`, waits up to `timeout` for the exit, then SIGKILLs;
  // returns the wait status. Idempotent: later calls return the first status.
  int Stop(int signal, absl::Duration timeout = absl::Seconds(20));

 private:
  ChildProcess(pid_t pid, int out) : pid_(pid), out_(out) {}

  pid_t pid_;
  int out_;
  std::string partial_line_;  // read from stdout, no newline yet
  bool stdout_ended_ = false;
  std::optional<int> exit_status_;
  std::string address_;
};

// "exited 0", "killed by signal 9", ...: a wait status for people.
std::string DescribeWaitStatus(int status);

// Resident set size of a process from /proc/PID/status, in bytes; -1 when
// it cannot be read.
int64_t ResidentBytes(pid_t pid);

// Running (not zombie) processes whose parent is `parent`, from /proc.
// O(processes on the machine).
std::vector<pid_t> ChildPids(pid_t parent);

// A TCP port on 127.0.0.1 that was free a moment ago (bound to port 0,
// read back, closed); -1 on failure. For children that cannot report the
// port they picked (redis-server).
int FreeLoopbackPort();

// True when something accepts connections on 127.0.0.1:port.
bool LoopbackPortOpen(int port);

}  // namespace ordo

#endif  // ORDO_SYS_CHILD_PROCESS_H_
