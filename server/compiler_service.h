#ifndef ORDO_SERVER_COMPILER_SERVICE_H_
#define ORDO_SERVER_COMPILER_SERVICE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <utility>

#include "absl/time/time.h"
#include "core/cache/schedule_cache.h"
#include "core/compile/compile.h"
#include "core/compile/compile_request.h"
#include "core/compile/rewrite_compile.h"
#include "core/parts/part_runner.h"
#include "core/util/clock.h"
#include "ordo/v1/compiler_service.grpc.pb.h"
#include "rpc/service_call.h"
#include "server/compile_admission.h"
#include "server/compile_budget.h"
#include "server/name_free_result_cache.h"
#include "server/namespaced_schedule_cache.h"
#include "server/response_cache.h"
#include "server/single_flight.h"
#include "server/worker_directory.h"

namespace ordo::server {

// The public Compiler service: thin methods over the compile stages
// (Import -> Validate -> Partition -> cache + PartRunner -> Combine ->
// Verify -> PlanArena -> EstimateTraffic), each answered through
// rpc::ServeUnary (work off the reactor thread, request id, logs, metrics,
// ToGrpcStatus). Deadlines: the schedule search gets the requested time
// limit capped so that verification, arena and traffic still fit before the
// call's deadline; when the search runs out, the best schedule found is
// returned with a non-optimal status. Thread-safe.
class CompilerService final : public v1::Compiler::CallbackService {
 public:
  struct Dependencies {
    // All must outlive the service. `cache` and `workers` may be null.
    PartRunner* runner = nullptr;
    ScheduleCache* cache = nullptr;
    // Whole responses by request; may be null.
    ResponseCache* responses = nullptr;
    // Whole results by request up to names (NameFreeRequestKey); may be
    // null.
    NameFreeResultCache* name_free_results = nullptr;
    const WorkerDirectory* workers = nullptr;
    // Namespace of calls that name none (ordo-server --cache-namespace);
    // empty: the shared one. Valid (CheckCacheNamespace).
    std::string cache_namespace;
    const Clock* clock = nullptr;
    // Its max_response_bytes is set from limits.max_message_bytes.
    rpc::CallEnvironment env;
  };

  CompilerService(CompilerLimits limits, Dependencies deps)
      : limits_(limits),
        deps_(WithResponseLimit(std::move(deps), limits)),
        admission_(limits.max_concurrent_compiles) {}
  CompilerService(const CompilerService&) = delete;
  CompilerService& operator=(const CompilerService&) = delete;

  grpc::ServerUnaryReactor* Compile(grpc::CallbackServerContext* context,
                                    const v1::CompileRequest* request,
                                    v1::CompileResponse* response) override;
  grpc::ServerWriteReactor<v1::CompileEvent>* CompileStream(
      grpc::CallbackServerContext* context, const v1::CompileRequest* request) override;
  grpc::ServerBidiReactor<v1::CompileManyRequest, v1::CompileManyResponse>* CompileMany(
      grpc::CallbackServerContext* context) override;
  grpc::ServerUnaryReactor* Estimate(grpc::CallbackServerContext* context,
                                     const v1::EstimateRequest* request,
                                     v1::EstimateResponse* response) override;
  grpc::ServerUnaryReactor* GetInfo(grpc::CallbackServerContext* context,
                                    const v1::GetInfoRequest* request,
                                    v1::GetInfoResponse* response) override;

  // The body of Compile; `on_progress` (may be empty) sees each stage.
  // `known_key`: the request's WholeAnswerKey when the caller has made it
  // and looked it up in the response cache already (null: both done here).
  absl::Status RunCompile(const rpc::CallInfo& call, const v1::CompileRequest& request,
                          v1::CompileResponse& response,
                          const std::function<void(const v1::CompileProgress&)>& on_progress,
                          const std::string* known_key = nullptr);

 private:
  // A call's result as single-flight shares it with identical calls.
  struct SharedCompile {
    absl::Status status;
    v1::CompileResponse response;
  };
  // Its followers stream the leader's progress.
  using SharedCompileFlights = SingleFlight<SharedCompile, v1::CompileProgress>;
  // The response cache's answer to `key`, if any, marked as cached.
  bool AnswerFromResponseCache(
      const std::string& key, absl::Time start, v1::CompileResponse& response,
      const std::function<void(const v1::CompileProgress&)>& on_progress) const;
  // Identical calls in flight share one CompileRequestNow; a call whose
  // shared compile ended on the other client's cancel compiles itself.
  absl::Status CompileOrShare(const rpc::CallInfo& call, const v1::CompileRequest& request,
                              const std::string& key, absl::Time start,
                              v1::CompileResponse& response,
                              const std::function<void(const v1::CompileProgress&)>& on_progress);
  // The name-free cache's answer for `graph` (imported from `request`):
  // the stored result mapped to the graph's names and re-checked on it
  // (ResultForGraph), as the response; also stored under `key` in the
  // response cache. False on a miss or when the entry fails the check.
  bool AnswerFromNameFreeCache(
      const rpc::CallInfo& call, const std::string& key, const v1::DeviceSpec& device,
      const CompileRequest& compile, absl::string_view model_bytes, const Graph& graph,
      const CanonicalGraph& canonical, const std::string& name_free_key, absl::Time start,
      v1::CompileResponse& response,
      const std::function<void(const v1::CompileProgress&)>& on_progress) const;
  // Stores an optimal result without rewriting or pools in the name-free
  // cache, in canonical numbering.
  void StoreNameFree(const std::string& name_free_key, const CanonicalGraph& canonical,
                     const RewriteCompileResult& result) const;
  // Admit, validate, import, budget and compile the request in this call
  // (a slot of the concurrent-compile limit held throughout); stores
  // optimal answers in the response cache.
  absl::Status CompileRequestNow(
      const rpc::CallInfo& call, const v1::CompileRequest& request, const std::string& key,
      absl::Time start, v1::CompileResponse& response,
      const std::function<void(const v1::CompileProgress&)>& on_progress);
  // The key of the request's whole answer (response cache, name-free
  // cache prefix, single-flight): its namespace and bytes (Compile and
  // Estimate in key spaces of their own). INVALID_ARGUMENT or
  // RESOURCE_EXHAUSTED for a bad namespace or too many ops.
  template <typename Request>
  absl::StatusOr<std::string> WholeAnswerKey(const rpc::CallInfo& call,
                                             const Request& request) const;
  // The fast path of Compile and Estimate, run on the reactor thread: the
  // answer when the response cache holds it, else nullopt (the method's
  // body then runs on the work queue) with the key it looked up in
  // `key_out`, so that the body need not make it again (unset when there
  // is no cache or the request is bad).
  template <typename Request, typename Response>
  std::optional<absl::Status> AnswerFromResponseCacheNow(const rpc::CallInfo& call,
                                                         const Request& request,
                                                         Response& response,
                                                         std::string& key_out) const;
  // The response cache's Estimate answer to `key` that still holds, if
  // any.
  bool AnswerFromResponseCache(const std::string& key, v1::EstimateResponse& response) const;
  // Compile's AnswerFromResponseCache for a call that started now, with no
  // progress listener (the fast path's).
  bool AnswerFromResponseCache(const std::string& key, v1::CompileResponse& response) const;
  // Stores a computed Estimate answer under `key` (empty: not stored) when
  // it is a function of the request and of this process's part cache at
  // `parts_generation`.
  void StoreEstimate(const std::string& key, const v1::EstimateResponse& response,
                     uint64_t parts_generation) const;
  // One Estimate answer from `source` (computed or response_cache) in
  // namespace `cache_namespace`.
  void RecordEstimateAnswer(absl::string_view source, absl::string_view cache_namespace) const;
  // The search time and the stages' deadline of `budget` into `compile`.
  static void ApplyBudget(const CompileBudget& budget, CompileRequest& compile);
  // CompileWithRewrite through this server's runner and cache; a search
  // cancelled because `deadline` passed before any schedule existed is
  // DEADLINE_EXCEEDED.
  absl::StatusOr<RewriteCompileResult> CompileBefore(
      absl::Time deadline, const rpc::CallInfo& call, const CompileRequest& compile,
      absl::string_view model_bytes, const Graph& graph, const std::string& cache_namespace,
      std::function<void(const CompileProgress&)> on_progress) const;
  // The result as the API's response, with the reordered models asked for.
  // `compiled_graph` is the graph `compiled` scheduled (the rewritten one,
  // or `graph`); `rewrite` is set when a rewrite search ran. `device` is
  // the request's, echoed where the core keeps less of it.
  static absl::StatusOr<v1::CompileResponse> ResponseOf(
      const v1::DeviceSpec& device, const CompileRequest& compile, absl::string_view model_bytes,
      const Graph& graph, const Graph& compiled_graph, const CompileResult& compiled,
      const std::optional<RewriteSummary>& rewrite);
  // One Compile answer from `source` for the call whose whole-answer key
  // is `key` (its namespace is the key's prefix).
  void RecordCompileAnswer(absl::string_view source, absl::string_view key) const;
  void RecordCacheMetrics(const CompileResult& result, absl::string_view cache_namespace) const;
  // The body of Estimate; `known_key` is the fast path's key (empty: not
  // stored).
  absl::Status RunEstimate(const rpc::CallInfo& call, const v1::EstimateRequest& request,
                           v1::EstimateResponse& response, const std::string& known_key);
  // The call's cache namespace, checked: the request's
  // CompileOptions.cache_namespace, else the call's metadata, else the
  // server's; INVALID_ARGUMENT naming the field or metadata key when it is
  // not valid.
  absl::StatusOr<std::string> CacheNamespaceOf(const rpc::CallInfo& call,
                                               const v1::CompileOptions& options) const;
  // The same without the check (for calls RunCompile has checked).
  const std::string& ChosenNamespace(const rpc::CallInfo& call,
                                     const v1::CompileOptions& options) const;
  void FillInfo(v1::GetInfoResponse& response) const;

  const CompilerLimits limits_;
  static Dependencies WithResponseLimit(Dependencies deps, const CompilerLimits& limits) {
    deps.env.max_response_bytes = limits.max_message_bytes;
    return deps;
  }

  const Dependencies deps_;
  CompileAdmission admission_;
  // Identical Compile requests in flight, by CompileRequestKey.
  SharedCompileFlights flights_;
  // Compiles that may have stored parts in the part cache, counted when
  // each ends: an Estimate answer that found parts missing holds only
  // while this is unchanged.
  std::atomic<uint64_t> parts_generation_{0};
};

}  // namespace ordo::server

#endif  // ORDO_SERVER_COMPILER_SERVICE_H_
