#include "core/graph/dtype.h"

#include <array>
#include <utility>

namespace ordo {
namespace {

struct DataTypeInfo {
  DataType dtype;
  absl::string_view name;
  int size;
};

constexpr std::array<DataTypeInfo, 14> kDataTypes = {{
    {DataType::kUnknown, "unknown", 0},
    {DataType::kFloat32, "float32", 4},
    {DataType::kFloat16, "float16", 2},
    {DataType::kBFloat16, "bfloat16", 2},
    {DataType::kInt8, "int8", 1},
    {DataType::kUInt8, "uint8", 1},
    {DataType::kBool, "bool", 1},
    {DataType::kInt16, "int16", 2},
    {DataType::kUInt16, "uint16", 2},
    {DataType::kInt32, "int32", 4},
    {DataType::kUInt32, "uint32", 4},
    {DataType::kInt64, "int64", 8},
    {DataType::kUInt64, "uint64", 8},
    {DataType::kFloat64, "float64", 8},
}};

const DataTypeInfo& Info(DataType dtype) {
  for (const DataTypeInfo& info : kDataTypes) {
    if (info.dtype == dtype) return info;
  }
  return kDataTypes[0];
}

}  // namespace

int ElementSize(DataType dtype) { return Info(dtype).size; }

absl::string_view DataTypeName(DataType dtype) { return Info(dtype).name; }

std::optional<DataType> ParseDataType(absl::string_view name) {
  static constexpr std::pair<absl::string_view, DataType> kAliases[] = {
      {"fp32", DataType::kFloat32},
      {"fp16", DataType::kFloat16},
      {"bf16", DataType::kBFloat16},
      {"float", DataType::kFloat32},
      {"double", DataType::kFloat64},
  };
  for (const auto& [alias, dtype] : kAliases) {
    if (alias == name) return dtype;
  }
  for (const DataTypeInfo& info : kDataTypes) {
    if (info.name == name && info.dtype != DataType::kUnknown) return info.dtype;
  }
  return std::nullopt;
}

}  // namespace ordo
