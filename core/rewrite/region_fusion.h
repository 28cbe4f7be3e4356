#ifndef ORDO_CORE_REWRITE_REGION_FUSION_H_
#define ORDO_CORE_REWRITE_REGION_FUSION_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/graph/graph.h"
#include "core/memory/memory_model.h"
#include "core/rewrite/op_semantics.h"
#include "onnx/onnx_pb.h"

namespace ordo {

// Line-buffered fusion of regions that span branches and joins (MCUNetV2's
// patch-based inference of a whole stage, for the NAS cells, stems and
// RandWire stages that chains of patch_fusion.h stop at).
//
// A region is a convex set of row-streamable ops: every op has one output,
// NCHW, and computes output row y from a range of rows of each activation
// input: sliding windows (Conv, MaxPool, AveragePool), per-element ops of any
// number of same-shaped activations (Relu family, Add, Mul, Sum, ...),
// Concat along channels, and Pad (constant) / Slice (positive steps) along
// H, with their offsets and steps read from the model's constants.
// A tensor whose producer and readers are all in the region and that is not
// a graph output is internal: it is never whole in memory, only a ring of
// rows. The other tensors the region writes are its outputs, written whole;
// the activations it reads from outside are its inputs, read whole.
//
// How it runs (CostOfRegion's row schedule): demand-driven, one row at a time. The
// region's outputs advance in proportion to their heights (the one least
// advanced produces its next row); producing row y of an op first produces,
// recursively, the rows of its region inputs that row reads, and after it a
// tensor's rows below what every reader's next row reads are dropped. Each
// internal tensor's ring is the most rows it ever holds; every element is
// computed once (no extra MACs). Where readers of one tensor lag far behind
// each other that schedule holds many rows; the other order (RowOrder::
// kReadersFirst: always the op latest in topological order that can
// produce its next row) drops rows as early as they can be, and the region
// runs whichever order holds fewer bytes. As a fused node (ApplyFusedNodes), the
// region's step costs inputs + outputs + workspace = the rings.
//
// Column strips (MCUNetV2's patches, as whole-height strips): a region may
// run S times, each time over one vertical strip of its outputs (strip s:
// columns [s W / S, (s + 1) W / S) of every output of width W), row by row
// as above. A ring then holds the columns of its tensor that one strip
// reads (the strip widened by the halo of the windows between it and the
// outputs), not the whole width; the halo columns are computed again by
// the neighbouring strip (extra MACs). Inputs are read and outputs written
// whole, as with one strip.

// Per op, how one output row (column) reads the rows (columns) of its
// activation inputs (one window along H and W for all of them), or nullopt
// when the op cannot be in a region. `constants` (the graph the model's nodes come from) gives Pad and
// Slice their exact offsets and steps, and lets Slice in at all (its steps
// must be positive); without it, Pad's window covers every shift of its
// size change. O(model).
using StreamWindows = std::vector<std::optional<Window>>;
StreamWindows StreamableOps(const Graph& graph, const onnx::GraphProto* constants);

// The two row schedules CostOfRegion compares; a region runs the one whose
// rings are smaller.
enum class RowOrder : int8_t {
  kOutputsInProportion,  // demand-driven from the outputs (above)
  kReadersFirst,         // the latest op that can produce a row does: rows
                         // are read as soon as they exist
};

struct RegionCost {
  std::vector<TensorId> inputs;    // activations read from outside
  std::vector<TensorId> outputs;   // written whole: read outside, or graph outputs
  std::vector<TensorId> internal;  // streamed through rings
  std::vector<int64_t> ring_rows;     // per internal tensor
  std::vector<int64_t> ring_columns;  // per internal tensor: its width, or a strip's columns
  int32_t strips = 1;
  RowOrder row_order = RowOrder::kOutputsInProportion;
  int64_t workspace_elements = 0;
  int64_t workspace_bytes = 0;  // under the memory model's sizes
  int64_t macs = 0;             // the ops' own and the recomputed (cost_model.h's units)
  int64_t extra_macs = 0;       // the recomputed halo columns
  // The fused step's footprint: inputs + outputs + workspace + constants.
  int64_t step_bytes = 0;
};

// What running `ops` as one region in `strips` column strips costs.
// INVALID_ARGUMENT when an op is not streamable (per `windows`), the region
// has no internal tensor, or it is not convex (a path leaves it and comes
// back). O(graph + rows x readers + strips x edges).
absl::StatusOr<RegionCost> CostOfRegion(const Graph& graph, const MemoryModel& memory,
                                        const StreamWindows& windows, absl::Span<const OpId> ops,
                                        int32_t strips = 1);

// CostOfRegion for each of `strip_counts` at once (the row schedules run
// once).
absl::StatusOr<std::vector<RegionCost>> CostOfRegionInStrips(const Graph& graph,
                                                             const MemoryModel& memory,
                                                             const StreamWindows& windows,
                                                             absl::Span<const OpId> ops,
                                                             absl::Span<const int32_t> strip_counts);

// `regions` (disjoint, each sorted) with tensor `t` made internal: one
// region of t's producer, its readers, the regions they are in, and every op
// on a path between them (so that it is convex), the other regions
// unchanged. nullopt when t is a graph input or output, a weight, or some op
// that would have to join is not streamable. O(graph) per growth step.
std::optional<std::vector<std::vector<OpId>>> InternalizeTensor(
    const Graph& graph, const StreamWindows& windows,
    const std::vector<std::vector<OpId>>& regions, TensorId t);

// The model with every region replaced by one fused node (ApplyFusedNodes):
// inputs the region's inputs, outputs its outputs and workspace, attributes
// macs, layers, column_strips and caching "line_buffer_region". `strips`
// gives each region's strips (empty: one each). `graph` is
// ImportOnnx(model), `memory` its memory model.
absl::StatusOr<onnx::ModelProto> ApplyRegionFusion(const onnx::ModelProto& model,
                                                   const Graph& graph, const MemoryModel& memory,
                                                   const std::vector<std::vector<OpId>>& regions,
                                                   absl::Span<const int32_t> strips = {});

}  // namespace ordo

#endif  // ORDO_CORE_REWRITE_REGION_FUSION_H_
