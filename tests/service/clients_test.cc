// The service from its clients' side, real processes throughout: the `ordo`
// CLI in remote mode against local mode, streaming progress, parts shared
// across models hitting the cache, and deadlines on a hard model.

#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <future>
#include <latch>
#include <memory>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "core/testing/test_paths.h"
#include "tests/cli/compile_json.h"
#include "tests/cli/run_ordo.h"
#include "tests/service/service_harness.h"

namespace ordo {
namespace {

using namespace ::ordo::testing_service;  // NOLINT: the harness is the test's vocabulary

using ::ordo::testing::ProcessResult;

// `ordo ARGS...` with stdout captured; stderr goes to the test log.
ProcessResult RunOrdo(const std::string& args) {
  return ::ordo::testing::RunOrdo(args, /*with_stderr=*/false);
}

v1::CompileResponse RunCompileJson(const std::string& args) {
  ProcessResult result = RunOrdo(args + " --json");
  EXPECT_EQ(result.exit_code, 0) << args;
  return ::ordo::ParseCompileJson(result.out);
}

TEST(ClientsTest, CliRemoteModeAnswersLikeLocalMode) {
  // Every part to the workers (small_resnet's parts would be proved in the
  // server otherwise): the remote path is what this test compares.
  Server server({"--local-workers=2", "--in-server-part-budget=0"});
  ASSERT_TRUE(server.started());
  const std::string model = ordo::testing::ExampleModelsDir() + "/small_resnet.onnx";
  const std::string remote = " --server " + server.address();

  // Local and remote mode print the same message, CompileResponse.
  const v1::CompileResponse local = RunCompileJson("compile " + model + " --on-chip 4KiB");
  const v1::CompileResponse first =
      RunCompileJson("compile " + model + " --on-chip 4KiB" + remote);
  EXPECT_EQ(first.ops(), local.ops());
  EXPECT_EQ(first.peak_bytes(), local.peak_bytes());
  EXPECT_EQ(first.lower_bound_bytes(), local.lower_bound_bytes());
  EXPECT_EQ(first.status(), local.status());
  EXPECT_EQ(first.gap(), local.gap());
  EXPECT_EQ(first.model_path(), model);
  ASSERT_EQ(first.baselines_size(), local.baselines_size());
  for (int i = 0; i < first.baselines_size(); ++i) {
    EXPECT_EQ(first.baselines(i).DebugString(), local.baselines(i).DebugString());
  }
  EXPECT_EQ(first.schedule_size(), local.schedule_size());
  EXPECT_EQ(first.arena().arena_bytes(), local.arena().arena_bytes());
  EXPECT_EQ(first.traffic().total_bytes(), local.traffic().total_bytes());
  EXPECT_EQ(first.device().on_chip_bytes(), local.device().on_chip_bytes());
  EXPECT_EQ(local.stats().workers_used(), 0);
  EXPECT_GT(first.stats().workers_used(), 0);
  EXPECT_EQ(first.stats().cache_hits(), 0);

  const v1::CompileResponse second = RunCompileJson("compile " + model + remote);
  EXPECT_EQ(second.stats().cache_hits(), second.stats().parts());
  EXPECT_EQ(second.peak_bytes(), first.peak_bytes());

  const v1::EstimateResponse estimate =
      ParseEstimateJson(RunOrdo("estimate " + model + " --memory-limit 1GiB --json" + remote).out);
  EXPECT_EQ(estimate.cached_peak_bytes(), first.peak_bytes());
  EXPECT_EQ(estimate.fit().verdict(), v1::EstimateFit::VERDICT_FITS);
  EXPECT_EQ(estimate.fit().memory_limit_bytes(), int64_t{1} << 30);
  EXPECT_EQ(estimate.model_path(), model);
  const v1::EstimateResponse local_estimate =
      ParseEstimateJson(RunOrdo("estimate " + model + " --json").out);
  EXPECT_EQ(local_estimate.model_order_peak_bytes(), estimate.model_order_peak_bytes());
  EXPECT_FALSE(local_estimate.has_cached_peak_bytes());
  EXPECT_EQ(local_estimate.fit().verdict(), v1::EstimateFit::VERDICT_UNSPECIFIED);

  // Reordered ONNX from a remote compile reloads with the same peak.
  const std::string emitted = ::testing::TempDir() + "/remote_emit.onnx";
  ASSERT_EQ(RunOrdo("compile " + model + remote + " --emit-onnx " + emitted).exit_code, 0);
  const v1::CompileResponse reloaded = RunCompileJson("compile " + emitted + " --scheduler model");
  EXPECT_EQ(reloaded.peak_bytes(), first.peak_bytes());

  EXPECT_EQ(RunOrdo("health" + remote).exit_code, 0);
  EXPECT_EQ(RunOrdo("health" + remote + " --service ordo.v1.Compiler").exit_code, 0);
  EXPECT_EQ(RunOrdo("health" + remote + " --service no.such.Service").exit_code, 1);
  EXPECT_EQ(RunOrdo("health").exit_code, 2);

  // The server's INVALID_ARGUMENT is the CLI's exit code 2, as locally.
  const std::string graph_json = ::testing::TempDir() + "/cyclic.json";
  {
    std::ofstream out(graph_json);
    out << R"({"tensors":[{"name":"a","sizeBytes":"4"},{"name":"b","sizeBytes":"4"}],
              "ops":[{"name":"p","type":"Relu","inputs":["b"],"outputs":["a"]},
                     {"name":"q","type":"Relu","inputs":["a"],"outputs":["b"]}]})";
  }
  EXPECT_EQ(RunOrdo("compile " + graph_json + remote).exit_code, 2);

  server.Stop(SIGTERM);
  EXPECT_EQ(RunOrdo("health" + remote + " --timeout 1s").exit_code, 1);
  EXPECT_EQ(RunOrdo("compile " + model + remote + " --time-limit 1s").exit_code, 1);
}

TEST(ClientsTest, CompileStreamSendsProgressThenTheResult) {
  Server server({"--local-workers=1"});
  ASSERT_TRUE(server.started());
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(30)));
  auto reader = server.compiler().CompileStream(
      &context,
      OnnxRequest(ordo::testing::ExampleModelsDir() + "/small_resnet.onnx", absl::Seconds(2)));
  std::vector<v1::CompileStage> stages;
  int results = 0;
  v1::CompileEvent event;
  while (reader->Read(&event)) {
    if (event.has_progress()) {
      EXPECT_EQ(results, 0) << "progress after the result";
      stages.push_back(event.progress().stage());
    } else if (event.has_result()) {
      ++results;
      ExpectValidSchedule(event.result());
    }
  }
  ASSERT_TRUE(reader->Finish().ok());
  EXPECT_EQ(results, 1);
  ASSERT_FALSE(stages.empty());
  EXPECT_EQ(stages.front(), v1::COMPILE_STAGE_IMPORTED);
  EXPECT_EQ(stages.back(), v1::COMPILE_STAGE_FINISHED);
  EXPECT_TRUE(std::is_sorted(stages.begin(), stages.end()));
}

// A chain of cells joined by single tensors (hourglass cuts; cells of more
// than 16 ops, so the partitioner does not merge neighbours and every cell
// is a part of its own). Cell `kind` k: a fork into k+2 branches of two ops, then a
// join. `scale` multiplies every size; `prefix` renames everything.
v1::Graph CellChain(const std::vector<int>& kinds, int64_t scale, const std::string& prefix) {
  v1::Graph graph;
  graph.set_name(prefix + "net");
  auto tensor = [&](const std::string& name, int64_t bytes) {
    v1::Tensor* t = graph.add_tensors();
    t->set_name(prefix + name);
    t->set_size_bytes(bytes * scale);
  };
  auto op = [&](const std::string& name, const std::vector<std::string>& in,
                const std::string& out) {
    v1::Op* o = graph.add_ops();
    o->set_name(prefix + name);
    o->set_type("Conv");
    for (const std::string& i : in) o->add_inputs(prefix + i);
    o->add_outputs(prefix + out);
  };
  tensor("x", 64);
  graph.add_inputs(prefix + "x");
  std::string in = "x";
  for (size_t c = 0; c < kinds.size(); ++c) {
    const std::string cell = absl::StrCat("c", c, "_");
    tensor(cell + "fork", 64);
    op(cell + "fork", {in}, cell + "fork");
    std::vector<std::string> ends;
    for (int b = 0; b < kinds[c] + 2; ++b) {
      const std::string branch = absl::StrCat(cell, "b", b);
      tensor(branch + "a", 16 + 8 * ((b * 5 + kinds[c]) % 7));
      tensor(branch + "b", 8 + 4 * ((b * 3 + kinds[c]) % 5));
      op(branch + "a", {cell + "fork"}, branch + "a");
      op(branch + "b", {branch + "a"}, branch + "b");
      ends.push_back(branch + "b");
    }
    tensor(cell + "join", 64);
    op(cell + "join", ends, cell + "join");
    in = cell + "join";
  }
  graph.add_outputs(prefix + in);
  return graph;
}

TEST(ClientsTest, ModelsSharingCellsHitTheCacheForThem) {
  Server server({"--local-workers=1"});
  ASSERT_TRUE(server.started());
  v1::CompileRequest first;
  *first.mutable_graph() = CellChain({7, 8, 9}, 1, "m1_");
  v1::CompileResponse a;
  ASSERT_TRUE(server.Compile(first, a).ok());
  EXPECT_EQ(a.stats().cache_hits(), 0);
  ASSERT_GE(a.stats().parts(), 3);

  // Other names, every size doubled, cells 2 and 3 of the first model and
  // a new cell: the two shared cells are served from the cache.
  v1::CompileRequest second;
  *second.mutable_graph() = CellChain({8, 9, 10}, 2, "m2_");
  v1::CompileResponse b;
  ASSERT_TRUE(server.Compile(second, b).ok());
  ExpectValidSchedule(b);
  EXPECT_GE(b.stats().cache_hits(), 2);
  EXPECT_GE(b.stats().cache_misses(), 1);
}

// --cache-mb=0 without Redis: no cache of any kind, so the same cells are
// scheduled again, to the same answer.
TEST(ClientsTest, CacheMbZeroMeansNoCacheAtAll) {
  Server server({"--local-workers=1", "--cache-mb=0"});
  ASSERT_TRUE(server.started());
  EXPECT_EQ(server.Info().cache(), "none");
  v1::CompileRequest request;
  *request.mutable_graph() = CellChain({7, 8, 9}, 1, "m1_");
  v1::CompileResponse a, b;
  ASSERT_TRUE(server.Compile(request, a).ok());
  ASSERT_TRUE(server.Compile(request, b).ok());
  ExpectValidSchedule(b);
  EXPECT_EQ(b.stats().cache_hits(), 0);
  EXPECT_EQ(b.peak_bytes(), a.peak_bytes());
}

TEST(ClientsTest, ATinyDeadlineOnAHardModelStillAnswersInTime) {
  Server server({"--local-workers=1"});
  ASSERT_TRUE(server.started());
  v1::CompileRequest request;
  *request.mutable_graph() = WideGraph(40);  // one part, far too wide to prove
  request.mutable_options()->mutable_time_limit()->set_seconds(60);
  const absl::Time start = absl::Now();
  v1::CompileResponse response;
  const grpc::Status status = server.Compile(request, response, absl::Milliseconds(500));
  const absl::Duration took = absl::Now() - start;
  EXPECT_LT(took, absl::Seconds(3));
  if (status.ok()) {
    ExpectValidSchedule(response);
    EXPECT_NE(response.status(), v1::SCHEDULE_STATUS_OPTIMAL);
  } else {
    EXPECT_EQ(status.error_code(), grpc::StatusCode::DEADLINE_EXCEEDED) << status.error_message();
  }
  // And the server is still there.
  v1::CompileResponse small;
  ASSERT_TRUE(server
                  .Compile(OnnxRequest(ordo::testing::ExampleModelsDir() + "/tiny_cell.onnx",
                                       absl::Seconds(1)),
                           small)
                  .ok());
}

// A redis-server child on a free loopback port (none when not installed).
class Redis {
 public:
  explicit Redis(int port) : port_(port) { Start(); }
  bool Start() {
    process_ = std::make_unique<Process>(std::vector<std::string>{
        "/usr/bin/redis-server", "--port", std::to_string(port_), "--save", "", "--appendonly",
        "no", "--bind", "127.0.0.1", "--loglevel", "warning"});
    return PollUntil([&] { return LoopbackPortOpen(port_); }, absl::Seconds(10));
  }
  void Kill() { process_->Stop(SIGKILL); }
  std::string Url() const { return absl::StrCat("redis://127.0.0.1:", port_); }

 private:
  int port_;
  std::unique_ptr<Process> process_;
};

// The multi-machine set-up on loopback: a front with --workers and --redis.
TEST(ClientsTest, RemoteWorkersAndRedisSurviveAKilledWorkerAndARedisRestart) {
  if (system("command -v redis-server >/dev/null 2>&1") != 0) {
    GTEST_SKIP() << "redis-server not installed";
  }
  Redis redis(FreeLoopbackPort());
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
  // Every part to the workers: this test is about surviving their failures.
  Server front({absl::StrCat("--workers=", addresses[0], ",", addresses[1]),
                "--redis=" + redis.Url(), "--in-server-part-budget=0"});
  ASSERT_TRUE(front.started());
  auto healthy_workers = [&] {
    int healthy = 0;
    const v1::GetInfoResponse info = front.Info();
    for (const auto& worker : info.workers()) healthy += worker.healthy();
    return healthy;
  };
  ASSERT_TRUE(PollUntil([&] { return healthy_workers() == 2; }, absl::Seconds(10)));

  const v1::CompileRequest model =
      OnnxRequest(ordo::testing::ExampleModelsDir() + "/small_resnet.onnx", absl::Seconds(2));
  v1::CompileResponse first, second;
  ASSERT_TRUE(front.Compile(model, first).ok());
  EXPECT_GE(first.stats().workers_used(), 1);
  EXPECT_EQ(first.stats().fallback_parts(), 0);
  ASSERT_TRUE(front.Compile(model, second).ok());
  EXPECT_EQ(second.stats().cache_hits(), second.stats().parts());
  EXPECT_GT(MetricValue(front.Metrics(), "ordo_cache_lookups_total", "result=\"hit\""), 0);

  // A worker killed mid-request: the request succeeds (retry or fallback)
  // and that worker is marked unhealthy.
  v1::CompileRequest hard;
  *hard.mutable_graph() = WideGraph(14);
  hard.mutable_options()->set_scheduler("dp");
  hard.mutable_options()->mutable_time_limit()->set_seconds(2);
  auto pending = std::async(std::launch::async, [&] {
    v1::CompileResponse response;
    grpc::Status status = front.Compile(hard, response);
    return std::make_pair(status, response);
  });
  ASSERT_TRUE(PollUntil(
      [&] { return MetricValue(front.Metrics(), "ordo_inflight_requests", "") >= 1; },
      absl::Seconds(5)));
  workers[0]->Stop(SIGKILL);
  auto [status, response] = pending.get();
  ASSERT_TRUE(status.ok()) << status.error_message();
  ExpectValidSchedule(response);
  EXPECT_TRUE(PollUntil([&] { return healthy_workers() == 1; }, absl::Seconds(5)));

  // Redis down: requests still succeed, the error is counted; Redis back:
  // caching resumes.
  redis.Kill();
  // Requests the front's response cache has not seen (same parts: the
  // alignment does not change schedules), so the part cache is asked.
  v1::CompileRequest other = model;
  other.mutable_device()->set_alignment_bytes(128);
  v1::CompileResponse without;
  ASSERT_TRUE(front.Compile(other, without).ok());
  EXPECT_EQ(without.peak_bytes(), first.peak_bytes());
  EXPECT_GT(without.stats().cache_errors(), 0);
  ASSERT_TRUE(redis.Start());
  EXPECT_TRUE(PollUntil(
      [&] {
        v1::CompileRequest fresh = other;
        fresh.mutable_device()->set_alignment_bytes(fresh.device().alignment_bytes() * 2);
        other = fresh;
        v1::CompileResponse again;
        return front.Compile(fresh, again).ok() && again.stats().cache_errors() == 0;
      },
      absl::Seconds(10)));
  v1::CompileRequest last = other;
  last.mutable_device()->set_alignment_bytes(other.device().alignment_bytes() * 2);
  v1::CompileResponse cached;
  ASSERT_TRUE(front.Compile(last, cached).ok());
  EXPECT_EQ(cached.stats().cache_hits(), cached.stats().parts());
}

// A frozen worker (SIGSTOP) is not a dead one: the request still completes
// in time, the worker is marked unhealthy, and after SIGCONT it is probed
// healthy and used again.
TEST(ClientsTest, AFrozenWorkerIsSkippedAndUsedAgainAfterItRecovers) {
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
  Server front({absl::StrCat("--workers=", addresses[0], ",", addresses[1])});
  ASSERT_TRUE(front.started());
  auto healthy = [&](const std::string& address) {
    const v1::GetInfoResponse info = front.Info();
    for (const auto& worker : info.workers()) {
      if (worker.address() == address) return worker.healthy();
    }
    return false;
  };
  ASSERT_TRUE(PollUntil([&] { return healthy(addresses[0]) && healthy(addresses[1]); },
                        absl::Seconds(10)));

  kill(workers[0]->pid(), SIGSTOP);
  EXPECT_TRUE(PollUntil([&] { return !healthy(addresses[0]); }, absl::Seconds(5)));
  v1::CompileRequest request;
  *request.mutable_graph() = WideGraph(12);
  request.mutable_options()->set_scheduler("dp");
  request.mutable_options()->mutable_time_limit()->set_seconds(1);
  for (int i = 0; i < 4; ++i) {  // round robin would reach the frozen one
    const absl::Time start = absl::Now();
    v1::CompileResponse response;
    const grpc::Status status = front.Compile(request, response, absl::Seconds(10));
    ASSERT_TRUE(status.ok()) << status.error_message();
    ExpectValidSchedule(response);
    EXPECT_LT(absl::Now() - start, absl::Seconds(10));
    request.mutable_graph()->mutable_tensors(0)->set_size_bytes(16 + i + 1);  // a new request
  }

  kill(workers[0]->pid(), SIGCONT);
  EXPECT_TRUE(PollUntil([&] { return healthy(addresses[0]); }, absl::Seconds(10)));
  EXPECT_TRUE(PollUntil(
      [&] {
        v1::CompileResponse response;
        request.mutable_graph()->mutable_tensors(0)->set_size_bytes(
            request.graph().tensors(0).size_bytes() + 1);
        return front.Compile(request, response).ok() && response.stats().fallback_parts() == 0;
      },
      absl::Seconds(10)));
}

// Resident memory of a process, in KiB (VmRSS of /proc/PID/status).
int64_t ResidentKib(pid_t pid) {
  std::ifstream in(absl::StrCat("/proc/", pid, "/status"));
  std::string line;
  while (std::getline(in, line)) {
    int64_t kib = 0;
    if (absl::StartsWith(line, "VmRSS:") &&
        absl::SimpleAtoi(absl::StripAsciiWhitespace(
                             absl::StripSuffix(absl::string_view(line).substr(6), "kB")),
                         &kib)) {
      return kib;
    }
  }
  return 0;
}

// Far more calls than --max-concurrent: the excess is refused at once with
// RESOURCE_EXHAUSTED instead of piling up, the admitted ones finish, and
// the server's memory stays bounded.
TEST(ClientsTest, OverloadIsRefusedFastAndAdmittedCallsFinish) {
  // No caches: a part solved by an earlier call would make later calls
  // instant and let them in.
  Server server({"--local-workers=0", "--max-concurrent=2", "--cache-mb=0"});
  ASSERT_TRUE(server.started());
  v1::CompileRequest slow;
  *slow.mutable_graph() = WideGraph(40);  // runs its whole time limit
  slow.mutable_options()->set_scheduler("dp");
  // Long enough that every call below reaches the server while the first
  // two still hold their slots, even on a loaded machine.
  slow.mutable_options()->mutable_time_limit()->set_seconds(3);
  // Each admitted search holds tens of MiB of states (glibc keeps some after
  // it); 40 admitted at once would hold gigabytes. Bounded means: what two
  // searches can hold, whatever the number of calls.
  const int64_t rss_before = ResidentKib(server.pid());
  int64_t rss_after_first = 0;
  for (int round = 0; round < 3; ++round) {
    std::vector<std::future<std::pair<grpc::Status, absl::Duration>>> calls;
    std::latch all_started(40);  // released together, not as threads happen to start
    for (int i = 0; i < 40; ++i) {
      calls.push_back(std::async(std::launch::async, [&, i] {
        all_started.arrive_and_wait();
        v1::CompileRequest request = slow;
        request.mutable_graph()->mutable_tensors(0)->set_size_bytes(16 + 100 * round + i);
        v1::CompileResponse response;
        const absl::Time start = absl::Now();
        grpc::Status status = server.Compile(request, response, absl::Seconds(20));
        return std::make_pair(status, absl::Now() - start);
      }));
    }
    int ok = 0, refused = 0;
    for (auto& call : calls) {
      auto [status, took] = call.get();
      if (status.ok()) {
        ++ok;
      } else {
        EXPECT_EQ(status.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED)
            << status.error_message();
        EXPECT_LT(took, absl::Seconds(2)) << "a refusal must not wait for a slot (3 s)";
        ++refused;
      }
    }
    EXPECT_GE(ok, 1);
    EXPECT_GE(refused, 30);
    if (round == 0) rss_after_first = ResidentKib(server.pid());
  }
  const int64_t rss_after = ResidentKib(server.pid());
  std::printf("server RSS %lld KiB before, %lld after the first 40 calls, %lld after 120\n",
              static_cast<long long>(rss_before), static_cast<long long>(rss_after_first),
              static_cast<long long>(rss_after));
  EXPECT_LT(rss_after, 512 * 1024);
  v1::CompileResponse after;
  EXPECT_TRUE(server
                  .Compile(OnnxRequest(ordo::testing::ExampleModelsDir() + "/tiny_cell.onnx",
                                       absl::Seconds(1)),
                           after)
                  .ok());
}

}  // namespace
}  // namespace ordo
