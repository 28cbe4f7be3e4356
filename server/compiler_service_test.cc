// The Compiler service in this process: the service class over a fake
// clock, the in-memory part cache and the thread part runner, called
// through RunCompile and through an in-process gRPC channel (the real
// handlers, ServeUnary and the work queue; no sockets, no processes).
// What only processes show (workers killed or frozen, restarts, Redis lost,
// RSS) stays in tests/service.

#include "server/compiler_service.h"

#include <algorithm>
#include <atomic>
#include <cmath>
#include <functional>
#include <map>
#include <memory>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/notification.h"
#include "core/cache/lru_schedule_cache.h"
#include "core/compile/canonical_result.h"
#include "core/graph/canonical_graph.h"
#include "core/graph/graph_proto.h"
#include "core/memory/memory_model.h"
#include "core/parts/part_runner.h"
#include "core/rewrite/onnx_test_model.h"
#include "core/schedule/scheduler_registry.h"
#include "core/testing/fake_clock.h"
#include "core/testing/status_matchers.h"
#include "core/testing/test_graph.h"
#include "gmock/gmock.h"
#include "grpcpp/grpcpp.h"
#include "gtest/gtest.h"
#include "rpc/compile_proto.h"
#include "rpc/grpc_status.h"
#include "rpc/memory_model_proto.h"
#include "rpc/metrics.h"
#include "rpc/work_queue.h"
#include "server/compile_admission.h"

namespace ordo::server {
namespace {

using ::ordo::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

// Four branches x -> p (10 B) -> r (1 B) joined by a Concat: the optimum
// lies above the spec's bound, so "optimal" means the search proved it.
Graph BranchesGraph() { return ordo::testing::ManyBranches(4); }

v1::CompileRequest GraphRequest(const Graph& graph) {
  v1::CompileRequest request;
  *request.mutable_graph() = GraphToProto(graph);
  request.mutable_options()->mutable_time_limit()->set_seconds(10);
  return request;
}

// One service with its in-process dependencies, as ordo-server wires them
// (server/ordo_server.cc) but with a fake clock.
class CompilerServiceTest : public ::testing::Test {
 protected:
  CompilerServiceTest(CompilerLimits limits = {})  // NOLINT: gtest default-constructs it
      : clock_(absl::Now()), limits_(limits) {}

  CompilerService& service() {
    if (service_ == nullptr) {
      CompilerService::Dependencies deps;
      deps.runner = &runner_;
      if (!caches_off_) {
        deps.cache = &cache_;
        deps.responses = &responses_;
        deps.name_free_results = &name_free_results_;
      }
      deps.clock = &clock_;
      deps.cache_namespace = default_namespace_;
      deps.env.queue = &queue_;
      deps.env.metrics = &metrics_;
      service_ = std::make_unique<CompilerService>(limits_, deps);
    }
    return *service_;
  }

  // A call that arrives now, with `deadline` (InfiniteFuture: none).
  static rpc::CallInfo Call(absl::Time deadline = absl::InfiniteFuture()) {
    rpc::CallInfo call;
    call.method = "Compile";
    call.request_id = "test";
    call.deadline = deadline;
    call.cancelled = std::make_shared<std::atomic<bool>>(false);
    return call;
  }

  absl::Status Compile(const v1::CompileRequest& request, v1::CompileResponse& response,
                       const rpc::CallInfo& call = Call()) {
    return service().RunCompile(call, request, response, {});
  }

  // The real handlers over an in-process channel.
  std::unique_ptr<v1::Compiler::Stub> Stub() {
    if (grpc_server_ == nullptr) {
      grpc::ServerBuilder builder;
      builder.RegisterService(&service());
      grpc_server_ = builder.BuildAndStart();
    }
    return v1::Compiler::NewStub(grpc_server_->InProcessChannel(grpc::ChannelArguments()));
  }

  void TearDown() override {
    if (grpc_server_ != nullptr) grpc_server_->Shutdown();
  }

  ordo::testing::FakeClock clock_;
  CompilerLimits limits_;
  ThreadPartRunner runner_{2};
  LruScheduleCache cache_{int64_t{16} << 20};
  ResponseCache responses_{int64_t{16} << 20};
  NameFreeResultCache name_free_results_{int64_t{16} << 20};
  rpc::WorkQueue queue_{2};
  rpc::ServiceMetrics metrics_;
  std::string default_namespace_;  // the server's --cache-namespace
  bool caches_off_ = false;         // as ordo-server --cache-mb=0
  std::unique_ptr<CompilerService> service_;
  std::unique_ptr<grpc::Server> grpc_server_;
};

// The peak of `response`'s schedule as this test computes it, after the
// same checks a client makes (every name known, peak re-simulated).
int64_t ResimulatedPeak(const Graph& graph, const v1::CompileRequest& request,
                        const v1::CompileResponse& response) {
  absl::StatusOr<CompileOptions> options =
      rpc::CompileOptionsFromProto(request.options(), request.device());
  EXPECT_TRUE(options.ok()) << options.status();
  absl::StatusOr<CompileResult> result = rpc::CompileResultFromProto(graph, *options, response);
  EXPECT_TRUE(result.ok()) << result.status();
  return result.ok() ? result->simulation.peak_bytes : -1;
}

TEST_F(CompilerServiceTest, AnswersAreResimulatedAndOptimal) {
  const Graph graph = BranchesGraph();
  const v1::CompileRequest request = GraphRequest(graph);
  v1::CompileResponse response;
  ORDO_ASSERT_OK(Compile(request, response));
  EXPECT_EQ(ResimulatedPeak(graph, request, response), response.peak_bytes());
  const ordo::testing::BruteForceResult best =
      ordo::testing::BruteForceMinPeak(*BuildMemoryModel(graph, MemoryOptions()));
  EXPECT_EQ(response.peak_bytes(), best.peak_bytes);
  EXPECT_EQ(response.status(), v1::SCHEDULE_STATUS_OPTIMAL);
  EXPECT_FALSE(response.stats().response_cached());
  // What `ordo compile --json` prints too (rpc::CompileResponseOf): the
  // options in force, defaults applied, and no path (the server has bytes).
  EXPECT_EQ(response.options().scheduler(), "best");
  EXPECT_TRUE(response.options().inplace());
  EXPECT_EQ(response.device().alignment_bytes(), 64);
  EXPECT_TRUE(response.model_path().empty());
  EXPECT_FALSE(response.has_fits());  // no memory capacity given
}

// `request` with every tensor, op and graph name prefixed, and its tensors
// listed in reverse: the same network as another exporter writes it.
v1::CompileRequest Renamed(v1::CompileRequest request, const std::string& prefix) {
  v1::Graph& graph = *request.mutable_graph();
  auto rename = [&](std::string* name) { *name = prefix + *name; };
  rename(graph.mutable_name());
  for (v1::Tensor& tensor : *graph.mutable_tensors()) rename(tensor.mutable_name());
  std::reverse(graph.mutable_tensors()->begin(), graph.mutable_tensors()->end());
  for (v1::Op& op : *graph.mutable_ops()) {
    rename(op.mutable_name());
    for (std::string& name : *op.mutable_inputs()) rename(&name);
    for (std::string& name : *op.mutable_outputs()) rename(&name);
  }
  for (std::string& name : *graph.mutable_inputs()) rename(&name);
  for (std::string& name : *graph.mutable_outputs()) rename(&name);
  return request;
}

TEST_F(CompilerServiceTest, ARenamedReExportIsAnsweredFromTheNameFreeCacheInItsOwnNames) {
  const Graph graph = BranchesGraph();
  const v1::CompileRequest request = GraphRequest(graph);
  v1::CompileResponse first;
  ORDO_ASSERT_OK(Compile(request, first));
  ASSERT_FALSE(first.stats().response_cached());

  const v1::CompileRequest renamed = Renamed(request, "export2/");
  const Graph renamed_graph = *GraphFromProto(renamed.graph());
  v1::CompileResponse second;
  ORDO_ASSERT_OK(Compile(renamed, second));
  EXPECT_TRUE(second.stats().response_cached());
  EXPECT_TRUE(second.stats().name_free_cached());
  EXPECT_EQ(second.peak_bytes(), first.peak_bytes());
  EXPECT_EQ(second.status(), v1::SCHEDULE_STATUS_OPTIMAL);
  EXPECT_EQ(second.model_name(), "export2/" + first.model_name());
  ASSERT_EQ(second.schedule_size(), first.schedule_size());
  for (int i = 0; i < first.schedule_size(); ++i) {
    EXPECT_EQ(second.schedule(i), "export2/" + first.schedule(i));
  }
  ASSERT_EQ(second.arena().tensors_size(), first.arena().tensors_size());
  for (const v1::TensorPlacement& placement : second.arena().tensors()) {
    EXPECT_TRUE(placement.tensor().starts_with("export2/")) << placement.tensor();
  }
  // What a client checks: every name known, the peak and the arena hold.
  EXPECT_EQ(ResimulatedPeak(renamed_graph, renamed, second), second.peak_bytes());

  // The renamed request itself is now in the byte-keyed cache.
  v1::CompileResponse third;
  ORDO_ASSERT_OK(Compile(renamed, third));
  EXPECT_TRUE(third.stats().response_cached());
  EXPECT_EQ(third.schedule(0), second.schedule(0));

  // Other options are another problem: no name-free hit.
  v1::CompileRequest other_alignment = Renamed(request, "export3/");
  other_alignment.mutable_device()->set_alignment_bytes(128);
  v1::CompileResponse fourth;
  ORDO_ASSERT_OK(Compile(other_alignment, fourth));
  EXPECT_FALSE(fourth.stats().response_cached());
  // And so is a graph with one size changed.
  v1::CompileRequest other_size = Renamed(request, "export4/");
  v1::Tensor& first_tensor = *other_size.mutable_graph()->mutable_tensors(0);
  first_tensor.set_size_bytes(first_tensor.size_bytes() + 1);
  v1::CompileResponse fifth;
  ORDO_ASSERT_OK(Compile(other_size, fifth));
  EXPECT_FALSE(fifth.stats().name_free_cached());
}

TEST_F(CompilerServiceTest, ANameFreeEntryThatDoesNotHoldOnTheRequestIsNotReturned) {
  const Graph graph = BranchesGraph();
  const v1::CompileRequest request = GraphRequest(graph);
  // A stored result whose schedule is reversed (not an order of the graph).
  const RealClock real_clock;
  ORDO_ASSERT_OK_AND_ASSIGN(CompileResult compiled, ordo::Compile(graph, {}, real_clock));
  const CanonicalGraph canonical = CanonicalizeGraph(graph);
  CompileResult wrong = CanonicalizeResult(compiled, canonical);
  std::reverse(wrong.schedule.begin(), wrong.schedule.end());
  name_free_results_.Insert(NameFreeRequestKey(request, canonical), std::move(wrong));

  v1::CompileResponse response;
  ORDO_ASSERT_OK(Compile(request, response));
  EXPECT_FALSE(response.stats().response_cached());
  EXPECT_FALSE(response.stats().name_free_cached());
  EXPECT_EQ(ResimulatedPeak(graph, request, response), response.peak_bytes());
  EXPECT_EQ(response.peak_bytes(), compiled.peak_bytes);
}

TEST_F(CompilerServiceTest, TwoCacheNamespacesShareNothing) {
  const Graph graph = BranchesGraph();
  const v1::CompileRequest request = GraphRequest(graph);
  rpc::CallInfo team_a = Call(), team_b = Call();
  team_a.cache_namespace = "team-a";
  team_b.cache_namespace = "team-b";
  v1::CompileResponse first;
  ORDO_ASSERT_OK(Compile(request, first, team_a));
  // The same request (and a re-export) from the other team: no response,
  // name-free or part hit.
  v1::CompileResponse other;
  ORDO_ASSERT_OK(Compile(request, other, team_b));
  EXPECT_FALSE(other.stats().response_cached());
  EXPECT_EQ(other.stats().cache_hits(), 0);
  v1::CompileResponse other_renamed;
  ORDO_ASSERT_OK(Compile(Renamed(request, "b/"), other_renamed, team_b));
  EXPECT_TRUE(other_renamed.stats().name_free_cached());  // team b's own entry
  // Nor from the shared namespace of calls that name none.
  v1::CompileResponse shared;
  ORDO_ASSERT_OK(Compile(request, shared));
  EXPECT_FALSE(shared.stats().response_cached());
  EXPECT_EQ(shared.stats().cache_hits(), 0);
  // Within one namespace entries are found as before.
  v1::CompileResponse again;
  ORDO_ASSERT_OK(Compile(request, again, team_a));
  EXPECT_TRUE(again.stats().response_cached());
  EXPECT_EQ(again.peak_bytes(), first.peak_bytes());

  rpc::CallInfo bad = Call();
  bad.cache_namespace = "team a/../b";
  v1::CompileResponse refused;
  EXPECT_THAT(Compile(request, refused, bad),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("ordo-cache-namespace")));
}

// The value of the series of counter `family` with every label of
// `labels`; 0 when there is none.
double CounterValue(const rpc::ServiceMetrics& metrics, absl::string_view family,
                    const std::map<std::string, std::string>& labels) {
  for (const prometheus::MetricFamily& found : metrics.registry()->Collect()) {
    if (found.name != family) continue;
    for (const prometheus::ClientMetric& metric : found.metric) {
      size_t matching = 0;
      for (const prometheus::ClientMetric::Label& label : metric.label) {
        const auto wanted = labels.find(label.name);
        if (wanted != labels.end() && wanted->second == label.value) ++matching;
      }
      if (matching == labels.size()) return metric.counter.value;
    }
  }
  return 0;
}

// ordo_namespace_cache_events_total{namespace, event}.
double NamespaceEvents(const rpc::ServiceMetrics& metrics, const std::string& cache_namespace,
                       const std::string& event) {
  return CounterValue(metrics, "ordo_namespace_cache_events_total",
                      {{"namespace", cache_namespace}, {"event", event}});
}

// ordo_compile_answers_total{source}.
double CompileAnswers(const rpc::ServiceMetrics& metrics, const std::string& source) {
  return CounterValue(metrics, "ordo_compile_answers_total", {{"source", source}});
}

// The `namespace` label values of ordo_namespace_cache_events_total.
std::set<std::string> NamespaceLabels(const rpc::ServiceMetrics& metrics) {
  std::set<std::string> labels;
  for (const prometheus::MetricFamily& family : metrics.registry()->Collect()) {
    if (family.name != "ordo_namespace_cache_events_total") continue;
    for (const prometheus::ClientMetric& metric : family.metric) {
      for (const prometheus::ClientMetric::Label& label : metric.label) {
        if (label.name == "namespace") labels.insert(label.value);
      }
    }
  }
  return labels;
}

TEST_F(CompilerServiceTest, TheRequestFieldNamesTheNamespaceAndEventsAreCountedPerNamespace) {
  default_namespace_ = "server-default";
  const Graph graph = BranchesGraph();
  v1::CompileRequest in_a = GraphRequest(graph);
  in_a.mutable_options()->set_cache_namespace("team-a");
  rpc::CallInfo metadata_b = Call();
  metadata_b.cache_namespace = "team-b";
  // The field wins over the metadata: this call's entries are team a's.
  v1::CompileResponse first;
  ORDO_ASSERT_OK(Compile(in_a, first, metadata_b));
  ASSERT_GT(first.stats().parts(), 0);
  v1::CompileResponse again;
  ORDO_ASSERT_OK(Compile(in_a, again));
  EXPECT_TRUE(again.stats().response_cached());
  // Team a by metadata (another request, so no whole-answer hit) finds
  // team a's parts; team b by metadata and the server's default find none.
  const v1::CompileRequest plain = GraphRequest(graph);
  rpc::CallInfo metadata_a = Call();
  metadata_a.cache_namespace = "team-a";
  v1::CompileResponse by_metadata;
  ORDO_ASSERT_OK(Compile(plain, by_metadata, metadata_a));
  EXPECT_FALSE(by_metadata.stats().response_cached());
  EXPECT_EQ(by_metadata.stats().cache_hits(), first.stats().parts());
  v1::CompileResponse in_b;
  ORDO_ASSERT_OK(Compile(plain, in_b, metadata_b));
  EXPECT_EQ(in_b.stats().cache_hits(), 0);
  v1::CompileResponse in_default;
  ORDO_ASSERT_OK(Compile(plain, in_default));
  EXPECT_EQ(in_default.stats().cache_hits(), 0);

  EXPECT_EQ(NamespaceEvents(metrics_, "team-a", "miss"), 2);
  EXPECT_EQ(NamespaceEvents(metrics_, "team-a", "hit"), 1);
  EXPECT_EQ(NamespaceEvents(metrics_, "team-a", "part_hit"), first.stats().parts());
  EXPECT_EQ(NamespaceEvents(metrics_, "team-b", "miss"), 1);
  EXPECT_EQ(NamespaceEvents(metrics_, "team-b", "part_hit"), 0);
  EXPECT_EQ(NamespaceEvents(metrics_, "server-default", "miss"), 1);

  grpc::ClientContext context;
  v1::GetInfoResponse info;
  ASSERT_TRUE(Stub()->GetInfo(&context, v1::GetInfoRequest(), &info).ok());
  EXPECT_EQ(info.default_cache_namespace(), "server-default");

  v1::CompileRequest bad = plain;
  bad.mutable_options()->set_cache_namespace("team a");
  v1::CompileResponse refused;
  EXPECT_THAT(Compile(bad, refused),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("CompileOptions.cache_namespace")));
}

// Through the real handler: a hit is answered by the fast path on the
// reactor thread, a miss and a bad request by RunCompile on the queue.
TEST_F(CompilerServiceTest, HandlerAnswersHitsOnItsFastPathAndLeavesErrorsToRunCompile) {
  const v1::CompileRequest request = GraphRequest(BranchesGraph());
  std::unique_ptr<v1::Compiler::Stub> stub = Stub();
  v1::CompileResponse first, second;
  grpc::ClientContext first_context, second_context;
  ASSERT_TRUE(stub->Compile(&first_context, request, &first).ok());
  ASSERT_TRUE(stub->Compile(&second_context, request, &second).ok());
  EXPECT_FALSE(first.stats().response_cached());
  EXPECT_TRUE(second.stats().response_cached());
  EXPECT_EQ(std::vector<std::string>(second.schedule().begin(), second.schedule().end()),
            std::vector<std::string>(first.schedule().begin(), first.schedule().end()));
  EXPECT_EQ(NamespaceEvents(metrics_, "(shared)", "hit"), 1);
  EXPECT_EQ(NamespaceEvents(metrics_, "(shared)", "miss"), 1);

  grpc::ClientContext bad_context;
  bad_context.AddMetadata(std::string(rpc::kCacheNamespaceMetadata), "a/b");
  v1::CompileResponse refused;
  const grpc::Status status = stub->Compile(&bad_context, request, &refused);
  EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(status.error_message(), HasSubstr("ordo-cache-namespace"));
}

TEST_F(CompilerServiceTest, NamespaceLabelsAreBounded) {
  for (int i = 0; i < rpc::ServiceMetrics::kMaxNamespaceLabels + 8; ++i) {
    metrics_.AddNamespaceCacheEvents(absl::StrCat("tenant-", i), "miss");
  }
  metrics_.AddNamespaceCacheEvents("", "miss");
  metrics_.AddNamespaceCacheEvents("tenant-0", "miss");  // keeps its own label
  const std::set<std::string> labels = NamespaceLabels(metrics_);
  EXPECT_EQ(labels.size(), rpc::ServiceMetrics::kMaxNamespaceLabels + 2);
  EXPECT_TRUE(labels.contains("(other)"));
  EXPECT_TRUE(labels.contains("(shared)"));
  EXPECT_EQ(NamespaceEvents(metrics_, "(other)", "miss"), 8);
  EXPECT_EQ(NamespaceEvents(metrics_, "tenant-0", "miss"), 2);
}

TEST_F(CompilerServiceTest, ASecondIdenticalRequestIsAnsweredFromTheResponseCache) {
  const Graph graph = BranchesGraph();
  const v1::CompileRequest request = GraphRequest(graph);
  v1::CompileResponse first;
  ORDO_ASSERT_OK(Compile(request, first));
  v1::CompileResponse second;
  ORDO_ASSERT_OK(Compile(request, second));
  EXPECT_TRUE(second.stats().response_cached());
  EXPECT_EQ(second.stats().cache_hits(), second.stats().parts());
  EXPECT_EQ(second.peak_bytes(), first.peak_bytes());
  EXPECT_EQ(second.schedule_size(), first.schedule_size());
  EXPECT_EQ(ResimulatedPeak(graph, request, second), first.peak_bytes());
  // Another option is another request.
  v1::CompileRequest other = request;
  other.mutable_options()->set_scheduler("greedy");
  v1::CompileResponse third;
  ORDO_ASSERT_OK(Compile(other, third));
  EXPECT_FALSE(third.stats().response_cached());
}

// RunCompile with the key the handler's fast path made and missed on the
// reactor thread skips its own lookup; an identical compile that stored its
// answer in between is still found, by the flight's lookup in the response
// cache (without it the name-free cache would answer, a whole import and
// canonical form later), and nothing is computed again.
TEST_F(CompilerServiceTest, AKnownKeyMissedEarlierStillFindsAnAnswerStoredSince) {
  const v1::CompileRequest request = GraphRequest(BranchesGraph());
  // The handler's WholeAnswerKey for a call in the shared namespace.
  const std::string known_key =
      NamespacedScheduleCache::NamespacePrefix("") + CompileRequestKey(request);
  v1::CompileResponse first;
  ORDO_ASSERT_OK(Compile(request, first));
  ASSERT_FALSE(first.stats().response_cached());
  ASSERT_EQ(NamespaceEvents(metrics_, "(shared)", "miss"), 1);
  v1::CompileResponse second;
  ORDO_ASSERT_OK(service().RunCompile(Call(), request, second, {}, &known_key));
  EXPECT_TRUE(second.stats().response_cached());
  EXPECT_FALSE(second.stats().name_free_cached());
  EXPECT_EQ(second.peak_bytes(), first.peak_bytes());
  EXPECT_EQ(CompileAnswers(metrics_, "response_cache"), 1);
  EXPECT_EQ(CompileAnswers(metrics_, "name_free_cache"), 0);
  EXPECT_EQ(CompileAnswers(metrics_, "computed"), 1);
  EXPECT_EQ(NamespaceEvents(metrics_, "(shared)", "miss"), 1);
}

TEST_F(CompilerServiceTest, ProgressEventsFollowTheStagesAndEndFinished) {
  std::vector<v1::CompileStage> stages;
  v1::CompileResponse response;
  ORDO_ASSERT_OK(service().RunCompile(
      Call(), GraphRequest(BranchesGraph()), response,
      [&](const v1::CompileProgress& progress) { stages.push_back(progress.stage()); }));
  ASSERT_FALSE(stages.empty());
  EXPECT_EQ(stages.front(), v1::COMPILE_STAGE_IMPORTED);
  EXPECT_EQ(stages.back(), v1::COMPILE_STAGE_FINISHED);
  EXPECT_TRUE(std::is_sorted(stages.begin(), stages.end()));
  // An answer from the response cache is one FINISHED event.
  stages.clear();
  ORDO_ASSERT_OK(service().RunCompile(
      Call(), GraphRequest(BranchesGraph()), response,
      [&](const v1::CompileProgress& progress) { stages.push_back(progress.stage()); }));
  EXPECT_EQ(stages, std::vector<v1::CompileStage>{v1::COMPILE_STAGE_FINISHED});
}

TEST_F(CompilerServiceTest, ARewriteSearchReportsItsProgressOnTheCallsClock) {
  // Four branches concatenated into a 1x1 Conv: a site every mode rewrites.
  OnnxTestModel model;
  model.Input("x", {1, 8, 16, 16});
  std::vector<std::string> branches;
  for (int i = 0; i < 4; ++i) {
    model.Weight(absl::StrCat("w", i), {32, 8, 1, 1}, nullptr);
    model.Node("Conv", {"x", absl::StrCat("w", i)}, {absl::StrCat("b", i)});
    branches.push_back(absl::StrCat("b", i));
  }
  SetIntAttribute(model.Node("Concat", branches, {"cat"}), "axis", 1);
  model.Weight("wy", {16, 128, 1, 1}, nullptr);
  model.Node("Conv", {"cat", "wy"}, {"y"});
  model.Output("y");
  v1::CompileRequest request;
  request.set_onnx_model(model.Bytes());
  request.mutable_options()->set_rewrite("all");
  request.mutable_options()->mutable_time_limit()->set_seconds(600);

  std::vector<v1::CompileProgress> events;
  v1::CompileResponse response;
  ORDO_ASSERT_OK(
      service().RunCompile(Call(), request, response, [&](const v1::CompileProgress& progress) {
        events.push_back(progress);
        // Each search report is a second
        // apart on the fake clock, so the
        // next schedule reports again.
        if (progress.stage() == v1::COMPILE_STAGE_REWRITING) {
          clock_.Advance(absl::Seconds(1));
        }
      }));
  ASSERT_FALSE(response.rewrites().empty());
  std::vector<int32_t> schedules;
  for (const v1::CompileProgress& event : events) {
    if (event.stage() == v1::COMPILE_STAGE_REWRITING)
      schedules.push_back(event.rewrite_schedules());
  }
  ASSERT_GE(schedules.size(), 2);
  EXPECT_EQ(schedules.front(), 1);
  EXPECT_TRUE(std::is_sorted(schedules.begin(), schedules.end()));
  EXPECT_LE(schedules.back(), response.rewrite().schedules_run());
  EXPECT_EQ(events.back().stage(), v1::COMPILE_STAGE_FINISHED);
  // One clock for the whole call: the rewritten model's compile, after
  // the search, does not start again from zero.
  for (size_t i = 1; i < events.size(); ++i) {
    EXPECT_GE(rpc::DurationFromProto(events[i].elapsed()),
              rpc::DurationFromProto(events[i - 1].elapsed()))
        << "event " << i;
  }
  EXPECT_GE(rpc::DurationFromProto(events.back().elapsed()),
            absl::Seconds(static_cast<int64_t>(schedules.size())));
}

TEST_F(CompilerServiceTest, BadRequestsAreInvalidArgumentNamingTheField) {
  struct Case {
    std::string what;
    v1::CompileRequest request;
    std::string named;
  };
  std::vector<Case> cases;
  cases.push_back({"no model", v1::CompileRequest(), "request has no model"});

  v1::CompileRequest bad_graph = GraphRequest(BranchesGraph());
  bad_graph.mutable_graph()->mutable_ops(0)->set_inputs(0, "nowhere");
  cases.push_back({"bad graph", bad_graph, "nowhere"});

  v1::CompileRequest scheduler = GraphRequest(BranchesGraph());
  scheduler.mutable_options()->set_scheduler("no-such-scheduler");
  cases.push_back({"unknown scheduler", scheduler, "options.scheduler: unknown scheduler"});

  v1::CompileRequest planner = GraphRequest(BranchesGraph());
  planner.mutable_options()->set_arena_planner("no-such-planner");
  cases.push_back({"unknown arena planner", planner, "options.arena_planner: unknown arena"});

  v1::CompileRequest rewrite = GraphRequest(BranchesGraph());
  rewrite.mutable_options()->set_rewrite("identity");
  cases.push_back({"rewrite without ONNX", rewrite, "onnx_model"});

  v1::CompileRequest reorder = GraphRequest(BranchesGraph());
  reorder.mutable_options()->set_return_reordered_onnx(true);
  cases.push_back({"reordered ONNX of a graph", reorder, "options.return_reordered_onnx"});

  v1::CompileRequest shapes = GraphRequest(BranchesGraph());
  shapes.mutable_options()->set_batch(2);
  cases.push_back({"input shapes of a graph", shapes, "options.input_shapes"});

  v1::CompileRequest pools = GraphRequest(BranchesGraph());
  for (int i = 0; i < 2; ++i) {
    v1::MemoryPoolSpec* pool = pools.mutable_device()->add_pools();
    pool->set_name("fast");
    pool->set_capacity_bytes(1024);
    pool->set_read_bytes_per_second(1e9);
  }
  cases.push_back({"bad pools", pools, "memory pool \"fast\" is given twice"});

  v1::CompileRequest state = GraphRequest(BranchesGraph());
  state.mutable_options()->set_max_state_bytes(-1);
  cases.push_back({"negative state budget", state, "options.max_state_bytes"});

  for (const Case& c : cases) {
    v1::CompileResponse response;
    EXPECT_THAT(Compile(c.request, response),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.named)))
        << c.what;
  }
  // Refusals hold no compile slot.
  v1::CompileResponse response;
  ORDO_EXPECT_OK(Compile(GraphRequest(BranchesGraph()), response));
}

TEST_F(CompilerServiceTest, APassedDeadlineStillAnswersWithAVerifiedSchedule) {
  // The search gets no time; the portfolio's first schedule (greedy) is
  // returned, verified, and marked as not proved (docs/service.md: a
  // deadline returns the best schedule so far; DEADLINE_EXCEEDED only when
  // none exists).
  const Graph graph = ordo::testing::DistinctBranches(14);
  const v1::CompileRequest request = GraphRequest(graph);
  v1::CompileResponse response;
  ORDO_ASSERT_OK(Compile(request, response, Call(clock_.Now() - absl::Seconds(1))));
  EXPECT_EQ(ResimulatedPeak(graph, request, response), response.peak_bytes());
  EXPECT_NE(response.status(), v1::SCHEDULE_STATUS_OPTIMAL);
  // Not proved optimal, so not stored: the next call searches again.
  v1::CompileResponse again;
  ORDO_ASSERT_OK(Compile(request, again));
  EXPECT_FALSE(again.stats().response_cached());
  EXPECT_EQ(again.status(), v1::SCHEDULE_STATUS_OPTIMAL);
  EXPECT_LE(again.peak_bytes(), response.peak_bytes());
}

TEST_F(CompilerServiceTest, ACancelledCallPastItsDeadlineIsDeadlineExceeded) {
  const Graph graph = ordo::testing::ManyBranches(10);
  rpc::CallInfo call = Call(clock_.Now() + absl::Seconds(1));
  call.cancelled->store(true);  // as gRPC does when the deadline passes
  clock_.Advance(absl::Seconds(2));
  v1::CompileResponse response;
  const absl::Status status = Compile(GraphRequest(graph), response, call);
  // The search was stopped before any schedule existed.
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kDeadlineExceeded,
                               HasSubstr("deadline passed before a schedule existed")));
  // A cancel before the deadline stays a cancel.
  rpc::CallInfo cancelled = Call(clock_.Now() + absl::Seconds(10));
  cancelled.cancelled->store(true);
  EXPECT_THAT(Compile(GraphRequest(graph), response, cancelled),
              StatusIs(absl::StatusCode::kCancelled, ::testing::_));
}

// A compile on its own thread that holds its flight and its compile slot
// open in its first progress event, until released.
class HeldCompile {
 public:
  HeldCompile(CompilerService& service, const rpc::CallInfo& call,
              const v1::CompileRequest& request)
      : thread_([this, &service, call, request] {
          v1::CompileResponse response;
          bool held = false;
          status_ = service.RunCompile(call, request, response, [&](const v1::CompileProgress&) {
            if (held) return;
            held = true;
            running_.Notify();
            release_.WaitForNotification();
          });
        }) {
    running_.WaitForNotification();
  }
  ~HeldCompile() { Join().IgnoreError(); }  // a test that wants the status calls Join()
  HeldCompile(const HeldCompile&) = delete;
  HeldCompile& operator=(const HeldCompile&) = delete;

  void Release() {
    if (!release_.HasBeenNotified()) release_.Notify();
  }
  // Releases it and waits for its end.
  absl::Status Join() {
    Release();
    if (thread_.joinable()) thread_.join();
    return status_;
  }

 private:
  absl::Notification running_;
  absl::Notification release_;
  absl::Status status_;
  std::thread thread_;  // last: started once the rest exists
};

TEST_F(CompilerServiceTest, AStreamWaitingForAnIdenticalCompileStreamsItsProgress) {
  const v1::CompileRequest request = GraphRequest(ordo::testing::ManyBranches(4));
  // The first call holds its flight open in its first progress event until
  // the stream that joined it has heard that event.
  HeldCompile leader(service(), Call(), request);
  grpc::ClientContext context;
  // A stream that hears nothing ends at its deadline and fails the test.
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(20)));
  auto stream = Stub()->CompileStream(&context, request);
  std::vector<v1::CompileEvent> events;
  for (v1::CompileEvent event; stream->Read(&event);) {
    leader.Release();
    events.push_back(event);
  }
  const grpc::Status status = stream->Finish();
  ORDO_ASSERT_OK(leader.Join());
  ASSERT_TRUE(status.ok()) << status.error_message();
  ASSERT_GE(events.size(), 3u);
  // The leader's event as the stream joined, then the rest of its stages,
  // FINISHED and the shared result.
  EXPECT_TRUE(events.front().has_progress());
  EXPECT_NE(events.front().progress().stage(), v1::COMPILE_STAGE_FINISHED);
  EXPECT_EQ(events[events.size() - 2].progress().stage(), v1::COMPILE_STAGE_FINISHED);
  ASSERT_TRUE(events.back().has_result());
  EXPECT_TRUE(events.back().result().stats().single_flight_shared());
  EXPECT_EQ(CompileAnswers(metrics_, "single_flight"), 1);
}

TEST_F(CompilerServiceTest, ACallWaitingForAnIdenticalCompileStopsWhenCancelled) {
  const v1::CompileRequest request = GraphRequest(ordo::testing::ManyBranches(4));
  HeldCompile leader(service(), Call(), request);
  // A follower that hears nothing waits until this deadline and fails.
  const rpc::CallInfo call = Call(absl::Now() + absl::Seconds(20));
  v1::CompileResponse response;
  // The follower's client cancels as soon as it hears the leader's event.
  const absl::Status status = service().RunCompile(
      call, request, response, [&](const v1::CompileProgress&) { call.cancelled->store(true); });
  ORDO_EXPECT_OK(leader.Join());
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kCancelled,
                               HasSubstr("waiting for an identical call's result")));
}

class BusyCompilerServiceTest : public CompilerServiceTest {
 protected:
  BusyCompilerServiceTest() : CompilerServiceTest(OneCompileAtATime()) {}
  static CompilerLimits OneCompileAtATime() {
    CompilerLimits limits;
    limits.max_concurrent_compiles = 1;
    return limits;
  }
};

TEST_F(BusyCompilerServiceTest, OverCapacityIsResourceExhausted) {
  {
    // The first compile holds the one slot.
    HeldCompile first(service(), Call(), GraphRequest(ordo::testing::ManyBranches(3)));
    v1::CompileResponse response;
    EXPECT_THAT(Compile(GraphRequest(ordo::testing::ManyBranches(4)), response),
                StatusIs(absl::StatusCode::kResourceExhausted, HasSubstr("1 compiles running")));
    ORDO_EXPECT_OK(first.Join());
  }
  // The slot is free again.
  v1::CompileResponse response;
  ORDO_EXPECT_OK(Compile(GraphRequest(ordo::testing::ManyBranches(4)), response));
}

// In a CompileMany stream a busy candidate fails alone, saying when to send
// it again (CompileManyError.retry_after, the pushback of a Compile call).
TEST_F(BusyCompilerServiceTest, ABusyCandidateSaysWhenToSendItAgain) {
  HeldCompile first(service(), Call(), GraphRequest(ordo::testing::ManyBranches(3)));
  grpc::ClientContext context;
  auto stream = Stub()->CompileMany(&context);
  v1::CompileManyRequest candidate;
  candidate.set_id("refused");
  *candidate.mutable_request() = GraphRequest(ordo::testing::ManyBranches(4));
  ASSERT_TRUE(stream->Write(candidate));
  stream->WritesDone();
  v1::CompileManyResponse result;
  ASSERT_TRUE(stream->Read(&result));
  ORDO_EXPECT_OK(rpc::FromGrpcStatus(stream->Finish()));
  ORDO_EXPECT_OK(first.Join());
  ASSERT_TRUE(result.has_error());
  EXPECT_EQ(result.error().code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  ASSERT_TRUE(result.error().has_retry_after());
  const absl::Duration after = absl::Seconds(result.error().retry_after().seconds()) +
                               absl::Nanoseconds(result.error().retry_after().nanos());
  EXPECT_GE(after, kMinBusyPushback);
  EXPECT_LT(after, kMaxBusyPushback);
  EXPECT_THAT(result.error().message(),
              HasSubstr(absl::StrCat("retry after ", absl::ToInt64Milliseconds(after), " ms")));
}

// A chain of `ops` ops, for responses of a size that grows with it.
v1::CompileRequest ChainRequest(int ops) {
  std::string text = "input t0 4\n";
  for (int i = 1; i <= ops; ++i) {
    absl::StrAppend(&text, "op chain_op_", i, " Conv t", i - 1, " -> t", i, ":", 4 + i % 7, "\n");
  }
  absl::StrAppend(&text, "output t", ops, "\n");
  return GraphRequest(ordo::testing::TestGraph(text));
}

class SmallMessagesCompilerServiceTest : public CompilerServiceTest {
 protected:
  SmallMessagesCompilerServiceTest() : CompilerServiceTest(Limits()) {}
  static constexpr int64_t kLimit = 8 << 10;
  static CompilerLimits Limits() {
    CompilerLimits limits;
    limits.max_message_bytes = kLimit;
    return limits;
  }
};

TEST_F(SmallMessagesCompilerServiceTest, AResponseOverTheMessageLimitFailsAloneNamingTheFix) {
  const v1::CompileRequest small = ChainRequest(3);
  const v1::CompileRequest big = ChainRequest(300);
  {
    v1::CompileResponse response;
    ORDO_ASSERT_OK(Compile(small, response));
    ASSERT_LT(response.ByteSizeLong(), kLimit / 2);
    ORDO_ASSERT_OK(Compile(big, response));  // RunCompile does not check the size
    ASSERT_GT(response.ByteSizeLong(), kLimit);
  }
  // Compile: RESOURCE_EXHAUSTED with the fix, counted as such; computed
  // (a request not seen before) and then from the response cache.
  const v1::CompileRequest unseen = ChainRequest(301);
  for (int call = 0; call < 2; ++call) {
    grpc::ClientContext context;
    v1::CompileResponse response;
    const grpc::Status unary = Stub()->Compile(&context, unseen, &response);
    EXPECT_EQ(unary.error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
    EXPECT_THAT(unary.error_message(),
                AllOf(HasSubstr("--max-message-mb"), HasSubstr(absl::StrCat("limit of ", kLimit))));
  }
  EXPECT_EQ(CompileAnswers(metrics_, "response_cache"), 1);
  EXPECT_EQ(CounterValue(metrics_, "ordo_requests_total",
                         {{"method", "Compile"}, {"code", "RESOURCE_EXHAUSTED"}}),
            2);
  EXPECT_EQ(CounterValue(metrics_, "ordo_requests_total", {{"method", "Compile"}, {"code", "OK"}}),
            0);

  // CompileMany: that candidate fails alone; the stream goes on.
  grpc::ClientContext many_context;
  auto stream = Stub()->CompileMany(&many_context);
  for (const auto& [id, request] : {std::pair{"big", &big}, std::pair{"small", &small}}) {
    v1::CompileManyRequest candidate;
    candidate.set_id(id);
    *candidate.mutable_request() = *request;
    ASSERT_TRUE(stream->Write(candidate));
  }
  stream->WritesDone();
  std::map<std::string, v1::CompileManyResponse> results;
  for (v1::CompileManyResponse result; stream->Read(&result);) results[result.id()] = result;
  const grpc::Status many = stream->Finish();
  ASSERT_TRUE(many.ok()) << many.error_message();
  ASSERT_EQ(results.size(), 2);
  EXPECT_EQ(results["big"].error().code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
  EXPECT_THAT(results["big"].error().message(), HasSubstr("--max-message-mb"));
  EXPECT_FALSE(results["big"].error().has_retry_after()) << "it would fail again";
  EXPECT_TRUE(results["small"].has_response());

  // CompileStream: the progress, then the error instead of the result,
  // and no FINISHED before it.
  grpc::ClientContext stream_context;
  auto events = Stub()->CompileStream(&stream_context, ChainRequest(302));  // computed
  int progress_events = 0;
  for (v1::CompileEvent event; events->Read(&event); ++progress_events) {
    EXPECT_FALSE(event.has_result());
    EXPECT_NE(event.progress().stage(), v1::COMPILE_STAGE_FINISHED);
  }
  EXPECT_GT(progress_events, 0);
  EXPECT_EQ(events->Finish().error_code(), grpc::StatusCode::RESOURCE_EXHAUSTED);
}

TEST_F(CompilerServiceTest, EstimateRefusesWhatCompileRefuses) {
  const Graph graph = BranchesGraph();
  const std::vector<
      std::pair<std::string, std::function<void(v1::CompileOptions&, v1::DeviceSpec&)>>>
      bad = {
          {"options.rewrite", [](auto& o, auto&) { o.set_rewrite("nope"); }},
          {"options.beam_width", [](auto& o, auto&) { o.set_beam_width(17); }},
          {"options.max_latency_overhead",
           [](auto& o, auto&) { o.set_max_latency_overhead(std::nan("")); }},
          {"options.max_state_bytes", [](auto& o, auto&) { o.set_max_state_bytes(-1); }},
          {"device.macs_per_second", [](auto&, auto& d) { d.set_macs_per_second(-1); }},
          {"device.op_overhead_seconds", [](auto&, auto& d) { d.set_op_overhead_seconds(-1); }},
          // Aligned sizes past int64: a rule of the layout, which Estimate
          // does not plan.
          {"alignment", [](auto&, auto& d) { d.set_alignment_bytes(int64_t{1} << 62); }},
      };
  for (const auto& [field, spoil] : bad) {
    SCOPED_TRACE(field);
    v1::CompileRequest compile = GraphRequest(graph);
    spoil(*compile.mutable_options(), *compile.mutable_device());
    v1::EstimateRequest estimate;
    *estimate.mutable_graph() = compile.graph();
    *estimate.mutable_options() = compile.options();
    *estimate.mutable_device() = compile.device();
    v1::CompileResponse compiled;
    EXPECT_THAT(Compile(compile, compiled),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(field)));
    grpc::ClientContext context;
    v1::EstimateResponse estimated;
    const grpc::Status status = Stub()->Estimate(&context, estimate, &estimated);
    EXPECT_EQ(status.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
    EXPECT_THAT(status.error_message(), HasSubstr(field));
  }
  // Without an arena the alignment is never applied: both accept it.
  v1::CompileRequest no_arena = GraphRequest(graph);
  no_arena.mutable_options()->set_arena_planner("none");
  no_arena.mutable_device()->set_alignment_bytes(int64_t{1} << 62);
  v1::CompileResponse compiled;
  ORDO_EXPECT_OK(Compile(no_arena, compiled));
  v1::EstimateRequest estimate;
  *estimate.mutable_graph() = no_arena.graph();
  *estimate.mutable_options() = no_arena.options();
  *estimate.mutable_device() = no_arena.device();
  grpc::ClientContext context;
  v1::EstimateResponse estimated;
  EXPECT_TRUE(Stub()->Estimate(&context, estimate, &estimated).ok());
}

TEST_F(CompilerServiceTest, TheResponseEchoesTheActivationTypeAsked) {
  for (const v1::DataType dtype : {v1::DATA_TYPE_UINT8, v1::DATA_TYPE_INT8, v1::DATA_TYPE_INT32,
                                   v1::DATA_TYPE_BFLOAT16, v1::DATA_TYPE_UNSPECIFIED}) {
    SCOPED_TRACE(v1::DataType_Name(dtype));
    v1::CompileRequest request = GraphRequest(BranchesGraph());
    request.mutable_device()->set_activation_dtype(dtype);
    v1::CompileResponse response;
    ORDO_ASSERT_OK(Compile(request, response));
    EXPECT_EQ(response.device().activation_dtype(), dtype);
  }
}

TEST_F(CompilerServiceTest, CompileThroughTheHandler) {
  const Graph graph = BranchesGraph();
  const v1::CompileRequest request = GraphRequest(graph);
  grpc::ClientContext context;
  v1::CompileResponse response;
  const grpc::Status status = Stub()->Compile(&context, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(ResimulatedPeak(graph, request, response), response.peak_bytes());
  grpc::ClientContext bad_context;
  v1::CompileRequest bad = request;
  bad.mutable_options()->set_scheduler("no-such-scheduler");
  const grpc::Status refused = Stub()->Compile(&bad_context, bad, &response);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(refused.error_message(), HasSubstr("no-such-scheduler"));
}

TEST_F(CompilerServiceTest, EstimateMatchesTheCore) {
  const Graph graph = BranchesGraph();
  v1::EstimateRequest request;
  *request.mutable_graph() = GraphToProto(graph);
  grpc::ClientContext context;
  v1::EstimateResponse response;
  const grpc::Status status = Stub()->Estimate(&context, request, &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ORDO_ASSERT_OK_AND_ASSIGN(EstimateResult expected, Estimate(graph, CompileOptions(), nullptr));
  const EstimateResult got = rpc::EstimateResultFromProto(response);
  EXPECT_EQ(got.ops, graph.num_ops());
  EXPECT_EQ(got.model_order_peak_bytes, expected.model_order_peak_bytes);
  EXPECT_EQ(got.greedy_peak_bytes, expected.greedy_peak_bytes);
  EXPECT_EQ(got.lower_bound_bytes, expected.lower_bound_bytes);

  grpc::ClientContext bad_context;
  request.mutable_options()->set_batch(4);
  const grpc::Status refused = Stub()->Estimate(&bad_context, request, &response);
  EXPECT_EQ(refused.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(refused.error_message(),
              AllOf(HasSubstr("options.input_shapes"), HasSubstr("a native ordo.v1.Graph")));

  // Banks smaller than the graph input: refused with the fix, by the
  // field's name, as Compile refuses it.
  grpc::ClientContext banks_context;
  request.mutable_options()->clear_batch();
  for (const char* name : {"a", "b"}) {
    v1::MemoryPoolSpec* pool = request.mutable_device()->add_pools();
    pool->set_name(name);
    pool->set_capacity_bytes(16);
  }
  const grpc::Status over = Stub()->Estimate(&banks_context, request, &response);
  EXPECT_EQ(over.error_code(), grpc::StatusCode::INVALID_ARGUMENT);
  EXPECT_THAT(over.error_message(), AllOf(HasSubstr("larger than every memory pool"),
                                          HasSubstr("set options.io_outside_arena")));
}

// ordo_estimate_answers_total{source}.
double EstimateAnswers(const rpc::ServiceMetrics& metrics, const std::string& source) {
  for (const prometheus::MetricFamily& family : metrics.registry()->Collect()) {
    if (family.name != "ordo_estimate_answers_total") continue;
    for (const prometheus::ClientMetric& metric : family.metric) {
      if (metric.label.size() == 1 && metric.label[0].value == source) {
        return metric.counter.value;
      }
    }
  }
  return 0;
}

v1::EstimateRequest EstimateRequestFor(const Graph& graph) {
  v1::EstimateRequest request;
  *request.mutable_graph() = GraphToProto(graph);
  return request;
}

// One Estimate through the real handler (fast path included).
v1::EstimateResponse EstimateOverGrpc(v1::Compiler::Stub& stub,
                                      const v1::EstimateRequest& request) {
  grpc::ClientContext context;
  v1::EstimateResponse response;
  const grpc::Status status = stub.Estimate(&context, request, &response);
  EXPECT_TRUE(status.ok()) << status.error_message();
  return response;
}

TEST_F(CompilerServiceTest, ASecondIdenticalEstimateIsAnsweredFromTheResponseCache) {
  const std::unique_ptr<v1::Compiler::Stub> stub = Stub();
  const v1::EstimateRequest request = EstimateRequestFor(BranchesGraph());
  const v1::EstimateResponse first = EstimateOverGrpc(*stub, request);
  const v1::EstimateResponse second = EstimateOverGrpc(*stub, request);
  EXPECT_EQ(EstimateAnswers(metrics_, "computed"), 1);
  EXPECT_EQ(EstimateAnswers(metrics_, "response_cache"), 1);
  EXPECT_EQ(NamespaceEvents(metrics_, "(shared)", "hit"), 1);
  EXPECT_EQ(NamespaceEvents(metrics_, "(shared)", "miss"), 1);
  EXPECT_EQ(second.SerializeAsString(), first.SerializeAsString());
  EXPECT_EQ(second.ops(), BranchesGraph().num_ops());

  // Another option, another model, another namespace: other requests.
  v1::EstimateRequest greedy = request;
  greedy.mutable_options()->set_scheduler("greedy");
  EstimateOverGrpc(*stub, greedy);
  const Graph other_graph = ordo::testing::ManyBranches(3);
  const v1::EstimateResponse other = EstimateOverGrpc(*stub, EstimateRequestFor(other_graph));
  EXPECT_EQ(other.ops(), other_graph.num_ops());
  v1::EstimateRequest team = request;
  team.mutable_options()->set_cache_namespace("team-a");
  EstimateOverGrpc(*stub, team);
  EXPECT_EQ(EstimateAnswers(metrics_, "computed"), 4);
  EXPECT_EQ(EstimateAnswers(metrics_, "response_cache"), 1);
}

TEST_F(CompilerServiceTest, AnEstimateAndACompileOfTheSameBytesNeverShareAnEntry) {
  const Graph graph = BranchesGraph();
  const v1::CompileRequest compile = GraphRequest(graph);
  v1::EstimateRequest estimate;
  *estimate.mutable_graph() = compile.graph();
  *estimate.mutable_options() = compile.options();
  EXPECT_NE(EstimateRequestKey(estimate), CompileRequestKey(compile));
  const std::unique_ptr<v1::Compiler::Stub> stub = Stub();
  v1::CompileResponse compiled;
  ORDO_ASSERT_OK(Compile(compile, compiled));
  const v1::EstimateResponse estimated = EstimateOverGrpc(*stub, estimate);
  EXPECT_EQ(EstimateAnswers(metrics_, "computed"), 1);
  EXPECT_EQ(estimated.ops(), graph.num_ops());
  // And the other way round: the Compile is still the cached compile.
  v1::CompileResponse again;
  ORDO_ASSERT_OK(Compile(compile, again));
  EXPECT_TRUE(again.stats().response_cached());
  EXPECT_EQ(again.peak_bytes(), compiled.peak_bytes());
}

TEST_F(CompilerServiceTest, AnEstimateIsComputedAgainOnceACompileMayHaveStoredItsParts) {
  const Graph graph = BranchesGraph();
  const std::unique_ptr<v1::Compiler::Stub> stub = Stub();
  const v1::EstimateRequest request = EstimateRequestFor(graph);
  const v1::EstimateResponse before = EstimateOverGrpc(*stub, request);
  ASSERT_EQ(before.cached_parts(), 0);
  ASSERT_FALSE(before.has_cached_peak_bytes());
  v1::CompileResponse compiled;
  ORDO_ASSERT_OK(Compile(GraphRequest(graph), compiled));
  // The stored answer (no part cached) no longer holds.
  const v1::EstimateResponse after = EstimateOverGrpc(*stub, request);
  EXPECT_EQ(EstimateAnswers(metrics_, "computed"), 2);
  EXPECT_EQ(after.cached_parts(), after.parts());
  ASSERT_TRUE(after.has_cached_peak_bytes());
  EXPECT_EQ(after.cached_peak_bytes(), compiled.peak_bytes());
  // That one holds until the next compile.
  EXPECT_EQ(EstimateOverGrpc(*stub, request).SerializeAsString(), after.SerializeAsString());
  EXPECT_EQ(EstimateAnswers(metrics_, "response_cache"), 1);
}

TEST_F(CompilerServiceTest, WithTheCachesOffNoEstimateIsAnsweredFromACache) {
  caches_off_ = true;
  const std::unique_ptr<v1::Compiler::Stub> stub = Stub();
  const v1::EstimateRequest request = EstimateRequestFor(BranchesGraph());
  const v1::EstimateResponse first = EstimateOverGrpc(*stub, request);
  const v1::EstimateResponse second = EstimateOverGrpc(*stub, request);
  EXPECT_EQ(EstimateAnswers(metrics_, "computed"), 2);
  EXPECT_EQ(EstimateAnswers(metrics_, "response_cache"), 0);
  EXPECT_EQ(NamespaceEvents(metrics_, "(shared)", "miss"), 0);
  EXPECT_EQ(second.SerializeAsString(), first.SerializeAsString());
}

TEST_F(CompilerServiceTest, GetInfoListsTheRegistriesAndLimits) {
  grpc::ClientContext context;
  v1::GetInfoResponse info;
  const grpc::Status status = Stub()->GetInfo(&context, v1::GetInfoRequest(), &info);
  ASSERT_TRUE(status.ok()) << status.error_message();
  const SchedulerRegistry& schedulers = BuiltinSchedulers();
  ASSERT_EQ(info.schedulers_size(), static_cast<int>(schedulers.schedulers().size()));
  for (int i = 0; i < info.schedulers_size(); ++i) {
    EXPECT_EQ(info.schedulers(i).name(), schedulers.schedulers()[i].name);
  }
  EXPECT_GT(info.arena_planners_size(), 0);
  EXPECT_EQ(info.limits().max_ops(), limits_.max_ops);
  EXPECT_EQ(info.limits().max_concurrent_compiles(), limits_.max_concurrent_compiles);
  EXPECT_EQ(info.limits().max_state_bytes(), limits_.max_state_bytes);
  EXPECT_EQ(info.cache(), "memory");
  EXPECT_EQ(info.workers_size(), 0);
}

}  // namespace
}  // namespace ordo::server
