#ifndef ORDO_CORE_TFLITE_TFLITE_EXPORT_H_
#define ORDO_CORE_TFLITE_TFLITE_EXPORT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/arena/arena_plan.h"
#include "core/graph/graph.h"

namespace ordo {

// TFLite Micro's arena alignment (MicroArenaBufferAlignment()): offline
// offsets must be multiples of it.
inline constexpr int64_t kTflmAlignment = 16;

struct TfliteExportOptions {
  // Graph inputs and outputs get -1 (TFLM places them itself, e.g. in a
  // buffer the application owns) instead of ordo's offsets; runtime buffers
  // (Tensor::is_runtime_buffer) keep theirs.
  bool inputs_outputs_outside_plan = false;
};

// The offline plan TFLM reads from the "OfflineMemoryAllocation" metadata
// (tflite-micro micro_allocation_info.cc): int32 values version 0,
// subgraph 0, N = tensors over all subgraphs, then one arena offset per
// tensor in subgraph order; -1 = TFLM plans it at run time (weights,
// variables, tensors of other subgraphs, tensors ordo did not place).
// Variables live in TFLM's persistent tail: the other offsets move down
// past their blocks, so the plan ends at the arena less the variables.
// `graph` must be ImportTflite(model_bytes) and `arena` a verified plan of it.
// INVALID_ARGUMENT when the arena's alignment is not a multiple of 16, its
// tensors lie in more than one memory pool (TensorPlacement::pool; TFLM has
// one arena), an offset does not fit int32, or a block is smaller than its
// tensor in the file (an activation element-size override was in force).
absl::StatusOr<std::vector<int32_t>> TfliteOfflinePlan(absl::string_view model_bytes,
                                                       const Graph& graph,
                                                       const ArenaPlan& arena,
                                                       const TfliteExportOptions& options = {});

// The model with SubGraph 0's operators in `schedule` order and the offline
// plan (TfliteOfflinePlan) in an "OfflineMemoryAllocation" metadata entry
// that replaces any existing one. Everything else is carried over byte for
// byte: new Model, SubGraph, vectors, Metadata and Buffer tables are
// PREPENDED to the original bytes (flatbuffer offsets only point forward, so
// the old tables stay valid where they are), the prefix is a multiple of 16
// bytes so buffer data keeps its alignment, and absolute Buffer.offset values
// (files over 2 GiB) are shifted by the prefix in copied Buffer tables.
// The old Model/SubGraph tables remain in the file, unreferenced.
// Linear in the file's tables. INVALID_ARGUMENT when the schedule is not a
// topological permutation of the graph's ops, the graph does not match the
// file, or the file has fields this writer cannot move (large custom options
// at absolute offsets, Model/SubGraph fields newer than it knows).
absl::StatusOr<std::string> ReorderTfliteModel(absl::string_view model_bytes, const Graph& graph,
                                               absl::Span<const OpId> schedule,
                                               const ArenaPlan& arena,
                                               const TfliteExportOptions& options = {});

}  // namespace ordo

#endif  // ORDO_CORE_TFLITE_TFLITE_EXPORT_H_
