#ifndef ORDO_RPC_POOLS_PROTO_H_
#define ORDO_RPC_POOLS_PROTO_H_

#include "absl/status/statusor.h"
#include "core/arena/arena_plan.h"
#include "core/graph/graph.h"
#include "core/memory/memory_model.h"
#include "core/memory/simulator.h"
#include "core/pools/device_presets.h"
#include "core/pools/memory_pools.h"
#include "core/pools/place_pools.h"
#include "ordo/v1/compiler_service.pb.h"

namespace ordo::rpc {

// DeviceSpec.pools (or .preset) and .pinned_tensors as core PoolOptions
// (the server's side). A read bandwidth of 0 is the default, a write
// bandwidth of 0 the read one. INVALID_ARGUMENT naming the field and the
// pool: both preset and pools, an unknown preset, pins without pools, a
// negative or non-finite bandwidth, and what ValidatePoolOptions refuses.
absl::StatusOr<PoolOptions> PoolOptionsFromProto(const v1::DeviceSpec& device);

// The inverse, for clients: the pools and pins into `device`.
void PoolOptionsToProto(const PoolOptions& options, v1::DeviceSpec& device);

// The built-in presets for GetInfo.
void DevicePresetsToProto(v1::GetInfoResponse& response);

// The place stage's report into CompileResponse.placement.
void PoolReportToProto(const PoolReport& report, v1::PoolPlacementReport& out);

// CompileResponse.placement back into a PoolReport for the client's own copy
// of the model, trusting nothing: `arena` (tensors with their pools, from
// the response) is re-checked and re-evaluated here
// (RecheckPoolPlacement), and the server's fits and modelled time must
// agree with that. The bound, baselines and overflow text are the server's.
// INVALID_ARGUMENT, prefixed "response:", otherwise.
absl::StatusOr<PoolReport> PoolReportFromProto(const Graph& graph, const MemoryModel& model,
                                               const SimulationResult& simulation,
                                               int64_t alignment, const PoolOptions& options,
                                               const ArenaPlan& arena,
                                               const v1::PoolPlacementReport& in);

}  // namespace ordo::rpc

#endif  // ORDO_RPC_POOLS_PROTO_H_
