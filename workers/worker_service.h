#ifndef ORDO_WORKERS_WORKER_SERVICE_H_
#define ORDO_WORKERS_WORKER_SERVICE_H_

#include <cstdint>

#include "ordo/v1/worker_service.grpc.pb.h"
#include "rpc/memory_model_proto.h"
#include "rpc/service_call.h"

namespace ordo::worker {

// The internal Worker service: schedules one part per call.
//
// ScheduleSubgraph: decode and validate the task (MemoryModelFromProto:
// INVALID_ARGUMENT for anything malformed), run the named scheduler until
// min(call deadline, now + task time limit), stopping early when the call is
// cancelled (the scheduler's cancelled flag), and return the order with its
// re-simulated peak. Work runs on the environment's queue, never on a
// reactor thread. Thread-safe; stateless between calls.
class WorkerService final : public v1::Worker::CallbackService {
 public:
  struct Options {
    // Search memory per task when the task does not say; also the cap.
    int64_t max_state_bytes = int64_t{1} << 30;
    rpc::MemoryModelLimits limits;
  };

  // `env` members must outlive the service.
  WorkerService(Options options, rpc::CallEnvironment env)
      : options_(options), env_(env) {}
  WorkerService(const WorkerService&) = delete;
  WorkerService& operator=(const WorkerService&) = delete;

  grpc::ServerUnaryReactor* ScheduleSubgraph(grpc::CallbackServerContext* context,
                                             const v1::SubgraphTask* task,
                                             v1::SubgraphResult* result) override;

 private:
  const Options options_;
  const rpc::CallEnvironment env_;
};

}  // namespace ordo::worker

#endif  // ORDO_WORKERS_WORKER_SERVICE_H_
