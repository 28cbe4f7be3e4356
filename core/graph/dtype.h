#ifndef ORDO_CORE_GRAPH_DTYPE_H_
#define ORDO_CORE_GRAPH_DTYPE_H_

#include <cstdint>
#include <optional>
#include "absl/strings/string_view.h"

namespace ordo {

// Element types the memory model knows (spec: "Tensor size in bytes").
// kUnknown marks a tensor whose size is given explicitly in bytes.
enum class DataType : int8_t {
  kUnknown = 0,
  kFloat32,
  kFloat16,
  kBFloat16,
  kInt8,
  kUInt8,
  kBool,
  kInt16,
  kUInt16,
  kInt32,
  kUInt32,
  kInt64,
  kUInt64,
  kFloat64,
};

// Bytes per element; 0 for kUnknown.
int ElementSize(DataType dtype);

// Lower-case name ("float32", "int8", ...).
absl::string_view DataTypeName(DataType dtype);

// Inverse of DataTypeName; also accepts "fp32", "fp16", "bf16".
std::optional<DataType> ParseDataType(absl::string_view name);

}  // namespace ordo

#endif  // ORDO_CORE_GRAPH_DTYPE_H_
