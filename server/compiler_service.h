#ifndef ORDO_SERVER_COMPILER_SERVICE_H_
#define ORDO_SERVER_COMPILER_SERVICE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>

#include "absl/time/time.h"
#include "core/parts/part_runner.h"
#include "core/cache/schedule_cache.h"
#include "core/compile/compile.h"
#include "core/util/clock.h"
#include "ordo/v1/compiler_service.grpc.pb.h"
#include "rpc/service_call.h"
#include "server/response_cache.h"
#include "server/single_flight.h"
#include "server/worker_directory.h"

namespace ordo::server {

// Limits the public API enforces.
struct CompilerLimits {
  int64_t max_message_bytes = 256 << 20;
  int64_t max_ops = 100000;
  // Compile/CompileStream calls at once; more fail fast, RESOURCE_EXHAUSTED.
  int32_t max_concurrent_compiles = 8;
  // Applied to calls without a deadline; deadlines are capped at max.
  absl::Duration default_deadline = absl::Seconds(60);
  absl::Duration max_deadline = absl::Minutes(10);
  // Memory one compile's schedule search may hold (DP states, memo tables);
  // requests may ask for less (CompileOptions.max_state_bytes), never more.
  // Hitting it ends the search with the best schedule so far.
  int64_t max_state_bytes = int64_t{1} << 30;
};

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
    const WorkerDirectory* workers = nullptr;
    const Clock* clock = nullptr;
    rpc::CallEnvironment env;
  };

  CompilerService(CompilerLimits limits, Dependencies deps) : limits_(limits), deps_(deps) {}
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
  absl::Status RunCompile(const rpc::CallInfo& call, const v1::CompileRequest& request,
                          v1::CompileResponse& response,
                          const std::function<void(const v1::CompileProgress&)>& on_progress);

 private:
  // A call's result as single-flight shares it with identical calls.
  struct SharedCompile {
    absl::Status status;
    v1::CompileResponse response;
  };
  // The response cache's answer to `key`, if any, marked as cached.
  bool AnswerFromResponseCache(
      const std::string& key, absl::Time start, v1::CompileResponse& response,
      const std::function<void(const v1::CompileProgress&)>& on_progress) const;
  // Validate, import and compile the request in this call (a slot of the
  // concurrent-compile limit held throughout); stores optimal answers.
  absl::Status CompileRequestNow(
      const rpc::CallInfo& call, const v1::CompileRequest& request, const std::string& key,
      absl::Time start, v1::CompileResponse& response,
      const std::function<void(const v1::CompileProgress&)>& on_progress);
  absl::Time CallDeadline(const rpc::CallInfo& call, absl::Time start) const;
  void RecordCompileAnswer(absl::string_view source) const;
  void RecordCacheMetrics(const CompileResult& result) const;
  absl::Status RunEstimate(const v1::EstimateRequest& request, v1::EstimateResponse& response);
  void FillInfo(v1::GetInfoResponse& response) const;

  const CompilerLimits limits_;
  const Dependencies deps_;
  std::atomic<int32_t> compiles_running_{0};
  // Identical Compile requests in flight, by CompileRequestKey.
  SingleFlight<SharedCompile> flights_;
};

}  // namespace ordo::server

#endif  // ORDO_SERVER_COMPILER_SERVICE_H_
