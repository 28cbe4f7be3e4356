#include "core/rewrite/op_semantics.h"

#include <algorithm>
#include <cmath>
#include <string>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/graph/onnx_domain.h"

namespace ordo {
namespace {

const Attribute* FindAttribute(const Op& op, absl::string_view name) {
  for (const Attribute& attribute : op.attributes) {
    if (attribute.name == name) return &attribute;
  }
  return nullptr;
}

std::optional<std::vector<double>> FloatsAttribute(const Op& op, absl::string_view name) {
  const Attribute* attribute = FindAttribute(op, name);
  if (attribute == nullptr) return std::nullopt;
  if (const auto* value = std::get_if<std::vector<double>>(&attribute->value)) return *value;
  return std::nullopt;
}

absl::Status OpError(const Op& op, absl::string_view rule) {
  return absl::InvalidArgumentError(absl::StrCat(op.type, " \"", op.name, "\": ", rule));
}

std::string DimsString(absl::Span<const int64_t> dims) {
  return absl::StrCat("[", absl::StrJoin(dims, ","), "]");
}

int64_t CeilDiv(int64_t a, int64_t b) { return a >= 0 ? (a + b - 1) / b : -((-a) / b); }

// Fills the window of `op` over spatial `input_spatial` dims with `kernel`
// (from the weight for Conv, the attribute for pooling). auto_pad follows the
// ONNX operator docs: SAME_* keeps ceil(in / stride) outputs, the odd pad
// going to the end (UPPER) or the beginning (LOWER).
absl::StatusOr<Window> ResolveWindow(const Op& op, absl::Span<const int64_t> input_spatial,
                                     std::vector<int64_t> kernel, bool allow_dilations) {
  const size_t rank = input_spatial.size();
  Window window;
  window.kernel = std::move(kernel);
  if (window.kernel.size() != rank) {
    return OpError(op, absl::StrCat("kernel ", DimsString(window.kernel), " does not match ", rank,
                                    " spatial axes"));
  }
  window.strides = IntsAttribute(op, "strides").value_or(std::vector<int64_t>(rank, 1));
  window.dilations = allow_dilations
                         ? IntsAttribute(op, "dilations").value_or(std::vector<int64_t>(rank, 1))
                         : std::vector<int64_t>(rank, 1);
  std::vector<int64_t> pads = IntsAttribute(op, "pads").value_or(std::vector<int64_t>(2 * rank, 0));
  if (window.strides.size() != rank || window.dilations.size() != rank || pads.size() != 2 * rank) {
    return OpError(op, "strides, dilations or pads do not match the spatial rank");
  }
  for (size_t i = 0; i < rank; ++i) {
    if (window.kernel[i] <= 0 || window.strides[i] <= 0 || window.dilations[i] <= 0 ||
        pads[i] < 0 || pads[i + rank] < 0) {
      return OpError(op, "kernel, strides and dilations must be positive, pads non-negative");
    }
  }
  window.pads_begin.assign(pads.begin(), pads.begin() + rank);
  window.pads_end.assign(pads.begin() + rank, pads.end());
  window.ceil_mode = IntAttribute(op, "ceil_mode").value_or(0) != 0;
  const std::string auto_pad = StringAttribute(op, "auto_pad").value_or("NOTSET");
  if (auto_pad == "VALID") {
    std::fill(window.pads_begin.begin(), window.pads_begin.end(), 0);
    std::fill(window.pads_end.begin(), window.pads_end.end(), 0);
  } else if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") {
    for (size_t i = 0; i < rank; ++i) {
      const int64_t out = CeilDiv(input_spatial[i], window.strides[i]);
      const int64_t extent = (window.kernel[i] - 1) * window.dilations[i] + 1;
      const int64_t total =
          std::max<int64_t>(0, (out - 1) * window.strides[i] + extent - input_spatial[i]);
      const int64_t small = total / 2;
      window.pads_begin[i] = auto_pad == "SAME_UPPER" ? small : total - small;
      window.pads_end[i] = total - window.pads_begin[i];
    }
  } else if (auto_pad != "NOTSET") {
    return OpError(op, absl::StrCat("unknown auto_pad \"", auto_pad, "\""));
  }
  for (size_t i = 0; i < rank; ++i) {
    if (window.OutputSize(static_cast<int32_t>(i), input_spatial[i]) <= 0) {
      return OpError(op, absl::StrCat("window does not fit the input along spatial axis ", i));
    }
  }
  return window;
}

// Numpy multidirectional broadcasting (ONNX Add/Sub/Mul/Div/Sum).
absl::StatusOr<std::vector<int64_t>> Broadcast(const Op& op,
                                               absl::Span<const std::vector<int64_t>> inputs) {
  size_t rank = 0;
  for (const auto& dims : inputs) rank = std::max(rank, dims.size());
  std::vector<int64_t> out(rank, 1);
  for (const auto& dims : inputs) {
    const size_t offset = rank - dims.size();
    for (size_t i = 0; i < dims.size(); ++i) {
      int64_t& o = out[offset + i];
      if (dims[i] == o || dims[i] == 1) continue;
      if (o != 1) {
        return OpError(op, absl::StrCat("dims ", DimsString(dims), " do not broadcast"));
      }
      o = dims[i];
    }
  }
  return out;
}

}  // namespace

std::optional<int64_t> IntAttribute(const Op& op, absl::string_view name) {
  const Attribute* attribute = FindAttribute(op, name);
  if (attribute == nullptr) return std::nullopt;
  if (const auto* value = std::get_if<int64_t>(&attribute->value)) return *value;
  return std::nullopt;
}

std::optional<std::vector<int64_t>> IntsAttribute(const Op& op, absl::string_view name) {
  const Attribute* attribute = FindAttribute(op, name);
  if (attribute == nullptr) return std::nullopt;
  if (const auto* value = std::get_if<std::vector<int64_t>>(&attribute->value)) return *value;
  return std::nullopt;
}

std::optional<std::string> StringAttribute(const Op& op, absl::string_view name) {
  const Attribute* attribute = FindAttribute(op, name);
  if (attribute == nullptr) return std::nullopt;
  if (const auto* value = std::get_if<std::string>(&attribute->value)) return *value;
  return std::nullopt;
}

bool IsUnaryElementwiseType(absl::string_view type) {
  return type == "Relu" || type == "LeakyRelu" || type == "Elu" || type == "Selu" ||
         type == "Sigmoid" || type == "HardSigmoid" || type == "HardSwish" || type == "Tanh" ||
         type == "Softplus" || type == "Softsign" || type == "Identity" || type == "Gelu" ||
         type == "Mish" || type == "Swish";
}

bool HasLegacySemantics(const Op& op) {
  const std::string& t = op.type;
  if (t == "Add" || t == "Sub" || t == "Mul" || t == "Div" || t == "Gemm") {
    return IntAttribute(op, "broadcast").value_or(0) != 0;  // Add-1..6's axis alignment
  }
  if (t == "BatchNormalization") return IntAttribute(op, "spatial").value_or(1) == 0;
  if (t == "Pad") return FindAttribute(op, "paddings") != nullptr;           // Pad-1
  if (t == "Upsample") return FindAttribute(op, "height_scale") != nullptr;  // Upsample-1
  return false;
}

OpKind ClassifyOp(const Op& op) {
  if (!IsStandardOnnxDomain(op.domain)) return OpKind::kUnknown;
  const std::string& t = op.type;
  // Optional extra outputs (MaxPool's Indices, training BatchNormalization's
  // running statistics) change what the op computes: not understood.
  const bool one_output = op.outputs.size() == 1;
  if (HasLegacySemantics(op)) return OpKind::kUnknown;
  if (t == "Conv") return OpKind::kConv;
  if (t == "MaxPool" && one_output) return OpKind::kMaxPool;
  if (t == "AveragePool") return OpKind::kAveragePool;
  if (IsUnaryElementwiseType(t) && op.inputs.size() == 1) return OpKind::kUnaryElementwise;
  if (t == "Add" || t == "Sub" || t == "Mul" || t == "Div") return OpKind::kBinaryElementwise;
  if (t == "Sum") return OpKind::kSum;
  if (t == "Concat") return OpKind::kConcat;
  if (t == "Split") return OpKind::kSplit;
  if (t == "Slice") return OpKind::kSlice;
  if (t == "Pad") return OpKind::kPad;
  if (t == "BatchNormalization" && one_output) return OpKind::kBatchNormalization;
  if ((t == "Resize" || t == "Upsample") && one_output) return OpKind::kResize;
  return OpKind::kUnknown;
}

ChannelDependence ChannelDependenceOf(const Op& op) {
  switch (ClassifyOp(op)) {
    case OpKind::kUnaryElementwise:
      return ChannelDependence::kElementwise;
    case OpKind::kMaxPool:
    case OpKind::kAveragePool:
    case OpKind::kBatchNormalization:
      return ChannelDependence::kPerChannel;
    case OpKind::kConv:
      return ChannelDependence::kGrouped;
    case OpKind::kConcat:
    case OpKind::kSplit:
    case OpKind::kSlice:
    case OpKind::kPad:
      return ChannelDependence::kRearranges;
    case OpKind::kResize: {
      // Resize-18's `axes`: only the axes named are resampled (the rest keep
      // a scale of 1). Negative axes count from a rank not known here.
      std::optional<std::vector<int64_t>> axes = IntsAttribute(op, "axes");
      if (axes && !axes->empty() &&
          std::all_of(axes->begin(), axes->end(), [](int64_t a) { return a >= 2; })) {
        return ChannelDependence::kPerChannel;
      }
      return ChannelDependence::kRearranges;
    }
    // Binary ops broadcast: whether they are per channel depends on the
    // other operand's shape, which a caller checks itself.
    default:
      return ChannelDependence::kUnknown;
  }
}

ChannelDependence ChannelDependenceOf(const Graph& graph, const Op& op) {
  const ChannelDependence from_op = ChannelDependenceOf(op);
  if (ClassifyOp(op) != OpKind::kResize || from_op == ChannelDependence::kPerChannel ||
      op.inputs.empty()) {
    return from_op;
  }
  const std::vector<int64_t>& in = graph.tensor(op.inputs[0]).dims;
  const std::vector<int64_t>& out = graph.tensor(op.outputs[0]).dims;
  if (in.size() < 3 || in.size() != out.size() || in[0] != out[0] || in[1] != out[1]) {
    return from_op;
  }
  // tf_crop_and_resize samples the roi's window of every axis it covers,
  // which may be a window of channels even at an unchanged C.
  if (StringAttribute(op, "coordinate_transformation_mode").value_or("") == "tf_crop_and_resize") {
    return from_op;
  }
  return ChannelDependence::kPerChannel;
}

int64_t Window::OutputSize(int32_t axis, int64_t input_size) const {
  const int64_t extent = (kernel[axis] - 1) * dilations[axis] + 1;
  const int64_t span = input_size + pads_begin[axis] + pads_end[axis] - extent;
  if (span < 0) return 0;
  return (ceil_mode ? CeilDiv(span, strides[axis]) : span / strides[axis]) + 1;
}

std::pair<int64_t, int64_t> Window::InputRange(int32_t axis, int64_t out_begin, int64_t out_end,
                                               int64_t input_size) const {
  if (out_end <= out_begin) return {0, 0};
  const int64_t extent = (kernel[axis] - 1) * dilations[axis] + 1;
  const int64_t begin = out_begin * strides[axis] - pads_begin[axis];
  const int64_t end = (out_end - 1) * strides[axis] - pads_begin[axis] + extent;
  return {std::clamp<int64_t>(begin, 0, input_size), std::clamp<int64_t>(end, 0, input_size)};
}

std::vector<std::vector<int64_t>> InputDims(const Graph& graph, const Op& op) {
  std::vector<std::vector<int64_t>> dims;
  dims.reserve(op.inputs.size());
  for (TensorId t : op.inputs) dims.push_back(graph.tensor(t).dims);
  return dims;
}

absl::StatusOr<ConvInfo> AnalyzeConv(const Op& op,
                                     absl::Span<const std::vector<int64_t>> input_dims) {
  if (input_dims.size() < 2 || input_dims.size() > 3) {
    return OpError(op, "expects X, W and an optional B");
  }
  const std::vector<int64_t>& x = input_dims[0];
  const std::vector<int64_t>& w = input_dims[1];
  if (x.size() < 3 || w.size() != x.size()) {
    return OpError(op, absl::StrCat("X ", DimsString(x), " and W ", DimsString(w),
                                    " must have the same rank >= 3"));
  }
  ConvInfo info;
  info.group = IntAttribute(op, "group").value_or(1);
  info.in_channels = x[1];
  info.out_channels = w[0];
  if (info.group <= 0 || info.in_channels % info.group != 0 ||
      info.out_channels % info.group != 0 || w[1] * info.group != info.in_channels) {
    return OpError(op, absl::StrCat("X ", DimsString(x), ", W ", DimsString(w), " and group ",
                                    info.group, " do not agree"));
  }
  info.has_bias = input_dims.size() == 3;
  if (info.has_bias && (input_dims[2].size() != 1 || input_dims[2][0] != info.out_channels)) {
    return OpError(op, absl::StrCat("B ", DimsString(input_dims[2]), " is not [M]"));
  }
  std::vector<int64_t> kernel(w.begin() + 2, w.end());
  if (auto attr = IntsAttribute(op, "kernel_shape"); attr && *attr != kernel) {
    return OpError(
        op, absl::StrCat("kernel_shape ", DimsString(*attr), " disagrees with W ", DimsString(w)));
  }
  auto window = ResolveWindow(op, absl::MakeConstSpan(x).subspan(2), std::move(kernel),
                              /*allow_dilations=*/true);
  if (!window.ok()) return window.status();
  info.window = *std::move(window);
  return info;
}

absl::StatusOr<Window> AnalyzePool(const Op& op, absl::Span<const int64_t> x) {
  if (x.size() < 3) return OpError(op, absl::StrCat("X ", DimsString(x), " has rank < 3"));
  std::optional<std::vector<int64_t>> kernel = IntsAttribute(op, "kernel_shape");
  if (!kernel) return OpError(op, "kernel_shape is required");
  return ResolveWindow(op, x.subspan(2), *std::move(kernel),
                       /*allow_dilations=*/op.type == "MaxPool");
}

absl::StatusOr<int64_t> ConcatAxis(const Op& op, int64_t rank) {
  std::optional<int64_t> axis = IntAttribute(op, "axis");
  if (!axis) return OpError(op, "axis is required");
  const int64_t normalized = *axis < 0 ? *axis + rank : *axis;
  if (normalized < 0 || normalized >= rank) {
    return OpError(op, absl::StrCat("axis ", *axis, " is out of range for rank ", rank));
  }
  return normalized;
}

absl::StatusOr<std::vector<std::vector<int64_t>>> InferOutputDims(
    const Op& op, absl::Span<const std::vector<int64_t>> inputs) {
  using Dims = std::vector<int64_t>;
  const OpKind kind = ClassifyOp(op);
  if (kind != OpKind::kUnknown && inputs.empty()) return OpError(op, "has no inputs");
  switch (kind) {
    case OpKind::kUnknown:
      return absl::UnimplementedError(absl::StrCat("op type ", op.type, " is not understood"));
    case OpKind::kConv: {
      auto info = AnalyzeConv(op, inputs);
      if (!info.ok()) return info.status();
      Dims out = {inputs[0][0], info->out_channels};
      for (int32_t i = 0; i < info->window.rank(); ++i) {
        out.push_back(info->window.OutputSize(i, inputs[0][2 + i]));
      }
      return std::vector<Dims>{out};
    }
    case OpKind::kMaxPool:
    case OpKind::kAveragePool: {
      auto window = AnalyzePool(op, inputs[0]);
      if (!window.ok()) return window.status();
      Dims out = {inputs[0][0], inputs[0][1]};
      for (int32_t i = 0; i < window->rank(); ++i) {
        out.push_back(window->OutputSize(i, inputs[0][2 + i]));
      }
      return std::vector<Dims>{out};
    }
    case OpKind::kUnaryElementwise:
    case OpKind::kBatchNormalization:
      return std::vector<Dims>{inputs[0]};
    case OpKind::kBinaryElementwise:
    case OpKind::kSum: {
      auto out = Broadcast(op, inputs);
      if (!out.ok()) return out.status();
      return std::vector<Dims>{*out};
    }
    case OpKind::kConcat: {
      const int64_t rank = static_cast<int64_t>(inputs[0].size());
      auto axis = ConcatAxis(op, rank);
      if (!axis.ok()) return axis.status();
      Dims out = inputs[0];
      out[*axis] = 0;
      for (const Dims& dims : inputs) {
        for (int64_t i = 0; i < rank; ++i) {
          if (static_cast<int64_t>(dims.size()) != rank || (i != *axis && dims[i] != out[i])) {
            return OpError(op, absl::StrCat("input ", DimsString(dims), " does not match ",
                                            DimsString(inputs[0]), " off axis ", *axis));
          }
        }
        out[*axis] += dims[*axis];
      }
      return std::vector<Dims>{out};
    }
    case OpKind::kSplit: {
      if (inputs.size() != 1) {
        return absl::UnimplementedError(absl::StrCat(
            "Split \"", op.name, "\": sizes given as a tensor input are not in the graph"));
      }
      const int64_t rank = static_cast<int64_t>(inputs[0].size());
      int64_t axis = IntAttribute(op, "axis").value_or(0);
      if (axis < 0) axis += rank;
      if (axis < 0 || axis >= rank) return OpError(op, "axis is out of range");
      const int64_t parts = static_cast<int64_t>(op.outputs.size());
      std::vector<int64_t> sizes = IntsAttribute(op, "split").value_or(std::vector<int64_t>{});
      if (sizes.empty()) {
        if (parts == 0 || inputs[0][axis] % parts != 0) {
          return OpError(op, "the axis does not split evenly into the outputs");
        }
        sizes.assign(parts, inputs[0][axis] / parts);
      }
      int64_t total = 0;
      for (int64_t s : sizes) total += s;
      if (static_cast<int64_t>(sizes.size()) != parts || total != inputs[0][axis]) {
        return OpError(op, "split sizes do not add up to the axis");
      }
      std::vector<Dims> outs;
      for (int64_t s : sizes) {
        outs.push_back(inputs[0]);
        outs.back()[axis] = s;
      }
      return outs;
    }
    case OpKind::kPad:
      return absl::UnimplementedError(
          absl::StrCat("Pad \"", op.name, "\": pads are a tensor input, not in the graph"));
    case OpKind::kResize: {
      // Upsample-7 carries its scales as an attribute; every later form
      // (Upsample-9, Resize) as an operand.
      std::optional<std::vector<double>> scales = FloatsAttribute(op, "scales");
      if (op.type != "Upsample" || inputs.size() != 1 || !scales) {
        return absl::UnimplementedError(absl::StrCat(
            op.type, " \"", op.name, "\": scales and sizes are tensor inputs, not in the graph"));
      }
      if (scales->size() != inputs[0].size()) {
        return OpError(op, absl::StrCat("scales has ", scales->size(), " entries for rank ",
                                        inputs[0].size()));
      }
      Dims out;
      for (size_t i = 0; i < scales->size(); ++i) {
        const double size = std::floor(static_cast<double>(inputs[0][i]) * (*scales)[i]);
        if (!std::isfinite(size) || size < 1 || size > 9e15) {
          return OpError(
              op, absl::StrCat("scale ", (*scales)[i], " of axis ", i, " gives no valid size"));
        }
        out.push_back(static_cast<int64_t>(size));
      }
      return std::vector<Dims>{out};
    }
    case OpKind::kSlice: {
      std::optional<std::vector<int64_t>> starts = IntsAttribute(op, "starts");
      std::optional<std::vector<int64_t>> ends = IntsAttribute(op, "ends");
      if (inputs.size() != 1 || !starts || !ends) {
        return absl::UnimplementedError(
            absl::StrCat("Slice \"", op.name,
                         "\": starts and ends given as tensor inputs are not in the graph"));
      }
      const int64_t rank = static_cast<int64_t>(inputs[0].size());
      std::vector<int64_t> axes = IntsAttribute(op, "axes").value_or(std::vector<int64_t>{});
      if (axes.empty()) {
        for (size_t i = 0; i < starts->size(); ++i) axes.push_back(static_cast<int64_t>(i));
      }
      if (axes.size() != starts->size() || ends->size() != starts->size()) {
        return OpError(op, "starts, ends and axes differ in length");
      }
      Dims out = inputs[0];
      for (size_t i = 0; i < axes.size(); ++i) {
        int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
        if (axis < 0 || axis >= rank) return OpError(op, "axis is out of range");
        const int64_t size = inputs[0][axis];
        auto clamp = [size](int64_t v) {
          return std::clamp<int64_t>(v < 0 ? v + size : v, 0, size);
        };
        out[axis] = std::max<int64_t>(0, clamp((*ends)[i]) - clamp((*starts)[i]));
      }
      return std::vector<Dims>{out};
    }
  }
  return absl::UnimplementedError(absl::StrCat("op type ", op.type, " is not understood"));
}

}  // namespace ordo
