#include "core/onnx/raw_data.h"

#include <cstring>

namespace ordo::onnx_import {
namespace {

// The low `width` bytes of `bits`, little-endian.
void AppendLittleEndian(uint64_t bits, int64_t width, std::string& out) {
  for (int64_t i = 0; i < width; ++i) out.push_back(static_cast<char>((bits >> (8 * i)) & 0xff));
}

}  // namespace

int64_t RawElementBytes(int32_t data_type) {
  switch (data_type) {
    case onnx::TensorProto::UINT8:
    case onnx::TensorProto::INT8:
    case onnx::TensorProto::BOOL:
      return 1;
    case onnx::TensorProto::UINT16:
    case onnx::TensorProto::INT16:
    case onnx::TensorProto::FLOAT16:
    case onnx::TensorProto::BFLOAT16:
      return 2;
    case onnx::TensorProto::FLOAT:
    case onnx::TensorProto::INT32:
    case onnx::TensorProto::UINT32:
      return 4;
    case onnx::TensorProto::INT64:
    case onnx::TensorProto::UINT64:
    case onnx::TensorProto::DOUBLE:
    case onnx::TensorProto::COMPLEX64:
      return 8;
    case onnx::TensorProto::COMPLEX128:
      return 16;
    default:
      return 0;
  }
}

std::optional<std::string> RawDataOf(const onnx::TensorProto& tensor, int64_t count) {
  const int64_t width = RawElementBytes(tensor.data_type());
  if (width == 0 || tensor.data_location() == onnx::TensorProto::EXTERNAL) return std::nullopt;
  std::string out;
  if (tensor.has_raw_data()) {
    out = tensor.raw_data();
  } else {
    switch (tensor.data_type()) {
      case onnx::TensorProto::FLOAT:
      case onnx::TensorProto::COMPLEX64:
        for (float v : tensor.float_data()) {
          uint32_t bits;
          std::memcpy(&bits, &v, sizeof bits);
          AppendLittleEndian(bits, 4, out);
        }
        break;
      case onnx::TensorProto::DOUBLE:
      case onnx::TensorProto::COMPLEX128:
        for (double v : tensor.double_data()) {
          uint64_t bits;
          std::memcpy(&bits, &v, sizeof bits);
          AppendLittleEndian(bits, 8, out);
        }
        break;
      case onnx::TensorProto::INT64:
        for (int64_t v : tensor.int64_data()) AppendLittleEndian(static_cast<uint64_t>(v), 8, out);
        break;
      case onnx::TensorProto::UINT32:
      case onnx::TensorProto::UINT64:
        for (uint64_t v : tensor.uint64_data()) AppendLittleEndian(v, width, out);
        break;
      default:
        for (int32_t v : tensor.int32_data()) {
          AppendLittleEndian(static_cast<uint32_t>(v), width, out);
        }
        break;
    }
  }
  if (static_cast<int64_t>(out.size()) != count * width) return std::nullopt;
  return out;
}

}  // namespace ordo::onnx_import
