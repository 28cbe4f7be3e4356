#include "workers/worker_service.h"

#include <algorithm>

#include "absl/strings/str_cat.h"
#include "core/schedule/scheduler_registry.h"
#include "core/util/clock.h"
#include "core/util/status_macros.h"
#include "rpc/log.h"

namespace ordo::worker {
namespace {

absl::Status Schedule(const WorkerService::Options& options, rpc::ServiceMetrics* metrics,
                      const rpc::CallInfo& call, const v1::SubgraphTask& task,
                      v1::SubgraphResult& out) {
  ORDO_ASSIGN_OR_RETURN(MemoryModel model, rpc::MemoryModelFromProto(task.model(), options.limits));
  ORDO_ASSIGN_OR_RETURN(std::unique_ptr<Scheduler> scheduler,
                        PartSchedulers().Create(task.scheduler()));
  static const RealClock kClock;
  ScheduleLimits limits;
  limits.clock = &kClock;
  limits.deadline = std::min(call.deadline, kClock.Now() + rpc::DurationFromProto(task.time_limit()));
  limits.max_state_bytes = task.max_state_bytes() > 0
                               ? std::min(task.max_state_bytes(), options.max_state_bytes)
                               : options.max_state_bytes;
  limits.cancelled = call.cancelled.get();
  ORDO_ASSIGN_OR_RETURN(ScheduleResult result, scheduler->Schedule(model, limits));
  if (metrics != nullptr) metrics->RecordStatesExpanded(result.stats.states_expanded);
  if (call.cancelled->load()) return absl::CancelledError("task cancelled by the caller");
  rpc::Log(rpc::LogLevel::kDebug, task.request_id(),
           absl::StrCat("part of ", model.num_ops(), " ops: peak ", result.peak_bytes, " by ",
                        result.algorithm));
  out = rpc::SubgraphResultToProto(result);
  return absl::OkStatus();
}

}  // namespace

grpc::ServerUnaryReactor* WorkerService::ScheduleSubgraph(grpc::CallbackServerContext* context,
                                                          const v1::SubgraphTask* task,
                                                          v1::SubgraphResult* result) {
  return rpc::ServeUnary(context, "ScheduleSubgraph", env_, *result,
                         [this, task, result](const rpc::CallInfo& call) {
                           return Schedule(options_, env_.metrics, call, *task, *result);
                         });
}

}  // namespace ordo::worker
