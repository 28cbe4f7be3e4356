#include "core/tflite/tflite_model.h"

#include <algorithm>
#include <array>
#include <cstring>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/util/status_macros.h"
#include "flatbuffers/flatbuffers.h"

namespace ordo {
namespace {

using tflite_fb::Buffer;
using tflite_fb::Model;
using tflite_fb::Operator;
using tflite_fb::SubGraph;

// BuiltinOperator values 0..209 of TFLite's schema.fbs, by value.
constexpr std::array<const char*, 210> kBuiltinNames = {
    "ADD", "AVERAGE_POOL_2D", "CONCATENATION", "CONV_2D", "DEPTHWISE_CONV_2D",
    "DEPTH_TO_SPACE", "DEQUANTIZE", "EMBEDDING_LOOKUP", "FLOOR", "FULLY_CONNECTED",
    "HASHTABLE_LOOKUP", "L2_NORMALIZATION", "L2_POOL_2D", "LOCAL_RESPONSE_NORMALIZATION",
    "LOGISTIC", "LSH_PROJECTION", "LSTM", "MAX_POOL_2D", "MUL", "RELU", "RELU_N1_TO_1",
    "RELU6", "RESHAPE", "RESIZE_BILINEAR", "RNN", "SOFTMAX", "SPACE_TO_DEPTH", "SVDF",
    "TANH", "CONCAT_EMBEDDINGS", "SKIP_GRAM", "CALL", "CUSTOM", "EMBEDDING_LOOKUP_SPARSE",
    "PAD", "UNIDIRECTIONAL_SEQUENCE_RNN", "GATHER", "BATCH_TO_SPACE_ND",
    "SPACE_TO_BATCH_ND", "TRANSPOSE", "MEAN", "SUB", "DIV", "SQUEEZE",
    "UNIDIRECTIONAL_SEQUENCE_LSTM", "STRIDED_SLICE", "BIDIRECTIONAL_SEQUENCE_RNN", "EXP",
    "TOPK_V2", "SPLIT", "LOG_SOFTMAX", "DELEGATE", "BIDIRECTIONAL_SEQUENCE_LSTM", "CAST",
    "PRELU", "MAXIMUM", "ARG_MAX", "MINIMUM", "LESS", "NEG", "PADV2", "GREATER",
    "GREATER_EQUAL", "LESS_EQUAL", "SELECT", "SLICE", "SIN", "TRANSPOSE_CONV",
    "SPARSE_TO_DENSE", "TILE", "EXPAND_DIMS", "EQUAL", "NOT_EQUAL", "LOG", "SUM", "SQRT",
    "RSQRT", "SHAPE", "POW", "ARG_MIN", "FAKE_QUANT", "REDUCE_PROD", "REDUCE_MAX", "PACK",
    "LOGICAL_OR", "ONE_HOT", "LOGICAL_AND", "LOGICAL_NOT", "UNPACK", "REDUCE_MIN",
    "FLOOR_DIV", "REDUCE_ANY", "SQUARE", "ZEROS_LIKE", "FILL", "FLOOR_MOD", "RANGE",
    "RESIZE_NEAREST_NEIGHBOR", "LEAKY_RELU", "SQUARED_DIFFERENCE", "MIRROR_PAD", "ABS",
    "SPLIT_V", "UNIQUE", "CEIL", "REVERSE_V2", "ADD_N", "GATHER_ND", "COS", "WHERE", "RANK",
    "ELU", "REVERSE_SEQUENCE", "MATRIX_DIAG", "QUANTIZE", "MATRIX_SET_DIAG", "ROUND",
    "HARD_SWISH", "IF", "WHILE", "NON_MAX_SUPPRESSION_V4", "NON_MAX_SUPPRESSION_V5",
    "SCATTER_ND", "SELECT_V2", "DENSIFY", "SEGMENT_SUM", "BATCH_MATMUL",
    "PLACEHOLDER_FOR_GREATER_OP_CODES", "CUMSUM", "CALL_ONCE", "BROADCAST_TO", "RFFT2D",
    "CONV_3D", "IMAG", "REAL", "COMPLEX_ABS", "HASHTABLE", "HASHTABLE_FIND",
    "HASHTABLE_IMPORT", "HASHTABLE_SIZE", "REDUCE_ALL", "CONV_3D_TRANSPOSE", "VAR_HANDLE",
    "READ_VARIABLE", "ASSIGN_VARIABLE", "BROADCAST_ARGS", "RANDOM_STANDARD_NORMAL",
    "BUCKETIZE", "RANDOM_UNIFORM", "MULTINOMIAL", "GELU", "DYNAMIC_UPDATE_SLICE",
    "RELU_0_TO_1", "UNSORTED_SEGMENT_PROD", "UNSORTED_SEGMENT_MAX", "UNSORTED_SEGMENT_SUM",
    "ATAN2", "UNSORTED_SEGMENT_MIN", "SIGN", "BITCAST", "BITWISE_XOR", "RIGHT_SHIFT",
    "STABLEHLO_LOGISTIC", "STABLEHLO_ADD", "STABLEHLO_DIVIDE", "STABLEHLO_MULTIPLY",
    "STABLEHLO_MAXIMUM", "STABLEHLO_RESHAPE", "STABLEHLO_CLAMP", "STABLEHLO_CONCATENATE",
    "STABLEHLO_BROADCAST_IN_DIM", "STABLEHLO_CONVOLUTION", "STABLEHLO_SLICE",
    "STABLEHLO_CUSTOM_CALL", "STABLEHLO_REDUCE", "STABLEHLO_ABS", "STABLEHLO_AND",
    "STABLEHLO_COSINE", "STABLEHLO_EXPONENTIAL", "STABLEHLO_FLOOR", "STABLEHLO_LOG",
    "STABLEHLO_MINIMUM", "STABLEHLO_NEGATE", "STABLEHLO_OR", "STABLEHLO_POWER",
    "STABLEHLO_REMAINDER", "STABLEHLO_RSQRT", "STABLEHLO_SELECT", "STABLEHLO_SUBTRACT",
    "STABLEHLO_TANH", "STABLEHLO_SCATTER", "STABLEHLO_COMPARE", "STABLEHLO_CONVERT",
    "STABLEHLO_DYNAMIC_SLICE", "STABLEHLO_DYNAMIC_UPDATE_SLICE", "STABLEHLO_PAD",
    "STABLEHLO_IOTA", "STABLEHLO_DOT_GENERAL", "STABLEHLO_REDUCE_WINDOW", "STABLEHLO_SORT",
    "STABLEHLO_WHILE", "STABLEHLO_GATHER", "STABLEHLO_TRANSPOSE", "DILATE",
    "STABLEHLO_RNG_BIT_GENERATOR", "REDUCE_WINDOW", "STABLEHLO_COMPOSITE",
    "STABLEHLO_SHIFT_LEFT", "STABLEHLO_CBRT", "STABLEHLO_CASE"};

constexpr int32_t kCustomCode = 32;

// A vector the Verifier accepted may be absent; absent reads as empty.
template <typename T>
uint32_t SizeOf(const flatbuffers::Vector<T>* vector) {
  return vector == nullptr ? 0 : vector->size();
}

absl::Status IndexError(absl::string_view where, absl::string_view what, int64_t index,
                        absl::string_view table, int64_t count) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", what, " is ", table, " ", index,
                                                 "; the model has ", count, " ", table,
                                                 count == 1 ? "" : "s"));
}

absl::Status CheckBuffers(const Model& model, absl::string_view bytes) {
  if (SizeOf(model.buffers()) > 0 && model.buffers()->Get(0) != nullptr) {
    const Buffer& sentinel = *model.buffers()->Get(0);
    if (SizeOf(sentinel.data()) > 0 || (sentinel.offset() > 1 && sentinel.size() > 0)) {
      // TFLM reads buffer 0's data like any other's: the tensors that mean
      // "no data" by it would be constants there.
      return absl::InvalidArgumentError(
          "Buffer 0: holds data, but the schema reserves it as the empty sentinel that "
          "tensors without constant data point at");
    }
  }
  for (uint32_t b = 0; b < SizeOf(model.buffers()); ++b) {
    const Buffer* buffer = model.buffers()->Get(b);
    if (buffer == nullptr || buffer->offset() <= 1) continue;
    const uint64_t end = buffer->offset() + buffer->size();
    if (end < buffer->offset() || end > bytes.size()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "Buffer ", b, ": offset ", buffer->offset(), " + size ", buffer->size(),
          " lies beyond the end of the file (", bytes.size(), " bytes)"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckTensorList(absl::string_view where, absl::string_view list,
                             const flatbuffers::Vector<int32_t>* indices, uint32_t tensors,
                             bool allow_omitted) {
  for (uint32_t i = 0; i < SizeOf(indices); ++i) {
    const int32_t t = indices->Get(i);
    if (t == -1 && allow_omitted) continue;
    if (t < 0 || static_cast<uint32_t>(t) >= tensors) {
      return absl::InvalidArgumentError(absl::StrCat(where, ": ", list, " ", i, " is tensor ", t,
                                                     "; the subgraph has ", tensors, " tensors"));
    }
  }
  return absl::OkStatus();
}

absl::Status CheckSubGraph(const Model& model, uint32_t s) {
  const SubGraph* subgraph = model.subgraphs()->Get(s);
  const std::string where = absl::StrCat("SubGraph ", s);
  if (subgraph == nullptr) return absl::InvalidArgumentError(where + " is null");
  const uint32_t tensors = SizeOf(subgraph->tensors());
  for (uint32_t t = 0; t < tensors; ++t) {
    const tflite_fb::Tensor* tensor = subgraph->tensors()->Get(t);
    const std::string at = absl::StrCat(where, " Tensor ", t);
    if (tensor == nullptr) return absl::InvalidArgumentError(at + " is null");
    if (tensor->buffer() >= SizeOf(model.buffers()) && tensor->buffer() != 0) {
      return IndexError(at, "its buffer", tensor->buffer(), "Buffer", SizeOf(model.buffers()));
    }
  }
  ORDO_RETURN_IF_ERROR(CheckTensorList(where, "input", subgraph->inputs(), tensors, false));
  ORDO_RETURN_IF_ERROR(CheckTensorList(where, "output", subgraph->outputs(), tensors, false));
  for (uint32_t o = 0; o < SizeOf(subgraph->operators()); ++o) {
    const Operator* op = subgraph->operators()->Get(o);
    std::string at = absl::StrCat(where, " Operator ", o);
    if (op == nullptr) return absl::InvalidArgumentError(at + " is null");
    const uint32_t codes = SizeOf(model.operator_codes());
    if (op->opcode_index() >= codes || model.operator_codes()->Get(op->opcode_index()) == nullptr) {
      return IndexError(at, "its opcode_index", op->opcode_index(), "OperatorCode", codes);
    }
    absl::StrAppend(&at, " (", OperatorTypeName(*model.operator_codes()->Get(op->opcode_index())),
                    ")");
    ORDO_RETURN_IF_ERROR(CheckTensorList(at, "input", op->inputs(), tensors, true));
    ORDO_RETURN_IF_ERROR(CheckTensorList(at, "output", op->outputs(), tensors, false));
    ORDO_RETURN_IF_ERROR(CheckTensorList(at, "intermediate", op->intermediates(), tensors, false));
  }
  return absl::OkStatus();
}

}  // namespace

bool HasTfliteIdentifier(absl::string_view bytes) {
  return bytes.size() >= 8 && bytes.substr(4, 4) == "TFL3";
}

absl::StatusOr<const tflite_fb::Model*> VerifiedTfliteModel(absl::string_view bytes) {
  if (!HasTfliteIdentifier(bytes)) {
    return absl::InvalidArgumentError(
        "not a TFLite model: the file identifier \"TFL3\" is missing at offset 4");
  }
  // The flatbuffer itself is at most 2 GiB; larger files keep their weights
  // after it (Buffer.offset), which CheckBuffers bounds separately.
  const size_t verified = std::min<size_t>(bytes.size(), FLATBUFFERS_MAX_BUFFER_SIZE - 1);
  const auto* data = reinterpret_cast<const uint8_t*>(bytes.data());
  flatbuffers::Verifier verifier(data, verified, /*max_depth=*/64, /*max_tables=*/10000000);
  if (!tflite_fb::VerifyModelBuffer(verifier)) {
    return absl::InvalidArgumentError(
        "not a valid TFLite model: the flatbuffers Verifier rejected the Model table "
        "(truncated file, or an offset, vector or string out of bounds)");
  }
  const Model* model = tflite_fb::GetModel(data);
  if (SizeOf(model->subgraphs()) == 0) {
    return absl::InvalidArgumentError("Model: has no subgraphs");
  }
  ORDO_RETURN_IF_ERROR(CheckBuffers(*model, bytes));
  for (uint32_t s = 0; s < model->subgraphs()->size(); ++s) {
    ORDO_RETURN_IF_ERROR(CheckSubGraph(*model, s));
  }
  for (uint32_t m = 0; m < SizeOf(model->metadata()); ++m) {
    const tflite_fb::Metadata* metadata = model->metadata()->Get(m);
    if (metadata != nullptr && metadata->buffer() >= SizeOf(model->buffers())) {
      return IndexError(absl::StrCat("Metadata ", m), "its buffer", metadata->buffer(), "Buffer",
                        SizeOf(model->buffers()));
    }
  }
  return model;
}

std::string BuiltinOperatorName(int32_t code) {
  if (code >= 0 && code < static_cast<int32_t>(kBuiltinNames.size())) return kBuiltinNames[code];
  return absl::StrCat("BUILTIN_", code);
}

int32_t BuiltinCode(const tflite_fb::OperatorCode& code) {
  return std::max<int32_t>(code.deprecated_builtin_code(), code.builtin_code());
}

bool IsCustomOperator(const tflite_fb::OperatorCode& code) {
  return BuiltinCode(code) == kCustomCode;
}

std::string OperatorTypeName(const tflite_fb::OperatorCode& code) {
  const int32_t builtin = BuiltinCode(code);
  if (builtin == kCustomCode && code.custom_code() != nullptr && code.custom_code()->size() > 0) {
    return code.custom_code()->str();
  }
  return BuiltinOperatorName(builtin);
}

std::vector<std::string> TfliteTensorNames(const tflite_fb::SubGraph& subgraph) {
  const uint32_t count = SizeOf(subgraph.tensors());
  absl::flat_hash_set<std::string> own;
  for (uint32_t t = 0; t < count; ++t) {
    const flatbuffers::String* name = subgraph.tensors()->Get(t)->name();
    if (name != nullptr) own.insert(name->str());
  }
  absl::flat_hash_set<std::string> taken;
  std::vector<std::string> names;
  names.reserve(count);
  for (uint32_t t = 0; t < count; ++t) {
    const flatbuffers::String* name = subgraph.tensors()->Get(t)->name();
    std::string chosen = name != nullptr ? name->str() : "";
    if (chosen.empty() || taken.contains(chosen)) {
      const std::string base = absl::StrCat("t", t);
      chosen = base;
      for (int k = 1; own.contains(chosen) || taken.contains(chosen); ++k) {
        chosen = absl::StrCat(base, "_", k);
      }
    }
    taken.insert(chosen);
    names.push_back(std::move(chosen));
  }
  return names;
}

std::string TfliteOpName(int32_t index, absl::string_view type) {
  return absl::StrCat("op", index, "_", type);
}

bool HoldsConstantData(const Model& model, const tflite_fb::Tensor& tensor) {
  if (tensor.external_buffer() != 0) return true;
  if (tensor.buffer() == 0 || tensor.buffer() >= SizeOf(model.buffers())) return false;
  const Buffer* buffer = model.buffers()->Get(tensor.buffer());
  if (buffer == nullptr) return false;
  if (SizeOf(buffer->data()) > 0) return true;
  return buffer->offset() > 1 && buffer->size() > 0;
}

}  // namespace ordo
