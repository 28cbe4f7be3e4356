#include "core/onnx/tensor_shapes.h"

#include <algorithm>
#include <climits>
#include <cstdlib>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "absl/cleanup/cleanup.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/graph/onnx_domain.h"
#include "core/onnx/einsum_shape.h"
#include "core/onnx/microsoft_quantized_ops.h"
#include "core/onnx/newer_standard_ops.h"
#include "core/util/status_macros.h"
#include "onnx/defs/schema.h"
#include "onnx/shape_inference/implementation.h"

namespace ordo::onnx_import {
namespace {

// Schemas of ops libonnx 1.12 has none for, which ordo writes itself:
// onnxruntime's quantized ops and standard ops of opsets 18-24.
const onnx::OpSchema* SchemaLibonnxLacks(absl::string_view op_type, int max_inclusive_version,
                                         absl::string_view domain) {
  const onnx::OpSchema* schema = MicrosoftQuantizedSchema(op_type, domain);
  return schema != nullptr ? schema : NewerStandardSchema(op_type, max_inclusive_version, domain);
}

TensorType FromTypeProto(const onnx::TypeProto& type) {
  TensorType out;
  if (!type.has_tensor_type()) return out;
  const onnx::TypeProto::Tensor& tensor = type.tensor_type();
  out.elem_type = tensor.elem_type();
  out.has_shape = tensor.has_shape();
  const auto& dims = tensor.shape().dim();
  out.dims.reserve(dims.size());
  for (int d = 0; d < dims.size(); ++d) {
    const onnx::TensorShapeProto::Dimension& dim = dims[d];
    const bool known = dim.has_dim_value();
    out.dims.push_back(known ? dim.dim_value() : kUnknownDim);
    if (!known && dim.has_dim_param()) {
      out.symbols.resize(dims.size());
      out.symbols[d] = dim.dim_param();
    }
  }
  return out;
}

// How much a description tells: nothing, a type, a rank, every dim.
int Completeness(const TensorType& type) {
  return (type.elem_type != 0) + type.has_shape + type.IsStatic();
}

void Merge(TensorType type, TensorType& into) {
  if (Completeness(type) > Completeness(into)) into = std::move(type);
}

void MergeInfos(const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& infos,
                const NodeGraph& nodes, TensorTypes& types) {
  for (const onnx::ValueInfoProto& info : infos) {
    const int32_t id = nodes.FindValue(info.name());
    if (id != kNoValue) Merge(FromTypeProto(info.type()), types[id]);
  }
}

void MergeInfos(std::vector<ValueInfoView>& infos, const NodeGraph& nodes, TensorTypes& types) {
  for (ValueInfoView& info : infos) {
    const int32_t id = nodes.FindValue(info.name);
    if (id != kNoValue) Merge(std::move(info.type), types[id]);
  }
}

// An initializer's dims and type are authoritative.
void SetInitializerType(int32_t data_type, std::vector<int64_t> dims, TensorType& type) {
  type.elem_type = data_type;
  type.has_shape = true;
  type.dims = std::move(dims);
  type.symbols.clear();
}

// Static dims of input `i`, or nullopt.
std::optional<std::vector<int64_t>> StaticInputDims(onnx::InferenceContext& ctx, size_t i) {
  const onnx::TypeProto* type = i < ctx.getNumInputs() ? ctx.getInputType(i) : nullptr;
  if (type == nullptr || !type->tensor_type().has_shape()) return std::nullopt;
  std::vector<int64_t> dims;
  for (const onnx::TensorShapeProto::Dimension& d : type->tensor_type().shape().dim()) {
    if (!d.has_dim_value()) return std::nullopt;
    dims.push_back(d.dim_value());
  }
  return dims;
}

void SetOutput(onnx::InferenceContext& ctx, int32_t elem_type, const std::vector<int64_t>& dims) {
  onnx::TypeProto::Tensor& out = *ctx.getOutputType(0)->mutable_tensor_type();
  out.set_elem_type(elem_type);
  out.mutable_shape()->clear_dim();
  for (int64_t d : dims) out.mutable_shape()->add_dim()->set_dim_value(d);
}

// ONNX's Einsum inference (before 1.14) gives the rank only; this one also
// computes the dims when every input dim is known (EinsumOutputDims).
void InferEinsum(onnx::InferenceContext& ctx, const onnx::InferenceFunction& rank_only) {
  rank_only(ctx);
  const onnx::AttributeProto* equation = ctx.getAttribute("equation");
  if (equation == nullptr || ctx.getNumOutputs() != 1) return;
  std::vector<std::vector<int64_t>> inputs;
  for (size_t i = 0; i < ctx.getNumInputs(); ++i) {
    std::optional<std::vector<int64_t>> dims = StaticInputDims(ctx, i);
    if (!dims) return;
    inputs.push_back(*std::move(dims));
  }
  std::optional<std::vector<int64_t>> out = EinsumOutputDims(equation->s(), inputs);
  if (!out) return;
  onnx::TensorShapeProto* shape = ctx.getOutputType(0)->mutable_tensor_type()->mutable_shape();
  shape->clear_dim();
  for (int64_t dim : *out) shape->add_dim()->set_dim_value(dim);
}

// libonnx 1.12's data propagation for Shape reads its input's type without
// checking that there is one: a Shape of a value nothing could type (the
// output of a custom op, or of an op whose inference failed) crashed the
// process (bench/onnx-sweep). Of the ops with data propagation, only Shape
// did (each tried on an untyped input).
void PropagateShapeData(onnx::DataPropagationContext& ctx,
                        const onnx::DataPropagationFunction& unchecked) {
  if (ctx.getNumInputs() < 1 || ctx.getInputType(0) == nullptr) return;
  unchecked(ctx);
}

// The input of a convolution whose kernel is the weight `weight`, for
// ConvRanksMatch; -1 for other ops.
int ConvWeightInput(absl::string_view op_type) {
  if (op_type == "Conv" || op_type == "ConvInteger" || op_type == "ConvTranspose") return 1;
  if (op_type == "QLinearConv") return 3;
  return -1;
}

// libonnx 1.12's convolution inference takes the kernel's rank from the
// weight when no kernel_shape attribute gives it, and then indexes the
// input's spatial dims and its per-axis attributes by it: an input and a
// weight of different ranks read past their ends and crashed the process
// (scripts/fuzz onnx_import_fuzzer: a Conv of a Flatten's output). Such a
// convolution is invalid whatever its attributes, so it fails here, as
// every other inference error does.
void InferConvWithMatchingRanks(onnx::InferenceContext& ctx, size_t weight,
                                const onnx::InferenceFunction& unchecked) {
  auto rank = [&](size_t input) {
    const onnx::TypeProto* type = input < ctx.getNumInputs() ? ctx.getInputType(input) : nullptr;
    return type != nullptr && type->has_tensor_type() && type->tensor_type().has_shape()
               ? type->tensor_type().shape().dim_size()
               : -1;
  };
  const int input_rank = rank(0), weight_rank = rank(weight);
  if (input_rank >= 0 && weight_rank >= 0 && input_rank != weight_rank) {
    fail_shape_inference("the input (rank ", input_rank, ") and the weight (input ", weight,
                         ", rank ", weight_rank, ") must have the same rank");
  }
  unchecked(ctx);
}

// Split-18's `num_outputs` splits a dim that it does not divide into equal
// chunks of ceil(dim / num_outputs) and a smaller last one (the ONNX spec
// since opset 18). libonnx 1.12 has no Split-18: its Split-13 ignores the
// attribute and refuses such a dim ("not evenly splittable"), so that case
// is sized here and the rest left to the library.
void InferUnevenSplit(onnx::InferenceContext& ctx, const onnx::InferenceFunction& library) {
  const onnx::AttributeProto* num_outputs = ctx.getAttribute("num_outputs");
  const bool split_input = ctx.getNumInputs() > 1 && ctx.getInputType(1) != nullptr;
  const onnx::TypeProto* input = ctx.getNumInputs() > 0 ? ctx.getInputType(0) : nullptr;
  if (num_outputs == nullptr || split_input || input == nullptr ||
      !input->tensor_type().has_shape()) {
    return library(ctx);
  }
  const onnx::TensorShapeProto& shape = input->tensor_type().shape();
  const onnx::AttributeProto* axis_attribute = ctx.getAttribute("axis");
  int64_t axis = axis_attribute != nullptr ? axis_attribute->i() : 0;
  if (axis < 0) axis += shape.dim_size();
  const int64_t n = num_outputs->i();
  if (axis < 0 || axis >= shape.dim_size() || !shape.dim(static_cast<int>(axis)).has_dim_value() ||
      n < 1 || static_cast<size_t>(n) != ctx.getNumOutputs()) {
    return library(ctx);
  }
  const int64_t dim = shape.dim(static_cast<int>(axis)).dim_value();
  if (dim % n == 0) return library(ctx);
  const int64_t chunk = dim / n + 1;
  const int64_t last = dim - chunk * (n - 1);
  if (last < 0) {
    fail_shape_inference("num_outputs ", n, " does not split dim ", dim, " of axis ", axis,
                         " (chunks of ", chunk, " leave none for the last output)");
  }
  for (int64_t i = 0; i < n; ++i) {
    onnx::TypeProto& out = *ctx.getOutputType(static_cast<size_t>(i));
    out = *input;
    out.mutable_tensor_type()
        ->mutable_shape()
        ->mutable_dim(static_cast<int>(axis))
        ->set_dim_value(i + 1 < n ? chunk : last);
  }
}

// Concat-1: the axis attribute is optional and defaults to 1 (Concat-4
// made it required); static input dims only.
void InferConcatOne(onnx::InferenceContext& ctx) {
  const onnx::AttributeProto* axis_attribute = ctx.getAttribute("axis");
  const int64_t axis = axis_attribute != nullptr ? axis_attribute->i() : 1;
  std::optional<std::vector<int64_t>> out = StaticInputDims(ctx, 0);
  if (!out || axis < 0 || axis >= static_cast<int64_t>(out->size())) return;
  for (size_t i = 1; i < ctx.getNumInputs(); ++i) {
    std::optional<std::vector<int64_t>> dims = StaticInputDims(ctx, i);
    if (!dims || dims->size() != out->size()) return;
    (*out)[axis] += (*dims)[axis];
  }
  SetOutput(ctx, ctx.getInputType(0)->tensor_type().elem_type(), *out);
}

// Reshape-1: the target is the `shape` attribute (0 copies the input's dim,
// one -1 takes what is left); static input dims only.
void InferReshapeOne(onnx::InferenceContext& ctx) {
  const onnx::AttributeProto* shape = ctx.getAttribute("shape");
  std::optional<std::vector<int64_t>> in = StaticInputDims(ctx, 0);
  if (shape == nullptr || !in) return;
  int64_t elements = 1;
  for (int64_t d : *in) elements *= d;
  std::vector<int64_t> out;
  int64_t known = 1;
  int inferred = -1;
  for (int i = 0; i < shape->ints_size(); ++i) {
    int64_t d = shape->ints(i);
    if (d == 0 && i < static_cast<int>(in->size())) d = (*in)[i];
    if (d == -1 && inferred < 0) {
      inferred = i;
    } else if (d <= 0) {
      fail_shape_inference("Reshape-1: bad dim ", shape->ints(i), " in shape");
    } else {
      known *= d;
    }
    out.push_back(d);
  }
  if (inferred >= 0) {
    if (known == 0 || elements % known != 0) fail_shape_inference("Reshape-1: -1 does not divide");
    out[inferred] = elements / known;
  } else if (known != elements) {
    fail_shape_inference("Reshape-1: shape has ", known, " elements, the input ", elements);
  }
  SetOutput(ctx, ctx.getInputType(0)->tensor_type().elem_type(), out);
}

// Slice-1 (opsets 1-9: starts, ends and axes are attributes). libonnx 1.12
// leaves a dim unknown where a start or end is negative (Model Zoo-era
// files were refused); they count from the dim's end, as in every later
// version, and are clamped to the dim.
void InferSliceOne(onnx::InferenceContext& ctx, const onnx::InferenceFunction& library) {
  library(ctx);
  std::optional<std::vector<int64_t>> out = StaticInputDims(ctx, 0);
  if (!out) return;
  std::vector<int64_t> starts, ends, axes;
  onnx::getRepeatedAttribute(ctx, "starts", starts);
  onnx::getRepeatedAttribute(ctx, "ends", ends);
  onnx::getRepeatedAttribute(ctx, "axes", axes);
  if (axes.empty()) {
    for (size_t j = 0; j < starts.size(); ++j) axes.push_back(static_cast<int64_t>(j));
  }
  const auto rank = static_cast<int64_t>(out->size());
  if (starts.size() != ends.size() || axes.size() != starts.size()) return;  // the library said
  for (size_t j = 0; j < axes.size(); ++j) {
    const int64_t axis = axes[j] < 0 ? axes[j] + rank : axes[j];
    if (axis < 0 || axis >= rank) return;
    const int64_t dim = (*out)[axis];
    const auto from_end = [dim](int64_t index) {
      return std::clamp(index < 0 ? index + dim : index, int64_t{0}, dim);  // no overflow: dim >= 0
    };
    (*out)[axis] = std::max(from_end(ends[j]) - from_end(starts[j]), int64_t{0});
  }
  SetOutput(ctx, ctx.getInputType(0)->tensor_type().elem_type(), *out);
}

// Dropout before version 10 (opsets 1-9): its optional mask has type T,
// the input's element type (version 10 made it bool), and is element-wise,
// so the input's shape; libonnx 1.12 infers only the output. onnxruntime's
// kernel writes such a mask (of zeros) at opsets 7-9. A mask nobody reads
// is never allocated (the importer drops it); one that is read is sized
// here instead of being refused as unknown.
void InferDropoutMaskBeforeTen(onnx::InferenceContext& ctx,
                               const onnx::InferenceFunction& output_only) {
  output_only(ctx);
  if (ctx.getNumOutputs() < 2) return;
  onnx::propagateElemTypeFromInputToOutput(ctx, 0, 1);
  if (onnx::hasNInputShapes(ctx, 1)) onnx::propagateShapeFromInputToOutput(ctx, 0, 1);
}

// Inference for opset-1 schemas libonnx 1.12 gives none and whose newer
// versions take their settings otherwise (Concat-1's default axis,
// Reshape-1's attribute); null for any other.
onnx::InferenceFunction OpsetOneInference(const onnx::OpSchema& schema) {
  if (schema.has_type_and_shape_inference_function() || schema.since_version() != 1 ||
      !IsStandardOnnxDomain(schema.domain())) {
    return nullptr;
  }
  if (schema.Name() == "Concat") return InferConcatOne;
  if (schema.Name() == "Reshape") return InferReshapeOne;
  return nullptr;
}

// The schema whose inference an op's schema without one borrows: version 6
// of the ops whose version 6 only dropped the `consumed_inputs` attribute
// (Relu-1, Add-1, BatchNormalization-1, ...; ONNX's Changelog), which
// libonnx 1.12 gives no inference though their outputs are shaped as in
// version 6 (Model Zoo files of opsets 1-5 were refused at their first op).
// Add-1..6's legacy broadcast is version 6's own. Null for any other.
const onnx::OpSchema* InferenceDonor(const onnx::OpSchema& schema) {
  static const absl::flat_hash_set<absl::string_view> kOnlyConsumedInputsDropped = {
      "Abs",
      "Add",
      "BatchNormalization",
      "Ceil",
      "Clip",
      "Div",
      "Dropout",
      "Elu",
      "Exp",
      "Floor",
      "Gemm",
      "HardSigmoid",
      "InstanceNormalization",
      "LeakyRelu",
      "Log",
      "Max",
      "Mean",
      "Min",
      "Mul",
      "Neg",
      "PRelu",
      "Reciprocal",
      "Relu",
      "Selu",
      "Sigmoid",
      "Sqrt",
      "Sub",
      "Sum",
      "Tanh"};
  if (schema.has_type_and_shape_inference_function() || schema.since_version() >= 6 ||
      !IsStandardOnnxDomain(schema.domain()) ||
      !kOnlyConsumedInputsDropped.contains(schema.Name())) {
    return nullptr;
  }
  const onnx::OpSchema* donor = onnx::OpSchemaRegistry::Schema(schema.Name(), 6);
  return donor != nullptr && donor->since_version() == 6 &&
                 donor->has_type_and_shape_inference_function()
             ? donor
             : nullptr;
}

// ONNX's schemas, with InferEinsum in place of Einsum's inference, a
// checked Shape data propagation, convolutions' inference checked by
// InferConvWithMatchingRanks, Split-18's uneven chunks (InferUnevenSplit),
// Slice-1's negative indices (InferSliceOne), Dropout-1..7's mask (InferDropoutMaskBeforeTen) and
// inference for the opset 1-5 ops without one
// (InferenceDonor, OpsetOneInference). Patched copies are made once per schema version and live for
// the process.
class SchemaRegistry final : public onnx::ISchemaRegistry {
 public:
  const onnx::OpSchema* GetSchema(const std::string& key, const int max_inclusive_version,
                                  const std::string& domain) const override {
    const onnx::OpSchema* schema =
        onnx::OpSchemaRegistry::Schema(key, max_inclusive_version, domain);
    if (schema == nullptr) return SchemaLibonnxLacks(key, max_inclusive_version, domain);
    const int conv_weight = ConvWeightInput(key);
    // libonnx 1.12 answers opset 18 with Split-13, which knows no num_outputs.
    const bool split_18 = key == "Split" && max_inclusive_version >= 18;
    const bool slice_one = key == "Slice" && schema != nullptr && schema->since_version() == 1;
    const onnx::OpSchema* donor = schema != nullptr ? InferenceDonor(*schema) : nullptr;
    onnx::InferenceFunction opset_one = schema != nullptr ? OpsetOneInference(*schema) : nullptr;
    const bool dropout_mask = key == "Dropout" && schema->since_version() < 10;
    if (schema == nullptr ||
        (key != "Einsum" && key != "Shape" && conv_weight < 0 && !split_18 && !slice_one &&
         donor == nullptr && !opset_one && !dropout_mask) ||
        !IsStandardOnnxDomain(domain)) {
      return schema;
    }
    std::lock_guard<std::mutex> lock(mutex_);
    std::unique_ptr<onnx::OpSchema>& patched = patched_[{schema, split_18}];
    if (patched == nullptr) {
      patched = std::make_unique<onnx::OpSchema>(*schema);
      if (key == "Einsum") {
        patched->TypeAndShapeInferenceFunction(
            [rank_only = schema->GetTypeAndShapeInferenceFunction()](
                onnx::InferenceContext& ctx) { InferEinsum(ctx, rank_only); });
      } else if (opset_one) {
        patched->TypeAndShapeInferenceFunction(opset_one);
      } else if (dropout_mask) {
        patched->TypeAndShapeInferenceFunction(
            [output_only = donor != nullptr ? donor->GetTypeAndShapeInferenceFunction()
                                            : schema->GetTypeAndShapeInferenceFunction()](
                onnx::InferenceContext& ctx) { InferDropoutMaskBeforeTen(ctx, output_only); });
      } else if (donor != nullptr) {
        patched->TypeAndShapeInferenceFunction(donor->GetTypeAndShapeInferenceFunction());
      } else if (split_18) {
        patched->TypeAndShapeInferenceFunction(
            [library = schema->GetTypeAndShapeInferenceFunction()](onnx::InferenceContext& ctx) {
              InferUnevenSplit(ctx, library);
            });
      } else if (slice_one) {
        patched->TypeAndShapeInferenceFunction(
            [library = schema->GetTypeAndShapeInferenceFunction()](onnx::InferenceContext& ctx) {
              InferSliceOne(ctx, library);
            });
      } else if (conv_weight >= 0) {
        patched->TypeAndShapeInferenceFunction(
            [weight = static_cast<size_t>(conv_weight),
             unchecked = schema->GetTypeAndShapeInferenceFunction()](
                onnx::InferenceContext& ctx) { InferConvWithMatchingRanks(ctx, weight, unchecked); });
      } else if (schema->has_data_propagation_function()) {
        patched->PartialDataPropagationFunction(
            [unchecked = schema->GetDataPropagationFunction()](
                onnx::DataPropagationContext& ctx) { PropagateShapeData(ctx, unchecked); });
      }
    }
    return patched.get();
  }

 private:
  mutable std::mutex mutex_;
  // By schema, and for Split whether the model's opset is 18 or later.
  mutable absl::flat_hash_map<std::pair<const onnx::OpSchema*, bool>,
                              std::unique_ptr<onnx::OpSchema>>
      patched_;
};

}  // namespace

bool TensorType::IsStatic() const {
  if (!has_shape) return false;
  for (int64_t dim : dims) {
    if (dim < 0) return false;
  }
  return true;
}

TensorTypes CollectTensorTypes(const onnx::GraphProto& graph, const NodeGraph& nodes) {
  TensorTypes types(nodes.num_values());
  MergeInfos(graph.input(), nodes, types);
  MergeInfos(graph.output(), nodes, types);
  MergeInfos(graph.value_info(), nodes, types);
  for (const onnx::TensorProto& initializer : graph.initializer()) {
    const int32_t id = nodes.FindValue(initializer.name());
    if (id == kNoValue) continue;
    SetInitializerType(initializer.data_type(),
                       std::vector<int64_t>(initializer.dims().begin(), initializer.dims().end()),
                       types[id]);
  }
  return types;
}

TensorTypes TakeTensorTypes(ModelView& graph, const NodeGraph& nodes) {
  TensorTypes types(nodes.num_values());
  MergeInfos(graph.inputs, nodes, types);
  MergeInfos(graph.outputs, nodes, types);
  MergeInfos(graph.value_info, nodes, types);
  for (size_t i = 0; i < graph.initializers.size(); ++i) {
    const int32_t id = nodes.initializer_ids[i];
    InitializerView& initializer = graph.initializers[i];
    if (id != kNoValue) {
      SetInitializerType(initializer.data_type, std::move(initializer.dims), types[id]);
    }
  }
  return types;
}

namespace {

// ONNX's inference takes a value's last declaration (libonnx 1.12 reads
// value_info, then graph inputs, then graph outputs; bench/onnx-sweep: a
// pass-through output without dims hid its input's), where
// CollectTensorTypes takes the most complete: every declaration of a value
// is made its most complete one first.
void UseTheMostCompleteDeclarations(onnx::GraphProto& graph) {
  // An initializer listed as a graph input (IR < 4 files list every one)
  // is its own most complete declaration: its dims are the value's.
  absl::flat_hash_map<std::string, const onnx::TensorProto*> initializers;
  for (const onnx::TensorProto& t : graph.initializer()) initializers.emplace(t.name(), &t);
  for (onnx::ValueInfoProto& input : *graph.mutable_input()) {
    const auto it = initializers.find(input.name());
    if (it == initializers.end()) continue;
    onnx::TypeProto::Tensor& tensor = *input.mutable_type()->mutable_tensor_type();
    tensor.set_elem_type(it->second->data_type());
    onnx::TensorShapeProto& shape = *tensor.mutable_shape();
    shape.clear_dim();
    for (int64_t d : it->second->dims()) shape.add_dim()->set_dim_value(d);
  }
  absl::flat_hash_map<std::string, const onnx::ValueInfoProto*> best;
  auto consider = [&](const onnx::ValueInfoProto& info) {
    const onnx::ValueInfoProto*& kept = best[info.name()];
    if (kept == nullptr ||
        Completeness(FromTypeProto(info.type())) > Completeness(FromTypeProto(kept->type()))) {
      kept = &info;
    }
  };
  for (const auto& info : graph.input()) consider(info);
  for (const auto& info : graph.output()) consider(info);
  for (const auto& info : graph.value_info()) consider(info);
  std::vector<std::pair<onnx::ValueInfoProto*, onnx::TypeProto>> replaced;
  auto align = [&](onnx::ValueInfoProto& info) {
    const onnx::ValueInfoProto* kept = best[info.name()];
    if (kept != &info) replaced.emplace_back(&info, kept->type());
  };
  for (auto& info : *graph.mutable_input()) align(info);
  for (auto& info : *graph.mutable_output()) align(info);
  for (auto& info : *graph.mutable_value_info()) align(info);
  for (auto& [info, type] : replaced) *info->mutable_type() = std::move(type);
}

ShapeInferenceRunner& InstalledRunner() {
  static ShapeInferenceRunner* const runner = new ShapeInferenceRunner();
  return *runner;
}

// ONNX's inference on `model` in place (InferShapesHere's arguments), by
// the installed runner.
absl::Status RunInference(onnx::ModelProto& model, bool strict, bool check_types = false) {
  UseTheMostCompleteDeclarations(*model.mutable_graph());
  const ShapeInferenceRunner& runner = InstalledRunner();
  return runner ? runner(model, strict, check_types) : InferShapesHere(model, strict, check_types);
}

// The first node's error of a strict inference of `model`, or OK.
absl::Status FirstStrictError(const onnx::ModelProto& model, bool check_types) {
  onnx::ModelProto copy = model;
  absl::Status status = RunInference(copy, /*strict=*/true, check_types);
  if (status.ok()) return status;
  // Strict mode joins every node's error with newlines, and a node after
  // the first failure adds "expected to have type but instead is null":
  // the first line after the header is the cause.
  absl::string_view message = status.message();
  constexpr absl::string_view kHeader = "Shape inference error(s): ";
  if (const size_t at = message.find(kHeader); at != absl::string_view::npos) {
    message.remove_prefix(at + kHeader.size());
    return absl::InvalidArgumentError(absl::StrCat(
        "ONNX shape inference failed: ", message.substr(0, message.find('\n'))));
  }
  return absl::InvalidArgumentError(message.substr(0, message.find('\n')));
}

// InsideOnnxShapeInference's answer on this thread.
thread_local bool inside_onnx_shape_inference = false;

}  // namespace

bool InsideOnnxShapeInference() { return inside_onnx_shape_inference; }

absl::Status InferShapesHere(onnx::ModelProto& model, bool strict, bool check_types) {
  static onnx::ISchemaRegistry* const registry =
      std::getenv("ORDO_TEST_UNPATCHED_ONNX_SCHEMAS") != nullptr
          ? static_cast<onnx::ISchemaRegistry*>(onnx::OpSchemaRegistry::Instance())
          : new SchemaRegistry();
  inside_onnx_shape_inference = true;
  absl::Cleanup outside = [] { inside_onnx_shape_inference = false; };
  // Data propagation lets one inference pass carry shape values through
  // Shape -> Gather -> Mul -> Concat -> Reshape chains, so a dynamic-batch
  // export folds in a few rounds instead of one round per chain link.
  try {
    onnx::shape_inference::InferShapes(model, registry,
                                       onnx::ShapeInferenceOptions(
                                           /*check_type_val=*/check_types,
                                           /*strict_mode_val=*/strict ? 1 : 0,
                                           /*data_prop_val=*/true));
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(absl::StrCat("ONNX shape inference failed: ", e.what()));
  } catch (...) {
    return absl::InvalidArgumentError("ONNX shape inference failed");
  }
  return absl::OkStatus();
}

void SetShapeInferenceRunner(ShapeInferenceRunner runner) { InstalledRunner() = std::move(runner); }

absl::Status InferShapesInPlace(onnx::ModelProto& model) {
  // Inference edits the model as it goes; on a throw the half-inferred copy
  // is dropped so callers only ever see a consistent model.
  onnx::ModelProto copy = model;
  ORDO_RETURN_IF_ERROR(RunInference(copy, /*strict=*/false));
  model = std::move(copy);
  return absl::OkStatus();
}

namespace {

// The schema ONNX applies to `node` at the model's opset of its domain, or
// null; null too when the node uses a newer opset's feature that the
// library's schema would size wrongly (FeatureNewerThanLibrary).
const onnx::OpSchema* SchemaOf(const ModelView& view, const NodeView& node) {
  if (!FeatureNewerThanLibrary(view, node).empty()) return nullptr;
  int64_t version = INT_MAX;  // no import for the domain: whatever the library has
  for (const OpsetView& opset : view.opsets) {
    if (opset.domain == node.domain ||
        (IsStandardOnnxDomain(opset.domain) && IsStandardOnnxDomain(node.domain))) {
      version = std::min<int64_t>(opset.version, INT_MAX);
    }
  }
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(
      std::string(node.op_type), static_cast<int>(version),
      IsStandardOnnxDomain(node.domain) ? std::string() : std::string(node.domain));
  return schema != nullptr ? schema
                           : SchemaLibonnxLacks(node.op_type, static_cast<int>(version), node.domain);
}

}  // namespace

int64_t StandardOpset(const ModelView& view) {
  for (const OpsetView& opset : view.opsets) {
    if (IsStandardOnnxDomain(opset.domain)) return opset.version;
  }
  return 0;
}

std::string FeatureNewerThanLibrary(const ModelView& view, const NodeView& node) {
  if (!IsStandardOnnxDomain(node.domain)) return "";
  const int64_t opset = StandardOpset(view);
  const auto ints_other_than_one = [&](absl::string_view name) {
    const AttributeView* a = view.FindAttribute(node, name);
    if (a == nullptr) return false;
    for (int64_t v : view.ints_of(*a)) {
      if (v != 1) return true;
    }
    return false;
  };
  if (node.op_type == "AveragePool" && opset >= 19 && ints_other_than_one("dilations")) {
    return "dilations (AveragePool-19)";
  }
  if (node.op_type == "LpPool" && opset >= 18) {
    if (ints_other_than_one("dilations")) return "dilations (LpPool-18)";
    const AttributeView* ceil = view.FindAttribute(node, "ceil_mode");
    if (ceil != nullptr && ceil->i != 0) return "ceil_mode (LpPool-18)";
  }
  if (node.op_type == "Resize" && opset >= 18) {
    if (view.FindAttribute(node, "axes") != nullptr) return "axes (Resize-18)";
    const AttributeView* policy = view.FindAttribute(node, "keep_aspect_ratio_policy");
    if (policy != nullptr && policy->s != "stretch") return "keep_aspect_ratio_policy (Resize-18)";
  }
  if (node.op_type == "Pad" && opset >= 18 && node.inputs_end - node.inputs_begin >= 4 &&
      !view.value_refs[node.inputs_begin + 3].empty()) {
    return "the axes input (Pad-18)";
  }
  // Quantization: version 13's inference gives y the zero point's type (or
  // uint8) and DequantizeLinear's output float32 whatever the scale.
  if (node.op_type == "QuantizeLinear" && opset >= 21) {
    const AttributeView* output_dtype = view.FindAttribute(node, "output_dtype");
    if (output_dtype != nullptr && output_dtype->i != 0) return "output_dtype (QuantizeLinear-21)";
  }
  if (node.op_type == "DequantizeLinear" && opset >= 19 &&
      node.inputs_end - node.inputs_begin >= 2) {
    // A scale whose type the file does not give (a Constant's output) is
    // taken as float32, the common case.
    const auto scale = view.declared_element_types.find(view.value_refs[node.inputs_begin + 1]);
    if (scale != view.declared_element_types.end() && scale->second != 0 &&
        scale->second != onnx::TensorProto::FLOAT) {
      return "an x_scale that is not float32, which sets the output's type "
             "(DequantizeLinear-19)";
    }
  }
  return "";
}

bool IsKnownToOnnx(const ModelView& view, const NodeView& node) {
  return SchemaOf(view, node) != nullptr;
}

std::string TrainingModeFeature(const ModelView& view, const NodeView& node) {
  if (node.op_type != "BatchNormalization") return "";
  const onnx::OpSchema* schema = SchemaOf(view, node);
  if (schema == nullptr) return "";
  // From version 14 the attribute says so; an extra output (below) is
  // invalid without it, and named too.
  if (schema->since_version() >= 14) {
    const AttributeView* training_mode = view.FindAttribute(node, "training_mode");
    if (training_mode != nullptr && training_mode->i != 0) {
      return absl::StrCat("attribute training_mode=", training_mode->i, " sets training mode");
    }
  }
  const absl::Span<const absl::string_view> outputs =
      absl::MakeConstSpan(view.value_refs)
          .subspan(node.outputs_begin, node.outputs_end - node.outputs_begin);
  for (size_t k = 1; k < outputs.size() && k < schema->outputs().size(); ++k) {
    if (outputs[k].empty()) continue;  // omitted
    return absl::StrCat("output ", k, " \"", outputs[k], "\" (the spec's \"",
                        schema->outputs()[k].GetName(), "\") exists only in training mode");
  }
  return "";
}

bool InfersShapesAtItsOpset(const ModelView& view, const NodeView& node) {
  const onnx::OpSchema* schema = SchemaOf(view, node);
  return schema != nullptr &&
         (schema->has_type_and_shape_inference_function() || InferenceDonor(*schema) != nullptr ||
          OpsetOneInference(*schema) != nullptr);
}

absl::Status FirstInferenceError(const onnx::ModelProto& model,
                                 absl::string_view lenient_error) {
  absl::Status status = lenient_error.empty()
                            ? FirstStrictError(model, /*check_types=*/false)
                            : absl::InvalidArgumentError(lenient_error);
  // Inference carries an element type forward unchecked: a graph input of
  // another type than the weights fails only where a declaration (often
  // the graph output) disagrees, far from the cause. Checking every node's
  // types finds the first op that may not take them.
  if (absl::StrContains(status.message(), "TypeInferenceError")) {
    absl::Status typed = FirstStrictError(model, /*check_types=*/true);
    if (!typed.ok()) return typed;
  }
  return status;
}

}  // namespace ordo::onnx_import
