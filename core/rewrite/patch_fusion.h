#ifndef ORDO_CORE_REWRITE_PATCH_FUSION_H_
#define ORDO_CORE_REWRITE_PATCH_FUSION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/graph/graph.h"
#include "core/memory/memory_model.h"
#include "onnx/onnx_pb.h"

namespace ordo {

// Patch-wise fusion of layer chains (MCUNetV2's patch-based inference,
// msf-CNN's multi-stage fusion): a chain of consecutive window layers
// (Conv, pooling, and the per-element ops between them) runs as one fused
// stage that reads the stage's input in place and writes its output in
// place, one output row or pixel at a time, keeping of each intermediate
// tensor only a small working buffer. The intermediates are never whole in
// memory; what that costs is the stage's workspace and, for some cachings,
// recomputed rows.
//
// How a stage runs (StageCaching), with r_l x c_l the rows x columns of
// intermediate tensor l that one output pixel of the stage reads (the
// receptive field through the layers after l, Window::InputRange, clamped
// to the tensor):
// - kLineBuffer: layer l+1 produces its output row by row from a ring of the
//   rows of tensor l its window reads; every element is computed once.
//   Workspace = sum over intermediates of (rows layer l+1 reads for one of
//   its output rows) x W_l x C_l. No extra MACs.
// - kPixel: output pixels in raster order; of each intermediate, the
//   r_l x c_l window that the current output pixel reads is kept, and
//   sliding right along an output row computes only its new columns
//   (columns cached); the next output row recomputes the rows its window
//   shares with the previous one (rows recomputed), msf-CNN's setting.
//   Workspace = sum over intermediates of r_l x c_l x C_l. Extra MACs: layer
//   l computes, per output row, the rows of its output that row reads, over
//   its whole width.
//
// In the model a fused stage is one node of domain kFusionDomain whose
// outputs are the stage's output and its workspace (a 1-D tensor of
// workspace elements of the stage's activation type, read by nobody): by
// the memory model's rules (an output nobody reads lives during its
// producer's step) the fused step costs input + output + workspace, and
// the arena gives the workspace a block. The node's attribute "macs" holds
// the stage's MACs (core/rewrite/cost_model.h reads it), "caching" and
// "layers" say how it runs. The model carries a local function of the same
// name whose body is the original layers (and a ConstantOfShape for the
// workspace), so any ONNX runtime can execute the rewritten model and it
// computes exactly what the original did.

inline constexpr absl::string_view kFusionDomain = "ai.ordo";

enum class StageCaching : int8_t {
  kLineBuffer,  // rows kept in rings, nothing recomputed
  kPixel,       // one output pixel at a time, columns cached, rows recomputed
};

// "line_buffer" / "pixel".
absl::string_view StageCachingName(StageCaching caching);

// Maximal chains of fusible layers, in model order, each of at least two
// ops: ops with one activation input and one output, NCHW, that are a
// sliding window (Conv, MaxPool, AveragePool) or per-element along H and W
// (the Relu family, Clip, BatchNormalization, element-wise ops whose other
// operands are weights); consecutive when every tensor between two of them
// is read only by the next and is not a graph output. O(ops + edges).
std::vector<std::vector<OpId>> FindFusibleChains(const Graph& graph);

// What running `ops` (a contiguous piece of one chain of FindFusibleChains,
// at least two ops) as one stage costs.
struct StageCost {
  int64_t workspace_elements = 0;
  int64_t workspace_bytes = 0;  // under the memory model's element sizes
  int64_t macs = 0;             // of the fused stage (cost_model.h's units)
  int64_t extra_macs = 0;       // macs minus the layers' own
};

// INVALID_ARGUMENT when `ops` is not such a piece. O(ops x output rows).
absl::StatusOr<StageCost> CostOfStage(const Graph& graph, const MemoryModel& memory,
                                      absl::Span<const OpId> ops, StageCaching caching);

struct FusedStage {
  std::vector<OpId> ops;  // contiguous in one chain, at least two
  StageCaching caching = StageCaching::kLineBuffer;
};

// A set of fused stages and what they do to the chains, as the chains see
// it: chain_peak_bytes is the largest step footprint (input + output +
// workspace of a stage, OpStepBytes of an unfused layer) of the chains, the peak when the chains are the
// whole graph; the schedule of the rewritten graph decides otherwise.
struct FusionPlan {
  std::vector<FusedStage> stages;
  int64_t chain_peak_bytes = 0;
  int64_t extra_macs = 0;
};

// The non-dominated plans (chain_peak_bytes, extra_macs) over every way of
// cutting every chain into stages and unfused layers, each stage with
// either caching: lowest chain peak first (so most extra MACs first), the
// plan with no stage (nothing fused) last. Exact: for each candidate peak P
// (the cost of some stage or layer), a dynamic program over each chain's
// prefixes finds the fewest extra MACs with every piece within P.
// O(chains x L^2 x (rows + candidates)) for chains of L ops.
absl::StatusOr<std::vector<FusionPlan>> FusionFront(const Graph& graph, const MemoryModel& memory);

// The model with each stage of `plan` replaced by one fused node (see above)
// named after the stage's first layer, and a local function per stage; the
// model's IR version is raised to 8 (local functions) when lower. `graph`
// is ImportOnnx(model) (ops found by source index, else name) and `memory`
// its memory model. INVALID_ARGUMENT when a stage is not fusible, a layer
// does not match its node, or a layer's node has other outputs.
absl::StatusOr<onnx::ModelProto> ApplyPatchFusion(const onnx::ModelProto& model,
                                                  const Graph& graph, const MemoryModel& memory,
                                                  const FusionPlan& plan);

// "conv_3..conv_9 (7 ops) fused, pixel" for reports.
std::string DescribeStage(const Graph& graph, const FusedStage& stage);

}  // namespace ordo

#endif  // ORDO_CORE_REWRITE_PATCH_FUSION_H_
