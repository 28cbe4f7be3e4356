#ifndef ORDO_CORE_ONNX_CONSTANT_TENSOR_H_
#define ORDO_CORE_ONNX_CONSTANT_TENSOR_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/types/span.h"
#include "onnx/onnx_pb.h"

namespace ordo::onnx_import {

// Evaluated tensors are kept small: shape computations have a handful of
// elements, and anything larger is a weight whose values nobody needs.
inline constexpr int64_t kMaxConstantElements = int64_t{1} << 16;

// A tensor whose values are known at compile time, for the small evaluator of
// shape computations (see constant_evaluator.h). Integer-like element types
// (int8..int64, uint8..uint32, bool) keep their values in `ints`; float16,
// bfloat16, float and double in `reals` (each value one of the type's:
// double holds every float16, bfloat16 and float exactly). uint64/string
// are not represented.
// Row-major; a scalar has empty `dims` and one element. A plain value.
struct ConstantTensor {
  int32_t elem_type = onnx::TensorProto::INT64;
  std::vector<int64_t> dims;
  std::vector<int64_t> ints;
  std::vector<double> reals;

  bool is_real() const;
  int64_t num_elements() const;
};

// Whether ConstantTensor can hold elements of this onnx::TensorProto type.
bool IsIntegerElemType(int32_t elem_type);
bool IsRealElemType(int32_t elem_type);
// float16 or bfloat16: real types whose runtimes differ in how they round
// some ops (accumulate in the type or in float), so the evaluator declines
// those.
bool IsSixteenBitRealElemType(int32_t elem_type);

// Product of dims, or nullopt when a dim is negative or the product exceeds
// kMaxConstantElements.
std::optional<int64_t> SmallElementCount(absl::Span<const int64_t> dims);

// The values of an initializer or Constant attribute, from raw_data or the
// typed fields. nullopt when there is no data (external data is never
// loaded), the type is not representable, the data does not match the dims,
// or it has more than kMaxConstantElements elements.
std::optional<ConstantTensor> ConstantFromProto(const onnx::TensorProto& proto);

// An initializer holding `value` in the typed field for its element type.
onnx::TensorProto ConstantToProto(const ConstantTensor& value, const std::string& name);

// Frees the data of every initializer with more than kMaxConstantElements
// elements: nothing in the import reads it (only dims and type matter), and a
// model with real weights would otherwise be copied whole by folding.
void DropBulkInitializerData(onnx::GraphProto& graph);

// Wraps an integer to the width of an integer element type (C++ conversion
// semantics, as runtimes implement Cast); bool becomes 0/1.
int64_t WrapToElemType(int64_t value, int32_t elem_type);

// IEEE 754 binary16 (ONNX FLOAT16, stored as its 16 bits in raw_data or
// int32_data). HalfToDouble is exact; HalfFromDouble rounds to nearest,
// ties to even, past the largest finite value (65504) to infinity, as a
// Cast to FLOAT16 does. RoundToHalf is the value a float16 stores.
double HalfToDouble(uint16_t bits);
uint16_t HalfFromDouble(double value);
double RoundToHalf(double value);

// bfloat16 (ONNX BFLOAT16: float32's top 16 bits, 8 exponent bits and 7
// mantissa bits; stored like FLOAT16), the same way: BFloat16ToDouble is
// exact; BFloat16FromDouble rounds to nearest, ties to even, as a Cast to
// BFLOAT16 does (not truncation); RoundToBFloat16 is the value it stores.
double BFloat16ToDouble(uint16_t bits);
uint16_t BFloat16FromDouble(double value);
double RoundToBFloat16(double value);

// The two above by ONNX element type (FLOAT16 or BFLOAT16).
double SixteenBitRealToDouble(uint16_t bits, int32_t elem_type);
uint16_t SixteenBitRealFromDouble(double value, int32_t elem_type);

}  // namespace ordo::onnx_import

#endif  // ORDO_CORE_ONNX_CONSTANT_TENSOR_H_
