#include "sys/child_process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <fstream>
#include <string>
#include <vector>

#include "gtest/gtest.h"

namespace ordo {
namespace {

TEST(ChildProcessTest, StartListeningReadsTheAddressAfterOtherLines) {
  auto child = ChildProcess::StartListening(
      {"/bin/sh", "-c", "echo starting; echo 'listening on 127.0.0.1:4242'; exec sleep 30"}, {});
  ASSERT_TRUE(child.ok()) << child.status();
  EXPECT_EQ((*child)->address(), "127.0.0.1:4242");
  EXPECT_FALSE((*child)->Poll().has_value());
  const std::vector<pid_t> children = ChildPids(getpid());
  EXPECT_EQ(std::count(children.begin(), children.end(), (*child)->pid()), 1);
  const int status = (*child)->Stop(SIGKILL);
  EXPECT_EQ(DescribeWaitStatus(status), "killed by signal 9");
  EXPECT_EQ((*child)->Stop(SIGTERM), status);  // idempotent
}

TEST(ChildProcessTest, ChildThatNeverListensIsUnavailable) {
  auto child =
      ChildProcess::StartListening({"/bin/sh", "-c", "echo oops; exit 3"}, {}, absl::Seconds(10));
  ASSERT_FALSE(child.ok());
  EXPECT_EQ(child.status().code(), absl::StatusCode::kUnavailable);
  EXPECT_NE(child.status().message().find("oops"), std::string::npos);
}

TEST(ChildProcessTest, PollSeesTheExitStatus) {
  auto child = ChildProcess::Start({"/bin/sh", "-c", "exit 3"});
  ASSERT_TRUE(child.ok());
  std::optional<int> status;
  for (int i = 0; i < 500 && !status; ++i) {
    status = (*child)->Poll();
    usleep(10000);  // poll interval
  }
  ASSERT_TRUE(status.has_value());
  EXPECT_EQ(DescribeWaitStatus(*status), "exited 3");
}

// Binary frames both ways (the server's ONNX inference helpers): bytes in
// through stdin, the same bytes back; EOF after stdin closes; a write to a
// child that is gone is an error, not SIGPIPE.
TEST(ChildProcessTest, StdinPipeAndBinaryReads) {
  ChildProcess::Options options;
  options.stdin_pipe = true;
  auto child = ChildProcess::Start({"/bin/cat"}, options);
  ASSERT_TRUE(child.ok()) << child.status();
  const std::string bytes("frame\0with\nzeros", 16);
  ASSERT_TRUE((*child)->Write(bytes).ok());
  absl::StatusOr<std::string> echoed = (*child)->ReadBytes(bytes.size(), absl::Seconds(10));
  ASSERT_TRUE(echoed.ok()) << echoed.status();
  EXPECT_EQ(*echoed, bytes);
  EXPECT_EQ((*child)->ReadBytes(1, absl::Milliseconds(50)).status().code(),
            absl::StatusCode::kDeadlineExceeded);
  // Bytes read before a timeout are the next read's.
  ASSERT_TRUE((*child)->Write("abc").ok());
  EXPECT_EQ((*child)->ReadBytes(4, absl::Milliseconds(200)).status().code(),
            absl::StatusCode::kDeadlineExceeded);
  ASSERT_TRUE((*child)->Write("d").ok());
  EXPECT_EQ((*child)->ReadBytes(4, absl::Seconds(10)).value_or(""), "abcd");
  (*child)->CloseStdin();
  EXPECT_EQ((*child)->ReadBytes(1, absl::Seconds(10)).status().code(),
            absl::StatusCode::kUnavailable);
  EXPECT_EQ(DescribeWaitStatus((*child)->Wait()), "exited 0");

  auto gone = ChildProcess::Start({"/bin/sh", "-c", "exit 0"}, options);
  ASSERT_TRUE(gone.ok());
  (*gone)->Wait();
  absl::Status write = absl::OkStatus();
  for (int i = 0; i < 64 && write.ok(); ++i) write = (*gone)->Write(std::string(65536, 'x'));
  EXPECT_EQ(write.code(), absl::StatusCode::kUnavailable);
}

TEST(ChildProcessTest, ResidentBytesOfThisProcess) {
  EXPECT_GT(ResidentBytes(getpid()), 0);
  EXPECT_EQ(ResidentBytes(-1), -1);
}

TEST(ChildProcessTest, FreePortIsClosedUntilBound) {
  const int port = FreeLoopbackPort();
  ASSERT_GT(port, 0);
  EXPECT_FALSE(LoopbackPortOpen(port));
}

TEST(ChildProcessTest, ArgumentsWithSpacesArriveWhole) {
  auto child = ChildProcess::Start(
      {"/bin/sh", "-c", "printf '%s|%s\\n' \"$1\" \"$2\"", "sh", "two words", " padded "});
  ASSERT_TRUE(child.ok()) << child.status();
  EXPECT_EQ((*child)->ReadLine(absl::Seconds(10)), "two words| padded ");
  EXPECT_EQ(DescribeWaitStatus((*child)->Wait()), "exited 0");
}

TEST(ChildProcessTest, SearchPathFindsAProgramByName) {
  ChildProcess::Options options;
  options.search_path = true;
  auto child = ChildProcess::Start({"sh", "-c", "exit 7"}, options);
  ASSERT_TRUE(child.ok()) << child.status();
  EXPECT_EQ(DescribeWaitStatus((*child)->Wait()), "exited 7");

  absl::StatusOr<std::string> sh = FindProgramOnPath("sh");
  ASSERT_TRUE(sh.ok()) << sh.status();
  EXPECT_EQ(access(sh->c_str(), X_OK), 0);
  EXPECT_EQ(*FindProgramOnPath("/bin/sh"), "/bin/sh");  // a path is itself
}

TEST(ChildProcessTest, SearchPathNamesAMissingProgram) {
  ChildProcess::Options options;
  options.search_path = true;
  auto child = ChildProcess::Start({"ordo-no-such-program"}, options);
  ASSERT_FALSE(child.ok());
  EXPECT_EQ(child.status().code(), absl::StatusCode::kNotFound);
  EXPECT_NE(child.status().message().find("ordo-no-such-program"), std::string::npos);
  // Without the search the name is a relative path: exec fails in the child.
  auto unsearched = ChildProcess::Start({"ordo-no-such-program"});
  ASSERT_TRUE(unsearched.ok());
  EXPECT_EQ(DescribeWaitStatus((*unsearched)->Wait()), "exited 127");
}

TEST(ChildProcessTest, OwnProcessGroup) {
  // The child reports once it runs its own code, i.e. after the setpgid
  // that precedes exec.
  const std::vector<std::string> argv = {"/bin/sh", "-c", "echo ready; exec sleep 30"};
  ChildProcess::Options own;
  own.own_process_group = true;
  auto alone = ChildProcess::Start(argv, own);
  auto shared = ChildProcess::Start(argv);
  ASSERT_TRUE(alone.ok() && shared.ok());
  ASSERT_EQ((*alone)->ReadLine(absl::Seconds(10)), "ready");
  ASSERT_EQ((*shared)->ReadLine(absl::Seconds(10)), "ready");
  EXPECT_EQ(getpgid((*alone)->pid()), (*alone)->pid());
  EXPECT_EQ(getpgid((*shared)->pid()), getpgrp());
}

// "Z" (zombie), "S", ...; "gone" when /proc has no such process.
std::string ProcessState(pid_t pid) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string stat;
  if (!std::getline(in, stat)) return "gone";
  const size_t close_paren = stat.rfind(')');
  return close_paren + 2 < stat.size() ? stat.substr(close_paren + 2, 1) : "gone";
}

// Forks a parent that starts `/bin/sh -c 'exec sleep 30'` with
// `death_signal`, writes the child's pid to the test and exits at once.
// Returns the orphaned child's pid.
pid_t OrphanAChild(int death_signal) {
  int fds[2];
  if (pipe(fds) != 0) return -1;
  const pid_t parent = fork();
  if (parent == 0) {
    close(fds[0]);
    ChildProcess::Options options;
    options.parent_death_signal = death_signal;
    options.stdout_mode = ChildProcess::StdoutMode::kDiscard;
    auto child = ChildProcess::Start({"/bin/sh", "-c", "exec sleep 30"}, options);
    const pid_t pid = child.ok() ? (*child)->pid() : -1;
    (void)!write(fds[1], &pid, sizeof(pid));
    _exit(0);  // no destructor: the child is orphaned, not stopped
  }
  close(fds[1]);
  pid_t child = -1;
  if (read(fds[0], &child, sizeof(child)) != sizeof(child)) child = -1;
  close(fds[0]);
  waitpid(parent, nullptr, 0);
  return child;
}

TEST(ChildProcessTest, ParentDeathSignalKillsTheOrphan) {
  const pid_t child = OrphanAChild(SIGKILL);
  ASSERT_GT(child, 0);
  std::string state = ProcessState(child);
  for (int i = 0; i < 500 && state != "gone" && state != "Z"; ++i) {
    usleep(10000);  // poll interval: the orphan is not ours to wait for
    state = ProcessState(child);
  }
  EXPECT_TRUE(state == "gone" || state == "Z") << "state " << state;
}

TEST(ChildProcessTest, WithoutParentDeathSignalTheOrphanLives) {
  const pid_t child = OrphanAChild(0);
  ASSERT_GT(child, 0);
  usleep(200000);  // long enough for a death signal to have arrived
  const std::string state = ProcessState(child);
  EXPECT_TRUE(state != "gone" && state != "Z") << "state " << state;
  kill(child, SIGKILL);
}

TEST(ChildProcessTest, ChildStartsWithNoSignalsBlocked) {
  sigset_t term, old;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  sigprocmask(SIG_BLOCK, &term, &old);
  auto child = ChildProcess::Start({"/bin/sh", "-c", "echo ready; exec sleep 30"});
  sigprocmask(SIG_SETMASK, &old, nullptr);
  ASSERT_TRUE(child.ok());
  ASSERT_EQ((*child)->ReadLine(absl::Seconds(10)), "ready");
  EXPECT_EQ(DescribeWaitStatus((*child)->Stop(SIGTERM)), "killed by signal 15");
}

}  // namespace
}  // namespace ordo
