#include "core/onnx/model_view_reference.h"

#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <limits>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/types/span.h"
#include "core/onnx/tensor_type.h"

namespace ordo::onnx_import {
namespace {

// ---------------------------------------------------------------------------
// Protobuf's answer in the view's terms.

bool IsSymbol(const onnx::TensorShapeProto::Dimension& dim) {
  return !dim.has_dim_value() && dim.has_dim_param();
}

// TensorType's documented meaning (tensor_type.h), computed from protobuf's
// parse rather than from the scan's code.
TensorType ReferenceType(const onnx::ValueInfoProto& info) {
  TensorType type;
  if (!info.type().has_tensor_type()) return type;
  const onnx::TypeProto::Tensor& tensor = info.type().tensor_type();
  type.elem_type = tensor.elem_type();
  type.has_shape = tensor.has_shape();
  bool any_symbol = false;
  for (const onnx::TensorShapeProto::Dimension& dim : tensor.shape().dim()) {
    type.dims.push_back(dim.has_dim_value() ? dim.dim_value() : kUnknownDim);
    any_symbol = any_symbol || IsSymbol(dim);
  }
  if (!any_symbol) return type;
  for (const onnx::TensorShapeProto::Dimension& dim : tensor.shape().dim()) {
    type.symbols.push_back(IsSymbol(dim) ? dim.dim_param() : "");
  }
  return type;
}

// A float compared by its bits: a NaN a mutation produced equals itself, and
// -0 is not 0.
struct FloatBits {
  explicit FloatBits(float value) { std::memcpy(&bits, &value, sizeof bits); }
  bool operator==(const FloatBits& other) const { return bits == other.bits; }
  uint32_t bits;
};

template <typename T, typename Range>
std::vector<T> ToVector(const Range& range) {
  return std::vector<T>(range.begin(), range.end());
}

// ---------------------------------------------------------------------------
// One field: "" when equal, else "FIELD: EXPECTED vs ACTUAL".

std::string Quoted(absl::string_view name) {
  return absl::StrCat("\"", absl::CHexEscape(name), "\"");
}

std::string Show(bool value) { return value ? "true" : "false"; }
std::string Show(int32_t value) { return absl::StrCat(value); }
std::string Show(int64_t value) { return absl::StrCat(value); }
std::string Show(absl::string_view value) { return Quoted(value); }
std::string Show(FloatBits value) {
  float f;
  std::memcpy(&f, &value.bits, sizeof f);
  return absl::StrCat(f, " (0x", absl::Hex(value.bits, absl::kZeroPad8), ")");
}

template <typename T>
std::string Show(const std::vector<T>& values) {
  return absl::StrCat(
      "[", absl::StrJoin(values, ", ", [](std::string* out, const T& v) { out->append(Show(v)); }),
      "]");
}

template <typename T>
std::string Compare(absl::string_view field, const T& expected, const T& actual) {
  if (expected == actual) return "";
  return absl::StrCat(field, ": ", Show(expected), " vs ", Show(actual));
}

// The first non-empty difference.
std::string FirstOf(std::initializer_list<std::string> differences) {
  for (const std::string& difference : differences) {
    if (!difference.empty()) return difference;
  }
  return "";
}

// `difference` prefixed with where it was found: `node 3 "conv": ...`.
std::string At(absl::string_view place, absl::string_view name, std::string difference) {
  if (difference.empty()) return difference;
  return absl::StrCat(place, " ", Quoted(name), ": ", difference);
}

// ---------------------------------------------------------------------------
// The parts of a model, protobuf's first.

std::string TypeDifference(const TensorType& expected, const TensorType& actual) {
  return FirstOf({Compare("elem_type", expected.elem_type, actual.elem_type),
                  Compare("has_shape", expected.has_shape, actual.has_shape),
                  Compare("dims", expected.dims, actual.dims),
                  Compare("symbols", expected.symbols, actual.symbols)});
}

std::string ValueInfosDifference(
    absl::string_view what,
    const google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>& expected,
    const std::vector<ValueInfoView>& actual) {
  std::string difference = Compare<int64_t>(absl::StrCat(what, " count"), expected.size(),
                                            static_cast<int64_t>(actual.size()));
  for (int i = 0; i < expected.size() && difference.empty(); ++i) {
    difference = At(absl::StrCat(what, " ", i), expected[i].name(),
                    FirstOf({Compare<absl::string_view>("name", expected[i].name(), actual[i].name),
                             TypeDifference(ReferenceType(expected[i]), actual[i].type)}));
  }
  return difference;
}

std::string InitializersDifference(
    const google::protobuf::RepeatedPtrField<onnx::TensorProto>& expected,
    const std::vector<InitializerView>& actual) {
  std::string difference =
      Compare<int64_t>("initializer count", expected.size(), static_cast<int64_t>(actual.size()));
  for (int i = 0; i < expected.size() && difference.empty(); ++i) {
    const onnx::TensorProto& tensor = expected[i];
    difference = At(absl::StrCat("initializer ", i), tensor.name(),
                    FirstOf({Compare<absl::string_view>("name", tensor.name(), actual[i].name),
                             Compare<int32_t>("data_type", tensor.data_type(), actual[i].data_type),
                             Compare("dims", ToVector<int64_t>(tensor.dims()), actual[i].dims)}));
  }
  return difference;
}

std::string AttributeDifference(const onnx::AttributeProto& expected, const ModelView& view,
                                const AttributeView& actual) {
  return FirstOf(
      {Compare<absl::string_view>("name", expected.name(), actual.name),
       Compare<int32_t>("type", expected.type(), actual.type),
       Compare<int64_t>("i", expected.i(), actual.i),
       Compare("f", FloatBits(expected.f()), FloatBits(actual.f)),
       Compare<absl::string_view>("s", expected.s(), actual.s),
       Compare("ints", ToVector<int64_t>(expected.ints()), ToVector<int64_t>(view.ints_of(actual))),
       Compare("floats", ToVector<FloatBits>(expected.floats()),
               ToVector<FloatBits>(view.floats_of(actual))),
       Compare("has_graph", expected.has_g() || expected.graphs_size() > 0, actual.has_graph)});
}

std::string NodeDifference(const onnx::NodeProto& expected, const ModelView& view, int32_t n) {
  const NodeView& actual = view.nodes[n];
  const absl::Span<const AttributeView> attributes = view.attributes_of(n);
  std::string difference =
      FirstOf({Compare<absl::string_view>("name", expected.name(), actual.name),
               Compare<absl::string_view>("op_type", expected.op_type(), actual.op_type),
               Compare<absl::string_view>("domain", expected.domain(), actual.domain),
               Compare("inputs", ToVector<absl::string_view>(expected.input()),
                       ToVector<absl::string_view>(view.inputs_of(n))),
               Compare("outputs", ToVector<absl::string_view>(expected.output()),
                       ToVector<absl::string_view>(view.outputs_of(n))),
               Compare<int64_t>("attribute count", expected.attribute_size(),
                                static_cast<int64_t>(attributes.size()))});
  for (int a = 0; a < expected.attribute_size() && difference.empty(); ++a) {
    difference = At("attribute", expected.attribute(a).name(),
                    AttributeDifference(expected.attribute(a), view, attributes[a]));
  }
  return difference;
}

constexpr absl::string_view kNoGraph = "not a valid ONNX model: it has no graph";

std::string NoGraphViolation(const absl::Status& scan) {
  if (scan.code() == absl::StatusCode::kInvalidArgument && scan.message() == kNoGraph) return "";
  return absl::StrCat("protobuf parses the bytes and finds no graph, but ScanModel says ",
                      scan.ToString());
}

}  // namespace

namespace {

std::string OpsetsDifference(const onnx::ModelProto& expected, const ModelView& actual) {
  std::string difference = Compare<int64_t>("opset_import count", expected.opset_import_size(),
                                            static_cast<int64_t>(actual.opsets.size()));
  for (int i = 0; i < expected.opset_import_size() && difference.empty(); ++i) {
    const onnx::OperatorSetIdProto& opset = expected.opset_import(i);
    difference = FirstOf(
        {Compare<absl::string_view>(absl::StrCat("opset_import ", i, " domain"), opset.domain(),
                                    actual.opsets[i].domain),
         Compare<int64_t>(absl::StrCat("opset_import ", i, " version"), opset.version(),
                          actual.opsets[i].version)});
  }
  return difference;
}

std::string FunctionsDifference(const onnx::ModelProto& expected, const ModelView& actual) {
  std::string difference = Compare<int64_t>("functions count", expected.functions_size(),
                                            static_cast<int64_t>(actual.functions.size()));
  for (int i = 0; i < expected.functions_size() && difference.empty(); ++i) {
    const onnx::FunctionProto& function = expected.functions(i);
    difference = FirstOf({Compare<absl::string_view>(absl::StrCat("function ", i, " domain"),
                                                     function.domain(), actual.functions[i].domain),
                          Compare<absl::string_view>(absl::StrCat("function ", i, " name"),
                                                     function.name(), actual.functions[i].name)});
  }
  return difference;
}

}  // namespace

std::string FirstDifference(const onnx::ModelProto& expected, const ModelView& actual) {
  const onnx::GraphProto& graph = expected.graph();
  std::string difference =
      FirstOf({OpsetsDifference(expected, actual), FunctionsDifference(expected, actual),
               Compare<absl::string_view>("graph name", graph.name(), actual.graph_name),
               ValueInfosDifference("input", graph.input(), actual.inputs),
               ValueInfosDifference("output", graph.output(), actual.outputs),
               ValueInfosDifference("value_info", graph.value_info(), actual.value_info),
               InitializersDifference(graph.initializer(), actual.initializers),
               Compare<int64_t>("node count", graph.node_size(), actual.num_nodes())});
  for (int32_t n = 0; n < graph.node_size() && difference.empty(); ++n) {
    difference = At(absl::StrCat("node ", n), graph.node(n).name(),
                    NodeDifference(graph.node(n), actual, n));
  }
  return difference;
}

std::string ScanContractViolation(absl::string_view bytes) {
  // ParseFromArray takes an int size; protobuf refuses over 2 GiB anyway.
  if (bytes.size() > static_cast<size_t>(std::numeric_limits<int>::max())) return "";
  onnx::ModelProto model;
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) return "";
  const absl::StatusOr<ModelView> view = ScanModel(bytes);
  if (!model.has_graph()) return NoGraphViolation(view.status());
  if (!view.ok()) {
    return absl::StrCat("protobuf parses the bytes but ScanModel says ", view.status().ToString());
  }
  std::string difference = FirstDifference(model, *view);
  if (difference.empty()) return difference;
  return absl::StrCat("ScanModel reads other values than protobuf: ", difference);
}

}  // namespace ordo::onnx_import
