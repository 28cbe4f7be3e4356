#include "core/onnx/onnx_import.h"

#include <algorithm>
#include <climits>
#include <iterator>
#include <optional>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_set.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/graph/onnx_domain.h"
#include "core/onnx/constant_folding.h"
#include "core/onnx/constant_tensor.h"
#include "core/onnx/function_inlining.h"
#include "core/onnx/input_shapes.h"
#include "core/onnx/model_view.h"
#include "core/onnx/newer_standard_ops.h"
#include "core/onnx/node_graph.h"
#include "core/onnx/node_reordering.h"
#include "core/onnx/tensor_shapes.h"
#include "core/util/checked_math.h"
#include "core/util/status_macros.h"
#include "core/util/wire_field_count.h"
#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"

namespace ordo {
namespace {

using onnx::AttributeProto;
using onnx::GraphProto;
using onnx::NodeProto;
using onnx::TensorProto;
using onnx_import::AttributeView;
using onnx_import::FoldingResult;
using onnx_import::ModelView;
using onnx_import::NodeGraph;
using onnx_import::NodeView;
using onnx_import::TensorType;
using onnx_import::TensorTypes;
using onnx_import::ValueInfoView;

absl::Status RejectControlFlow(const ModelView& graph, const std::vector<std::string>& names) {
  for (int32_t i = 0; i < graph.num_nodes(); ++i) {
    const absl::string_view op_type = graph.nodes[i].op_type;
    bool has_subgraph = op_type == "If" || op_type == "Loop" || op_type == "Scan";
    for (const AttributeView& attribute : graph.attributes_of(i)) {
      has_subgraph = has_subgraph || attribute.type == AttributeProto::GRAPH ||
                     attribute.type == AttributeProto::GRAPHS || attribute.has_graph;
    }
    if (has_subgraph) {
      return absl::InvalidArgumentError(absl::StrCat(
          "control-flow op \"", names[i], "\" (", op_type,
          ") is not supported yet: ordo plans one straight-line graph; export the model "
          "without it (a traced export such as torch.onnx.export's default writes Python "
          "branches and loops as straight-line ops; keep data-dependent branches and "
          "post-processing loops out of the exported module)"));
    }
  }
  return absl::OkStatus();
}

bool IsConvOrPool(absl::string_view op_type) {
  static constexpr absl::string_view kTypes[] = {
      "Conv",        "ConvTranspose", "ConvInteger", "QLinearConv", "MaxPool",
      "AveragePool", "LpPool",        "MaxUnpool",   "MaxRoiPool",  "QLinearAveragePool"};
  for (absl::string_view type : kTypes) {
    if (type == op_type) return true;
  }
  return false;
}

// ONNX 1.12's conv/pool shape inference divides by strides without checking
// them (a zero stride is SIGFPE, found by fuzzing), so window attributes are
// checked before inference can see them.
absl::Status CheckWindowAttributes(const ModelView& graph, const std::vector<std::string>& names) {
  for (int32_t i = 0; i < graph.num_nodes(); ++i) {
    const absl::string_view op_type = graph.nodes[i].op_type;
    if (!IsConvOrPool(op_type)) continue;
    for (const AttributeView& attribute : graph.attributes_of(i)) {
      const absl::string_view name = attribute.name;
      if (name != "strides" && name != "dilations" && name != "kernel_shape") continue;
      for (int64_t value : graph.ints_of(attribute)) {
        if (value > 0) continue;
        return absl::InvalidArgumentError(absl::StrCat("op \"", names[i], "\" (", op_type,
                                                       "): attribute \"", name,
                                                       "\" must be positive, got ", value));
      }
    }
  }
  return absl::OkStatus();
}

// The ints of `node`'s attribute `name`; empty when absent.
absl::Span<const int64_t> IntsAttribute(const ModelView& graph, const NodeView& node,
                                        absl::string_view name) {
  const AttributeView* attribute = graph.FindAttribute(node, name);
  return attribute != nullptr ? graph.ints_of(*attribute) : absl::Span<const int64_t>();
}

// A convolution or pooling whose window does not fit its padded input even
// once: the spec's output size, floor((in + pads - window) / stride) + 1
// (ceil with ceil_mode), is below 1, and onnxruntime and PyTorch refuse to
// run it ("output size is too small"). libonnx 1.12 divides with C++'s
// truncation, which makes the negative quotient 0, so it sized the output 1
// long and the model was planned at a size at which it cannot run (a probe
// of PyTorch audio exports: MaxPool of kernel 4 over 1-3 samples). Refused
// here, before the op after it fails on a dim the bad one left unknown.
// SAME padding always leaves ceil(in / stride) >= 1.
absl::Status CheckWindowsFitTheirInputs(const ModelView& graph, const NodeGraph& nodes,
                                        const FoldingResult& folding) {
  struct Windowed {
    absl::string_view op_type;
    int weight_input;  // -1: kernel_shape only
  };
  static constexpr Windowed kWindowed[] = {{"Conv", 1},     {"ConvInteger", 1},  {"QLinearConv", 3},
                                           {"MaxPool", -1}, {"AveragePool", -1}, {"LpPool", -1}};
  for (int32_t i = 0; i < graph.num_nodes(); ++i) {
    const NodeView& node = graph.nodes[i];
    if (folding.folded[i] || !IsStandardOnnxDomain(node.domain)) continue;
    const Windowed* windowed = nullptr;
    for (const Windowed& w : kWindowed) {
      if (w.op_type == node.op_type) windowed = &w;
    }
    if (windowed == nullptr) continue;
    const AttributeView* auto_pad_attribute = graph.FindAttribute(node, "auto_pad");
    const absl::string_view auto_pad =
        auto_pad_attribute != nullptr ? auto_pad_attribute->s : "NOTSET";
    if (auto_pad == "SAME_UPPER" || auto_pad == "SAME_LOWER") continue;
    const absl::Span<const int32_t> inputs = nodes.inputs(i);
    if (inputs.empty() || inputs[0] == onnx_import::kNoValue) continue;
    const TensorType& x = folding.types[inputs[0]];
    if (!x.IsStatic() || x.dims.size() < 3) continue;
    const size_t spatial = x.dims.size() - 2;
    const absl::Span<const int64_t> kernel_shape = IntsAttribute(graph, node, "kernel_shape");
    std::vector<int64_t> kernel(kernel_shape.begin(), kernel_shape.end());
    if (kernel.empty() && windowed->weight_input >= 0 &&
        windowed->weight_input < static_cast<int>(inputs.size()) &&
        inputs[windowed->weight_input] != onnx_import::kNoValue) {
      const TensorType& w = folding.types[inputs[windowed->weight_input]];
      if (w.IsStatic() && w.dims.size() == x.dims.size()) {
        kernel.assign(w.dims.begin() + 2, w.dims.end());
      }
    }
    if (kernel.size() != spatial) continue;  // inference reports a malformed window
    const absl::Span<const int64_t> strides = IntsAttribute(graph, node, "strides");
    const absl::Span<const int64_t> dilations = IntsAttribute(graph, node, "dilations");
    const absl::Span<const int64_t> pads =
        auto_pad == "VALID" ? absl::Span<const int64_t>() : IntsAttribute(graph, node, "pads");
    const AttributeView* ceil_mode_attribute = graph.FindAttribute(node, "ceil_mode");
    const bool ceil_mode = ceil_mode_attribute != nullptr && ceil_mode_attribute->i != 0;
    for (size_t axis = 0; axis < spatial; ++axis) {
      const int64_t stride = axis < strides.size() ? strides[axis] : 1;
      const int64_t dilation = axis < dilations.size() ? dilations[axis] : 1;
      // Pads of any value, dims up to 2^62, and kernels, dilations and
      // strides (positive: CheckWindowAttributes) bounded before the
      // arithmetic, which then cannot overflow; ONNX's inference reports
      // whatever is left out.
      const int64_t pad_head = pads.size() == 2 * spatial ? pads[axis] : 0;
      const int64_t pad_tail = pads.size() == 2 * spatial ? pads[axis + spatial] : 0;
      constexpr int64_t kLarge = int64_t{1} << 31;
      if (kernel[axis] > kLarge || dilation > kLarge || stride > kLarge || pad_head < -kLarge ||
          pad_head > kLarge || pad_tail < -kLarge || pad_tail > kLarge) {
        continue;
      }
      const int64_t padded = x.dims[axis + 2] + pad_head + pad_tail;
      const int64_t window = dilation * (kernel[axis] - 1) + 1;
      const bool fits = ceil_mode ? padded - window + stride > 0 : padded >= window;
      if (fits) continue;
      return absl::InvalidArgumentError(absl::StrCat(
          "op \"", nodes.names[i], "\" (", node.op_type,
          ") gets an empty output from its inputs: they are smaller than its window (it spans ",
          window, " along spatial axis ", axis, ", dim ", axis + 2, ", where input \"",
          nodes.value_names[inputs[0]], "\" is ", x.dims[axis + 2], " long, ", padded,
          " padded), so the model does not run at this input size (onnxruntime and PyTorch "
          "refuse it); compile at a larger one, e.g. the size it was exported at"));
    }
  }
  return absl::OkStatus();
}

std::optional<DataType> FromOnnxElemType(int32_t elem_type) {
  switch (elem_type) {
    case TensorProto::FLOAT:
      return DataType::kFloat32;
    case TensorProto::FLOAT16:
      return DataType::kFloat16;
    case TensorProto::BFLOAT16:
      return DataType::kBFloat16;
    case TensorProto::INT8:
      return DataType::kInt8;
    case TensorProto::UINT8:
      return DataType::kUInt8;
    case TensorProto::BOOL:
      return DataType::kBool;
    case TensorProto::INT16:
      return DataType::kInt16;
    case TensorProto::UINT16:
      return DataType::kUInt16;
    case TensorProto::INT32:
      return DataType::kInt32;
    case TensorProto::UINT32:
      return DataType::kUInt32;
    case TensorProto::INT64:
      return DataType::kInt64;
    case TensorProto::UINT64:
      return DataType::kUInt64;
    case TensorProto::DOUBLE:
      return DataType::kFloat64;
    default:
      return std::nullopt;
  }
}

std::string ElemTypeName(int32_t elem_type) {
  // Types newer than the ONNX this links (1.12): named, as an exporter
  // writes them (onnx.proto of ONNX 1.14-1.17).
  static constexpr const char* kNewer[] = {"FLOAT8E4M3FN",   "FLOAT8E4M3FNUZ", "FLOAT8E5M2",
                                           "FLOAT8E5M2FNUZ", "UINT4",          "INT4",
                                           "FLOAT4E2M1"};
  constexpr int32_t kFirstNewer = 17;
  if (elem_type >= kFirstNewer &&
      elem_type < kFirstNewer + static_cast<int32_t>(std::size(kNewer)) &&
      !TensorProto::DataType_IsValid(elem_type)) {
    return absl::StrCat("element type ", elem_type, " (", kNewer[elem_type - kFirstNewer],
                        ", ONNX 1.14 or later; export in float32 and give the deployed size "
                        "with --activation-dtype (device.activation_dtype), e.g. int8 for 8-bit "
                        "types)");
  }
  if (elem_type == 0 || !TensorProto::DataType_IsValid(elem_type)) {
    return absl::StrCat("unknown element type ", elem_type);
  }
  return absl::StrCat("element type ",
                      TensorProto::DataType_Name(static_cast<TensorProto::DataType>(elem_type)));
}

std::vector<Attribute> ConvertAttributes(const ModelView& graph, int32_t node) {
  const absl::Span<const AttributeView> all = graph.attributes_of(node);
  std::vector<Attribute> attributes;
  // One allocation per op instead of one per doubling (a Conv has five).
  attributes.reserve(all.size());
  for (const AttributeView& a : all) {
    std::string name(a.name);
    switch (a.type) {
      case AttributeProto::INT:
        attributes.push_back({std::move(name), a.i});
        break;
      case AttributeProto::FLOAT:
        attributes.push_back({std::move(name), static_cast<double>(a.f)});
        break;
      case AttributeProto::STRING:
        attributes.push_back({std::move(name), std::string(a.s)});
        break;
      case AttributeProto::INTS: {
        const absl::Span<const int64_t> ints = graph.ints_of(a);
        attributes.push_back({std::move(name), std::vector<int64_t>(ints.begin(), ints.end())});
        break;
      }
      case AttributeProto::FLOATS: {
        const absl::Span<const float> floats = graph.floats_of(a);
        attributes.push_back({std::move(name), std::vector<double>(floats.begin(), floats.end())});
        break;
      }
      default:
        break;  // tensors, strings lists, types: nothing the memory model reads
    }
  }
  return attributes;
}

std::string DescribeBadDim(const TensorType& type, size_t d) {
  if (type.dims[d] == 0) return "0 (zero-size tensor)";
  if (d < type.symbols.size() && !type.symbols[d].empty()) {
    return absl::StrCat("\"", type.symbols[d], "\" (symbolic)");
  }
  return type.dims[d] == onnx_import::kUnknownDim ? std::string("unknown")
                                                  : absl::StrCat(type.dims[d]);
}

// `what` names the tensor in messages; it is only called on an error.
// The dtype of a tensor that costs memory, its dims checked; or the rule it
// breaks.
absl::StatusOr<DataType> StaticShape(absl::FunctionRef<std::string()> what, const TensorType& type,
                                     const std::string& inference_error) {
  if (!type.has_shape) {
    const std::string reason =
        inference_error.empty() ? "" : absl::StrCat(" (", inference_error, ")");
    return absl::InvalidArgumentError(absl::StrCat(
        what(), ": shape is unknown after shape inference and constant folding", reason));
  }
  std::optional<DataType> dtype = FromOnnxElemType(type.elem_type);
  if (!dtype) {
    return absl::InvalidArgumentError(
        absl::StrCat(what(), ": ", ElemTypeName(type.elem_type), " is not supported"));
  }
  int64_t bytes = ElementSize(*dtype);
  for (size_t d = 0; d < type.dims.size(); ++d) {
    const int64_t dim = type.dims[d];
    if (dim <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(what(), ": dim ", d, " is ",
                                                     DescribeBadDim(type, d),
                                                     "; dims must be static and positive"));
    }
    std::optional<int64_t> product = CheckedMul(bytes, dim);
    if (!product) {
      return absl::InvalidArgumentError(absl::StrCat(what(), ": dims overflow int64"));
    }
    bytes = *product;
  }
  return *dtype;
}

// Ops whose output size depends on the values of an activation, and the
// inputs whose values set an op's output shape: when such an output has no
// static shape, the message says why no static plan can size it.
bool HasDataDependentOutputSize(absl::string_view op_type) {
  static constexpr absl::string_view kTypes[] = {"NonZero", "Unique", "NonMaxSuppression",
                                                 "Compress", "StringSplit"};
  for (absl::string_view type : kTypes) {
    if (type == op_type) return true;
  }
  return false;
}

// Ops whose output is a Sequence or an Optional, not a tensor.
bool MakesSequenceOrOptional(absl::string_view op_type) {
  static constexpr absl::string_view kTypes[] = {
      "SequenceConstruct", "SequenceEmpty", "SequenceInsert", "SequenceErase",
      "SplitToSequence",   "Optional",      "SequenceMap"};
  for (absl::string_view type : kTypes) {
    if (type == op_type) return true;
  }
  return false;
}

// Indices of the inputs of `op_type` whose values (not shapes) set the
// output shape.
std::vector<int> ShapeSettingInputs(absl::string_view op_type) {
  if (op_type == "Reshape" || op_type == "Expand" || op_type == "Tile" || op_type == "TopK" ||
      op_type == "OneHot" || op_type == "Upsample" || op_type == "Split") {
    return {1};
  }
  if (op_type == "ConstantOfShape") return {0};
  if (op_type == "Range") return {0, 1, 2};
  if (op_type == "Slice") return {1, 2, 3, 4};
  if (op_type == "Pad") return {1, 3};
  if (op_type == "Resize") return {2, 3};
  return {};
}

// Declares the tensors and ops of one ONNX graph to a GraphBuilder, by the
// value ids of `nodes`: the builder gets each tensor's name once and each
// op's tensors as ids, so nothing is looked up by name. The arguments must
// outlive it; the node names of `nodes` are moved into the graph.
class GraphAssembler {
 public:
  GraphAssembler(const ModelView& graph, NodeGraph& nodes, FoldingResult& folding,
                 const GraphLimits& limits)
      : graph_(graph),
        nodes_(nodes),
        folding_(folding),
        builder_(std::string(graph.graph_name), limits),
        tensor_of_(nodes.num_values(), kNoId),
        read_(nodes.num_values(), false) {
    // At most one tensor per value and one op per node.
    builder_.Reserve(graph.num_nodes(), nodes.num_values());
  }

  absl::StatusOr<Graph> Assemble() &&;

 private:
  const TensorType& TypeOf(int32_t value) const { return folding_.types[value]; }
  // A value's dims, moved into the Graph: each value is declared once
  // (tensor_of_), after the last read of its type.
  std::vector<int64_t> TakeDims(int32_t value) { return std::move(folding_.types[value].dims); }
  bool IsWeight(int32_t value) const { return nodes_.IsWeight(value, folding_.folded); }
  std::string NameOf(int32_t value) const { return std::string(nodes_.value_names[value]); }
  absl::Status DeclareInputs();
  absl::Status DeclareOp(int32_t index);
  absl::Status DeclareWeight(int32_t value);
  absl::Status ExplainUnknownShape(const absl::Status& status, int32_t index) const;
  absl::Status RefuseTrainingMode(int32_t index) const;
  bool HasEmptyOutput(int32_t index) const;
  std::string ExplainBroadcastMismatch(int32_t index) const;
  int32_t UnknownOperatorUpstream(int32_t index) const;
  absl::Status ExplainUnknownOperator(const absl::Status& status, int32_t index,
                                      int32_t unknown) const;

  const ModelView& graph_;
  NodeGraph& nodes_;
  FoldingResult& folding_;
  GraphBuilder builder_;
  std::vector<TensorId> tensor_of_;  // by value id: the builder's tensor, or kNoId
  std::vector<bool> read_;           // by value id: a node input or graph output
};

absl::StatusOr<Graph> GraphAssembler::Assemble() && {
  for (int32_t i = 0; i < graph_.num_nodes(); ++i) {
    for (int32_t input : nodes_.inputs(i)) {
      if (input != onnx_import::kNoValue) read_[input] = true;
    }
  }
  for (const ValueInfoView& output : graph_.outputs) {
    const int32_t id = nodes_.FindValue(output.name);
    if (id != onnx_import::kNoValue) read_[id] = true;
  }
  ORDO_RETURN_IF_ERROR(DeclareInputs());
  // A valid file is topologically sorted, so this is file order; for a file
  // that is not, it is the stable topological order a runtime would load it
  // in, which keeps OpId order a valid schedule.
  for (int32_t i : nodes_.order) {
    if (!folding_.folded[i]) ORDO_RETURN_IF_ERROR(DeclareOp(i));
  }
  for (const ValueInfoView& output : graph_.outputs) {
    // Declared so that the builder knows a folded output is a weight.
    const int32_t id = nodes_.FindValue(output.name);
    if (id != onnx_import::kNoValue && IsWeight(id)) ORDO_RETURN_IF_ERROR(DeclareWeight(id));
    builder_.AddGraphOutput(std::string(output.name));
  }
  return std::move(builder_).Build();
}

absl::Status GraphAssembler::DeclareInputs() {
  for (const ValueInfoView& input : graph_.inputs) {
    const std::string name(input.name);
    const int32_t id = nodes_.FindValue(name);
    if (id == onnx_import::kNoValue || !nodes_.is_graph_input[id] || tensor_of_[id] != kNoId) {
      continue;
    }
    ORDO_ASSIGN_OR_RETURN(const DataType dtype,
                          StaticShape([&] { return absl::StrCat("graph input \"", name, "\""); },
                                      TypeOf(id), folding_.inference_error));
    tensor_of_[id] = builder_.AddTensor(name, dtype, TakeDims(id), TensorKind::kInput);
    builder_.AddGraphInput(name);
  }
  return absl::OkStatus();
}

absl::Status GraphAssembler::DeclareOp(int32_t index) {
  ORDO_RETURN_IF_ERROR(RefuseTrainingMode(index));
  const NodeView& node = graph_.nodes[index];
  const absl::Span<const int32_t> output_ids = nodes_.outputs(index);
  std::vector<TensorId> outputs;
  outputs.reserve(output_ids.size());
  for (size_t i = 0; i < output_ids.size(); ++i) {
    const int32_t output = output_ids[i];
    if (output == onnx_import::kNoValue) continue;
    // At inference Dropout is the identity: a mask nobody reads is never
    // computed, and the op is then a single-output in-place view.
    if (node.op_type == "Dropout" && i > 0 && !read_[output]) continue;
    absl::StatusOr<DataType> dtype = StaticShape(
        [&] {
          return absl::StrCat("tensor \"", nodes_.value_names[output], "\" (output of op \"",
                              nodes_.names[index], "\")");
        },
        TypeOf(output), folding_.inference_error);
    if (!dtype.ok()) return ExplainUnknownShape(dtype.status(), index);
    tensor_of_[output] = builder_.AddTensor(NameOf(output), *dtype, TakeDims(output));
    outputs.push_back(tensor_of_[output]);
  }
  const absl::Span<const int32_t> input_ids = nodes_.inputs(index);
  std::vector<TensorId> inputs;
  inputs.reserve(input_ids.size());
  for (int32_t input : input_ids) {
    if (input == onnx_import::kNoValue) continue;  // an omitted optional input
    if (IsWeight(input)) ORDO_RETURN_IF_ERROR(DeclareWeight(input));
    if (tensor_of_[input] == kNoId) {
      // AnalyzeNodeGraph checked every input is defined; kept as a status
      // in case a later rule leaves one undeclared.
      return absl::InvalidArgumentError(absl::StrCat("op \"", nodes_.names[index],
                                                     "\" reads tensor \"", NameOf(input),
                                                     "\", which is not defined"));
    }
    inputs.push_back(tensor_of_[input]);
  }
  builder_.AddOpWithTensorIds(std::move(nodes_.names[index]), std::string(node.op_type),
                              std::move(inputs), std::move(outputs),
                              ConvertAttributes(graph_, index), index, std::string(node.domain));
  return absl::OkStatus();
}

// A shape that stays unknown after folding is either data-dependent by
// nature (NonZero) or set by an input computed from activation values; the
// message says which, since no input shape the user gives can fix it.
absl::Status GraphAssembler::ExplainUnknownShape(const absl::Status& status, int32_t index) const {
  const absl::string_view op_type = graph_.nodes[index].op_type;
  const std::string& op = nodes_.names[index];
  if (HasEmptyOutput(index)) {
    return absl::InvalidArgumentError(absl::StrCat(
        status.message(), ". Op \"", op, "\" (", op_type,
        ") gets an empty output from its inputs: they are smaller than its window or "
        "stride reach, so the model does not run at this input size (compile at a larger "
        "one, e.g. the size it was exported at)"));
  }
  if (std::string reason = ExplainBroadcastMismatch(index); !reason.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(status.message(), ". ", reason));
  }
  if (MakesSequenceOrOptional(op_type)) {
    return absl::InvalidArgumentError(absl::StrCat(
        status.message(), ". Op \"", op, "\" (", op_type,
        ") makes a Sequence or Optional value, not a tensor; ordo plans tensors of static "
        "size only: export the model without sequence and optional ops"));
  }
  if (HasDataDependentOutputSize(op_type)) {
    return absl::InvalidArgumentError(absl::StrCat(
        status.message(), ". Op \"", op, "\" (", op_type,
        ") has an output whose size depends on the values of its inputs, known only at run "
        "time, so no static memory plan can size it: end the export before it (run it in the "
        "application, as post-processing), or, where the runtime gives it a fixed maximum "
        "size, declare that size for its outputs in graph.value_info"));
  }
  if (folding_.rounds_exhausted) {
    return absl::InvalidArgumentError(absl::StrCat(
        status.message(), ". Constant folding stopped after ", onnx_import::kMaxFoldingRounds,
        " rounds of fold-then-infer with shapes still being resolved: the model's chain of "
        "shape computations is deeper than the importer follows (an importer limit, not a "
        "property of the model; please report it with the model)"));
  }
  if (const int32_t unknown = UnknownOperatorUpstream(index); unknown != onnx_import::kNoValue) {
    return ExplainUnknownOperator(status, index, unknown);
  }
  if (!onnx_import::InfersShapesAtItsOpset(graph_, graph_.nodes[index])) {
    // Known, but its schema at the model's opset infers nothing: the
    // oldest standard versions whose newer one changed more than
    // consumed_inputs (Reshape-1, Pad-1; InferenceDonor covers the rest),
    // or an ai.onnx.ml op (Scaler). Not "convert the model": ONNX 1.12's
    // version_converter turns opset 1-6 legacy broadcasts into other
    // shapes (a probe: B [C] at axis 1 became [C,1,1,1]).
    return absl::InvalidArgumentError(
        absl::StrCat(status.message(), ". Op \"", op, "\" (", op_type,
                     ") has no shape inference in ONNX's schema at this model's opset: list "
                     "the op's output shapes in graph.value_info"));
  }
  const absl::Span<const int32_t> inputs = nodes_.inputs(index);
  for (int k : ShapeSettingInputs(op_type)) {
    if (k >= static_cast<int>(inputs.size()) || inputs[k] == onnx_import::kNoValue ||
        IsWeight(inputs[k])) {
      continue;
    }
    return absl::InvalidArgumentError(absl::StrCat(
        status.message(), ". Input ", k, " (\"", graph_.inputs_of(index)[k], "\") of op \"", op,
        "\" (", op_type,
        ") sets this shape and is computed from activation values at "
        "run time, so it cannot be folded to a constant (a data-dependent shape): export it as "
        "a constant (a Python int, not a tensor, in the exported module), or declare the "
        "fixed size the runtime gives this op's outputs in graph.value_info"));
  }
  return status;
}

// A training graph's BatchNormalization: its extra outputs have no
// inference-time meaning, and they or training_mode make runtimes
// normalize by the batch, so the model computes something else than its
// eval-mode export. Only the user's export can fix that; sizing the
// outputs would not, so this holds whether or not the file declares them.
absl::Status GraphAssembler::RefuseTrainingMode(int32_t index) const {
  const std::string feature = onnx_import::TrainingModeFeature(graph_, graph_.nodes[index]);
  if (feature.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      "op \"", nodes_.names[index], "\" (", graph_.nodes[index].op_type, "): ", feature,
      ". A BatchNormalization with more than one output, or "
      "with training_mode=1 (opset 14 on), is a training op: runtimes normalize by the "
      "batch's statistics, and at inference the op has one output and training_mode=0. "
      "Export the model in eval mode (model.eval() before torch.onnx.export), or drop every "
      "output of the op but the first and its training_mode attribute"));
}

// A windowed op (convolution, pooling) with an output dim of zero or less
// (not an unknown one): its inputs shrank past what its window and stride
// take (SSD300's extra layers at 97x131).
// An element-wise op whose inputs' dims do not broadcast (ONNX's
// "Incompatible dimensions"): at the size compiled, one input is another
// size than the op expects, e.g. a position table sized at export added to
// a longer sequence, or a mask of another length than its tokens. Names
// both inputs, their dims and the dim that disagrees; "" for other ops or
// when the dims broadcast.
std::string GraphAssembler::ExplainBroadcastMismatch(int32_t index) const {
  static const absl::flat_hash_set<absl::string_view>* const kBroadcasting =
      new absl::flat_hash_set<absl::string_view>{
          "Add",     "Sub",   "Mul",     "Div",         "Pow",
          "Mod",     "Max",   "Min",     "Sum",         "Mean",
          "Equal",   "Less",  "Greater", "And",         "Or",
          "Xor",     "Where", "PRelu",   "LessOrEqual", "GreaterOrEqual",
          "BitShift"};
  if (!kBroadcasting->contains(graph_.nodes[index].op_type)) return "";
  struct Operand {
    absl::string_view name;
    std::vector<int64_t> dims;
  };
  std::vector<Operand> operands;
  for (int32_t input : nodes_.inputs(index)) {
    if (input == onnx_import::kNoValue) continue;
    const TensorId tensor = tensor_of_[input];
    const absl::Span<const int64_t> dims =
        tensor != kNoId ? builder_.dims_of(tensor) : absl::MakeConstSpan(TypeOf(input).dims);
    if (tensor == kNoId && !TypeOf(input).IsStatic()) continue;
    operands.push_back({nodes_.value_names[input], {dims.begin(), dims.end()}});
  }
  for (size_t a = 0; a < operands.size(); ++a) {
    for (size_t b = a + 1; b < operands.size(); ++b) {
      const std::vector<int64_t>&x = operands[a].dims, &y = operands[b].dims;
      for (size_t k = 1; k <= std::min(x.size(), y.size()); ++k) {
        const int64_t dx = x[x.size() - k], dy = y[y.size() - k];
        if (dx == dy || dx == 1 || dy == 1) continue;
        return absl::StrCat(
            "Op \"", nodes_.names[index], "\" (", graph_.nodes[index].op_type, ") gets \"",
            operands[a].name, "\" (", FormatDims(x), ") and \"", operands[b].name, "\" (",
            FormatDims(y), "), whose dims ", x.size() - k, " and ", y.size() - k, " (", dx, " and ",
            dy, ") do not broadcast, so the model does not run at this input size: ",
            "give the graph inputs sizes that make them agree (one of them may be sized at "
            "export, as a position table is)");
      }
    }
  }
  return "";
}

bool GraphAssembler::HasEmptyOutput(int32_t index) const {
  static const absl::flat_hash_set<absl::string_view>* const kWindowed =
      new absl::flat_hash_set<absl::string_view>{"Conv", "ConvTranspose", "MaxPool",
                                                 "AveragePool", "LpPool", "ConvInteger",
                                                 "QLinearConv"};
  if (!kWindowed->contains(graph_.nodes[index].op_type)) return false;
  for (int32_t output : nodes_.outputs(index)) {
    if (output == onnx_import::kNoValue || !TypeOf(output).has_shape) continue;
    for (int64_t dim : TypeOf(output).dims) {
      if (dim != onnx_import::kUnknownDim && dim <= 0) return true;
    }
  }
  return false;
}

// Node `index` itself when ONNX does not know it, else the nearest such op
// upstream (a custom op inside a shape computation leaves the Reshape after
// it unknown); or kNoValue. The walk follows a value whose shape is unknown,
// and a value whose contents an op needs that is not an initializer: an
// op's shape-setting inputs, and every input of an op whose output's
// contents are needed but a Shape's or Size's (its input's shape only),
// through compile-time (folded) nodes: a folded node whose value was
// computed has no unknown op upstream, and one whose value was not leads to
// it (bench/onnx-sweep: a custom-domain Constant giving an
// Unsqueeze its axes, whose Concat then set a Reshape's shape, was refused
// with no reason). Values already declared (their dims moved into the
// builder by TakeDims) keep has_shape, so they count as known.
int32_t GraphAssembler::UnknownOperatorUpstream(int32_t index) const {
  struct Visit {
    int32_t node;
    bool contents_needed;
  };
  std::vector<Visit> stack = {{index, false}};
  // By whether the node's output's contents are needed, then by node.
  std::vector<bool> seen[2] = {std::vector<bool>(graph_.num_nodes(), false),
                               std::vector<bool>(graph_.num_nodes(), false)};
  seen[0][index] = true;
  while (!stack.empty()) {
    const auto [node, contents_needed] = stack.back();
    stack.pop_back();
    const NodeView& view = graph_.nodes[node];
    if (!onnx_import::IsKnownToOnnx(graph_, view)) return node;
    const absl::Span<const int32_t> inputs = nodes_.inputs(node);
    std::vector<bool> contents_of(inputs.size(), false);
    if (contents_needed && view.op_type != "Shape" && view.op_type != "Size") {
      contents_of.assign(inputs.size(), true);
    } else {
      for (int k : ShapeSettingInputs(view.op_type)) {
        if (k < static_cast<int>(inputs.size())) contents_of[k] = true;
      }
    }
    for (size_t k = 0; k < inputs.size(); ++k) {
      const int32_t input = inputs[k];
      if (input == onnx_import::kNoValue) continue;
      if (contents_of[k] ? nodes_.is_initializer[input] : TypeOf(input).IsStatic()) continue;
      const int32_t producer = nodes_.producer[input];
      if (producer == onnx_import::kNoValue || seen[contents_of[k]][producer]) continue;
      // Contents computed from activations are a data-dependent shape, said
      // by the caller, not an unknown op's doing: only compile-time
      // (folded) producers are followed for contents.
      if (contents_of[k] && !folding_.folded[producer]) continue;
      seen[contents_of[k]][producer] = true;
      stack.push_back({producer, contents_of[k]});
    }
  }
  return onnx_import::kNoValue;
}

// An operator ONNX's schemas do not know (a custom domain, or a standard op
// newer than the linked library) gets no shape inference at all. For its own
// outputs the user can give the shapes in value_info, which the importer
// reads; upstream of an unknown shape it feeds a compile-time value (a shape
// computation), which no declaration supplies.
absl::Status GraphAssembler::ExplainUnknownOperator(const absl::Status& status, int32_t index,
                                                    int32_t unknown) const {
  const NodeView& node = graph_.nodes[unknown];
  const std::string domain(node.domain);
  const auto& versions = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  const auto standard = versions.find(onnx::ONNX_DOMAIN);
  const std::string op = absl::StrCat(
      "\"", nodes_.names[unknown], "\" (", node.op_type,
      domain.empty() ? std::string() : absl::StrCat(", domain \"", domain, "\""), ")");
  const std::string library =
      standard == versions.end()
          ? std::string()
          : absl::StrCat(" (standard operators up to opset ", standard->second.second, ")");
  const std::string newer = onnx_import::FeatureNewerThanLibrary(graph_, node);
  std::string unknown_to_onnx =
      newer.empty()
          ? absl::StrCat("is not an operator the ONNX library ordo uses knows", library)
          : absl::StrCat("uses ", newer, ", newer than the ONNX library ordo uses knows", library);
  // An op ordo sizes itself, at an opset before the op existed: the file is
  // invalid, and the fix is the export's opset, not value_info.
  if (const onnx::OpSchema* later =
          onnx_import::NewerStandardSchema(node.op_type, INT_MAX, node.domain)) {
    unknown_to_onnx = absl::StrCat(
        "is a standard operator only from opset ", later->since_version(),
        " on, and the model imports opset ", onnx_import::StandardOpset(graph_),
        " (export at opset ", later->since_version(),
        " or later, e.g. torch.onnx.export(..., opset_version=", later->since_version(), "))");
  }
  if (unknown == index) {
    return absl::InvalidArgumentError(absl::StrCat(
        status.message(), ". Op ", op, " ", unknown_to_onnx,
        ", so nothing infers its output shapes: list them in the model's graph.value_info "
        "(each output's element type and dims), or export without this operator"));
  }
  return absl::InvalidArgumentError(absl::StrCat(
      status.message(), ". It depends on a value computed by op ", op, ", which ",
      unknown_to_onnx,
      ", so the value can be neither inferred nor computed at compile time: export the "
      "model without this operator"));
}

// Only weights that a scheduled op or the graph outputs read are declared:
// the intermediate values of folded chains are gone after folding, as in a
// deployment converter, and must not count under count_weights. A weight
// whose size is unknown (no shape after inference, an unsupported element
// type) or zero is declared as 1 byte, because the builder needs a positive
// size; weights cost nothing unless count_weights is on.
absl::Status GraphAssembler::DeclareWeight(int32_t value) {
  if (tensor_of_[value] != kNoId) return absl::OkStatus();
  const TensorType& type = TypeOf(value);
  std::optional<DataType> dtype = FromOnnxElemType(type.elem_type);
  int64_t bytes = 0;
  if (dtype && type.IsStatic()) {
    bytes = ElementSize(*dtype);
    for (int64_t dim : type.dims) {
      std::optional<int64_t> product = CheckedMul(bytes, dim);
      if (!product) {
        return absl::InvalidArgumentError(
            absl::StrCat("weight \"", nodes_.value_names[value], "\": dims overflow int64"));
      }
      bytes = *product;
    }
  }
  tensor_of_[value] =
      bytes > 0 ? builder_.AddTensor(NameOf(value), *dtype, TakeDims(value), TensorKind::kWeight)
                : builder_.AddTensorBytes(NameOf(value), 1, TensorKind::kWeight);
  return absl::OkStatus();
}

// The message itself, for writing a reordered copy.
absl::Status ParseModel(absl::string_view bytes, onnx::ModelProto& model) {
  if (bytes.size() > static_cast<size_t>(INT_MAX)) {
    return absl::InvalidArgumentError("not a valid ONNX model: larger than protobuf's 2 GiB limit");
  }
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    return absl::InvalidArgumentError(
        "not a valid ONNX model: the bytes do not parse as onnx.ModelProto");
  }
  if (!model.has_graph()) {
    return absl::InvalidArgumentError("not a valid ONNX model: it has no graph");
  }
  return absl::OkStatus();
}

// Which node each op came from, checking that `graph` was imported from this
// model.
absl::StatusOr<std::vector<int32_t>> NodesOfOps(const GraphProto& model_graph, const Graph& graph) {
  std::vector<int32_t> nodes;
  std::vector<bool> taken(model_graph.node_size(), false);
  for (const Op& op : graph.ops()) {
    const int32_t index = op.source_index;
    if (index < 0 || index >= model_graph.node_size() || taken[index] ||
        model_graph.node(index).op_type() != op.type) {
      return absl::InvalidArgumentError(
          absl::StrCat("op \"", op.name, "\" does not match a node of this model ",
                       "(source index ", index, "); was the graph imported from it?"));
    }
    taken[index] = true;
    nodes.push_back(index);
  }
  return nodes;
}

absl::Status CheckSchedule(const Graph& graph, absl::Span<const OpId> schedule) {
  if (static_cast<int64_t>(schedule.size()) != graph.num_ops()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "schedule has ", schedule.size(), " steps; the graph has ", graph.num_ops(), " ops"));
  }
  std::vector<bool> seen(graph.num_ops(), false);
  for (OpId op : schedule) {
    if (op < 0 || op >= graph.num_ops()) {
      return absl::InvalidArgumentError(
          absl::StrCat("schedule names op id ", op, ", which is not in the graph"));
    }
    if (seen[op]) {
      return absl::InvalidArgumentError(
          absl::StrCat("schedule runs op \"", graph.op(op).name, "\" twice"));
    }
    for (TensorId input : graph.op(op).inputs) {
      const OpId producer = graph.tensor(input).producer;
      if (producer == kNoId || seen[producer]) continue;
      return absl::InvalidArgumentError(absl::StrCat(
          "schedule runs op \"", graph.op(op).name, "\" before op \"", graph.op(producer).name,
          "\", which produces its input \"", graph.tensor(input).name, "\""));
    }
    seen[op] = true;
  }
  return absl::OkStatus();
}

std::optional<int64_t> ElementCount(const std::vector<int64_t>& dims) {
  int64_t count = 1;
  for (int64_t dim : dims) {
    std::optional<int64_t> product = CheckedMul(count, dim);
    if (!product) return std::nullopt;
    count = *product;
  }
  return count;
}

// The graph inputs `value` is computed from (itself included), by walking
// its producers.
std::vector<absl::string_view> GraphInputsUpstream(const NodeGraph& nodes, int32_t value) {
  std::vector<absl::string_view> inputs;
  std::vector<bool> seen(nodes.num_values(), false);
  std::vector<int32_t> stack = {value};
  while (!stack.empty()) {
    const int32_t v = stack.back();
    stack.pop_back();
    if (v == onnx_import::kNoValue || seen[v]) continue;
    seen[v] = true;
    if (nodes.is_graph_input[v]) inputs.push_back(nodes.value_names[v]);
    const int32_t producer = nodes.producer[v];
    if (producer == onnx_import::kNoValue) continue;
    for (int32_t input : nodes.inputs(producer)) stack.push_back(input);
  }
  return inputs;
}

// The graph inputs whose shapes the compile-time value `value` is computed
// from (Shape or Size of a tensor computed from them, through any chain),
// in first-reached order; empty for a value of the export's constants.
std::vector<absl::string_view> InputsWhoseShapesMake(const NodeGraph& nodes, const ModelView& view,
                                                     int32_t value) {
  std::vector<absl::string_view> inputs;
  std::vector<bool> seen(nodes.num_values(), false);
  std::vector<int32_t> values = {value};
  std::vector<int32_t> shaped;  // tensors whose shape a Shape or Size reads
  while (!values.empty()) {
    const int32_t v = values.back();
    values.pop_back();
    if (v == onnx_import::kNoValue || seen[v]) continue;
    seen[v] = true;
    const int32_t producer = nodes.producer[v];
    if (producer == onnx_import::kNoValue) continue;
    const absl::Span<const int32_t> reads = nodes.inputs(producer);
    const bool shape_of =
        view.nodes[producer].op_type == "Shape" || view.nodes[producer].op_type == "Size";
    for (int32_t input : reads) (shape_of ? shaped : values).push_back(input);
  }
  for (int32_t v : shaped) {
    for (absl::string_view input : GraphInputsUpstream(nodes, v)) {
      if (!absl::c_linear_search(inputs, input)) inputs.push_back(input);
    }
  }
  return inputs;
}

// ONNX's inference takes a Reshape's output dims from its target shape
// without checking that the element counts agree (libonnx 1.12, even in
// strict mode). A traced export bakes sizes derived from its input into
// such targets (torchvision's MaxViT: its window partition's Reshape), so at
// another input size the model cannot run, and its plan would be silently
// wrong (bench/onnx-sweep with --input-shape). A target computed from the
// shapes of two inputs that disagree (a token sequence and its mask of
// other lengths) fails the same way, and the fix is another.
absl::Status CheckReshapeElementCounts(const Graph& graph, const ModelView& view,
                                       const NodeGraph& nodes) {
  for (const Op& op : graph.ops()) {
    // Both inputs present, so input 0 is the data (an omitted one is dropped).
    if (op.type != "Reshape" || !IsStandardOnnxDomain(op.domain) ||
        op.inputs.size() < 2 || op.outputs.empty()) {
      continue;
    }
    const Tensor& data = graph.tensor(op.inputs[0]);
    const Tensor& reshaped = graph.tensor(op.outputs[0]);
    if (data.dims.empty() && data.kind == TensorKind::kWeight) continue;  // size unknown
    const std::optional<int64_t> in = ElementCount(data.dims);
    const std::optional<int64_t> out = ElementCount(reshaped.dims);
    if (!in || !out || *in == *out) continue;
    const std::string mismatch = absl::StrCat(
        "op \"", op.name, "\" (Reshape): input \"", data.name, "\" has ", *in, " elements (",
        FormatDims(data.dims), ") but the target shape ", FormatDims(reshaped.dims), " has ", *out,
        ", so the model cannot run at these input shapes. ");
    // A target made from the shapes of graph inputs the data is not
    // computed from: those inputs disagree. One made from the data's own
    // input (a dynamic batch beside a window size baked in) is the export's.
    std::vector<absl::string_view> sources;
    if (op.source_index >= 0 && op.source_index < view.num_nodes()) {
      const absl::Span<const int32_t> inputs = nodes.inputs(op.source_index);
      if (inputs.size() >= 2) {
        const std::vector<absl::string_view> data_inputs = GraphInputsUpstream(nodes, inputs[0]);
        for (absl::string_view source : InputsWhoseShapesMake(nodes, view, inputs[1])) {
          if (!absl::c_linear_search(data_inputs, source)) sources.push_back(source);
        }
      }
    }
    if (!sources.empty()) {
      return absl::InvalidArgumentError(absl::StrCat(
          mismatch, "The target is computed from the shape of graph input",
          sources.size() == 1 ? " \"" : "s \"", absl::StrJoin(sources, "\", \""),
          "\", which does not match the data: give the graph inputs sizes that agree (e.g. "
          "one --dim-param for a dim they share, such as a sequence length)"));
    }
    return absl::InvalidArgumentError(absl::StrCat(
        mismatch,
        "The target is a constant of the export (a traced export fixes sizes derived from the "
        "input size it was exported at): compile at that input size, or export the model at "
        "the size you want"));
  }
  return absl::OkStatus();
}

}  // namespace

absl::StatusOr<Graph> ImportOnnx(absl::string_view model_bytes, const GraphLimits& limits) {
  // Read from the wire as views: the generated ModelProto is built only if
  // constant folding needs it (see FoldConstants).
  ORDO_ASSIGN_OR_RETURN(ModelView graph, onnx_import::ScanModel(model_bytes, limits.max_ops));
  std::vector<std::string> names = onnx_import::UniqueNodeNames(graph);
  if (std::optional<int32_t> call = FirstLocalFunctionCall(graph)) {
    // One op would hide the function's intermediate activations.
    return absl::InvalidArgumentError(
        absl::StrCat("node \"", names[*call], "\" calls the model-local function \"",
                     graph.nodes[*call].domain, ".", graph.nodes[*call].op_type,
                     "\"; local functions are inlined before import (PrepareOnnxModel), as a "
                     "runtime runs them"));
  }
  if (CountNestedWireField(model_bytes, 7, 15).value_or(0) > 0) {
    // ModelProto.graph (7) -> GraphProto.sparse_initializer (15).
    return absl::InvalidArgumentError(
        "the graph has sparse_initializer entries; they are made dense before import "
        "(PrepareOnnxModel)");
  }
  ORDO_RETURN_IF_ERROR(RejectControlFlow(graph, names));
  ORDO_RETURN_IF_ERROR(CheckWindowAttributes(graph, names));
  ORDO_ASSIGN_OR_RETURN(NodeGraph nodes, onnx_import::AnalyzeNodeGraph(graph, std::move(names)));
  ORDO_RETURN_IF_ERROR(CheckStaticInputs(graph, nodes));
  TensorTypes types = onnx_import::TakeTensorTypes(graph, nodes);
  ORDO_ASSIGN_OR_RETURN(FoldingResult folding,
                        onnx_import::FoldConstants(graph, model_bytes, nodes, std::move(types)));
  ORDO_RETURN_IF_ERROR(CheckWindowsFitTheirInputs(graph, nodes, folding));
  ORDO_ASSIGN_OR_RETURN(Graph imported, GraphAssembler(graph, nodes, folding, limits).Assemble());
  ORDO_RETURN_IF_ERROR(CheckReshapeElementCounts(imported, graph, nodes));
  return imported;
}

absl::Status CheckOnnxParses(absl::string_view model_bytes) {
  onnx::ModelProto model;
  return ParseModel(model_bytes, model);
}

// The schedule runs a node before an activation whose shape it reads
// through compile-time nodes (a dynamic export's Reshape target computed
// from Shape of a later tensor: the Graph sees the shape as a constant, so
// the schedule is valid, but no file order can run Shape before its input
// exists). At the size compiled those values are constants: each such
// compile-time node's outputs are written as initializers (the file is then
// that size's, as the plan is) and the node is left out. `why` is the
// refusal when a value cannot be computed. Returns the nodes left out.
absl::StatusOr<std::vector<int32_t>> FreezeValuesOfActivations(absl::string_view model_bytes,
                                                               const NodeGraph& nodes,
                                                               absl::Span<const int32_t> scheduled,
                                                               const absl::Status& why,
                                                               onnx::ModelProto& model) {
  const std::vector<int32_t> frozen =
      onnx_import::CompileTimeNodesOfActivationsReadByScheduled(nodes, scheduled);
  if (frozen.empty()) return why;
  // The import's own folding, on a view of its own (TakeTensorTypes takes
  // the view's dims).
  ORDO_ASSIGN_OR_RETURN(ModelView view, onnx_import::ScanModel(model_bytes));
  TensorTypes types = onnx_import::TakeTensorTypes(view, nodes);
  ORDO_ASSIGN_OR_RETURN(const FoldingResult folding,
                        onnx_import::FoldConstants(view, model_bytes, nodes, std::move(types)));
  std::vector<bool> read(nodes.num_values(), false);
  for (int32_t node = 0; node < view.num_nodes(); ++node) {
    for (int32_t input : nodes.inputs(node)) {
      if (input != onnx_import::kNoValue) read[input] = true;
    }
  }
  for (const onnx::ValueInfoProto& output : model.graph().output()) {
    const auto id = nodes.value_ids.find(output.name());
    if (id != nodes.value_ids.end()) read[id->second] = true;
  }
  for (int32_t node : frozen) {
    for (int32_t output : nodes.outputs(node)) {
      if (output == onnx_import::kNoValue || !read[output]) continue;
      const auto value = folding.values.find(output);
      if (value == folding.values.end()) {
        return absl::InvalidArgumentError(
            absl::StrCat(why.message(), " (and its value, at the size compiled, is not one the ",
                         "importer computes, to write it as a constant)"));
      }
      const onnx::TensorProto& constant = *model.mutable_graph()->add_initializer() =
          ConstantToProto(value->second, std::string(nodes.value_names[output]));
      if (model.ir_version() < 4) {  // before IR 4 every initializer is a graph input too
        onnx::ValueInfoProto& input = *model.mutable_graph()->add_input();
        input.set_name(constant.name());
        onnx::TypeProto::Tensor& type = *input.mutable_type()->mutable_tensor_type();
        type.set_elem_type(constant.data_type());
        for (int64_t dim : constant.dims()) type.mutable_shape()->add_dim()->set_dim_value(dim);
      }
    }
  }
  return frozen;
}

absl::StatusOr<std::string> ReorderOnnxNodes(absl::string_view model_bytes, const Graph& graph,
                                             absl::Span<const OpId> schedule) {
  onnx::ModelProto model;
  ORDO_RETURN_IF_ERROR(ParseModel(model_bytes, model));
  ORDO_RETURN_IF_ERROR(CheckSchedule(graph, schedule));
  ORDO_ASSIGN_OR_RETURN(std::vector<int32_t> node_of_op, NodesOfOps(model.graph(), graph));
  ORDO_ASSIGN_OR_RETURN(const ModelView view, onnx_import::ScanModel(model_bytes));
  if (view.num_nodes() != model.graph().node_size()) {
    return absl::InternalError("the model's scan and its parse disagree on its nodes");
  }
  ORDO_ASSIGN_OR_RETURN(NodeGraph nodes,
                        onnx_import::AnalyzeNodeGraph(view, onnx_import::UniqueNodeNames(view)));
  std::vector<int32_t> scheduled;
  scheduled.reserve(schedule.size());
  for (OpId op : schedule) scheduled.push_back(node_of_op[op]);
  absl::StatusOr<std::vector<int32_t>> order =
      onnx_import::InterleaveCompileTimeNodes(model.graph(), nodes, scheduled);
  if (!order.ok()) {
    ORDO_ASSIGN_OR_RETURN(
        const std::vector<int32_t> frozen,
        FreezeValuesOfActivations(model_bytes, nodes, scheduled, order.status(), model));
    order = onnx_import::InterleaveCompileTimeNodes(model.graph(), nodes, scheduled, frozen);
    if (!order.ok()) return order.status();
  }
  GraphProto& out = *model.mutable_graph();
  google::protobuf::RepeatedPtrField<NodeProto> original;
  original.Swap(out.mutable_node());
  for (int32_t index : *order) *out.add_node() = std::move(*original.Mutable(index));
  std::string bytes;
  if (!model.SerializeToString(&bytes)) {
    return absl::InvalidArgumentError("reordered model does not serialize (over 2 GiB?)");
  }
  return bytes;
}

}  // namespace ordo
