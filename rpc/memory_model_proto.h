#ifndef ORDO_RPC_MEMORY_MODEL_PROTO_H_
#define ORDO_RPC_MEMORY_MODEL_PROTO_H_

// ordo::MemoryModel and scheduling results <-> ordo.v1 messages. The only
// code that knows both the core types and the wire format.

#include <cstdint>

#include "absl/status/statusor.h"
#include "absl/time/time.h"
#include "core/memory/memory_model.h"
#include "core/schedule/scheduler.h"
#include "google/protobuf/duration.pb.h"
#include "ordo/v1/memory_model.pb.h"
#include "ordo/v1/schedule.pb.h"
#include "ordo/v1/worker_service.pb.h"

namespace ordo::rpc {

// What a decoded model may hold; a worker refuses bigger tasks.
struct MemoryModelLimits {
  int32_t max_ops = 1000000;
  int32_t max_tensors = 4000000;
  int64_t max_edges = 16000000;
};

v1::MemoryModel MemoryModelToProto(const MemoryModel& model);

// Decodes and validates, so that nothing in the message can reach a CHECK
// or an out-of-range index in a scheduler: counts within `limits`; every id
// in range; sizes non-negative and their total within int64; each op's
// inputs distinct and ascending, outputs distinct and produced by it alone;
// each tensor's producer and consumers exactly those the ops declare; an
// in-place input read by its op, of the same size as its single output;
// activation_element_bytes in [0, 16]; the ops acyclic. INVALID_ARGUMENT
// naming the op or tensor and the rule broken. O(ops + tensors + edges).
absl::StatusOr<MemoryModel> MemoryModelFromProto(const v1::MemoryModel& proto,
                                                 const MemoryModelLimits& limits = {});

v1::ScheduleStatus ScheduleStatusToProto(ScheduleStatus status);
// UNSPECIFIED and unknown values decode as kHeuristic (the weakest claim).
ScheduleStatus ScheduleStatusFromProto(v1::ScheduleStatus status);

// The longest time limit the API and the CLI take; longer ones (an
// infinite one included) are taken as this.
inline constexpr absl::Duration kMaxTimeLimit = absl::Hours(24);

// Saturated to google.protobuf.Duration's range (about +-10,000 years):
// beyond it (an infinite duration) a Duration cannot be encoded, and the
// JSON mapping fails on it.
google::protobuf::Duration DurationToProto(absl::Duration duration);
// Clamped to [0, kMaxTimeLimit]; negative and malformed values become 0.
absl::Duration DurationFromProto(const google::protobuf::Duration& proto);

// A worker's result <-> the scheduling result it carries (order unverified).
v1::SubgraphResult SubgraphResultToProto(const ScheduleResult& result);
ScheduleResult SubgraphResultFromProto(const v1::SubgraphResult& proto);

}  // namespace ordo::rpc

#endif  // ORDO_RPC_MEMORY_MODEL_PROTO_H_
