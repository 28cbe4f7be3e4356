#include "core/memory/memory_model.h"

#include <algorithm>
#include <array>
#include <cstddef>
#include <string_view>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "core/util/checked_math.h"

namespace ordo {
namespace {

// Sorted at compile time, for a binary search per op (a linear one over
// both lists was a tenth of Estimate's stages on a 782-op model); the
// lists below stay grouped by why each op may write over its input.
template <size_t N>
constexpr std::array<std::string_view, N> Sorted(std::array<std::string_view, N> names) {
  std::sort(names.begin(), names.end());
  return names;
}

// ONNX element-wise (unary, binary, activation) ops and reinterpreting ops:
// the output has the input's layout, so it may be written over the input.
// (Quantize/DequantizeLinear are element-wise conversions like Cast: of
// the same byte size, as at --activation-dtype int8, a QDQ model's pairs
// share one block, as the int8 graph a runtime fuses them into does.)
// Sum, Mean, Max and Min are element-wise at any arity: with three or more
// inputs the output still goes over the first (the spec's "other
// element-wise ONNX ops"; a brute force that reads "binary" strictly
// differs on NAS-Bench-201 cells, whose sums have three terms).
constexpr std::array<std::string_view, 58> kInplaceOpTypes = Sorted<58>({
    // Reinterpreting (Dropout is the identity at inference).
    "Reshape", "Flatten", "Squeeze", "Unsqueeze", "Identity", "Dropout",
    // Activations.
    "Relu", "LeakyRelu", "PRelu", "Elu", "Selu", "Celu", "Gelu", "Sigmoid",
    "HardSigmoid", "HardSwish", "Tanh", "Softplus", "Softsign", "ThresholdedRelu",
    "Clip", "Mish", "Swish",
    // Unary math.
    "Abs", "Neg", "Exp", "Log", "Sqrt", "Reciprocal", "Floor", "Ceil", "Round",
    "Sign", "Erf", "Sin", "Cos", "Not", "Cast", "QuantizeLinear", "DequantizeLinear",
    // Binary math.
    "Add", "Sub", "Mul", "Div", "Pow", "Max", "Min", "Mod", "Sum", "Mean",
    "And", "Or", "Xor", "Where", "BitwiseNot", "BitwiseAnd", "BitwiseOr", "BitwiseXor",
});

// The same rule with TFLite's builtin operator names (core/tflite keeps
// them as Op::type): reinterpreting, activations, unary and binary math.
constexpr std::array<std::string_view, 46> kTfliteInplaceOpTypes = Sorted<46>({
    "RESHAPE", "SQUEEZE", "EXPAND_DIMS",
    "RELU", "RELU6", "RELU_N1_TO_1", "RELU_0_TO_1", "LEAKY_RELU", "PRELU", "ELU",
    "LOGISTIC", "TANH", "HARD_SWISH", "GELU",
    "ABS", "NEG", "EXP", "LOG", "SQRT", "RSQRT", "SQUARE", "FLOOR", "CEIL", "ROUND",
    "SIN", "COS", "SIGN", "LOGICAL_NOT", "CAST", "QUANTIZE", "DEQUANTIZE",
    "ADD", "SUB", "MUL", "DIV", "POW", "MAXIMUM", "MINIMUM", "FLOOR_DIV", "FLOOR_MOD",
    "SQUARED_DIFFERENCE", "ADD_N", "LOGICAL_AND", "LOGICAL_OR", "SELECT", "SELECT_V2",
});

// A list shorter than its array would leave "" in it, unnoticed.
static_assert(std::none_of(kInplaceOpTypes.begin(), kInplaceOpTypes.end(),
                           [](std::string_view name) { return name.empty(); }));
static_assert(std::none_of(kTfliteInplaceOpTypes.begin(), kTfliteInplaceOpTypes.end(),
                           [](std::string_view name) { return name.empty(); }));

// Leaves headroom for alignment padding and differences of sums.
constexpr int64_t kMaxTotalBytes = int64_t{1} << 62;

}  // namespace

bool IsInplaceOpType(absl::string_view op_type) {
  const std::string_view type(op_type.data(), op_type.size());
  return std::binary_search(kInplaceOpTypes.begin(), kInplaceOpTypes.end(), type) ||
         std::binary_search(kTfliteInplaceOpTypes.begin(), kTfliteInplaceOpTypes.end(), type);
}

void AssignInplaceInputs(const Graph& graph, MemoryModel& model) {
  for (OpId id = 0; id < graph.num_ops(); ++id) {
    const Op& op = graph.op(id);
    MemoryModel::OpInfo& info = model.ops[id];
    info.inplace_input = kNoId;
    if (!model.options.inplace || op.outputs.size() != 1 || op.domain == kTfliteCustomDomain ||
        !IsInplaceOpType(op.type)) {
      continue;
    }
    const int64_t out_bytes = model.tensors[op.outputs[0]].bytes;
    // Positional order: "its first non-weight input of the same byte size".
    for (TensorId t : op.inputs) {
      if (graph.tensor(t).kind == TensorKind::kWeight) continue;
      if (model.tensors[t].bytes == out_bytes) info.inplace_input = t;
      break;
    }
  }
}

absl::StatusOr<MemoryModel> BuildMemoryModel(const Graph& graph,
                                             const MemoryOptions& options) {
  MemoryModel model;
  model.options = options;
  model.tensors.resize(graph.num_tensors());
  for (TensorId t = 0; t < graph.num_tensors(); ++t) {
    const Tensor& tensor = graph.tensor(t);
    MemoryModel::TensorInfo& info = model.tensors[t];
    if (tensor.kind == TensorKind::kWeight) {
      if (options.count_weights) {
        std::optional<int64_t> sum = CheckedAdd(model.constant_bytes, tensor.bytes);
        if (!sum) {
          return absl::InvalidArgumentError("total weight bytes overflow int64");
        }
        model.constant_bytes = *sum;
      }
      continue;
    }
    info.bytes = tensor.bytes;
    info.producer = tensor.producer;
    info.consumers = tensor.consumers;
    info.live_at_end = tensor.is_graph_output;
    // The one place of the io_outside_arena rule: a 0-byte tensor is in no
    // footprint, and the simulator gives it no live interval (no arena block).
    if (options.io_outside_arena && !tensor.is_runtime_buffer &&
        (tensor.producer == kNoId || tensor.is_graph_output)) {
      info.bytes = 0;
      continue;
    }
    if (options.activation_element_bytes > 0 && tensor.dtype != DataType::kUnknown) {
      std::optional<int64_t> bytes = CheckedMul(
          tensor.bytes / ElementSize(tensor.dtype), options.activation_element_bytes);
      if (!bytes) {
        return absl::InvalidArgumentError(absl::StrCat(
            "tensor \"", tensor.name, "\": size overflows int64"));
      }
      info.bytes = *bytes;
    }
  }
  // Every footprint is a sum of these sizes; bounding the total keeps all
  // sums far from int64 overflow (the arena's aligned sums are bounded where
  // they are built, BuildArenaProblem).
  int64_t total = model.constant_bytes;
  for (TensorId t = 0; t < graph.num_tensors(); ++t) {
    std::optional<int64_t> sum = CheckedAdd(total, model.tensors[t].bytes);
    if (!sum || *sum > kMaxTotalBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor \"", graph.tensor(t).name, "\": total tensor bytes exceed 2^62"));
    }
    total = *sum;
  }
  model.ops.resize(graph.num_ops());
  for (OpId id = 0; id < graph.num_ops(); ++id) {
    const Op& op = graph.op(id);
    MemoryModel::OpInfo& info = model.ops[id];
    for (TensorId t : op.inputs) {
      if (graph.tensor(t).kind != TensorKind::kWeight) info.inputs.push_back(t);
    }
    std::sort(info.inputs.begin(), info.inputs.end());
    info.inputs.erase(std::unique(info.inputs.begin(), info.inputs.end()),
                      info.inputs.end());
    info.outputs = op.outputs;
  }
  // Weights keep no consumers in the model: they are never freed.
  for (TensorId t = 0; t < graph.num_tensors(); ++t) {
    if (graph.tensor(t).kind == TensorKind::kWeight) model.tensors[t].consumers.clear();
  }
  // Off-chip traffic reads a tensor at most once per reader and writes it
  // (or streams it) once more: bounding that total keeps the traffic sums
  // from overflowing too (a 2^61-byte tensor with six readers did).
  int64_t traffic = 0;
  for (TensorId t = 0; t < graph.num_tensors(); ++t) {
    const MemoryModel::TensorInfo& info = model.tensors[t];
    const std::optional<int64_t> moved =
        CheckedMul(info.bytes, static_cast<int64_t>(info.consumers.size()) + 1);
    const std::optional<int64_t> sum = moved ? CheckedAdd(traffic, *moved) : std::nullopt;
    if (!sum || *sum > kMaxTotalBytes) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor \"", graph.tensor(t).name,
          "\": tensor bytes times their readers exceed 2^62 (off-chip traffic could not be "
          "counted)"));
    }
    traffic = *sum;
  }
  AssignInplaceInputs(graph, model);
  return model;
}

}  // namespace ordo
