#include "core/onnx/input_shapes.h"

#include <optional>
#include <utility>
#include <vector>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
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
constexpr absl::string_view kApiNames = "API and Python client: input_shapes / dim_params / batch";

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

std::string DimParamFlag(const std::string& param, int64_t value) {
  return absl::StrCat("--dim-param ", param, "=", value);
}

absl::Status ApplyShape(const std::string& name, const std::vector<int64_t>& dims,
                        const std::map<std::string, int64_t>& dim_params,
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
    if (auto named = dim_params.find(dim.dim_param());
        !HasValue(dim) && named != dim_params.end() && named->second != dims[d]) {
      return absl::InvalidArgumentError(absl::StrCat(
          flag, ": dim ", d, " (\"", named->first, "\") of graph input \"", name, "\" is ",
          named->second, " by ", DimParamFlag(named->first, named->second), ", not ", dims[d]));
    }
    if (HasValue(dim) && dim.dim_value() != dims[d]) {
      return absl::InvalidArgumentError(absl::StrCat(
          flag, ": dim ", d, " of graph input \"", name, "\" is static ", dim.dim_value(),
          " in the model, not ", dims[d], "; only symbolic dims can be set"));
    }
    dim.set_dim_value(dims[d]);
  }
  return absl::OkStatus();
}

// "<height>" for a symbolic dim `d` named "height", "<dim2>" unnamed: what
// a suggested --input-shape line asks the user to replace.
std::string Placeholder(absl::string_view param, size_t d) {
  return absl::StrCat("<", param.empty() ? absl::StrCat("dim", d) : std::string(param), ">");
}

bool NamesBatch(absl::string_view param) {
  return absl::StrContains(absl::AsciiStrToLower(param), "batch");
}

// The batch axis of an input whose dims are `params` (nullopt for a static
// dim, else the symbolic dim's name, maybe empty): the one symbolic dim
// whose name says "batch", since sequence-first exports (RNNs, PyTorch's
// default LSTM layout) put the batch at dim 1; else a symbolic dim 0, the
// convention of every other export. nullopt when the input has neither.
std::optional<size_t> BatchAxis(const std::vector<std::optional<absl::string_view>>& params) {
  std::optional<size_t> named;
  int named_count = 0;
  for (size_t d = 0; d < params.size(); ++d) {
    if (params[d] && NamesBatch(*params[d])) {
      named = d;
      ++named_count;
    }
  }
  if (named_count == 1) return named;
  if (!params.empty() && params[0]) return 0;
  return std::nullopt;
}

std::vector<std::optional<absl::string_view>> DimParams(const TensorShapeProto& shape) {
  std::vector<std::optional<absl::string_view>> params;
  for (const TensorShapeProto::Dimension& dim : shape.dim()) {
    params.push_back(HasValue(dim) ? std::nullopt
                                   : std::optional<absl::string_view>(dim.dim_param()));
  }
  return params;
}

// The dim_params of the inputs' symbolic dims, in graph order, once each.
std::vector<std::string> SymbolicDimNames(
    const onnx::GraphProto& graph,
    const absl::flat_hash_map<std::string, onnx::ValueInfoProto*>& inputs) {
  std::vector<std::string> names;
  absl::flat_hash_set<std::string> seen;
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (!inputs.contains(input.name())) continue;
    for (const TensorShapeProto::Dimension& dim : input.type().tensor_type().shape().dim()) {
      if (!HasValue(dim) && !dim.dim_param().empty() && seen.insert(dim.dim_param()).second) {
        names.push_back(dim.dim_param());
      }
    }
  }
  return names;
}

// --dim-param NAME=N must name a symbolic input dim (like --batch, a value
// that sets nothing would be silently ignored) and be positive.
absl::Status CheckDimParams(const std::map<std::string, int64_t>& dim_params,
                            const std::vector<std::string>& symbolic) {
  for (const auto& [param, value] : dim_params) {
    const std::string flag = DimParamFlag(param, value);
    if (value <= 0) return absl::InvalidArgumentError(absl::StrCat(flag, ": must be positive"));
    if (absl::c_linear_search(symbolic, param)) continue;
    return absl::InvalidArgumentError(absl::StrCat(
        flag, ": no graph input has a symbolic dim named \"", param, "\"; ",
        symbolic.empty()
            ? "the model's inputs have no named symbolic dims"
            : absl::StrCat("the named ones are \"", absl::StrJoin(symbolic, "\", \""), "\"")));
  }
  return absl::OkStatus();
}

// Sets every symbolic dim named in `dim_params` of the inputs `shapes` does
// not name (those were checked against them in ApplyShape).
// Gives the symbolic dims of `info` that `named` names their values.
void SetNamedDims(const std::map<std::string, int64_t>& named, onnx::ValueInfoProto& info) {
  if (!info.type().has_tensor_type() || !info.type().tensor_type().has_shape()) return;
  for (TensorShapeProto::Dimension& dim :
       *info.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim()) {
    if (HasValue(dim)) continue;
    if (auto it = named.find(dim.dim_param()); it != named.end()) dim.set_dim_value(it->second);
  }
}

void ApplyDimParams(const std::map<std::string, int64_t>& dim_params,
                    const std::map<std::string, std::vector<int64_t>>& shapes,
                    absl::flat_hash_map<std::string, onnx::ValueInfoProto*>& inputs) {
  for (auto& [name, input] : inputs) {
    if (!shapes.contains(name)) SetNamedDims(dim_params, *input);
  }
}

// A dim name is one size throughout the model (onnxruntime's
// make_dim_param_fixed sets it everywhere): the value_info and graph outputs
// that use a name the flags set get its value, so a declaration left at
// "batch" cannot block the import and a stale static one is contradicted.
void FixNamedDimsInDeclarations(const std::map<std::string, int64_t>& named,
                                onnx::GraphProto& graph) {
  if (named.empty()) return;
  for (auto* list : {graph.mutable_value_info(), graph.mutable_output()}) {
    for (onnx::ValueInfoProto& info : *list) SetNamedDims(named, info);
  }
}

// What is left symbolic in an input after --batch set its batch axis
// `axis` at dim 1 or later: refused here, since once the axis has its value
// the import would take a symbolic dim 0 (the sequence) for the batch and
// suggest --batch again. (Left at dim 0, CheckStaticInputs says it right.)
absl::Status CheckRestOfBatchedInput(int64_t batch, const std::string& name, size_t axis,
                                     const TensorShapeProto& shape, const std::string& axis_param) {
  std::vector<std::string> left;
  std::vector<std::string> fix;
  std::vector<std::string> by_name;  // --dim-param flags, when every dim left is named
  bool all_named = true;
  for (int d = 0; d < shape.dim_size(); ++d) {
    const TensorShapeProto::Dimension& dim = shape.dim(d);
    if (HasValue(dim)) {
      fix.push_back(absl::StrCat(dim.dim_value()));
      continue;
    }
    const std::string& param = dim.dim_param();
    left.push_back(
        absl::StrCat("dim ", d, param.empty() ? "" : absl::StrCat(" (\"", param, "\")")));
    fix.push_back(Placeholder(param, d));
    all_named = all_named && !param.empty();
    const std::string flag = absl::StrCat("--dim-param ", param, "=<", param, ">");
    if (!param.empty() && !absl::c_linear_search(by_name, flag)) by_name.push_back(flag);
  }
  if (left.empty()) return absl::OkStatus();
  // A named dim is set in every input by one --dim-param (several inputs
  // share a sequence length), where --input-shape needs one flag per input.
  const std::string flags =
      all_named ? absl::StrCat(absl::StrJoin(by_name, " "), " (every input's dim of that name)")
                : absl::StrCat("--input-shape ", name, "=", absl::StrJoin(fix, "x"));
  return absl::InvalidArgumentError(
      absl::StrCat("--batch ", batch, " set dim ", axis, " (\"", axis_param,
                   "\") of graph input \"", name, "\", its batch dim; ", absl::StrJoin(left, ", "),
                   left.size() == 1 ? " is" : " are", " still symbolic. To compile one shape, add ",
                   flags, " with each <...> replaced by the size to compile for"));
}

// Sets the symbolic batch axis (BatchAxis) of the inputs `shapes` does not
// name; true when it set one.
absl::StatusOr<bool> ApplyBatch(int64_t batch,
                                const std::map<std::string, std::vector<int64_t>>& shapes,
                                absl::flat_hash_map<std::string, onnx::ValueInfoProto*>& inputs,
                                std::map<std::string, int64_t>& named) {
  bool set_any = false;
  for (auto& [name, input] : inputs) {
    if (shapes.contains(name)) continue;
    onnx::TypeProto::Tensor& tensor = *input->mutable_type()->mutable_tensor_type();
    if (!tensor.has_shape()) continue;
    const std::optional<size_t> axis = BatchAxis(DimParams(tensor.shape()));
    if (!axis) continue;
    TensorShapeProto::Dimension& dim =
        *tensor.mutable_shape()->mutable_dim(static_cast<int>(*axis));
    const std::string axis_param = dim.dim_param();
    dim.set_dim_value(batch);
    set_any = true;
    if (!axis_param.empty()) named.emplace(axis_param, batch);
    if (*axis > 0) {
      ORDO_RETURN_IF_ERROR(CheckRestOfBatchedInput(batch, name, *axis, tensor.shape(), axis_param));
    }
  }
  return set_any;
}

// --batch and --input-shape of one input must agree on its symbolic batch
// axis (BatchAxis): the shape wins for the input it names, so a different
// --batch was ignored without a word when the shapes named every input.
absl::Status CheckBatchAgrees(int64_t batch, const std::string& name,
                              const std::vector<int64_t>& dims, const onnx::ValueInfoProto& input) {
  if (batch == 0) return absl::OkStatus();
  const onnx::TypeProto::Tensor& tensor = input.type().tensor_type();
  if (!tensor.has_shape()) return absl::OkStatus();
  const std::optional<size_t> axis = BatchAxis(DimParams(tensor.shape()));
  if (!axis || *axis >= dims.size() || dims[*axis] == batch) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("--batch ", batch, " and ", InputShapeFlag(name, dims), " disagree: dim ", *axis,
                   " of graph input \"", name, "\" is its batch dim, ", dims[*axis],
                   " by the shape; give the same batch in both, or leave --batch out"));
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
        "--batch ", batch,
        ": no graph input has a symbolic batch dim (dim 0, or a dim named like \"batch\"), and "
        "dim 0 of graph input \"",
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
  ORDO_RETURN_IF_ERROR(CheckDimParams(shapes.dim_params, SymbolicDimNames(graph, inputs)));
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
    ORDO_RETURN_IF_ERROR(CheckBatchAgrees(shapes.batch, name, dims, *it->second));
    ORDO_RETURN_IF_ERROR(ApplyShape(name, dims, shapes.dim_params, *it->second));
  }
  ApplyDimParams(shapes.dim_params, shapes.shapes, inputs);
  std::map<std::string, int64_t> named = shapes.dim_params;
  if (shapes.batch != 0) {
    ORDO_ASSIGN_OR_RETURN(const bool set_any,
                          ApplyBatch(shapes.batch, shapes.shapes, inputs, named));
    if (!set_any) ORDO_RETURN_IF_ERROR(CheckUnusedBatch(shapes, graph, inputs));
  }
  FixNamedDimsInDeclarations(named, graph);
  return absl::OkStatus();
}

// The symbolic dims of a model's graph inputs, and the flags that would give
// them values, for CheckStaticInputs's message.
struct SymbolicInputs {
  std::string first;                           // the first offending dim
  std::vector<std::string> listed;             // every symbolic dim
  std::vector<std::string> input_shape_flags;  // one per input with one
  bool only_batch = true;                      // --batch 1 fixes everything
  bool batch_symbolic = false;                 // some input's batch dim is symbolic
  bool others_named = true;                    // every other symbolic dim has a dim_param
  std::map<std::string, int> named;            // non-batch dim_param -> dims with it

  void Add(absl::string_view name, const onnx_import::TensorType& type) {
    if (!type.has_shape) {
      if (first.empty()) first = absl::StrCat("graph input \"", name, "\": shape is unknown");
      listed.push_back(absl::StrCat("\"", name, "\" (no shape)"));
      input_shape_flags.push_back(absl::StrCat("--input-shape ", name, "=<dims>"));
      only_batch = others_named = false;
      return;
    }
    std::vector<std::optional<absl::string_view>> params;
    for (size_t d = 0; d < type.dims.size(); ++d) {
      params.push_back(type.dims[d] != onnx_import::kUnknownDim
                           ? std::nullopt
                           : std::optional<absl::string_view>(Symbol(type, d)));
    }
    const std::optional<size_t> batch_axis = BatchAxis(params);
    std::vector<std::string> fix;
    bool symbolic = false;
    for (size_t d = 0; d < type.dims.size(); ++d) {
      const int64_t value = type.dims[d];
      if (value != onnx_import::kUnknownDim) {
        if (value > 0) fix.push_back(absl::StrCat(value));  // else the importer's rule
        continue;
      }
      symbolic = true;
      AddSymbolicDim(name, d, Symbol(type, d), d == batch_axis, fix);
    }
    if (symbolic) {
      input_shape_flags.push_back(
          absl::StrCat("--input-shape ", name, "=", absl::StrJoin(fix, "x")));
    }
  }

  // "--batch 1 (or --input-shape ...)" when the batch is all there is; else
  // the --input-shape lines, and --dim-param when a name recurs (one flag
  // then sets it in every input, as transformers' input_ids and
  // attention_mask share "sequence").
  std::string Fix() const {
    const std::string flags = absl::StrJoin(input_shape_flags, " ");
    if (only_batch) return absl::StrCat("--batch 1 (or ", flags, ")");
    std::string fix = absl::StrCat(flags, " with each <...> replaced by the size to compile for");
    const bool recurs = absl::c_any_of(named, [](const auto& entry) { return entry.second > 1; });
    if (!recurs || !others_named) return fix;
    std::vector<std::string> by_name;
    if (batch_symbolic) by_name.push_back("--batch 1");
    for (const auto& [param, count] : named) {
      by_name.push_back(absl::StrCat("--dim-param ", param, "=<", param, ">"));
    }
    return absl::StrCat(fix, "; or, by dim name, ", absl::StrJoin(by_name, " "));
  }

 private:
  static absl::string_view Symbol(const onnx_import::TensorType& type, size_t d) {
    return d < type.symbols.size() ? absl::string_view(type.symbols[d]) : absl::string_view();
  }

  void AddSymbolicDim(absl::string_view name, size_t d, absl::string_view param, bool batch,
                      std::vector<std::string>& fix) {
    if (first.empty()) {
      first = absl::StrCat("graph input \"", name, "\": dim ", d, " is ",
                           param.empty() ? "unknown" : absl::StrCat("\"", param, "\" (symbolic)"),
                           "; dims must be static and positive");
    }
    listed.push_back(absl::StrCat("\"", name, "\" dim ", d,
                                  param.empty() ? "" : absl::StrCat(" (\"", param, "\")")));
    if (batch) {
      batch_symbolic = true;
      fix.push_back("1");
      return;
    }
    only_batch = false;
    if (param.empty()) {
      others_named = false;
    } else {
      ++named[std::string(param)];
    }
    fix.push_back(Placeholder(param, d));
  }
};

}  // namespace

absl::Status ApplyInputShapes(const InputShapes& shapes, onnx::GraphProto& graph) {
  absl::Status status = ApplyInputShapesTo(shapes, graph);
  if (status.ok()) return status;
  // The messages name the CLI's flags; an API user sets the fields.
  return absl::Status(status.code(), absl::StrCat(status.message(), " (", kApiNames, ")"));
}

absl::Status CheckStaticInputs(const onnx_import::ModelView& graph,
                               const onnx_import::NodeGraph& nodes) {
  SymbolicInputs found;
  for (const onnx_import::ValueInfoView& input : graph.inputs) {
    const int32_t id = nodes.FindValue(input.name);
    if (id == onnx_import::kNoValue || !nodes.is_graph_input[id]) continue;
    found.Add(input.name, input.type);
  }
  if (found.listed.empty()) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat(found.first, ". Symbolic input dims: ", absl::StrJoin(found.listed, ", "),
                   ". To compile one shape, add ", found.Fix(), " (", kApiNames, ")"));
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
