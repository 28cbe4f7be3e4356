// A worker that goes silent mid-search (frozen with SIGSTOP: its kernel
// still holds the connection, but nothing answers, as when a host drops
// off the network without RST) must not degrade the answer: the front
// notices within its keepalive (GrpcPartRunner) and solves the part on the
// other worker within the request's budget, still optimal. Before
// keepalive, the part waited on the silent worker until its budget ran
// out and came back from the in-process fallback as a heuristic.
#include <signal.h>

#include "core/testing/test_paths.h"
#include "tests/service/service_harness.h"

namespace ordo::testing_service {
namespace {

// WideGraph(kBranches) takes a worker about 1.3 s of CPU to solve exactly
// (release build), so the freeze below, after 0.2 s of it, comes well before
// the end. With 15 branches the search came to take 0.3 s as the DP got
// faster, and a test process slowed by a loaded machine froze the worker
// after it had answered (no retry: the test failed 2 times in 9 at three
// copies side by side).
constexpr int kBranches = 17;

// CPU time (user + system) of a process, in clock ticks.
int64_t CpuTicks(pid_t pid) {
  std::string stat = ReadFile(absl::StrCat("/proc/", pid, "/stat"));
  const size_t end_of_name = stat.rfind(')');
  if (end_of_name == std::string::npos) return 0;
  std::vector<std::string> fields =
      absl::StrSplit(absl::string_view(stat).substr(end_of_name + 2), ' ');
  int64_t user = 0, system = 0;
  // Fields 14 and 15 of proc(5); the list starts at field 3.
  if (fields.size() < 13 || !absl::SimpleAtoi(fields[11], &user) ||
      !absl::SimpleAtoi(fields[12], &system)) {
    return 0;
  }
  return user + system;
}

TEST(SilentWorkerTest, APartWhoseWorkerFreezesMidSearchIsSolvedElsewhereStillOptimal) {
  std::vector<std::unique_ptr<Process>> workers;
  std::vector<std::string> addresses;
  for (int i = 0; i < 2; ++i) {
    workers.push_back(std::make_unique<Process>(std::vector<std::string>{
        ordo::testing::WorkerBinary(), "--listen=127.0.0.1:0", "--log-level=warning"}));
    std::string line = workers.back()->ReadLine(absl::Seconds(20));
    absl::string_view rest = line;
    ASSERT_TRUE(absl::ConsumePrefix(&rest, "listening on ")) << line;
    addresses.emplace_back(rest);
  }
  Server front({absl::StrCat("--workers=", addresses[0], ",", addresses[1]), "--cache-mb=0"});
  ASSERT_TRUE(front.started());
  ASSERT_TRUE(PollUntil(
      [&] {
        const v1::GetInfoResponse info = front.Info();
        int healthy = 0;
        for (const auto& worker : info.workers()) healthy += worker.healthy();
        return healthy == 2;
      },
      absl::Seconds(10)));

  // One part (no cut inside) whose exact search takes a worker a while.
  v1::CompileRequest request;
  *request.mutable_graph() = WideGraph(kBranches);
  request.mutable_options()->set_scheduler("dp");
  request.mutable_options()->mutable_time_limit()->set_seconds(30);
  v1::CompileResponse reference;
  ASSERT_TRUE(front.Compile(request, reference, absl::Seconds(40)).ok());
  ASSERT_EQ(reference.status(), v1::SCHEDULE_STATUS_OPTIMAL);

  std::vector<int64_t> ticks;
  for (auto& worker : workers) ticks.push_back(CpuTicks(worker->pid()));
  auto pending = std::async(std::launch::async, [&] {
    v1::CompileResponse response;
    const grpc::Status status = front.Compile(request, response, absl::Seconds(40));
    return std::make_pair(status, response);
  });
  // Freeze whichever worker is searching, once it has searched a little.
  int searching = -1;
  ASSERT_TRUE(PollUntil(
      [&] {
        for (int i = 0; i < 2; ++i) {
          if (CpuTicks(workers[i]->pid()) - ticks[i] >= 20) searching = i;
        }
        return searching >= 0;
      },
      absl::Seconds(20)));
  kill(workers[searching]->pid(), SIGSTOP);
  const absl::Time frozen = absl::Now();

  auto [status, response] = pending.get();
  const absl::Duration after_freeze = absl::Now() - frozen;
  kill(workers[searching]->pid(), SIGCONT);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ExpectValidSchedule(response);
  EXPECT_EQ(response.status(), v1::SCHEDULE_STATUS_OPTIMAL);
  EXPECT_EQ(response.peak_bytes(), reference.peak_bytes());
  EXPECT_EQ(response.stats().fallback_parts(), 0);
  EXPECT_GE(response.stats().task_retries(), 1);
  // Far inside the 30 s budget the silent worker would otherwise have used.
  EXPECT_LT(after_freeze, absl::Seconds(20)) << "reference took "
                                             << reference.stats().DebugString();
}

}  // namespace
}  // namespace ordo::testing_service
