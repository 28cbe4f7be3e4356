#ifndef ORDO_CORE_ONNX_RAW_DATA_H_
#define ORDO_CORE_ONNX_RAW_DATA_H_

#include <cstdint>
#include <optional>
#include <string>

#include "onnx/onnx_pb.h"

namespace ordo::onnx_import {

// Bytes per element of a fixed-size ONNX element type in raw_data, or 0 for
// the others (string, undefined, and types newer than the linked ONNX 1.12).
int64_t RawElementBytes(int32_t data_type);

// The data of `tensor`'s `count` elements as raw_data holds it (little-endian,
// ONNX's layout and the host's on x86 and Arm): raw_data itself, or the
// typed field ONNX keeps its type in (the narrow integer types and the
// 16-bit floats one element per int32_data entry, uint32 and uint64 in
// uint64_data, complex numbers as two floats or doubles). nullopt for
// external data, types without a fixed size, or data that does not hold
// `count` elements. O(bytes).
std::optional<std::string> RawDataOf(const onnx::TensorProto& tensor, int64_t count);

}  // namespace ordo::onnx_import

#endif  // ORDO_CORE_ONNX_RAW_DATA_H_
