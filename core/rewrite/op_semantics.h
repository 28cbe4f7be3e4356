#ifndef ORDO_CORE_REWRITE_OP_SEMANTICS_H_
#define ORDO_CORE_REWRITE_OP_SEMANTICS_H_

#include <cstdint>
#include <optional>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/graph/graph.h"

namespace ordo {

// What ordo knows about an op beyond its memory cost: the output shapes it
// computes and how each output element depends on the input along the
// channel axis (axis 1, NCHW) and the spatial axes (2..). Rewrites
// (SERENITY §3.3 identity rewriting here; MOTES' row partitioning and
// dataflow restructuring later) move ops across each other only where this
// file says that is an identity. An op it does not understand is kUnknown and
// is never rewritten.
//
// Everything works on an Op as imported (ONNX type and attributes, default
// domain only) plus the dims of its inputs; weights' values are never
// needed, so it works on the weightless benchmark models. Stateless; every
// function is thread-safe.

enum class OpKind : int8_t {
  kUnknown,
  kConv,               // ONNX Conv: grouped, strided, padded, dilated
  kMaxPool,            // ONNX MaxPool (no Indices output)
  kAveragePool,        // ONNX AveragePool
  kUnaryElementwise,   // Relu family, Identity: out[i] = f(in[i])
  kBinaryElementwise,  // Add, Sub, Mul, Div (numpy broadcasting)
  kSum,                // ONNX Sum: n-ary Add
  kConcat,
  kSplit,
  kSlice,
  kPad,
  kBatchNormalization,  // inference form: per-channel affine
  kResize,              // ONNX Resize, and Upsample (its deprecated form)
};

// How an op treats the channel axis: what a channel-wise rewrite may do.
enum class ChannelDependence : int8_t {
  kUnknown,      // not understood
  kElementwise,  // out[n,c,...] = f(in[n,c,...]); commutes with Concat
  kPerChannel,   // out[n,c,...] reads in[n,c,...] only, plus per-channel
                 // parameters (BatchNormalization, pooling, depthwise Conv)
  kGrouped,      // out channel o reads the input channels of its group
                 // (Conv; group 1 mixes all channels)
  kRearranges,   // Concat / Split / Slice / Pad / Resize may move channels
                 // around; Slice, Pad and Resize keep them apart when their
                 // axes / pads / scales leave axis 1 alone, which only their
                 // operand values (not in the Graph) or dims tell
};

// Whether `op` carries an attribute of an opset before 7-9 that gives it
// other semantics than the rewrites assume: Add/Sub/Mul/Div/Gemm's
// `broadcast` (axis-aligned broadcasting, not numpy's), BatchNormalization's
// `spatial` = 0 (parameters per activation), Pad-1's `paddings`,
// Upsample-1's scales (a Concat without `axis`, Concat-1's, is refused by
// ConcatAxis). ClassifyOp
// calls such ops kUnknown and the tilers refuse them, so no rewrite reads
// them wrongly (a probe of Model Zoo-style files: a tiled legacy bias Add
// computed another result).
bool HasLegacySemantics(const Op& op);

OpKind ClassifyOp(const Op& op);
// From the op alone. Resize is kPerChannel only when its `axes` attribute
// (opset 18) names spatial axes only; otherwise kRearranges.
ChannelDependence ChannelDependenceOf(const Op& op);
// As above, refined by the dims `graph` records for the op's tensors: a
// Resize whose output keeps its input's N and C dims (and that is not
// tf_crop_and_resize, which may crop along C) is kPerChannel: every output
// channel reads its own input channel only, through the same spatial
// resampling. Equal dims come from a scale of exactly 1 on N and C for
// `sizes` and for every scale exporters write; a `scales` operand whose
// values are not in the Graph could in principle hold a C scale in
// (1, 1 + 1/C), which keeps the dim but mixes channels: rewrites that have
// the model check the values (ApplyChannelSplit). Other ops: as above.
ChannelDependence ChannelDependenceOf(const Graph& graph, const Op& op);

// True for the single-input element-wise activations that commute with any
// Concat (SERENITY's "Relu-family"): Relu, LeakyRelu, Elu, Selu, Sigmoid,
// HardSigmoid, HardSwish, Tanh, Softplus, Softsign, Identity, and Gelu,
// Mish and Swish (opsets 18-24).
bool IsUnaryElementwiseType(absl::string_view op_type);

// A sliding window along the spatial axes (Conv, pooling). Vectors have one
// entry per spatial axis; pads are resolved (auto_pad applied).
struct Window {
  std::vector<int64_t> kernel;
  std::vector<int64_t> strides;
  std::vector<int64_t> dilations;
  std::vector<int64_t> pads_begin;
  std::vector<int64_t> pads_end;
  bool ceil_mode = false;

  int32_t rank() const { return static_cast<int32_t>(kernel.size()); }
  // Output extent along spatial axis `axis` for an input of `input_size`.
  int64_t OutputSize(int32_t axis, int64_t input_size) const;
  // The input positions [begin, end) that output positions
  // [out_begin, out_end) read along `axis`, clamped to the input (the
  // receptive field, for row partitioning).
  std::pair<int64_t, int64_t> InputRange(int32_t axis, int64_t out_begin, int64_t out_end,
                                         int64_t input_size) const;
};

// Conv's view of its operands.
struct ConvInfo {
  int64_t group = 1;
  int64_t in_channels = 0;   // of the data input
  int64_t out_channels = 0;  // weight dim 0
  bool has_bias = false;
  Window window;
  // group == in_channels and one input channel per group (any channel
  // multiplier out_channels / in_channels).
  bool depthwise() const { return group == in_channels && group > 1; }
};

// The dims of `op`'s inputs, in positional order, from `graph`.
std::vector<std::vector<int64_t>> InputDims(const Graph& graph, const Op& op);

// Conv given the dims of X, W (and B). INVALID_ARGUMENT naming the op when
// the operands do not fit (channels not divisible by group, kernel_shape
// disagreeing with W, a window larger than the padded input).
absl::StatusOr<ConvInfo> AnalyzeConv(const Op& op,
                                     absl::Span<const std::vector<int64_t>> input_dims);
// MaxPool / AveragePool given the dims of X.
absl::StatusOr<Window> AnalyzePool(const Op& op, absl::Span<const int64_t> x);

// Concat's axis, normalized to [0, rank).
absl::StatusOr<int64_t> ConcatAxis(const Op& op, int64_t rank);

// Output dims of `op` from its input dims, for every kind but kUnknown.
// Slice and Split read their sizes from attributes only (opset < 10 / < 13,
// or Split's equal split); when they come as tensor inputs the values are not
// in the Graph and the answer is UNIMPLEMENTED. Resize likewise: only
// Upsample-7's `scales` attribute gives its dims here (floor(in x scale));
// Resize's scales / sizes operands (opset >= 10) are UNIMPLEMENTED, and
// callers use the output dims the Graph records. UNIMPLEMENTED for kUnknown.
absl::StatusOr<std::vector<std::vector<int64_t>>> InferOutputDims(
    const Op& op, absl::Span<const std::vector<int64_t>> inputs);

// Attribute lookups; nullopt when absent or of another type.
std::optional<int64_t> IntAttribute(const Op& op, absl::string_view name);
std::optional<std::vector<int64_t>> IntsAttribute(const Op& op, absl::string_view name);
std::optional<std::string> StringAttribute(const Op& op, absl::string_view name);

}  // namespace ordo

#endif  // ORDO_CORE_REWRITE_OP_SEMANTICS_H_
