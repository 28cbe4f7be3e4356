#ifndef ORDO_CORE_REWRITE_PATCH_FUSION_H_
#define ORDO_CORE_REWRITE_PATCH_FUSION_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/graph/graph.h"
#include "core/memory/memory_model.h"
#include "core/onnx/function_inlining.h"
#include "core/rewrite/op_semantics.h"
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
// How a stage runs (StageCaching). Every intermediate tensor l (the output
// of the stage's layer l, read only by layer l+1) is streamed through a
// ring buffer; k_l(axis) is the rows / columns of tensor l that one output
// row / column of layer l+1 reads (its window, Window::InputRange, clamped):
// - kLineBuffer: every layer produces its output row by row, each from a
//   ring of the k_l(H) rows of its input it reads, over the whole width;
//   every element is computed once. Workspace = sum over intermediates of
//   k_l(H) x W_l x C_l. No extra MACs.
// - kPixel (msf-CNN's setting): output pixels in raster order. For each
//   output row, every layer computes the rows r_l of its output that the
//   output row reads (its receptive field), column by column from left to
//   right, each from a ring of the k_l(W) columns of its input it reads
//   (columns cached); the next output row recomputes the rows its
//   receptive field shares with this one (rows recomputed). Workspace =
//   sum over intermediates of r_l x k_l(W) x C_l. Extra MACs: per output
//   row, each layer computes r_l rows over the columns the stage reads,
//   instead of its rows once. With bands of B output rows per step
//   (StageRun::band_rows), r_l is what B output rows read: fewer rows
//   recomputed, more kept.
// - kPixel with a cached layer (StageRun::cached_layer = c, msf-CNN's
//   finer caching): as kPixel, except that the rows of intermediate c are
//   computed once: a band's layers 0..c compute only the rows of c no
//   earlier band computed (so their receptive fields shrink to those new
//   rows), and the rows of c that the next band also reads are kept at full
//   width (the rest of the band's rows of c pass through the usual column
//   ring). Workspace and MACs: one walk over the bands (WalkPixelRun); the
//   workspace of the other intermediates is r_l x k_l(W) x C_l as above,
//   with r_l the rows the band reads after the cut. This trades a few full
//   rows of a narrow intermediate (typically after a stride) for the
//   recomputation of every layer before it.

// Per-element composites. A layer is one op (its one activation input is
// the previous layer's output, its other operands weights) or a per-element
// composite: a few ops that together map x to y element by element, each
// reading x, the composite's own intermediates or weights, the
// intermediates read only inside the composite and not graph outputs. SiLU
// (Swish, EfficientNet's activation) is one: s = Sigmoid(x); y = Mul(x, s),
// in either operand order; so are x * HardSigmoid(x) and Mish's
// x * Tanh(Softplus(x)). A composite has an identity window and the MACs of
// its ops; a layer, composite or not, is named by the op writing its
// output (the Mul), which is what chains and stages list. In a stage a
// composite needs no ring for x beyond a one-op per-element layer's, but its
// intermediates (the Sigmoid's output) are held over what the layer computes
// at a time: one row (line buffers), one column of the rows a band computes
// (pixel), one pixel (recomputed); all of them at once, a conservative
// count (patch_fusion.cc, InternalElements).
//
// Broadcast sides. A per-element op of two activations, one of its output's
// dims and one broadcast along H and W (N x C x 1 x 1), is a one-op layer
// whose chain input is the first and whose side is the second: an SE
// block's Mul(h, scale). Every pixel reads the side whole, so the stage's
// node reads it whole too, and the stage's step counts it beside the
// stage's input and output (no ring). It never comes from inside the stage:
// a tensor it depends on would have a reader outside, so it would be no
// intermediate.

// In the model a fused stage is one node of domain kFusionDomain whose
// outputs are the stage's output and its workspace (a 1-D tensor of
// workspace elements of the stage's activation type, read by nobody): by
// the memory model's rules (an output nobody reads lives during its
// producer's step) the fused step costs input + output + workspace, and
// the arena gives the workspace a block. The node's attribute "macs" holds
// the stage's MACs (core/rewrite/cost_model.h reads it), "caching",
// "band_rows", "cached_layer" (-1: none), "recomputed_layer" (-1: none) and "layers" say how it
// runs. The model carries a local function of the same name whose body is the original layers (and
// a ConstantOfShape for the workspace), so any ONNX runtime can execute the rewritten model and it
// computes exactly what the original did.

inline constexpr absl::string_view kFusionDomain = kOrdoFusionDomain;  // one definition
// The first standard opset with ConstantOfShape, which the function body's
// workspace fill uses: no model below it is fused.
inline constexpr int64_t kFirstFusionOpset = 9;

enum class StageCaching : int8_t {
  kLineBuffer,  // rows kept in rings, nothing recomputed
  kPixel,       // one output pixel at a time, columns cached, rows recomputed
};

// How one fused stage runs: the caching, and for kPixel how many output
// rows each step produces (1: msf-CNN's one-pixel tiles; more rows
// recompute less and keep more rows of every intermediate).
struct StageRun {
  StageCaching caching = StageCaching::kLineBuffer;
  int32_t band_rows = 1;  // kPixel only; >= 1
  // kPixel only: the stage's layer (0-based, not the last) whose output rows
  // are computed once and kept across bands; -1 for none.
  int32_t cached_layer = -1;
  // kPixel only, and not with a cached layer: the stage's pointwise layer
  // (0-based, not the last) whose output is recomputed at every tap of its
  // reader instead of held; -1 for none. Neither it nor its reader may be a
  // per-element composite.
  int32_t recomputed_layer = -1;
};

// "line_buffer", "pixel", "pixel, 4-row bands", "pixel, rows of layer 3 cached",
// "pixel, 3-row bands, layer 3 recomputed per tap".
std::string StageRunName(const StageRun& run);

// The most layers of a stage for which the fusion front also tries runs with
// a cached or a recomputed layer (each adds a run per layer and band: pieces
// stay O(L x kMaxMixedStageLayers^2) per chain of L ops).
inline constexpr int32_t kMaxMixedStageLayers = 24;

// The runs of any stage of `layers` ops, whatever its layers: line buffers;
// pixel in bands of 1, 2, 3, 4, 6, 8, 12, 16 rows; and, up to
// kMaxMixedStageLayers layers, pixel in bands of 1-4 rows with each layer
// but the last cached.
std::vector<StageRun> StageRuns(int32_t layers);

// The runs the fusion front considers for the stage `ops` (a piece of a
// chain, see CostOfStage): StageRuns(ops.size()) and, up to
// kMaxMixedStageLayers layers, pixel in bands of 1-4 rows with each
// pointwise one-op layer but the last recomputed (when its reader is not a
// composite either). Empty when `ops` is not such a
// piece.
std::vector<StageRun> StageRuns(const Graph& graph, absl::Span<const OpId> ops);

// Maximal chains of fusible layers, in model order, each of at least two
// layers, each layer named by the op writing its output: ops with one
// activation input and one output, NCHW, that are a sliding window (Conv,
// MaxPool, AveragePool) or per-element along H and W (the Relu family, Clip,
// BatchNormalization, element-wise ops whose other operands are weights or
// broadcast sides),
// and per-element composites (see above; the ops inside one are not layers
// of their own here); consecutive when every tensor between two of them is
// read only by (the ops of) the next and is not a graph output.
// O(ops + edges).
std::vector<std::vector<OpId>> FindFusibleChains(const Graph& graph);

// What running `ops` (a contiguous piece of one chain of FindFusibleChains,
// at least two layers, each named by the op writing its output) as one
// stage costs.
struct StageCost {
  int64_t workspace_elements = 0;
  int64_t workspace_bytes = 0;  // under the memory model's element sizes
  int64_t macs = 0;             // of the fused stage (cost_model.h's units)
  int64_t extra_macs = 0;       // macs minus the layers' own
};

// INVALID_ARGUMENT when `ops` is not such a piece or `run` cannot run it
// (a cached layer that is the last, or with line buffers; a recomputed layer
// that is the last, not pointwise, or with line buffers or a cached layer).
// O(ops x output rows).
absl::StatusOr<StageCost> CostOfStage(const Graph& graph, const MemoryModel& memory,
                                      absl::Span<const OpId> ops, const StageRun& run);

struct FusedStage {
  std::vector<OpId> ops;  // layers contiguous in one chain (the ops writing them), at least two
  StageRun run;
};

// A set of fused stages and what they do to the chains, as the chains see
// it: chain_peak_bytes is the largest step footprint (input + side
// operands + output + workspace of a stage, the largest OpStepBytes of an
// unfused layer's ops) of the chains, the peak when the chains are the
// whole graph; the schedule of the rewritten graph decides otherwise.
struct FusionPlan {
  std::vector<FusedStage> stages;
  int64_t chain_peak_bytes = 0;
  int64_t extra_macs = 0;
};

// The non-dominated plans (chain_peak_bytes, extra_macs) over every way of
// cutting every chain into stages and unfused layers, each stage run in
// any of StageRuns(): lowest chain peak first (so most extra MACs first),
// ending with the plan of fewest extra MACs, at most 0 (nothing fused,
// line-buffered stages, or stages that skip rows no output reads). For each candidate peak P (the
// cost of some stage or layer, from the lowest any plan reaches), a dynamic
// program over each chain's prefixes finds the fewest extra MACs with every
// piece within P. Exact when stages of at most 64 layers and at most 4096
// distinct candidate peaks cover the model (otherwise the front is sampled
// at 4096 peaks spread over the range, its lowest-peak plan always kept).
// O(pieces x (rows + candidates)), pieces <= (9 x 64 + 8 x 24^2) x L per chain of L ops.
absl::StatusOr<std::vector<FusionPlan>> FusionFront(const Graph& graph, const MemoryModel& memory);

// `plan` without the stages that would keep inside themselves a tensor a
// node of `model` outside the Graph reads: a node the import folded (a
// Shape of a stage's intermediate, returned as a constant graph output or
// sizing a Reshape) names the tensor, which the fused node no longer
// writes. `graph` is ImportOnnx(model). The plan's chain_peak_bytes and
// extra_macs stay those of the whole plan (the caller schedules the result).
absl::StatusOr<FusionPlan> WithoutStagesFoldedNodesRead(const onnx::ModelProto& model,
                                                        const Graph& graph, FusionPlan plan);

// The model with each stage of `plan` replaced by one fused node (see above)
// named after the stage's first layer, and a local function per stage; the
// model's IR version is raised to 8 (local functions) when lower. `graph`
// is ImportOnnx(model) (ops found by source index, else name) and `memory`
// its memory model. The function's body holds every op of every layer,
// composites' included, in an order that runs (layer by layer, each
// composite's ops in op-id order). INVALID_ARGUMENT when a stage is
// not fusible, an op does not match its node, or an op's node has other
// outputs.
absl::StatusOr<onnx::ModelProto> ApplyPatchFusion(const onnx::ModelProto& model,
                                                  const Graph& graph, const MemoryModel& memory,
                                                  const FusionPlan& plan);

// One fused node to emit: the model nodes it replaces (its function's
// body, in model order), the activations it reads and the tensors it
// writes (whole), and its workspace (a 1-D output read by nobody).
struct FusedNodeSpec {
  std::vector<int32_t> nodes;
  std::vector<std::string> inputs;   // activations; weights are found from the body
  std::vector<std::string> outputs;  // at least one
  DataType workspace_dtype = DataType::kFloat32;
  int64_t workspace_elements = 0;
  int64_t macs = 0;
  std::vector<onnx::AttributeProto> attributes;  // besides "macs"
  std::string description;                       // for the function's doc string
};

// The model with each spec's nodes replaced by one fused node of domain
// kFusionDomain and a local function of the same name (see above), the
// nodes sorted topologically again (a fused node goes where everything it
// reads exists), the value_info of tensors no longer in the model dropped,
// and the IR version raised to 8 when lower. INVALID_ARGUMENT when a node is
// fused twice, a stage is not convex (it would read its own output), or a
// node left outside the stages reads a tensor a stage keeps inside itself.
absl::StatusOr<onnx::ModelProto> ApplyFusedNodes(const onnx::ModelProto& model,
                                                 absl::Span<const FusedNodeSpec> specs);

// The window through which one output row or column of op `id` reads its
// one activation input, when `id` can be a one-op layer of a chain (see
// FindFusibleChains; an identity window for per-element ops; nullopt for
// a composite's writer, which reads two activations).
std::optional<Window> ChainLayerWindow(const Graph& graph, OpId id);

// "conv_3..conv_9 (7 ops) fused, pixel" for reports.
std::string DescribeStage(const Graph& graph, const FusedStage& stage);

}  // namespace ordo

#endif  // ORDO_CORE_REWRITE_PATCH_FUSION_H_
