#include "core/tflite/tflite_import.h"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/tflite/tflite_model.h"
#include "core/util/checked_math.h"
#include "core/util/printable_text.h"
#include "core/util/status_macros.h"

namespace ordo {
namespace {

using tflite_fb::Model;
using tflite_fb::Operator;
using tflite_fb::SubGraph;

// How TFLite stores one element of a TensorType (schema.fbs enum order).
struct ElementType {
  absl::string_view name;
  DataType dtype;     // kUnknown: sized by `bits` only
  int32_t bits = 0;   // 0: no static size (STRING, RESOURCE, VARIANT)
};

ElementType TensorElementType(int8_t type) {
  switch (type) {
    case 0: return {"FLOAT32", DataType::kFloat32, 32};
    case 1: return {"FLOAT16", DataType::kFloat16, 16};
    case 2: return {"INT32", DataType::kInt32, 32};
    case 3: return {"UINT8", DataType::kUInt8, 8};
    case 4: return {"INT64", DataType::kInt64, 64};
    case 5: return {"STRING", DataType::kUnknown, 0};
    case 6: return {"BOOL", DataType::kBool, 8};
    case 7: return {"INT16", DataType::kInt16, 16};
    case 8: return {"COMPLEX64", DataType::kUnknown, 64};
    case 9: return {"INT8", DataType::kInt8, 8};
    case 10: return {"FLOAT64", DataType::kFloat64, 64};
    case 11: return {"COMPLEX128", DataType::kUnknown, 128};
    case 12: return {"UINT64", DataType::kUInt64, 64};
    case 13: return {"RESOURCE", DataType::kUnknown, 0};
    case 14: return {"VARIANT", DataType::kUnknown, 0};
    case 15: return {"UINT32", DataType::kUInt32, 32};
    case 16: return {"UINT16", DataType::kUInt16, 16};
    case 17: return {"INT4", DataType::kUnknown, 4};
    case 18: return {"BFLOAT16", DataType::kBFloat16, 16};
    case 19: return {"INT2", DataType::kUnknown, 2};
    case 20: return {"UINT4", DataType::kUnknown, 4};
    default: return {"", DataType::kUnknown, 0};
  }
}

// Builtins that run another subgraph on tensors: its activations would be
// missing from the peak. (STABLEHLO_REDUCE, _SCATTER, _SORT and
// REDUCE_WINDOW name a subgraph too, but only as the scalar function they
// apply element by element.)
bool RunsASubgraph(absl::string_view builtin) {
  return builtin == "IF" || builtin == "WHILE" || builtin == "CALL_ONCE" || builtin == "CALL" ||
         builtin == "STABLEHLO_WHILE" || builtin == "STABLEHLO_CASE" ||
         builtin == "STABLEHLO_COMPOSITE";
}

// Builds the Graph of subgraphs[0]; one instance per import.
class TfliteGraphAssembler {
 public:
  TfliteGraphAssembler(const Model& model, const GraphLimits& limits)
      : model_(model),
        subgraph_(*model.subgraphs()->Get(0)),
        builder_(SubgraphName(), limits),
        names_(TfliteTensorNames(subgraph_)),
        declared_(names_.size(), false),
        produced_(ProducedTensors()) {}

  absl::StatusOr<Graph> Assemble(const GraphLimits& limits) && {
    const int64_t ops = subgraph_.operators() ? subgraph_.operators()->size() : 0;
    if (ops > limits.max_ops || static_cast<int64_t>(names_.size()) > limits.max_tensors) {
      return absl::ResourceExhaustedError(absl::StrCat(
          "SubGraph 0 has ", ops, " operators and ", names_.size(),
          " tensors; the limits are ", limits.max_ops, " and ", limits.max_tensors));
    }
    ORDO_RETURN_IF_ERROR(DeclareGraphIo());
    for (int32_t o = 0; o < ops; ++o) ORDO_RETURN_IF_ERROR(DeclareOperator(o));
    NoteDynamicDims();
    return std::move(builder_).Build();
  }

 private:
  std::string SubgraphName() const {
    if (subgraph_.name() != nullptr && subgraph_.name()->size() > 0) return subgraph_.name()->str();
    return model_.description() != nullptr ? model_.description()->str() : "";
  }

  // Tensors an operator writes (outputs and intermediates).
  std::vector<bool> ProducedTensors() const {
    std::vector<bool> produced(names_.size(), false);
    if (subgraph_.operators() == nullptr) return produced;
    for (const Operator* op : *subgraph_.operators()) {
      for (const auto* list : {op->outputs(), op->intermediates()}) {
        if (list == nullptr) continue;
        for (int32_t t : *list) produced[t] = true;
      }
    }
    return produced;
  }

  // A dim of 0: the tensor holds nothing (the converter's LSTM
  // intermediates, the shape operand of a RESHAPE to a scalar). TFLite
  // never allocates it, so it is left out of the graph.
  bool HasNoElements(int32_t t) const {
    const flatbuffers::Vector<int32_t>* shape = subgraph_.tensors()->Get(t)->shape();
    return shape != nullptr && std::find(shape->begin(), shape->end(), 0) != shape->end();
  }

  std::string Where(int32_t t) const {
    return absl::StrCat("SubGraph 0 Tensor ", t, " \"", names_[t], "\"");
  }

  bool IsWeight(const tflite_fb::Tensor& tensor) const { return HoldsConstantData(model_, tensor); }

  // Byte size of tensor `t`: product of `shape` x element bits, rounded up.
  absl::StatusOr<int64_t> TensorBits(int32_t t, const ElementType& element) const {
    const tflite_fb::Tensor& tensor = *subgraph_.tensors()->Get(t);
    int64_t bits = element.bits;
    if (tensor.shape() != nullptr) {
      for (uint32_t d = 0; d < tensor.shape()->size(); ++d) {
        const int32_t dim = tensor.shape()->Get(d);
        if (dim <= 0) {
          return absl::InvalidArgumentError(absl::StrCat(
              Where(t), ": dim ", d, " is ", dim,
              "; dims must be static and positive: convert the model at a fixed input size "
              "(a concrete function with a static input signature)"));
        }
        std::optional<int64_t> product = CheckedMul(bits, dim);
        if (!product) {
          return absl::InvalidArgumentError(absl::StrCat(Where(t), ": dims overflow int64"));
        }
        bits = *product;
      }
    }
    return bits;
  }

  absl::Status DeclareTensor(int32_t t) {
    if (declared_[t]) return absl::OkStatus();
    declared_[t] = true;
    const tflite_fb::Tensor& tensor = *subgraph_.tensors()->Get(t);
    const ElementType element = TensorElementType(tensor.type());
    const bool weight = IsWeight(tensor) && !tensor.is_variable();
    const TensorKind kind = weight ? TensorKind::kWeight : TensorKind::kActivation;
    if (element.bits == 0) {
      // A weight of a type without a static size (a STRING table) costs
      // nothing unless count_weights; 1 byte keeps the builder's rule.
      if (weight) {
        builder_.AddTensorBytes(names_[t], 1, kind);
        return absl::OkStatus();
      }
      return absl::InvalidArgumentError(absl::StrCat(
          Where(t), ": type ", element.name.empty() ? absl::StrCat(tensor.type()) : element.name,
          element.name.empty() ? " is not a TensorType" : " has no static size",
          "; ordo plans tensors of fixed size only: convert the model without such tensors "
          "(resource variables and tensor lists disabled, strings handled outside the model)"));
    }
    // TFLM allocates a sub-byte activation a byte per element (its
    // TfLiteTypeSizeOf gives INT4 one byte; LiteRT packs it): planned so,
    // a plan holds in either. A weight keeps its packed size in the file.
    ElementType sized = element;
    if (!weight) sized.bits = std::max(sized.bits, 8);
    ORDO_ASSIGN_OR_RETURN(int64_t bits, TensorBits(t, sized));
    if (element.dtype != DataType::kUnknown) {
      std::vector<int64_t> dims;
      if (tensor.shape() != nullptr) dims.assign(tensor.shape()->begin(), tensor.shape()->end());
      builder_.AddTensor(names_[t], element.dtype, std::move(dims), kind);
    } else {
      builder_.AddTensorBytes(names_[t], (bits + 7) / 8, kind);
    }
    if (tensor.is_variable()) {
      // State: lives from before the first step to the end (spec: a graph
      // input that is also a graph output), but is no model input or output.
      builder_.AddRuntimeBuffer(names_[t], /*lives_to_end=*/true);
    } else if (!weight && !produced_[t] && !IsSubgraphInput(t) && !IsSubgraphOutput(t)) {
      // Read but written by no operator (Vela's scratch for the Ethos-U
      // operator): the runtime allocates it, uninitialised, before step 0.
      builder_.AddRuntimeBuffer(names_[t], /*lives_to_end=*/false);
    }
    return absl::OkStatus();
  }

  // A converter that leaves a dim dynamic (batch -1) writes it in
  // shape_signature and a size in `shape`. TFLM never resizes, so `shape`
  // is what runs and what ordo plans; the user is told, in one note
  // however many tensors it concerns (a model exported with a dynamic
  // batch has hundreds): their count and the graph inputs among them.
  void NoteDynamicDims() {
    int64_t count = 0;
    int32_t first = -1;
    for (int32_t t = 0; t < static_cast<int32_t>(declared_.size()); ++t) {
      if (declared_[t] && HasDynamicDims(t) && count++ == 0) first = t;
    }
    if (count > 0) builder_.AddNote(PrintableText(DynamicDimsNote(count, first)));
  }

  // Planned (not a weight) with a negative dim in shape_signature.
  bool HasDynamicDims(int32_t t) const {
    const tflite_fb::Tensor& tensor = *subgraph_.tensors()->Get(t);
    const flatbuffers::Vector<int32_t>* signature = tensor.shape_signature();
    if (signature == nullptr || (IsWeight(tensor) && !tensor.is_variable())) return false;
    return std::any_of(signature->begin(), signature->end(), [](int32_t dim) { return dim < 0; });
  }

  static std::string DimsText(const flatbuffers::Vector<int32_t>* dims) {
    if (dims == nullptr) return "[]";
    return absl::StrCat("[", absl::StrJoin(dims->begin(), dims->end(), ","), "]");
  }

  // `input "x"`, `output "y"` or `tensor "conv"`.
  std::string Described(int32_t t) const {
    const char* role = IsSubgraphInput(t) ? "input" : IsSubgraphOutput(t) ? "output" : "tensor";
    return absl::StrCat(role, " \"", names_[t], "\"");
  }

  // One tensor (`first`): the sentence in full. More: the count, then the
  // tensors NamedInNote gives, each with its signature and planned shape.
  std::string DynamicDimsNote(int64_t count, int32_t first) const {
    auto signature = [&](int32_t t) {
      return DimsText(subgraph_.tensors()->Get(t)->shape_signature());
    };
    auto shape = [&](int32_t t) { return DimsText(subgraph_.tensors()->Get(t)->shape()); };
    if (count == 1) {
      return absl::StrCat(Described(first), ": shape_signature ", signature(first),
                          " has dynamic dims; planned at shape ", shape(first),
                          ", as TensorFlow Lite Micro runs it");
    }
    const std::vector<int32_t> named = NamedInNote(first);
    std::vector<std::string> listed;
    listed.reserve(named.size());
    for (int32_t t : named) {
      listed.push_back(absl::StrCat(Described(t), " ", signature(t), " at ", shape(t)));
    }
    const int64_t others = count - static_cast<int64_t>(named.size());
    return absl::StrCat(count,
                        " tensors have dynamic dims in shape_signature; each is planned at its "
                        "shape, as TensorFlow Lite Micro runs it: ",
                        absl::StrJoin(listed, ", "),
                        others > 0 ? absl::StrCat(" and ", others, " more") : "");
  }

  // The graph inputs with dynamic dims, at most four (what the user feeds
  // and may have meant to resize), or `first` when no input has one.
  std::vector<int32_t> NamedInNote(int32_t first) const {
    constexpr size_t kNamedAtMost = 4;
    std::vector<int32_t> named;
    if (subgraph_.inputs() != nullptr) {
      for (int32_t t : *subgraph_.inputs()) {
        if (named.size() == kNamedAtMost) break;
        if (declared_[t] && HasDynamicDims(t) &&
            std::find(named.begin(), named.end(), t) == named.end()) {
          named.push_back(t);
        }
      }
    }
    if (named.empty()) named.push_back(first);
    return named;
  }

  static bool Lists(const flatbuffers::Vector<int32_t>* list, int32_t t) {
    return list != nullptr && std::find(list->begin(), list->end(), t) != list->end();
  }
  bool IsSubgraphInput(int32_t t) const { return Lists(subgraph_.inputs(), t); }
  bool IsSubgraphOutput(int32_t t) const { return Lists(subgraph_.outputs(), t); }

  absl::Status DeclareGraphIo() {
    absl::flat_hash_set<int32_t> seen;
    if (subgraph_.inputs() != nullptr) {
      for (int32_t t : *subgraph_.inputs()) {
        if (HasNoElements(t)) continue;
        ORDO_RETURN_IF_ERROR(DeclareTensor(t));
        if (seen.insert(t).second && !subgraph_.tensors()->Get(t)->is_variable()) {
          builder_.AddGraphInput(names_[t]);
        }
      }
    }
    if (subgraph_.outputs() == nullptr) return absl::OkStatus();
    for (int32_t t : *subgraph_.outputs()) {
      if (HasNoElements(t)) continue;
      ORDO_RETURN_IF_ERROR(DeclareTensor(t));
      // A constant output is left out by the builder, with its note.
      builder_.AddGraphOutput(names_[t]);
      if (IsWeight(*subgraph_.tensors()->Get(t)) && !subgraph_.tensors()->Get(t)->is_variable()) {
        continue;
      }
      // Written by no operator: the runtime's buffer, live for the whole run.
      if (!produced_[t] && !IsSubgraphInput(t) && !subgraph_.tensors()->Get(t)->is_variable()) {
        builder_.AddGraphInput(names_[t]);
      }
    }
    return absl::OkStatus();
  }

  absl::Status DeclareOperator(int32_t o) {
    const Operator& op = *subgraph_.operators()->Get(o);
    const tflite_fb::OperatorCode& code = *model_.operator_codes()->Get(op.opcode_index());
    const std::string type = OperatorTypeName(code);
    const bool custom = IsCustomOperator(code);
    if (!custom && RunsASubgraph(type)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "SubGraph 0 Operator ", o, " (", type,
          ") runs another subgraph, whose memory ordo does not plan: control flow and "
          "StableHLO composites are not supported; ordo schedules one straight-line subgraph: "
          "convert the model without it (loops unrolled, conditionals resolved, composites "
          "lowered to their builtin operators",
          type == "CALL_ONCE" ? "; CALL_ONCE initializes resource variables: convert without "
                                "them, with the state as a model input and output"
                              : "",
          ")"));
    }
    std::vector<std::string> inputs;
    std::vector<std::string> outputs;
    if (op.inputs() != nullptr) {
      for (int32_t t : *op.inputs()) {
        if (t == -1 || HasNoElements(t)) continue;
        ORDO_RETURN_IF_ERROR(DeclareTensor(t));
        inputs.push_back(names_[t]);
      }
    }
    for (const auto* list : {op.outputs(), op.intermediates()}) {
      if (list == nullptr) continue;
      for (int32_t t : *list) {
        if (HasNoElements(t)) continue;
        ORDO_RETURN_IF_ERROR(DeclareTensor(t));
        outputs.push_back(names_[t]);
      }
    }
    if (outputs.empty()) {
      const bool none = op.outputs() == nullptr || op.outputs()->size() == 0;
      return absl::InvalidArgumentError(absl::StrCat(
          "SubGraph 0 Operator ", o, " (", type, "): ",
          none ? "writes no tensor (a sink, like a debug or logging op)"
               : "every output has zero elements",
          "; ordo schedules operators that write memory: export the model without it"));
    }
    builder_.AddOp(TfliteOpName(o, type), type, std::move(inputs), std::move(outputs), {}, o,
                   custom ? std::string(kTfliteCustomDomain) : std::string());
    return absl::OkStatus();
  }

  const Model& model_;
  const SubGraph& subgraph_;
  GraphBuilder builder_;
  std::vector<std::string> names_;
  std::vector<bool> declared_;
  std::vector<bool> produced_;
};

}  // namespace

absl::StatusOr<Graph> ImportTflite(absl::string_view model_bytes, const GraphLimits& limits) {
  ORDO_ASSIGN_OR_RETURN(const Model* model, VerifiedTfliteModel(model_bytes));
  return TfliteGraphAssembler(*model, limits).Assemble(limits);
}

}  // namespace ordo
