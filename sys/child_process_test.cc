#include "sys/child_process.h"

#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
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

TEST(ChildProcessTest, ResidentBytesOfThisProcess) {
  EXPECT_GT(ResidentBytes(getpid()), 0);
  EXPECT_EQ(ResidentBytes(-1), -1);
}

TEST(ChildProcessTest, FreePortIsClosedUntilBound) {
  const int port = FreeLoopbackPort();
  ASSERT_GT(port, 0);
  EXPECT_FALSE(LoopbackPortOpen(port));
}

}  // namespace
}  // namespace ordo
