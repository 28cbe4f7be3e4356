// The service as a NAS loop uses it, with ordo-server as a real process:
// identical concurrent candidates compile once (single-flight); CompileMany
// streams candidates in and results out with their ids.

#include <sys/wait.h>

#include <cstdio>
#include <map>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "core/testing/test_paths.h"
#include "tests/service/service_harness.h"

namespace ordo {
namespace {

using namespace ::ordo::testing_service;  // NOLINT: the harness is the test's vocabulary

TEST(NasServiceTest, IdenticalConcurrentColdRequestsRunOneSearchAndGetOneAnswer) {
  // Two compile slots (and four queue threads) for 32 calls: without
  // single-flight most would be refused as "server busy".
  Server server({"--local-workers=1", "--max-concurrent=2"});
  ASSERT_TRUE(server.started());
  v1::CompileRequest request;
  // Proved optimal in about 0.8 s (Release): the window in which the calls
  // that hold a queue thread join the first; the calls queued behind them
  // find its stored answer.
  *request.mutable_graph() = WideGraph(13);
  request.mutable_options()->mutable_time_limit()->set_seconds(30);
  constexpr int kCalls = 32;
  std::vector<v1::CompileResponse> responses(kCalls);
  std::vector<grpc::Status> statuses(kCalls);
  std::vector<std::thread> threads;
  for (int i = 0; i < kCalls; ++i) {
    threads.emplace_back([&, i] { statuses[i] = server.Compile(request, responses[i]); });
  }
  for (std::thread& thread : threads) thread.join();
  int shared = 0;  // answers that waited for the one compile
  for (int i = 0; i < kCalls; ++i) {
    ASSERT_TRUE(statuses[i].ok()) << i << ": " << statuses[i].error_message();
    ExpectValidSchedule(responses[i]);
    EXPECT_THAT(responses[i].schedule(), ::testing::ElementsAreArray(responses[0].schedule()));
    EXPECT_EQ(responses[i].peak_bytes(), responses[0].peak_bytes());
    shared += responses[i].stats().single_flight_shared();
  }
  EXPECT_EQ(responses[0].status(), v1::SCHEDULE_STATUS_OPTIMAL);
  EXPECT_GE(shared, 1);
  const std::string metrics = server.Metrics();
  EXPECT_EQ(MetricValue(metrics, "ordo_compile_answers_total", "source=\"computed\""), 1)
      << metrics;
  EXPECT_EQ(MetricValue(metrics, "ordo_compile_answers_total", "source=\"single_flight\""), shared);
  EXPECT_EQ(MetricValue(metrics, "ordo_compile_answers_total", "source=\"response_cache\""),
            kCalls - 1 - shared);
  // The scheduler ran once: one compile's search states, not 32.
  EXPECT_EQ(MetricValue(metrics, "ordo_scheduler_states_expanded_count", ""), 1);
}

TEST(NasServiceTest, SmallPartsAreProvedInTheServerAndBigOnesGoToWorkers) {
  // Parts of at most 8 ops are tried in the server first (default budget).
  Server server({"--local-workers=1", "--cache-mb=0", "--in-server-part-max-ops=8"});
  ASSERT_TRUE(server.started());
  auto request = [](int branches) {
    v1::CompileRequest request;
    *request.mutable_graph() = WideGraph(branches);  // 2 * branches + 2 ops
    request.mutable_options()->set_scheduler("dp");  // every part is a task
    request.mutable_options()->mutable_time_limit()->set_seconds(10);
    return request;
  };
  auto worker_tasks = [&](absl::string_view result) {
    return MetricValue(server.Metrics(), "ordo_worker_tasks_total",
                       absl::StrCat("result=\"", result, "\""));
  };

  v1::CompileResponse small;
  ASSERT_TRUE(server.Compile(request(2), small).ok());
  ExpectValidSchedule(small);
  EXPECT_EQ(small.status(), v1::SCHEDULE_STATUS_OPTIMAL);
  EXPECT_EQ(small.ops(), 6);
  EXPECT_GE(worker_tasks("in_server"), 1);
  EXPECT_EQ(worker_tasks("in_server_unproved"), 0);
  EXPECT_EQ(worker_tasks("ok"), 0);  // no part reached the worker
  EXPECT_EQ(small.stats().workers_used(), 0);
  EXPECT_GE(small.stats().in_process_parts(), 1);

  const double in_server = worker_tasks("in_server");
  v1::CompileResponse big;
  ASSERT_TRUE(server.Compile(request(5), big).ok());
  ExpectValidSchedule(big);
  EXPECT_EQ(big.status(), v1::SCHEDULE_STATUS_OPTIMAL);
  EXPECT_EQ(big.ops(), 12);
  EXPECT_GE(worker_tasks("ok"), 1);  // the 11-op part went to the worker
  EXPECT_EQ(big.stats().fallback_parts(), 0);
  // Only parts of at most 8 ops were tried here (if the cut leaves any).
  EXPECT_LE(worker_tasks("in_server") - in_server, big.stats().parts() - 1);
}

// A chain of `ops` ops whose tensors grow by 256 bytes from 256 *
// `first_units` (steps the alignment keeps): the partitioner cuts it into
// short parts, and no two parts of this or another offset have the same
// canonical key (sizes in different ratios), so each part is a part-cache
// entry of its own.
v1::Graph DistinctChain(int ops, int64_t first_units) {
  v1::Graph graph;
  graph.set_name("chain");
  for (int i = 0; i <= ops; ++i) {
    v1::Tensor* t = graph.add_tensors();
    t->set_name(absl::StrCat("t", i));
    t->set_size_bytes(256 * (first_units + i));
  }
  graph.add_inputs("t0");
  for (int i = 0; i < ops; ++i) {
    v1::Op* op = graph.add_ops();
    op->set_name(absl::StrCat("op", i));
    op->set_type("Relu");
    op->add_inputs(absl::StrCat("t", i));
    op->add_outputs(absl::StrCat("t", i + 1));
  }
  graph.add_outputs(absl::StrCat("t", ops));
  return graph;
}

TEST(NasServiceTest, PartCacheEvictionsAreCountedUnderTheEvictedEntrysNamespace) {
  // The smallest cache the flag allows: 1 MiB of part cache, a few thousand
  // entries of a short part. No whole answer of these models fits the
  // whole-answer caches (a quarter of a quarter MiB), so only parts count.
  Server server({"--local-workers=0", "--cache-mb=1"});
  ASSERT_TRUE(server.started());
  int64_t next_chain = 1;
  auto compile = [&](const std::string& cache_namespace) {
    v1::CompileRequest request;
    *request.mutable_graph() = DistinctChain(16000, 100000 * next_chain++);
    request.mutable_options()->set_cache_namespace(cache_namespace);
    v1::CompileResponse response;
    const grpc::Status status = server.Compile(request, response);
    EXPECT_TRUE(status.ok()) << status.error_message();
    EXPECT_EQ(response.stats().cache_hits(), 0);
    return response.stats().parts();
  };
  auto part_evictions = [&](absl::string_view label) {
    return MetricValue(server.Metrics(), "ordo_namespace_cache_events_total",
                       absl::StrCat("event=\"part_eviction\",namespace=\"", label, "\""));
  };
  // Team A fills most of the cache: nothing is evicted yet.
  int parts = 0;
  for (int i = 0; i < 4; ++i) parts += compile("team-a");
  EXPECT_GT(parts, 4 * 400);
  EXPECT_EQ(part_evictions("team-a"), 0) << server.Metrics();
  // The shared namespace's parts push out the least recently used entries:
  // team A's, counted under team A's label, none under the shared one's.
  for (int i = 0; i < 20 && part_evictions("team-a") == 0; ++i) compile("");
  EXPECT_GT(part_evictions("team-a"), 0) << server.Metrics();
  EXPECT_EQ(part_evictions("(shared)"), 0);
}

// `ordo-server FLAGS` that must refuse to start: its exit code and stderr.
std::pair<int, std::string> StartRefused(const std::string& flags) {
  const std::string command =
      absl::StrCat("/usr/bin/timeout 30 ", ordo::testing::ServerBinary(),
                   " --listen=127.0.0.1:0 --metrics-port=0 ", flags, " 2>&1 >/dev/null");
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {-1, ""};
  std::string out;
  char buffer[4096];
  size_t n;
  while ((n = fread(buffer, 1, sizeof(buffer), pipe)) > 0) out.append(buffer, n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

TEST(NasServiceTest, BadInServerPartFlagsStopStartupNamingTheFlag) {
  for (const std::string budget : {"-1ms", "inf", "11m"}) {  // --max-deadline is 10m
    const auto [code, message] = StartRefused("--in-server-part-budget=" + budget);
    EXPECT_EQ(code, 2) << budget;
    EXPECT_THAT(message, ::testing::HasSubstr("--in-server-part-budget")) << budget;
    EXPECT_THAT(message, ::testing::HasSubstr("--max-deadline")) << budget;
  }
  const auto [code, message] = StartRefused("--in-server-part-max-ops=-1");
  EXPECT_EQ(code, 2);
  EXPECT_THAT(message, ::testing::HasSubstr("--in-server-part-max-ops"));
  EXPECT_THAT(message, ::testing::Not(::testing::HasSubstr("--in-server-part-budget")));
}

TEST(NasServiceTest, CompileManyAnswersEveryCandidateWithItsIdAndGoesOnAfterABadOne) {
  Server server({"--local-workers=1"});
  ASSERT_TRUE(server.started());
  std::map<std::string, v1::CompileRequest> candidates;
  for (int branches = 1; branches <= 8; ++branches) {
    v1::CompileRequest& request = candidates[absl::StrCat("wide", branches)];
    *request.mutable_graph() = WideGraph(branches);
  }
  candidates["again"] = candidates["wide3"];  // a survivor sent again
  v1::CompileRequest& bad = candidates["bad"];
  *bad.mutable_graph() = WideGraph(2);
  bad.mutable_graph()->mutable_ops(1)->add_inputs("ghost");

  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(60)));
  auto stream = server.compiler().CompileMany(&context);
  // Written all at once: the server keeps several in flight and reads on
  // as they finish.
  std::thread writer([&] {
    for (const auto& [id, request] : candidates) {
      v1::CompileManyRequest candidate;
      candidate.set_id(id);
      *candidate.mutable_request() = request;
      ASSERT_TRUE(stream->Write(candidate));
    }
    stream->WritesDone();
  });
  std::map<std::string, v1::CompileManyResponse> results;
  v1::CompileManyResponse result;
  while (stream->Read(&result)) {
    EXPECT_TRUE(results.emplace(result.id(), result).second) << "answered twice: " << result.id();
  }
  writer.join();
  const grpc::Status status = stream->Finish();
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_EQ(results.size(), candidates.size());

  const v1::CompileManyResponse& failed = results["bad"];
  ASSERT_TRUE(failed.has_error());
  EXPECT_EQ(failed.error().code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(failed.error().message(), ::testing::HasSubstr("ghost"));
  for (const auto& [id, request] : candidates) {
    if (id == "bad") continue;
    SCOPED_TRACE(id);
    ASSERT_TRUE(results[id].has_response());
    const v1::CompileResponse& many = results[id].response();
    ExpectValidSchedule(many);
    // The same answer as a Compile call.
    v1::CompileResponse single;
    ASSERT_TRUE(server.Compile(request, single).ok());
    EXPECT_EQ(many.peak_bytes(), single.peak_bytes());
    EXPECT_EQ(many.status(), single.status());
    EXPECT_EQ(many.ops(), request.graph().ops_size());
  }
}

TEST(NasServiceTest, AClientThatStopsReadingStopsTheReadingOfItsCandidates) {
  // Results of about 1 MiB each (the reordered model of a padded one): a
  // client that does not read soon fills the transport's flow-control
  // window, and the front must not go on compiling into memory.
  Server server({"--local-workers=1", "--max-concurrent=2"});
  ASSERT_TRUE(server.started());
  onnx::ModelProto model;
  ASSERT_TRUE(
      model.ParseFromString(ReadFile(ordo::testing::ExampleModelsDir() + "/tiny_cell.onnx")));
  model.set_doc_string(std::string(1 << 20, 'x'));
  v1::CompileRequest request;
  request.set_onnx_model(model.SerializeAsString());
  request.mutable_options()->set_return_reordered_onnx(true);
  constexpr int kCandidates = 40;

  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(120)));
  auto stream = server.compiler().CompileMany(&context);
  std::thread writer([&] {
    for (int i = 0; i < kCandidates; ++i) {
      v1::CompileManyRequest candidate;
      candidate.set_id(absl::StrCat(i));
      *candidate.mutable_request() = request;
      if (!stream->Write(candidate)) return;
    }
    stream->WritesDone();
  });
  const auto finished = [&] {
    return MetricValue(server.Metrics(), "ordo_requests_total", "method=\"CompileMany\"");
  };
  // Identical candidates are answered from the response cache in
  // milliseconds: unchecked, all 40 would be done long before this.
  absl::SleepFor(absl::Seconds(3));
  const double before_reading = finished();
  EXPECT_GE(before_reading, 1);
  EXPECT_LT(before_reading, kCandidates / 2) << "candidates finished before the client read";

  int results = 0;
  for (v1::CompileManyResponse result; stream->Read(&result);) {
    EXPECT_TRUE(result.has_response()) << result.error().message();
    ++results;
  }
  writer.join();
  const grpc::Status status = stream->Finish();
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(results, kCandidates);
  EXPECT_EQ(finished(), kCandidates);
}

// WideGraph(17) (a part whose exact search takes a worker seconds) and
// then a part whose optimum is proved at once: a long edge `e` held across
// a chain, 250 B, which no single op's step shows (its spec bound is lower).
// The wide part's cheapest order peaks at 249 B, above every bound, so it is
// sent to be searched; once the other part's 250 B is known it cannot
// change the model's peak.
v1::Graph WideThenLongEdge() {
  v1::Graph graph = WideGraph(17);
  graph.clear_outputs();
  auto add = [&](const std::string& name, std::vector<std::string> inputs, int64_t bytes) {
    v1::Tensor* tensor = graph.add_tensors();
    tensor->set_name(name);
    tensor->set_size_bytes(bytes);
    v1::Op* op = graph.add_ops();
    op->set_name(name);
    op->set_type("Conv");
    for (std::string& input : inputs) op->add_inputs(std::move(input));
    op->add_outputs(name);
  };
  add("e", {"y"}, 110);
  std::string previous = "e";
  for (int i = 0; i < 4; ++i) {
    add(absl::StrCat("m", i), {previous}, 70);
    previous = absl::StrCat("m", i);
  }
  add("z", {previous, "e"}, 8);
  graph.add_outputs("z");
  return graph;
}

// Compiles WideThenLongEdge() on `server`: optimal at 250 B, the wide part
// kept at its cheapest order (249 B) without a search. Returns the metrics.
std::string ExpectTheWidePartSettledUnsearched(Server& server) {
  v1::CompileRequest request;
  *request.mutable_graph() = WideThenLongEdge();
  request.mutable_options()->mutable_time_limit()->set_seconds(30);
  v1::CompileResponse response;
  const grpc::Status status = server.Compile(request, response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  ExpectValidSchedule(response);
  EXPECT_EQ(response.status(), v1::SCHEDULE_STATUS_OPTIMAL);
  EXPECT_EQ(response.peak_bytes(), 250);
  EXPECT_EQ(response.parts_size(), 3);
  if (response.parts_size() == 3) {
    const v1::PartStats& wide = response.parts(1);
    EXPECT_EQ(wide.ops(), 35);
    EXPECT_EQ(wide.peak_bytes(), 249);
    EXPECT_EQ(wide.states_expanded(), 0);
  }
  return server.Metrics();
}

TEST(NasServiceTest, APartThatAnotherPartsAnswerSettlesIsNotSearched) {
  // Its parts run side by side: before, the wide one was searched to the
  // end (seconds, millions of states) although the other's answer, a
  // millisecond in, had settled it.
  Server server({"--local-workers=2", "--cache-mb=0"});
  ASSERT_TRUE(server.started());
  const std::string metrics = ExpectTheWidePartSettledUnsearched(server);
  EXPECT_EQ(MetricValue(metrics, "ordo_worker_tasks_total", "result=\"ok\""), 0) << metrics;
}

TEST(NasServiceTest, AWorkerSearchingASettledPartIsCalledBack) {
  // Every part to the workers: the wide part's call is in flight when the
  // other part's answer settles it, and the front cancels it.
  Server server({"--local-workers=2", "--cache-mb=0", "--in-server-part-budget=0"});
  ASSERT_TRUE(server.started());
  const std::string metrics = ExpectTheWidePartSettledUnsearched(server);
  EXPECT_EQ(MetricValue(metrics, "ordo_worker_tasks_total", "result=\"stopped\""), 1) << metrics;
  EXPECT_EQ(MetricValue(metrics, "ordo_worker_tasks_total", "result=\"error\""), 0) << metrics;
}

TEST(NasServiceTest, CompileManyWithNoCandidatesEndsCleanly) {
  Server server({"--local-workers=1"});
  ASSERT_TRUE(server.started());
  grpc::ClientContext context;
  auto stream = server.compiler().CompileMany(&context);
  stream->WritesDone();
  v1::CompileManyResponse result;
  EXPECT_FALSE(stream->Read(&result));
  EXPECT_TRUE(stream->Finish().ok());
}

}  // namespace
}  // namespace ordo
