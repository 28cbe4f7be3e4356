#include "server/compiler_service.h"

#include <algorithm>
#include <deque>
#include <optional>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/synchronization/mutex.h"
#include "core/arena/arena_planner_registry.h"
#include "core/compile/canonical_result.h"
#include "core/compile/compile.h"
#include "core/compile/compile_request.h"
#include "core/compile/import_model.h"
#include "core/compile/rewrite_compile.h"
#include "core/graph/canonical_graph.h"
#include "core/graph/graph_proto.h"
#include "core/onnx/input_shapes.h"
#include "core/onnx/onnx_import.h"
#include "core/onnx/prepare_model.h"
#include "core/parts/part_key.h"
#include "core/schedule/scheduler_registry.h"
#include "core/tflite/tflite_export.h"
#include "core/util/printable_text.h"
#include "core/util/status_macros.h"
#include "rpc/compile_proto.h"
#include "rpc/grpc_status.h"
#include "rpc/log.h"
#include "rpc/memory_model_proto.h"
#include "rpc/plan_header.h"
#include "rpc/pools_proto.h"
#include "rpc/service_call.h"
#include "server/compile_many_reactor.h"

namespace ordo::server {
namespace {

constexpr absl::string_view kVersion = "0.1.0";

// The bytes of the request's model as compiled: an ONNX model prepared
// (PrepareOnnxModel: local functions inlined, compile.input_shapes applied;
// then a copy, kept in `storage`, which must outlive the view), so import,
// rewriting and reordering all see the same model; a TFLite model as sent;
// nothing for a native graph.
template <typename Request>
absl::StatusOr<absl::string_view> ModelBytes(const Request& request, const CompileRequest& compile,
                                             int64_t max_ops, std::string& storage) {
  switch (compile.format) {
    case ModelFormat::kOnnx: {
      absl::StatusOr<std::optional<std::string>> prepared =
          PrepareOnnxModel(request.onnx_model(), compile.input_shapes, max_ops);
      if (!prepared.ok()) return WithPrintableMessage(prepared.status());
      if (!prepared->has_value()) return absl::string_view(request.onnx_model());
      storage = **std::move(prepared);
      return absl::string_view(storage);
    }
    case ModelFormat::kTflite:
      return absl::string_view(request.tflite_model());
    default:
      return absl::string_view();
  }
}

// A native Graph over the op limit, refused from its op count alone (before
// anything costs time proportional to its size: the cache key, import).
template <typename Request>
absl::Status CheckGraphOpCount(const Request& request, const CompilerLimits& limits) {
  if (!request.has_graph() || request.graph().ops_size() <= limits.max_ops) {
    return absl::OkStatus();
  }
  return absl::ResourceExhaustedError(absl::StrCat(
      "graph has ", request.graph().ops_size(), " ops; this server's limit is ", limits.max_ops));
}

// Import: the request's model as a Graph, within the limits. `model_bytes`
// is ModelBytes(request).
template <typename Request>
absl::StatusOr<Graph> ImportRequestModel(const Request& request, ModelFormat format,
                                         absl::string_view model_bytes,
                                         const CompilerLimits& limits) {
  GraphLimits graph_limits;
  graph_limits.max_ops = limits.max_ops;
  if (format == ModelFormat::kOnnx || format == ModelFormat::kTflite) {
    return ImportModel(model_bytes, format, graph_limits);
  }
  ORDO_RETURN_IF_ERROR(CheckGraphOpCount(request, limits));
  // Names in the message are the client's bytes: escaped as ImportModel
  // (the CLI) does, so no raw control bytes reach the status or the log
  // line (a newline in a name would forge one).
  absl::StatusOr<Graph> graph = GraphFromProto(request.graph(), graph_limits);
  if (!graph.ok()) return WithPrintableMessage(graph.status());
  return graph;
}

// The request in core's terms, within the server's limits and valid
// (CompileRequest::Validate); INVALID_ARGUMENT naming the field otherwise.
// Compile and Estimate carry the same options and device, so one request
// is refused by both or by neither, even where Estimate reads less of it.
template <typename Request>
absl::StatusOr<CompileRequest> ValidRequest(const Request& request, const CompilerLimits& limits) {
  ORDO_ASSIGN_OR_RETURN(CompileRequest compile, rpc::CompileRequestFromProto(request));
  ORDO_ASSIGN_OR_RETURN(compile.options.max_state_bytes,
                        StateBudget(request.options().max_state_bytes(), limits));
  compile.rewrite.limits.max_ops = limits.max_ops;
  ORDO_RETURN_IF_ERROR(compile.Validate());
  ImplyOneArena(compile);
  return compile;
}

v1::CompileStage StageToProto(CompileProgress::Stage stage) {
  switch (stage) {
    case CompileProgress::Stage::kImported:
      return v1::COMPILE_STAGE_IMPORTED;
    case CompileProgress::Stage::kPartitioned:
      return v1::COMPILE_STAGE_PARTITIONED;
    case CompileProgress::Stage::kScheduled:
      return v1::COMPILE_STAGE_SCHEDULED;
    case CompileProgress::Stage::kFinished:
      return v1::COMPILE_STAGE_FINISHED;
    case CompileProgress::Stage::kRewriting:
      return v1::COMPILE_STAGE_REWRITING;
  }
  return v1::COMPILE_STAGE_UNSPECIFIED;
}

// The core's progress reports as the API's events (empty when nobody
// listens). `elapsed` is the call's, from `start` (the core's restarts with
// each compile and the search a call runs).
std::function<void(const CompileProgress&)> ProgressToProto(
    const std::function<void(const v1::CompileProgress&)>& on_progress, absl::Time start,
    const Clock& clock) {
  if (!on_progress) return {};
  return [&on_progress, start, &clock](const CompileProgress& progress) {
    v1::CompileProgress event;
    event.set_stage(StageToProto(progress.stage));
    *event.mutable_elapsed() = rpc::DurationToProto(clock.Now() - start);
    event.set_parts_total(progress.parts_total);
    event.set_parts_done(progress.parts_done);
    event.set_rewrite_schedules(progress.rewrite_schedules);
    on_progress(event);
  };
}

// A stored response as the answer to a new call: every part now comes from
// a cache and nothing ran.
void MarkResponseCached(v1::CompileResponse& response, absl::Duration time) {
  v1::CompileStats& stats = *response.mutable_stats();
  const int32_t parts = stats.parts();
  stats.Clear();
  stats.set_parts(parts);
  stats.set_cache_hits(parts);
  stats.set_response_cached(true);
  *stats.mutable_time() = rpc::DurationToProto(time);
  for (v1::PartStats& part : *response.mutable_parts()) {
    part.set_cached(true);
    part.clear_time();
  }
}

// The one progress event of an answer that needed no compile here.
void ReportFinished(const v1::CompileResponse& response,
                    const std::function<void(const v1::CompileProgress&)>& on_progress) {
  if (!on_progress) return;
  v1::CompileProgress event;
  event.set_stage(v1::COMPILE_STAGE_FINISHED);
  *event.mutable_elapsed() = response.stats().time();
  event.set_parts_total(response.stats().parts());
  event.set_parts_done(response.stats().parts());
  on_progress(event);
}

// The info line of a finished compile.
void LogCompiled(const rpc::CallInfo& call, const RewriteCompileResult& result,
                 const v1::CompileResponse& response) {
  const CompileResult& compiled = result.compile;
  rpc::Log(rpc::LogLevel::kInfo, call.request_id,
           absl::StrCat("compiled ", result.graph.num_ops(), " ops: peak ", compiled.peak_bytes,
                        " (", ScheduleStatusName(compiled.status), "), ", response.stats().parts(),
                        " parts, ", response.stats().cache_hits(), " cached, ",
                        response.stats().fallback_parts(), " fallback"));
}

// The request's identity in its method's key space (response_cache.h).
std::string RequestKeyOf(const v1::CompileRequest& request) { return CompileRequestKey(request); }
std::string RequestKeyOf(const v1::EstimateRequest& request) { return EstimateRequestKey(request); }

}  // namespace

// The steps of a Compile call: answer from the response cache; else
// compile once for all identical calls in flight (CompileOrShare), which
// admits, validates, imports, splits the deadline, compiles, converts,
// stores and logs (CompileRequestNow).
absl::Status CompilerService::RunCompile(
    const rpc::CallInfo& call, const v1::CompileRequest& request, v1::CompileResponse& response,
    const std::function<void(const v1::CompileProgress&)>& on_progress,
    const std::string* known_key) {
  const absl::Time start = deps_.clock->Now();
  std::string made_key;
  if (known_key == nullptr) {
    ORDO_ASSIGN_OR_RETURN(made_key, WholeAnswerKey(call, request));
    known_key = &made_key;
    if (AnswerFromResponseCache(made_key, start, response, on_progress)) return absl::OkStatus();
  }
  // A known key was looked up by the fast path earlier, on the reactor
  // thread; the flight's own lookup finds anything stored since, so a miss
  // hashes and probes its tens of kilobytes of key once less.
  return CompileOrShare(call, request, *known_key, start, response, on_progress);
}

template <typename Request>
absl::StatusOr<std::string> CompilerService::WholeAnswerKey(const rpc::CallInfo& call,
                                                            const Request& request) const {
  ORDO_RETURN_IF_ERROR(CheckGraphOpCount(request, limits_));
  ORDO_ASSIGN_OR_RETURN(const std::string cache_namespace,
                        CacheNamespaceOf(call, request.options()));
  // Every whole-answer key starts with the namespace, so single-flight
  // and both response caches keep tenants apart as the part cache does.
  return NamespacedScheduleCache::NamespacePrefix(cache_namespace) + RequestKeyOf(request);
}

template <typename Request, typename Response>
std::optional<absl::Status> CompilerService::AnswerFromResponseCacheNow(
    const rpc::CallInfo& call, const Request& request, Response& response,
    std::string& key_out) const {
  if (deps_.responses == nullptr) return std::nullopt;
  // A bad request is left to the method's body, the one place that
  // reports it.
  absl::StatusOr<std::string> key = WholeAnswerKey(call, request);
  if (!key.ok()) return std::nullopt;
  if (!AnswerFromResponseCache(*key, response)) {
    key_out = *std::move(key);
    return std::nullopt;
  }
  return absl::OkStatus();
}

bool CompilerService::AnswerFromResponseCache(const std::string& key,
                                              v1::CompileResponse& response) const {
  return AnswerFromResponseCache(key, deps_.clock->Now(), response, {});
}

bool CompilerService::AnswerFromResponseCache(const std::string& key,
                                              v1::EstimateResponse& response) const {
  std::optional<v1::EstimateResponse> cached =
      deps_.responses->LookupEstimate(key, parts_generation_.load(std::memory_order_acquire));
  if (!cached) return false;
  response = *std::move(cached);
  RecordEstimateAnswer("response_cache", NamespacedScheduleCache::NamespaceOfKey(key));
  return true;
}

absl::Status CompilerService::CompileOrShare(
    const rpc::CallInfo& call, const v1::CompileRequest& request, const std::string& key,
    absl::Time start, v1::CompileResponse& response,
    const std::function<void(const v1::CompileProgress&)>& on_progress) {
  const Clock& clock = *deps_.clock;
  // Identical concurrent requests compile once: the first runs (and alone
  // takes a compile slot), the others wait for its answer and stream its
  // progress as their own.
  SharedCompileFlights::Wait wait;
  // Waiting is real time, as the call's deadline is (the clock may be a
  // test's fake).
  wait.deadline = CallDeadline(call.deadline, absl::Now(), limits_);
  wait.cancelled = call.cancelled.get();
  if (on_progress) {
    wait.on_progress = [&](const v1::CompileProgress& leaders) {
      // This call's own FINISHED comes with the shared result, once (a
      // rewriting leader finishes a compile before its search, too).
      if (leaders.stage() == v1::COMPILE_STAGE_FINISHED) return;
      v1::CompileProgress progress = leaders;
      *progress.mutable_elapsed() = rpc::DurationToProto(clock.Now() - start);
      on_progress(progress);
    };
  }
  absl::StatusOr<SharedCompileFlights::Outcome> outcome =
      flights_.Do(key, wait, [&](const SharedCompileFlights::ReportFn& report_to_followers) {
        const std::function<void(const v1::CompileProgress&)> report =
            [&](const v1::CompileProgress& progress) {
              report_to_followers(progress);
              if (on_progress) on_progress(progress);
            };
        SharedCompile shared;
        // An identical call may have finished between the lookup above and
        // this flight: its answer is stored by now.
        if (AnswerFromResponseCache(key, start, shared.response, report)) return shared;
        shared.status = CompileRequestNow(call, request, key, start, shared.response, report);
        return shared;
      });
  if (!outcome.ok()) return outcome.status();
  const absl::Status& status = outcome->value.status;
  if (outcome->shared && (absl::IsCancelled(status) || absl::IsDeadlineExceeded(status))) {
    // The other call ended on its own client's cancel or deadline, which
    // says nothing about this call: compile it here.
    return CompileRequestNow(call, request, key, start, response, on_progress);
  }
  response = std::move(outcome->value.response);
  if (outcome->shared && status.ok()) {
    response.mutable_stats()->set_single_flight_shared(true);
    *response.mutable_stats()->mutable_time() = rpc::DurationToProto(clock.Now() - start);
    RecordCompileAnswer("single_flight", key);
    ReportFinished(response, on_progress);
  }
  return status;
}

void CompilerService::RecordCompileAnswer(absl::string_view source,
                                          absl::string_view key) const {
  rpc::ServiceMetrics* metrics = deps_.env.metrics;
  if (metrics == nullptr) return;
  metrics->AddCompileAnswer(source);
  const absl::string_view event = source == "computed"        ? "miss"
                                  : source == "single_flight" ? "single_flight_wait"
                                                              : "hit";
  metrics->AddNamespaceCacheEvents(NamespacedScheduleCache::NamespaceOfKey(key), event);
}

bool CompilerService::AnswerFromResponseCache(
    const std::string& key, absl::Time start, v1::CompileResponse& response,
    const std::function<void(const v1::CompileProgress&)>& on_progress) const {
  if (deps_.responses == nullptr) return false;
  std::optional<v1::CompileResponse> cached = deps_.responses->Lookup(key);
  if (!cached) return false;
  response = *std::move(cached);
  MarkResponseCached(response, deps_.clock->Now() - start);
  if (deps_.env.metrics != nullptr) {
    deps_.env.metrics->AddCacheLookups("hit", response.stats().parts());
  }
  RecordCompileAnswer("response_cache", key);
  ReportFinished(response, on_progress);
  return true;
}

absl::Status CompilerService::CompileRequestNow(
    const rpc::CallInfo& call, const v1::CompileRequest& request, const std::string& key,
    absl::Time start, v1::CompileResponse& response,
    const std::function<void(const v1::CompileProgress&)>& on_progress) {
  ORDO_ASSIGN_OR_RETURN(const CompileAdmission::Slot slot, admission_.Admit());
  // Everything cheap is checked before any work.
  ORDO_ASSIGN_OR_RETURN(CompileRequest compile, ValidRequest(request, limits_));
  std::string shaped_model;
  ORDO_ASSIGN_OR_RETURN(const absl::string_view model_bytes,
                        ModelBytes(request, compile, limits_.max_ops, shaped_model));
  ORDO_ASSIGN_OR_RETURN(const Graph graph,
                        ImportRequestModel(request, compile.format, model_bytes, limits_));
  if (compile.reordered_onnx) ORDO_RETURN_IF_ERROR(CheckOnnxParses(model_bytes));
  CanonicalGraph canonical;
  std::string name_free_key;
  if (deps_.name_free_results != nullptr) {
    canonical = CanonicalizeGraph(graph);
    name_free_key =
        NamespacedScheduleCache::NamespacePrefix(ChosenNamespace(call, request.options())) +
                    NameFreeRequestKey(request, canonical);
    if (AnswerFromNameFreeCache(call, key, request.device(), compile, model_bytes, graph, canonical,
                                name_free_key, start, response, on_progress)) {
      return absl::OkStatus();
    }
  }
  const absl::Time deadline = CallDeadline(call.deadline, start, limits_);
  ApplyBudget(SplitDeadline(compile.options.time_limit, deadline, deps_.clock->Now()), compile);
  absl::StatusOr<RewriteCompileResult> compiled = CompileBefore(
      deadline, call, compile, model_bytes, graph, ChosenNamespace(call, request.options()),
      ProgressToProto(on_progress, start, *deps_.clock));
  // After the compile's last part-cache store, so an Estimate that looked
  // the parts up before it cannot keep its answer.
  parts_generation_.fetch_add(1, std::memory_order_acq_rel);
  ORDO_ASSIGN_OR_RETURN(const RewriteCompileResult result, std::move(compiled));
  RecordCacheMetrics(result.compile, ChosenNamespace(call, request.options()));
  ORDO_ASSIGN_OR_RETURN(response, ResponseOf(request.device(), compile, model_bytes, graph,
                                             result.graph, result.compile, result.rewrite));
  *response.mutable_stats()->mutable_time() = rpc::DurationToProto(deps_.clock->Now() - start);
  if (deps_.responses != nullptr) deps_.responses->Insert(key, response);
  StoreNameFree(name_free_key, canonical, result);
  RecordCompileAnswer("computed", key);
  LogCompiled(call, result, response);
  return absl::OkStatus();
}

bool CompilerService::AnswerFromNameFreeCache(
    const rpc::CallInfo& call, const std::string& key, const v1::DeviceSpec& device,
    const CompileRequest& compile, absl::string_view model_bytes, const Graph& graph,
    const CanonicalGraph& canonical, const std::string& name_free_key, absl::Time start,
    v1::CompileResponse& response,
    const std::function<void(const v1::CompileProgress&)>& on_progress) const {
  const std::shared_ptr<const CompileResult> stored =
      deps_.name_free_results->Lookup(name_free_key);
  if (stored == nullptr) return false;
  // Never returned unless it holds on this request's own graph.
  absl::StatusOr<CompileResult> result =
      ResultForGraph(*stored, graph, canonical, compile.options);
  absl::StatusOr<v1::CompileResponse> answer =
      result.ok() ? ResponseOf(device, compile, model_bytes, graph, graph, *result, std::nullopt)
                  : absl::StatusOr<v1::CompileResponse>(result.status());
  if (!answer.ok()) {
    rpc::Log(rpc::LogLevel::kWarning, call.request_id,
             absl::StrCat("name-free cache entry not used: ", answer.status().ToString()));
    return false;
  }
  response = *std::move(answer);
  MarkResponseCached(response, deps_.clock->Now() - start);
  response.mutable_stats()->set_name_free_cached(true);
  if (deps_.env.metrics != nullptr) {
    deps_.env.metrics->AddCacheLookups("hit", response.stats().parts());
  }
  RecordCompileAnswer("name_free_cache", key);
  if (deps_.responses != nullptr) deps_.responses->Insert(key, response);
  ReportFinished(response, on_progress);
  return true;
}

void CompilerService::StoreNameFree(const std::string& name_free_key,
                                    const CanonicalGraph& canonical,
                                    const RewriteCompileResult& result) const {
  // As the response cache: only answers that do not depend on the call's
  // time limit; rewriting and pools are left to the byte-keyed cache.
  if (deps_.name_free_results == nullptr || name_free_key.empty() || result.rewrite ||
      result.compile.status != ScheduleStatus::kOptimal ||
      !CanBeCanonicalized(result.compile)) {
    return;
  }
  deps_.name_free_results->Insert(name_free_key, CanonicalizeResult(result.compile, canonical));
}

void CompilerService::ApplyBudget(const CompileBudget& budget, CompileRequest& compile) {
  compile.options.time_limit = budget.search_time;
  // Rewriting runs up to three stages (plain compile, search, compile of
  // the rewritten model); they share the same window.
  compile.rewrite.time_limit = budget.search_time;
  compile.rewrite.deadline = budget.stages_deadline;
}

absl::StatusOr<RewriteCompileResult> CompilerService::CompileBefore(
    absl::Time deadline, const rpc::CallInfo& call, const CompileRequest& compile,
    absl::string_view model_bytes, const Graph& graph, const std::string& cache_namespace,
    std::function<void(const CompileProgress&)> on_progress) const {
  CompileServices services;
  services.runner = deps_.runner;
  services.cache = deps_.cache;
  std::optional<NamespacedScheduleCache> namespaced;
  if (deps_.cache != nullptr && !cache_namespace.empty()) {
    services.cache = &namespaced.emplace(*deps_.cache, cache_namespace);
  }
  services.cancelled = call.cancelled.get();
  services.request_id = call.request_id;
  services.on_progress = std::move(on_progress);
  // The rewritten model (when any) is compiled through the same services,
  // so its schedule is verified by the simulator like every other.
  absl::StatusOr<RewriteCompileResult> result =
      CompileWithRewrite(compile, model_bytes, graph, services, *deps_.clock);
  if (!result.ok() && absl::IsCancelled(result.status()) && deps_.clock->Now() >= deadline) {
    return absl::DeadlineExceededError("deadline passed before a schedule existed");
  }
  return result;
}

absl::StatusOr<v1::CompileResponse> CompilerService::ResponseOf(
    const v1::DeviceSpec& device, const CompileRequest& compile, absl::string_view model_bytes,
    const Graph& graph, const Graph& compiled_graph, const CompileResult& compiled,
    const std::optional<RewriteSummary>& rewrite) {
  v1::CompileResponse response = rpc::CompileResponseOf(compile, compiled_graph, compiled, rewrite);
  // The core keeps the activations' element size alone: its echo would be
  // any type of that size (INT8 for UINT8, FLOAT32 for INT32).
  response.mutable_device()->set_activation_dtype(device.activation_dtype());
  if (compile.reordered_onnx && response.rewritten_onnx_model().empty()) {
    ORDO_ASSIGN_OR_RETURN(*response.mutable_reordered_onnx_model(),
                          ReorderOnnxNodes(model_bytes, graph, compiled.schedule));
  }
  if (compile.reordered_tflite) {
    ORDO_ASSIGN_OR_RETURN(
        *response.mutable_reordered_tflite_model(),
        ReorderTfliteModel(model_bytes, graph, compiled.schedule, compiled.arena));
  }
  if (compile.plan_header) response.set_plan_header(rpc::PlanHeader(response, ""));
  return response;
}

void CompilerService::RecordCacheMetrics(const CompileResult& result,
                                         absl::string_view cache_namespace) const {
  rpc::ServiceMetrics* metrics = deps_.env.metrics;
  if (metrics == nullptr) return;
  metrics->RecordStatesExpanded(result.stats.states_expanded);
  if (!result.part_stats) return;
  const PartScheduleStats& stats = *result.part_stats;
  metrics->AddCacheLookups("hit", stats.cache_hits);
  metrics->AddCacheLookups("miss", stats.cache_misses - stats.cache_errors - stats.cache_rejected);
  metrics->AddCacheLookups("error", stats.cache_errors);
  metrics->AddCacheLookups("rejected", stats.cache_rejected);
  metrics->AddNamespaceCacheEvents(cache_namespace, "part_hit", stats.cache_hits);
  metrics->AddNamespaceCacheEvents(cache_namespace, "part_miss", stats.cache_misses);
}

const std::string& CompilerService::ChosenNamespace(const rpc::CallInfo& call,
                                                   const v1::CompileOptions& options) const {
  if (!options.cache_namespace().empty()) return options.cache_namespace();
  return call.cache_namespace.empty() ? deps_.cache_namespace : call.cache_namespace;
}

absl::StatusOr<std::string> CompilerService::CacheNamespaceOf(
    const rpc::CallInfo& call, const v1::CompileOptions& options) const {
  if (!options.cache_namespace().empty()) {
    ORDO_RETURN_IF_ERROR(
        CheckCacheNamespace(options.cache_namespace(), "CompileOptions.cache_namespace"));
    return options.cache_namespace();
  }
  if (call.cache_namespace.empty()) return deps_.cache_namespace;
  ORDO_RETURN_IF_ERROR(CheckCacheNamespace(
      call.cache_namespace, absl::StrCat("metadata ", rpc::kCacheNamespaceMetadata)));
  return call.cache_namespace;
}

absl::Status CompilerService::RunEstimate(const rpc::CallInfo& call,
                                          const v1::EstimateRequest& request,
                                          v1::EstimateResponse& response,
                                          const std::string& known_key) {
  // Read before any part-cache lookup (StoreEstimate).
  const uint64_t parts_generation = parts_generation_.load(std::memory_order_acquire);
  ORDO_ASSIGN_OR_RETURN(const std::string cache_namespace,
                        CacheNamespaceOf(call, request.options()));
  ORDO_ASSIGN_OR_RETURN(const CompileRequest estimate, ValidRequest(request, limits_));
  std::string shaped_model;
  ORDO_ASSIGN_OR_RETURN(const absl::string_view model_bytes,
                        ModelBytes(request, estimate, limits_.max_ops, shaped_model));
  ORDO_ASSIGN_OR_RETURN(const Graph graph,
                        ImportRequestModel(request, estimate.format, model_bytes, limits_));
  std::optional<NamespacedScheduleCache> namespaced;
  ScheduleCache* cache = deps_.cache;
  if (cache != nullptr && !cache_namespace.empty()) cache = &namespaced.emplace(*cache, cache_namespace);
  absl::StatusOr<EstimateResult> result = ordo::Estimate(graph, estimate.options, cache);
  if (!result.ok()) return WithTheFix(result.status(), estimate.options, estimate.names);
  response = rpc::EstimateResultToProto(*result);
  StoreEstimate(known_key, response, parts_generation);
  RecordEstimateAnswer("computed", cache_namespace);
  return absl::OkStatus();
}

void CompilerService::StoreEstimate(const std::string& key, const v1::EstimateResponse& response,
                                    uint64_t parts_generation) const {
  if (deps_.responses == nullptr || key.empty()) return;
  if (deps_.cache == nullptr) {
    deps_.responses->InsertEstimate(key, response, std::nullopt);
    return;
  }
  // A shared cache (Redis) is filled by other servers' compiles too,
  // which this process does not count: its answers are not kept. Even an
  // answer with every part cached may change when a compile stores a part
  // anew, so every answer carries the generation.
  if (deps_.cache->kind() != "memory") return;
  deps_.responses->InsertEstimate(key, response, parts_generation);
}

void CompilerService::RecordEstimateAnswer(absl::string_view source,
                                           absl::string_view cache_namespace) const {
  rpc::ServiceMetrics* metrics = deps_.env.metrics;
  if (metrics == nullptr) return;
  metrics->AddEstimateAnswer(source);
  // Only calls that could have been answered from the cache count as its
  // hits and misses.
  if (deps_.responses == nullptr) return;
  metrics->AddNamespaceCacheEvents(cache_namespace, source == "computed" ? "miss" : "hit");
}

void CompilerService::FillInfo(v1::GetInfoResponse& response) const {
  response.set_version(std::string(kVersion));
  response.set_algorithm_version(std::string(kPartAlgorithmVersion));
  const SchedulerRegistry& schedulers = BuiltinSchedulers();
  for (const SchedulerInfo& info : schedulers.schedulers()) {
    v1::AlgorithmInfo* out = response.add_schedulers();
    out->set_name(info.name);
    out->set_description(info.description);
    out->set_exact(info.exact);
  }
  const ArenaPlannerRegistry& planners = BuiltinArenaPlanners();
  for (const ArenaPlannerInfo& info : planners.planners()) {
    v1::AlgorithmInfo* out = response.add_arena_planners();
    out->set_name(info.name);
    out->set_description(info.description);
  }
  v1::ServerLimits* limits = response.mutable_limits();
  limits->set_max_message_bytes(limits_.max_message_bytes);
  limits->set_max_ops(limits_.max_ops);
  limits->set_max_concurrent_compiles(limits_.max_concurrent_compiles);
  *limits->mutable_default_deadline() = rpc::DurationToProto(limits_.default_deadline);
  *limits->mutable_max_deadline() = rpc::DurationToProto(limits_.max_deadline);
  limits->set_max_state_bytes(limits_.max_state_bytes);
  if (deps_.workers != nullptr) {
    for (const WorkerEndpoint& worker : deps_.workers->Workers()) {
      v1::WorkerInfo* out = response.add_workers();
      out->set_address(worker.address);
      out->set_healthy(worker.healthy);
      out->set_restarts(worker.restarts);
    }
  }
  response.set_cache(deps_.cache != nullptr ? std::string(deps_.cache->kind()) : "none");
  response.set_default_cache_namespace(deps_.cache_namespace);
  rpc::DevicePresetsToProto(response);
}

grpc::ServerUnaryReactor* CompilerService::Compile(grpc::CallbackServerContext* context,
                                                   const v1::CompileRequest* request,
                                                   v1::CompileResponse* response) {
  // The request's key is its whole serialized bytes: made once, by the
  // fast path, and handed to the compile on a miss.
  auto key = std::make_shared<std::string>();
  return rpc::ServeUnaryWithFastPath(
      context, "Compile", deps_.env, *response,
      [this, request, response, key](const rpc::CallInfo& call) {
        return AnswerFromResponseCacheNow(call, *request, *response, *key);
      },
      [this, request, response, key](const rpc::CallInfo& call) {
        return RunCompile(call, *request, *response, {}, key->empty() ? nullptr : key.get());
      });
}

grpc::ServerUnaryReactor* CompilerService::Estimate(grpc::CallbackServerContext* context,
                                                    const v1::EstimateRequest* request,
                                                    v1::EstimateResponse* response) {
  // As Compile: a repeat is answered from the response cache on the
  // reactor thread, before any import.
  auto key = std::make_shared<std::string>();
  return rpc::ServeUnaryWithFastPath(
      context, "Estimate", deps_.env, *response,
      [this, request, response, key](const rpc::CallInfo& call) {
        return AnswerFromResponseCacheNow(call, *request, *response, *key);
      },
      [this, request, response, key](const rpc::CallInfo& call) {
        return RunEstimate(call, *request, *response, *key);
      });
}

grpc::ServerUnaryReactor* CompilerService::GetInfo(grpc::CallbackServerContext* context,
                                                   const v1::GetInfoRequest*,
                                                   v1::GetInfoResponse* response) {
  return rpc::ServeUnary(context, "GetInfo", deps_.env, *response,
                         [this, response](const rpc::CallInfo&) {
                           FillInfo(*response);
                           return absl::OkStatus();
                         });
}

namespace {

// CompileStream: runs the compile on the work queue and writes each
// progress event as it happens, then the result, then finishes. The callback
// API allows one write in flight: events queue in `pending_` and
// OnWriteDone starts the next. Finish comes once, after the last write.
class CompileStreamReactor final : public grpc::ServerWriteReactor<v1::CompileEvent> {
 public:
  CompileStreamReactor(CompilerService* service, grpc::CallbackServerContext* context,
                       const v1::CompileRequest* request, rpc::CallEnvironment env)
      : env_(env),
        context_(context),
        call_(rpc::MakeCallInfo(context, "CompileStream")),
        start_(absl::Now()) {
    if (env_.metrics != nullptr) env_.metrics->inflight_requests().Increment();
    env_.queue->Schedule([this, service, request] {
      v1::CompileResponse response;
      // FINISHED goes out once, with the result and only after its size
      // check: a result over the message limit ends the stream
      // RESOURCE_EXHAUSTED, which must not follow a FINISHED, and a rewrite
      // finishes a compile before its search.
      absl::Status status = service->RunCompile(
          call_, *request, response, [this](const v1::CompileProgress& progress) {
            if (progress.stage() == v1::COMPILE_STAGE_FINISHED) {
              return;
            }
            v1::CompileEvent event;
            *event.mutable_progress() = progress;
            Push(std::move(event));
          });
      if (status.ok()) {
        v1::CompileEvent finished;
        ReportFinished(response, [&finished](const v1::CompileProgress& progress) {
          *finished.mutable_progress() = progress;
        });
        v1::CompileEvent event;
        *event.mutable_result() = std::move(response);
        status = rpc::CheckResponseSize(event, env_);
        if (status.ok()) {
          Push(std::move(finished));
          Push(std::move(event));
        }
      }
      Close(std::move(status));
    });
  }
  void OnWriteDone(bool ok) override {
    std::optional<absl::Status> finish;
    bool start_next = false;
    {
      absl::MutexLock lock(&mu_);
      if (!ok) {  // the client went away: stop the search, drop the rest
        call_.cancelled->store(true);
        pending_.clear();
        if (status_.ok()) status_ = absl::CancelledError("client stopped reading");
      }
      if (!pending_.empty()) {
        writing_ = std::move(pending_.front());
        pending_.pop_front();
        start_next = true;
      } else {
        write_in_flight_ = false;
        if (closed_) {
          final_status_ = status_;
          finish = status_;
        }
      }
    }
    if (finish) {
      FinishWith(*finish);
    } else if (start_next) {
      StartWrite(&writing_);
    }
  }
  void OnCancel() override { call_.cancelled->store(true); }
  void OnDone() override {
    rpc::RecordCallEnd(env_, call_, final_status_, absl::Now() - start_);
    if (env_.metrics != nullptr) env_.metrics->inflight_requests().Decrement();
    delete this;
  }

 private:
  void Push(v1::CompileEvent event) {
    {
      absl::MutexLock lock(&mu_);
      if (write_in_flight_) {
        pending_.push_back(std::move(event));
        return;
      }
      write_in_flight_ = true;
      writing_ = std::move(event);
    }
    StartWrite(&writing_);
  }
  // The compile is over: finish now, or after the writes still queued.
  void Close(absl::Status status) {
    bool finish_now;
    {
      absl::MutexLock lock(&mu_);
      if (status_.ok()) status_ = std::move(status);
      final_status_ = status_;
      closed_ = true;
      finish_now = !write_in_flight_;
    }
    if (finish_now) FinishWith(final_status_);
  }
  // Ends the stream with `status`, its pushback trailer included.
  void FinishWith(const absl::Status& status) {
    rpc::AddRetryPushbackTrailer(status, *context_);
    Finish(rpc::ToGrpcStatus(status));
  }

  const rpc::CallEnvironment env_;
  grpc::CallbackServerContext* const context_;  // lives until OnDone
  rpc::CallInfo call_;
  const absl::Time start_;
  absl::Mutex mu_;
  std::deque<v1::CompileEvent> pending_ ABSL_GUARDED_BY(mu_);
  bool write_in_flight_ ABSL_GUARDED_BY(mu_) = false;
  bool closed_ ABSL_GUARDED_BY(mu_) = false;
  absl::Status status_ ABSL_GUARDED_BY(mu_);
  // The event being written: touched only by whoever holds the write.
  v1::CompileEvent writing_;
  // Set before Finish; read in OnDone.
  absl::Status final_status_;
};

}  // namespace

grpc::ServerBidiReactor<v1::CompileManyRequest, v1::CompileManyResponse>*
CompilerService::CompileMany(grpc::CallbackServerContext* context) {
  return NewCompileManyReactor(this, context, deps_.env,
                               std::clamp(limits_.max_concurrent_compiles, 1, 16));
}

grpc::ServerWriteReactor<v1::CompileEvent>* CompilerService::CompileStream(
    grpc::CallbackServerContext* context, const v1::CompileRequest* request) {
  return new CompileStreamReactor(this, context, request, deps_.env);
}

}  // namespace ordo::server
