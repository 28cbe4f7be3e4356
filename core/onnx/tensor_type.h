#ifndef ORDO_CORE_ONNX_TENSOR_TYPE_H_
#define ORDO_CORE_ONNX_TENSOR_TYPE_H_

#include <cstdint>
#include <string>
#include <vector>

namespace ordo::onnx_import {

// A dim without a value (symbolic or missing) in TensorType::dims; not -1,
// so that a file's explicit negative dim_value stays distinguishable.
inline constexpr int64_t kUnknownDim = INT64_MIN;

// What an ONNX graph records about one tensor: its element type and its shape,
// which may be absent (unknown rank) or partial. A plain value.
struct TensorType {
  int32_t elem_type = 0;  // onnx::TensorProto::DataType; 0 when unknown
  bool has_shape = false;
  std::vector<int64_t> dims;  // kUnknownDim where a dim has no value
  // For messages: empty when no dim has a dim_param; otherwise the dim_param
  // of each dim without a value ("N"), "" for the others.
  std::vector<std::string> symbols;

  // Rank known and every dim has a value (>= 0).
  bool IsStatic() const;
};

}  // namespace ordo::onnx_import

#endif  // ORDO_CORE_ONNX_TENSOR_TYPE_H_
