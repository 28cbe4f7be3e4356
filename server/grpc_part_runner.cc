#include "server/grpc_part_runner.h"

#include <algorithm>
#include <optional>
#include <thread>

#include "absl/strings/str_cat.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"
#include "core/schedule/scheduler.h"
#include "rpc/grpc_status.h"
#include "rpc/log.h"
#include "rpc/memory_model_proto.h"
#include "server/worker_targets.h"

namespace ordo::server {

// The in-flight RPC contexts of one RunAll call, each with its task's stop
// flag, so cancellation and stops reach them.
struct GrpcPartRunner::Call {
  struct Rpc {
    grpc::ClientContext* context;
    const std::atomic<bool>* stop;
  };
  absl::Mutex mu;
  std::vector<Rpc> active ABSL_GUARDED_BY(mu);
  int done ABSL_GUARDED_BY(mu) = 0;
  int expected = 0;
};

GrpcPartRunner::GrpcPartRunner(WorkerDirectory* directory, Options options,
                               rpc::ServiceMetrics* metrics)
    : directory_(directory), options_(options), metrics_(metrics) {}

v1::Worker::Stub* GrpcPartRunner::StubFor(const WorkerEndpoint& worker) {
  absl::MutexLock lock(&mu_);
  auto& stub = stubs_[worker.address];
  if (stub == nullptr) {
    grpc::ChannelArguments args;
    args.SetMaxReceiveMessageSize(options_.max_message_bytes);
    args.SetMaxSendMessageSize(options_.max_message_bytes);
    // For resolver targets naming many workers (dns:///workers:50052).
    args.SetLoadBalancingPolicyName("round_robin");
    // Reconnect quickly to a restarted worker.
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
    // Pings only while tasks are in flight, and without limit: a part may
    // search for minutes without sending a byte.
    args.SetInt(GRPC_ARG_KEEPALIVE_TIME_MS,
                static_cast<int>(absl::ToInt64Milliseconds(options_.keepalive_interval)));
    args.SetInt(GRPC_ARG_KEEPALIVE_TIMEOUT_MS,
                static_cast<int>(absl::ToInt64Milliseconds(options_.keepalive_timeout)));
    args.SetInt(GRPC_ARG_KEEPALIVE_PERMIT_WITHOUT_CALLS, 0);
    args.SetInt(GRPC_ARG_HTTP2_MAX_PINGS_WITHOUT_DATA, 0);
    args.SetInt(GRPC_ARG_HTTP2_MIN_SENT_PING_INTERVAL_WITHOUT_DATA_MS,
                static_cast<int>(absl::ToInt64Milliseconds(options_.keepalive_interval)));
    ApplyWorkerAuthority(worker.authority, args);
    stub = v1::Worker::NewStub(
        grpc::CreateCustomChannel(worker.address, options_.security.credentials, args));
  }
  return stub.get();
}

std::optional<WorkerEndpoint> GrpcPartRunner::PickWorker(
    const absl::flat_hash_set<std::string>& failed, const absl::flat_hash_set<std::string>& wrong) {
  std::vector<WorkerEndpoint> fresh, tried;
  for (WorkerEndpoint& worker : directory_->Workers()) {
    if (!worker.healthy || worker.address.empty() || wrong.contains(worker.address)) continue;
    (failed.contains(worker.address) ? tried : fresh).push_back(std::move(worker));
  }
  const std::vector<WorkerEndpoint>& pool = fresh.empty() ? tried : fresh;
  if (pool.empty()) return std::nullopt;
  return pool[next_worker_++ % pool.size()];
}

PartOutcome GrpcPartRunner::RunOne(const PartTask& task, const ScheduleLimits& limits,
                                   Call& call) {
  PartOutcome outcome;
  v1::SubgraphTask request;
  *request.mutable_model() = rpc::MemoryModelToProto(*task.model);
  request.set_scheduler(task.scheduler);
  request.set_request_id(task.request_id);
  // The request's search-memory budget travels with the part (the worker
  // also caps it by its own).
  request.set_max_state_bytes(limits.max_state_bytes);
  // Workers that failed this task (tried again only if nobody else is
  // healthy) and workers that answered it wrongly (never again).
  absl::flat_hash_set<std::string> failed, wrong;
  int failures = 0;
  for (int attempt = 0; failures < options_.max_attempts; ++attempt) {
    if (limits.cancelled != nullptr && limits.cancelled->load()) {
      outcome.result = absl::CancelledError("compile cancelled");
      return outcome;
    }
    if (task.stop != nullptr && task.stop->load()) {
      outcome.result = absl::CancelledError("part no longer needed");
      return outcome;
    }
    const absl::Time now = limits.Now();
    const absl::Duration budget = std::min(task.time_limit, limits.deadline - now);
    if (budget <= absl::ZeroDuration()) break;
    const std::optional<WorkerEndpoint> worker = PickWorker(failed, wrong);
    if (!worker) break;
    const std::string& address = worker->address;
    if (attempt > 0) {
      ++outcome.retries;
      if (metrics_ != nullptr) metrics_->AddWorkerTasks("retry", 1);
    }
    *request.mutable_time_limit() = rpc::DurationToProto(budget);
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + budget + options_.margin));
    context.AddMetadata("x-request-id", task.request_id);
    options_.security.Apply(context);
    {
      absl::MutexLock lock(&call.mu);
      call.active.push_back({&context, task.stop});
    }
    v1::SubgraphResult response;
    const absl::Time start = absl::Now();
    const grpc::Status status = StubFor(*worker)->ScheduleSubgraph(&context, request, &response);
    {
      absl::MutexLock lock(&call.mu);
      call.active.erase(
          std::find_if(call.active.begin(), call.active.end(),
                       [&](const Call::Rpc& rpc) { return rpc.context == &context; }));
    }
    if (status.ok()) {
      absl::StatusOr<ScheduleResult> checked =
          CheckClaimedSchedule(*task.model, rpc::SubgraphResultFromProto(response));
      if (checked.ok()) {
        if (metrics_ != nullptr) metrics_->RecordWorkerTask("ok", absl::Now() - start);
        outcome.result = *std::move(checked);
        outcome.runner = address;
        return outcome;
      }
      // A wrong answer (corrupted, foreign, another version's) is no
      // network fault: the worker answers probes and would lie again. It is
      // quarantined and the part goes elsewhere at once, with the budget it
      // still has, so the answer stays as good as without the liar.
      ++outcome.rejected_answers;
      if (metrics_ != nullptr) metrics_->RecordWorkerTask("rejected", absl::Now() - start);
      rpc::Log(rpc::LogLevel::kWarning, task.request_id,
               absl::StrCat("worker ", address, " answered a part of ", task.model->num_ops(),
                            " ops with a schedule that fails the check (",
                            checked.status().message(), "): rejected, worker quarantined"));
      wrong.insert(address);
      directory_->ReportWrongAnswer(address);
      continue;
    }
    if (task.stop != nullptr && task.stop->load()) {
      // Stopped by RunAll's wait (the caller's wish, no fault of the worker).
      if (metrics_ != nullptr) metrics_->RecordWorkerTask("stopped", absl::Now() - start);
      outcome.result = absl::CancelledError("part no longer needed");
      return outcome;
    }
    const absl::Status error = rpc::FromGrpcStatus(status);
    rpc::Log(rpc::LogLevel::kWarning, task.request_id,
             absl::StrCat("worker ", address, " failed a part of ", task.model->num_ops(),
                          " ops: ", error.ToString()));
    if (metrics_ != nullptr) metrics_->RecordWorkerTask("error", absl::Now() - start);
    ++failures;
    failed.insert(address);
    if (status.error_code() == grpc::StatusCode::INVALID_ARGUMENT) break;
    if (status.error_code() != grpc::StatusCode::CANCELLED) directory_->ReportFailure(address);
  }
  // No worker could do it: schedule here, within what is left of the budget.
  if (metrics_ != nullptr) metrics_->AddWorkerTasks("fallback", 1);
  outcome.fallback = true;
  outcome.runner = kInProcessRunner;
  outcome.result = RunPartTask(task, limits);
  return outcome;
}

std::vector<PartOutcome> GrpcPartRunner::RunAll(absl::Span<const PartTask> tasks,
                                                const ScheduleLimits& limits) {
  std::vector<PartOutcome> outcomes(tasks.size());
  Call call;
  std::atomic<size_t> next{0};
  const size_t threads = std::min<size_t>(std::max(options_.max_in_flight, 1), tasks.size());
  call.expected = static_cast<int>(threads);
  std::vector<std::thread> pool;
  for (size_t t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (size_t i = next++; i < tasks.size(); i = next++) {
        outcomes[i] = RunOne(tasks[i], limits, call);
        if (tasks[i].on_done) tasks[i].on_done(outcomes[i]);
      }
      absl::MutexLock lock(&call.mu);
      ++call.done;
    });
  }
  // Wait; pass a cancellation, and each task's stop, on to the RPCs in
  // flight.
  {
    absl::MutexLock lock(&call.mu);
    const absl::Condition all_done(
        +[](Call* c) ABSL_NO_THREAD_SAFETY_ANALYSIS { return c->done == c->expected; }, &call);
    while (!call.mu.AwaitWithTimeout(all_done, absl::Milliseconds(50))) {
      const bool cancelled = limits.cancelled != nullptr && limits.cancelled->load();
      for (const Call::Rpc& rpc : call.active) {
        if (cancelled || (rpc.stop != nullptr && rpc.stop->load())) rpc.context->TryCancel();
      }
    }
  }
  for (std::thread& thread : pool) thread.join();
  return outcomes;
}

}  // namespace ordo::server
