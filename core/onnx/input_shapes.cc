#include "core/onnx/input_shapes.h"

#include <climits>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "core/onnx/tensor_type.h"
#include "core/util/status_macros.h"

namespace ordo {
namespace {

using onnx::TensorShapeProto;

// Where the user sets what these messages ask for.
constexpr absl::string_view kApiNames = "API and Python client: input_shapes / batch";

bool HasValue(const TensorShapeProto::Dimension& dim) { return dim.has_dim_value(); }

std::string InputShapeFlag(const std::string& name, const std::vector<int64_t>& dims) {
  return absl::StrCat("--input-shape ", name, "=", FormatDims(dims));
}

// The graph inputs that are not initializers (older IR versions list
// weights among the inputs), by name.
absl::flat_hash_map<std::string, onnx::ValueInfoProto*> GraphInputs(onnx::GraphProto& graph) {
  absl::flat_hash_set<std::string> weights;
  for (const onnx::TensorProto& t : graph.initializer()) weights.insert(t.name());
  absl::flat_hash_map<std::string, onnx::ValueInfoProto*> inputs;
  for (onnx::ValueInfoProto& input : *graph.mutable_input()) {
    if (!weights.contains(input.name())) inputs.emplace(input.name(), &input);
  }
  return inputs;
}

std::string InputNames(const onnx::GraphProto& graph,
                       const absl::flat_hash_map<std::string, onnx::ValueInfoProto*>& inputs) {
  std::vector<std::string> names;
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (inputs.contains(input.name())) names.push_back(absl::StrCat("\"", input.name(), "\""));
  }
  return names.empty() ? "none" : absl::StrJoin(names, ", ");
}

absl::Status ApplyShape(const std::string& name, const std::vector<int64_t>& dims,
                        onnx::ValueInfoProto& input) {
  const std::string flag = InputShapeFlag(name, dims);
  for (size_t d = 0; d < dims.size(); ++d) {
    if (dims[d] <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat(flag, ": dim ", d, " is ", dims[d], "; dims must be positive"));
    }
  }
  onnx::TypeProto::Tensor& tensor = *input.mutable_type()->mutable_tensor_type();
  if (!tensor.has_shape()) {
    for (int64_t dim : dims) tensor.mutable_shape()->add_dim()->set_dim_value(dim);
    return absl::OkStatus();
  }
  TensorShapeProto& shape = *tensor.mutable_shape();
  if (shape.dim_size() != static_cast<int>(dims.size())) {
    std::vector<std::string> model_dims;
    for (const auto& dim : shape.dim()) {
      model_dims.push_back(dim.has_dim_value() ? absl::StrCat(dim.dim_value())
                                               : absl::StrCat("<", dim.dim_param(), ">"));
    }
    return absl::InvalidArgumentError(absl::StrCat(
        flag, ": graph input \"", name, "\" has rank ", shape.dim_size(), " (",
        absl::StrJoin(model_dims, "x"), "); the override gives ", dims.size(), " dims"));
  }
  for (int d = 0; d < shape.dim_size(); ++d) {
    TensorShapeProto::Dimension& dim = *shape.mutable_dim(d);
    if (HasValue(dim) && dim.dim_value() != dims[d]) {
      return absl::InvalidArgumentError(absl::StrCat(
          flag, ": dim ", d, " of graph input \"", name, "\" is static ", dim.dim_value(),
          " in the model, not ", dims[d], "; only symbolic dims can be set"));
    }
    dim.set_dim_value(dims[d]);
  }
  return absl::OkStatus();
}

// Sets the symbolic dim 0 of the inputs `shapes` does not name; true when
// it set one.
bool ApplyBatch(int64_t batch, const std::map<std::string, std::vector<int64_t>>& shapes,
                absl::flat_hash_map<std::string, onnx::ValueInfoProto*>& inputs) {
  bool set_any = false;
  for (auto& [name, input] : inputs) {
    if (shapes.contains(name)) continue;
    onnx::TypeProto::Tensor& tensor = *input->mutable_type()->mutable_tensor_type();
    if (!tensor.has_shape() || tensor.shape().dim_size() == 0) continue;
    TensorShapeProto::Dimension& dim = *tensor.mutable_shape()->mutable_dim(0);
    if (HasValue(dim)) continue;
    dim.set_dim_value(batch);
    set_any = true;
  }
  return set_any;
}

// --batch that sets nothing is fine when it says what the model has; a
// different number would be silently ignored.
absl::Status CheckUnusedBatch(const InputShapes& shapes, const onnx::GraphProto& graph,
                              const absl::flat_hash_map<std::string, onnx::ValueInfoProto*>&
                                  inputs) {
  const int64_t batch = shapes.batch;
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (!inputs.contains(input.name()) || shapes.shapes.contains(input.name())) continue;
    const onnx::TypeProto::Tensor& tensor = input.type().tensor_type();
    if (!tensor.has_shape() || tensor.shape().dim_size() == 0) continue;
    const int64_t dim0 = tensor.shape().dim(0).dim_value();
    if (dim0 == batch) continue;
    return absl::InvalidArgumentError(absl::StrCat(
        "--batch ", batch, ": no graph input has a symbolic dim 0, and dim 0 of graph input \"",
        input.name(), "\" is static ", dim0,
        " in the model; leave --batch out, or export the model with a dynamic batch axis"));
  }
  return absl::OkStatus();
}

absl::Status ApplyInputShapesTo(const InputShapes& shapes, onnx::GraphProto& graph) {
  if (shapes.batch < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--batch ", shapes.batch, ": must be positive"));
  }
  absl::flat_hash_map<std::string, onnx::ValueInfoProto*> inputs = GraphInputs(graph);
  for (const auto& [name, dims] : shapes.shapes) {
    auto it = inputs.find(name);
    if (it == inputs.end()) {
      bool weight = false;
      for (const onnx::TensorProto& t : graph.initializer()) weight = weight || t.name() == name;
      return absl::InvalidArgumentError(absl::StrCat(
          InputShapeFlag(name, dims), ": ",
          weight ? absl::StrCat("\"", name, "\" is a weight (initializer), not a graph input")
                 : absl::StrCat("the model has no graph input \"", name, "\""),
          "; its graph inputs are ", InputNames(graph, inputs)));
    }
    ORDO_RETURN_IF_ERROR(ApplyShape(name, dims, *it->second));
  }
  if (shapes.batch > 0 && !ApplyBatch(shapes.batch, shapes.shapes, inputs)) {
    return CheckUnusedBatch(shapes, graph, inputs);
  }
  return absl::OkStatus();
}

}  // namespace

absl::Status ApplyInputShapes(const InputShapes& shapes, onnx::GraphProto& graph) {
  absl::Status status = ApplyInputShapesTo(shapes, graph);
  if (status.ok()) return status;
  // The messages name the CLI's flags; an API user sets the fields.
  return absl::Status(status.code(), absl::StrCat(status.message(), " (", kApiNames, ")"));
}

absl::StatusOr<std::string> WithInputShapes(absl::string_view model_bytes,
                                            const InputShapes& shapes) {
  onnx::ModelProto model;
  if (model_bytes.size() > static_cast<size_t>(INT_MAX) ||
      !model.ParseFromArray(model_bytes.data(), static_cast<int>(model_bytes.size()))) {
    return absl::InvalidArgumentError(
        "not a valid ONNX model: the bytes do not parse as onnx.ModelProto");
  }
  ORDO_RETURN_IF_ERROR(ApplyInputShapes(shapes, *model.mutable_graph()));
  std::string bytes;
  if (!model.SerializeToString(&bytes)) {
    return absl::InvalidArgumentError("the model does not serialize after setting input shapes");
  }
  return bytes;
}

absl::Status CheckStaticInputs(const onnx_import::ModelView& graph,
                               const onnx_import::NodeGraph& nodes) {
  std::string first;                 // the first offending dim, as the importer says it
  std::vector<std::string> listed;   // every symbolic dim
  std::vector<std::string> fixes;    // one --input-shape per input with one
  bool only_leading = true;          // --batch 1 fixes everything
  for (const onnx_import::ValueInfoView& input : graph.inputs) {
    const absl::string_view name = input.name;
    const int32_t id = nodes.FindValue(name);
    if (id == onnx_import::kNoValue || !nodes.is_graph_input[id]) continue;
    const onnx_import::TensorType& type = input.type;
    if (!type.has_shape) {
      if (first.empty()) first = absl::StrCat("graph input \"", name, "\": shape is unknown");
      listed.push_back(absl::StrCat("\"", name, "\" (no shape)"));
      fixes.push_back(absl::StrCat("--input-shape ", name, "=<dims>"));
      only_leading = false;
      continue;
    }
    std::vector<std::string> fix;
    bool symbolic = false;
    for (size_t d = 0; d < type.dims.size(); ++d) {
      const int64_t value = type.dims[d];
      if (value != onnx_import::kUnknownDim && value > 0) {
        fix.push_back(absl::StrCat(value));
        continue;
      }
      if (value != onnx_import::kUnknownDim) continue;  // zero or negative: the importer's rule
      symbolic = true;
      const absl::string_view param =
          d < type.symbols.size() ? absl::string_view(type.symbols[d]) : absl::string_view();
      if (first.empty()) {
        first = absl::StrCat("graph input \"", name, "\": dim ", d, " is ",
                             param.empty() ? "unknown" : absl::StrCat("\"", param, "\" (symbolic)"),
                             "; dims must be static and positive");
      }
      listed.push_back(absl::StrCat("\"", name, "\" dim ", d,
                                    param.empty() ? std::string()
                                                  : absl::StrCat(" (\"", param, "\")")));
      if (d == 0) {
        fix.push_back("1");
      } else {
        only_leading = false;
        fix.push_back(absl::StrCat("<", param.empty() ? absl::StrCat("dim", d) : param, ">"));
      }
    }
    if (symbolic) fixes.push_back(absl::StrCat("--input-shape ", name, "=", absl::StrJoin(fix, "x")));
  }
  if (listed.empty()) return absl::OkStatus();
  const std::string flags = absl::StrJoin(fixes, " ");
  return absl::InvalidArgumentError(absl::StrCat(
      first, ". Symbolic input dims: ", absl::StrJoin(listed, ", "), ". To compile one shape, add ",
      only_leading ? absl::StrCat("--batch 1 (or ", flags, ")")
                   : absl::StrCat(flags, " with each <...> replaced by the size to compile for"),
      " (", kApiNames, ")"));
}

absl::StatusOr<std::vector<int64_t>> ParseDims(absl::string_view text, absl::string_view what) {
  std::vector<int64_t> dims;
  if (text.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat(what, ": no dims; write them like 1x3x224x224"));
  }
  for (absl::string_view part : absl::StrSplit(text, absl::ByAnyChar("x,"))) {
    int64_t dim = 0;
    if (!absl::SimpleAtoi(part, &dim) || dim <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          what, ": dim ", dims.size(), " is \"", part,
          "\"; dims must be positive integers, written like 1x3x224x224"));
    }
    dims.push_back(dim);
  }
  return dims;
}

std::string FormatDims(const std::vector<int64_t>& dims) { return absl::StrJoin(dims, "x"); }

}  // namespace ordo
