#ifndef ORDO_SYS_CHILD_PROCESS_H_
#define ORDO_SYS_CHILD_PROCESS_H_

#include <sys/types.h>

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace ordo {

// A child process (ordo-server, ordo-worker, redis-server, rsvg-convert):
// started with execv, its stdout on a pipe the parent reads line by line (or
// discarded, or inherited), its stderr inherited or appended to a file, its
// signal mask cleared. The one process spawner of ordo: benches, service
// tests, the server's worker supervisor and the CLI use it. The destructor
// sends SIGTERM and reaps the child (one that was already stopped or reaped
// is left alone). Nothing is allocated between fork and exec, so it may be
// used from a multi-threaded parent. Not thread-safe; Linux only.
class ChildProcess {
 public:
  enum class StdoutMode {
    kPipe,     // read with ReadLine/WaitForLine
    kDiscard,  // /dev/null: for chatty children nobody reads (a full pipe would block them)
    kInherit,  // the parent's stdout
  };
  struct Options {
    // Where the child's stderr goes; empty = the parent's stderr.
    std::string stderr_path;
    StdoutMode stdout_mode = StdoutMode::kPipe;
    // Look argv[0] up in $PATH (like a shell) when it has no '/'. The
    // search runs in the parent before fork; a program found nowhere is
    // NOT_FOUND from Start.
    bool search_path = false;
    // Start the child in a process group of its own, so a terminal's
    // Ctrl-C (sent to the parent's group) does not reach it.
    bool own_process_group = false;
    // Give the child a stdin the parent writes with Write (a socket, so a
    // write to a child that died is an error, not SIGPIPE). Otherwise the
    // child inherits the parent's stdin.
    bool stdin_pipe = false;
    // When nonzero, the child gets this signal when the parent dies, even
    // by SIGKILL (prctl PR_SET_PDEATHSIG). Linux sends it when the parent
    // *thread* that called Start exits: start such children from a thread
    // that lives as long as they should.
    int parent_death_signal = 0;
  };

  // Forks and execs argv (argv[0] is a path, or a program name with
  // `search_path`). INTERNAL when fork or pipe fails, NOT_FOUND when
  // `search_path` finds no such program; an exec failure shows as the child
  // exiting with status 127.
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
  // address(). A child that does not say so in time is SIGKILLed and
  // reaped.
  static absl::StatusOr<std::unique_ptr<ChildProcess>> StartListening(
      std::vector<std::string> argv, const Options& options,
      absl::Duration timeout = absl::Seconds(30));
  const std::string& address() const { return address_; }

  // With Options::stdin_pipe: writes all of `bytes` to the child's stdin.
  // UNAVAILABLE when the child closed it (it exited).
  absl::Status Write(absl::string_view bytes);
  // Closes the child's stdin (with Options::stdin_pipe): it reads EOF.
  void CloseStdin();

  // The next `count` bytes of stdout (kPipe). UNAVAILABLE when stdout ends
  // first, DEADLINE_EXCEEDED when they do not come within `timeout`; the
  // bytes read until then stay buffered for the next read.
  absl::StatusOr<std::string> ReadBytes(size_t count, absl::Duration timeout);

  pid_t pid() const { return pid_; }
  // The wait status when the child has exited (reaping it), else nullopt.
  std::optional<int> Poll();
  // Waits for the child to exit (reaping it); returns the wait status.
  int Wait();
  // Sends `signal`, waits up to `timeout` for the exit, then SIGKILLs;
  // returns the wait status. Idempotent: later calls return the first status.
  int Stop(int signal, absl::Duration timeout = absl::Seconds(20));

 private:
  ChildProcess(pid_t pid, int out, int in) : pid_(pid), out_(out), in_(in) {}

  pid_t pid_;
  int out_;
  int in_;  // the parent's end of the child's stdin, or -1
  std::string partial_line_;  // read from stdout, no newline yet
  bool stdout_ended_ = false;
  std::optional<int> exit_status_;
  std::string address_;
};

// The executable `program` names: itself when it holds a '/', else the
// first executable regular file of that name in $PATH's directories (an
// empty entry is the current directory, as for a shell). NOT_FOUND naming
// the program and the PATH searched.
absl::StatusOr<std::string> FindProgramOnPath(absl::string_view program);

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
