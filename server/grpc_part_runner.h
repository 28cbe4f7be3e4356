#ifndef ORDO_SERVER_GRPC_PART_RUNNER_H_
#define ORDO_SERVER_GRPC_PART_RUNNER_H_

#include <atomic>
#include <memory>
#include <optional>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "core/parts/part_runner.h"
#include "ordo/v1/worker_service.grpc.pb.h"
#include "rpc/metrics.h"
#include "rpc/security.h"
#include "server/worker_directory.h"

namespace ordo::server {

// A PartRunner over gRPC workers.
//
// Each task is sent to the next healthy worker in round-robin order with
// time limit min(task limit, time to limits.deadline) and an RPC deadline a
// margin later (the worker returns its best order at its limit). A failed
// attempt (unreachable, crashed, timed out) is retried once on another
// worker if time remains; INVALID_ARGUMENT is not retried (it would fail
// again). Every answer is checked against the part (CheckClaimedSchedule:
// a valid order with the peak the simulator gives it) before it is
// accepted; a wrong one (a corrupted or foreign schedule) is rejected, its
// worker quarantined (WorkerDirectory::ReportWrongAnswer) and the task sent
// at once to another worker that has not answered it wrongly, without
// counting as a failed attempt. When every attempt failed, or no worker is
// left, the task runs in this process (RunPartTask, the same scheduler
// with the budget left), marked `fallback`.
//
// A worker that goes silent mid-task (its host cut off: packets vanish, no
// RST; or its process frozen) is found by HTTP/2 keepalive: while a task
// is in flight the channel pings every `keepalive_interval` and closes the
// connection when a ping is not acknowledged within `keepalive_timeout`,
// failing the task UNAVAILABLE; it is then retried on another worker with
// the time the request has left. So a silent worker costs a part about
// interval + timeout, not its whole budget (which would degrade the answer
// from optimal to heuristic). Workers must accept pings that often
// (ordo-worker does: WorkerServer). Tasks of one call run
// concurrently, up to `max_in_flight` at a time. Setting limits.cancelled
// cancels the RPCs in flight. Channels are made once per address and kept.
// Thread-safe.
class GrpcPartRunner final : public PartRunner {
 public:
  struct Options {
    // Concurrent tasks of one RunAll call.
    int max_in_flight = 8;
    int max_attempts = 2;
    // RPC deadline beyond the task's time limit.
    absl::Duration margin = absl::Seconds(2);
    // Silent-worker detection (see the class comment).
    absl::Duration keepalive_interval = absl::Seconds(1);
    absl::Duration keepalive_timeout = absl::Seconds(1);
    int max_message_bytes = 256 << 20;
    // Channel credentials (TLS) and bearer token of every worker call.
    rpc::ClientSecurity security = rpc::InsecureClientSecurity();
  };

  // `directory` and `metrics` (may be null) must outlive the runner.
  GrpcPartRunner(WorkerDirectory* directory, Options options,
                 rpc::ServiceMetrics* metrics);
  GrpcPartRunner(const GrpcPartRunner&) = delete;
  GrpcPartRunner& operator=(const GrpcPartRunner&) = delete;

  std::vector<PartOutcome> RunAll(absl::Span<const PartTask> tasks,
                                  const ScheduleLimits& limits) override;

 private:
  struct Call;
  PartOutcome RunOne(const PartTask& task, const ScheduleLimits& limits, Call& call);
  // The next healthy worker in round-robin order, never one in `wrong` and
  // one in `failed` only when no other is left.
  std::optional<WorkerEndpoint> PickWorker(const absl::flat_hash_set<std::string>& failed,
                                           const absl::flat_hash_set<std::string>& wrong);
  v1::Worker::Stub* StubFor(const WorkerEndpoint& worker);

  WorkerDirectory* directory_;
  const Options options_;
  rpc::ServiceMetrics* metrics_;
  std::atomic<uint64_t> next_worker_{0};
  absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::unique_ptr<v1::Worker::Stub>> stubs_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ordo::server

#endif  // ORDO_SERVER_GRPC_PART_RUNNER_H_
