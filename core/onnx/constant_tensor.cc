#include "core/onnx/constant_tensor.h"

#include <cmath>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <utility>

#include "core/util/checked_math.h"

namespace ordo::onnx_import {
namespace {

using onnx::TensorProto;

// Bytes per element in raw_data; 0 for types we do not represent.
int RawElementSize(int32_t elem_type) {
  switch (elem_type) {
    case TensorProto::BOOL:
    case TensorProto::INT8:
    case TensorProto::UINT8:
      return 1;
    case TensorProto::INT16:
    case TensorProto::UINT16:
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16:
      return 2;
    case TensorProto::INT32:
    case TensorProto::UINT32:
    case TensorProto::FLOAT:
      return 4;
    case TensorProto::INT64:
    case TensorProto::DOUBLE:
      return 8;
    default:
      return 0;
  }
}

// Appends one little-endian element of raw_data to `out` (x86 and ARM hosts
// are little-endian, as is the ONNX raw_data format).
void AppendRawElement(const char* p, int32_t elem_type, ConstantTensor& out) {
  switch (elem_type) {
    case TensorProto::BOOL:
    case TensorProto::UINT8:
      out.ints.push_back(static_cast<uint8_t>(*p));
      return;
    case TensorProto::INT8:
      out.ints.push_back(static_cast<int8_t>(*p));
      return;
    case TensorProto::INT16: {
      int16_t v;
      std::memcpy(&v, p, sizeof(v));
      out.ints.push_back(v);
      return;
    }
    case TensorProto::UINT16: {
      uint16_t v;
      std::memcpy(&v, p, sizeof(v));
      out.ints.push_back(v);
      return;
    }
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16: {
      uint16_t bits;
      std::memcpy(&bits, p, sizeof(bits));
      out.reals.push_back(SixteenBitRealToDouble(bits, elem_type));
      return;
    }
    case TensorProto::INT32: {
      int32_t v;
      std::memcpy(&v, p, sizeof(v));
      out.ints.push_back(v);
      return;
    }
    case TensorProto::UINT32: {
      uint32_t v;
      std::memcpy(&v, p, sizeof(v));
      out.ints.push_back(v);
      return;
    }
    case TensorProto::INT64: {
      int64_t v;
      std::memcpy(&v, p, sizeof(v));
      out.ints.push_back(v);
      return;
    }
    case TensorProto::FLOAT: {
      float v;
      std::memcpy(&v, p, sizeof(v));
      out.reals.push_back(v);
      return;
    }
    case TensorProto::DOUBLE: {
      double v;
      std::memcpy(&v, p, sizeof(v));
      out.reals.push_back(v);
      return;
    }
    default:
      return;
  }
}

// `header` carries elem_type and dims; the result adds the values.
std::optional<ConstantTensor> ReadRawData(const TensorProto& proto, ConstantTensor header,
                                          int64_t count) {
  const int size = RawElementSize(header.elem_type);
  const std::string& raw = proto.raw_data();
  if (size == 0 || static_cast<int64_t>(raw.size()) != count * size) {
    return std::nullopt;
  }
  for (int64_t i = 0; i < count; ++i) {
    AppendRawElement(raw.data() + i * size, header.elem_type, header);
  }
  return header;
}

std::optional<ConstantTensor> ReadTypedData(const TensorProto& proto, ConstantTensor header,
                                            int64_t count) {
  switch (header.elem_type) {
    case TensorProto::FLOAT:
      header.reals.assign(proto.float_data().begin(), proto.float_data().end());
      break;
    case TensorProto::DOUBLE:
      header.reals.assign(proto.double_data().begin(), proto.double_data().end());
      break;
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16:
      // The 16 bits of each value, in the low half of an int32_data entry.
      for (int32_t bits : proto.int32_data()) {
        header.reals.push_back(
            SixteenBitRealToDouble(static_cast<uint16_t>(bits), header.elem_type));
      }
      break;
    case TensorProto::INT64:
      header.ints.assign(proto.int64_data().begin(), proto.int64_data().end());
      break;
    case TensorProto::UINT32:
      header.ints.assign(proto.uint64_data().begin(), proto.uint64_data().end());
      break;
    default:
      // int32_data holds every narrower integer type and bool.
      for (int32_t v : proto.int32_data()) {
        header.ints.push_back(WrapToElemType(v, header.elem_type));
      }
      break;
  }
  if (header.num_elements() != count) return std::nullopt;
  return header;
}

}  // namespace

bool ConstantTensor::is_real() const { return IsRealElemType(elem_type); }

int64_t ConstantTensor::num_elements() const {
  return static_cast<int64_t>(is_real() ? reals.size() : ints.size());
}

bool IsIntegerElemType(int32_t elem_type) {
  return RawElementSize(elem_type) != 0 && !IsRealElemType(elem_type);
}

bool IsRealElemType(int32_t elem_type) {
  return IsSixteenBitRealElemType(elem_type) || elem_type == TensorProto::FLOAT ||
         elem_type == TensorProto::DOUBLE;
}

bool IsSixteenBitRealElemType(int32_t elem_type) {
  return elem_type == TensorProto::FLOAT16 || elem_type == TensorProto::BFLOAT16;
}

std::optional<int64_t> SmallElementCount(absl::Span<const int64_t> dims) {
  int64_t count = 1;
  for (int64_t dim : dims) {
    if (dim < 0) return std::nullopt;
    std::optional<int64_t> product = CheckedMul(count, dim);
    if (!product || *product > kMaxConstantElements) return std::nullopt;
    count = *product;
  }
  return count;
}

std::optional<ConstantTensor> ConstantFromProto(const TensorProto& proto) {
  if (proto.data_location() == TensorProto::EXTERNAL) return std::nullopt;
  if (!IsIntegerElemType(proto.data_type()) && !IsRealElemType(proto.data_type())) {
    return std::nullopt;
  }
  ConstantTensor header;
  header.elem_type = proto.data_type();
  header.dims.assign(proto.dims().begin(), proto.dims().end());
  std::optional<int64_t> count = SmallElementCount(header.dims);
  if (!count) return std::nullopt;
  return proto.has_raw_data() ? ReadRawData(proto, std::move(header), *count)
                              : ReadTypedData(proto, std::move(header), *count);
}

TensorProto ConstantToProto(const ConstantTensor& value, const std::string& name) {
  TensorProto proto;
  proto.set_name(name);
  proto.set_data_type(value.elem_type);
  for (int64_t dim : value.dims) proto.add_dims(dim);
  switch (value.elem_type) {
    case TensorProto::FLOAT:
      for (double v : value.reals) proto.add_float_data(static_cast<float>(v));
      break;
    case TensorProto::DOUBLE:
      for (double v : value.reals) proto.add_double_data(v);
      break;
    case TensorProto::FLOAT16:
    case TensorProto::BFLOAT16:
      for (double v : value.reals) {
        proto.add_int32_data(SixteenBitRealFromDouble(v, value.elem_type));
      }
      break;
    case TensorProto::INT64:
      for (int64_t v : value.ints) proto.add_int64_data(v);
      break;
    case TensorProto::UINT32:
      for (int64_t v : value.ints) proto.add_uint64_data(static_cast<uint64_t>(v));
      break;
    default:
      for (int64_t v : value.ints) proto.add_int32_data(static_cast<int32_t>(v));
      break;
  }
  return proto;
}

void DropBulkInitializerData(onnx::GraphProto& graph) {
  for (TensorProto& tensor : *graph.mutable_initializer()) {
    if (SmallElementCount(absl::MakeConstSpan(tensor.dims().data(), tensor.dims_size()))) {
      continue;
    }
    if (tensor.GetArena() != nullptr) {
      // The arena owns the memory until it goes; releasing or swapping out
      // would copy the data to the heap first.
      tensor.clear_raw_data();
      tensor.clear_float_data();
      tensor.clear_double_data();
      tensor.clear_int32_data();
      tensor.clear_int64_data();
      tensor.clear_uint64_data();
      tensor.clear_string_data();
      continue;
    }
    // Release and Swap free the memory; clear_*() would keep the capacity.
    std::unique_ptr<std::string> raw(tensor.release_raw_data());
    google::protobuf::RepeatedField<float>().Swap(tensor.mutable_float_data());
    google::protobuf::RepeatedField<double>().Swap(tensor.mutable_double_data());
    google::protobuf::RepeatedField<int32_t>().Swap(tensor.mutable_int32_data());
    google::protobuf::RepeatedField<int64_t>().Swap(tensor.mutable_int64_data());
    google::protobuf::RepeatedField<uint64_t>().Swap(tensor.mutable_uint64_data());
    google::protobuf::RepeatedPtrField<std::string>().Swap(tensor.mutable_string_data());
  }
}

int64_t WrapToElemType(int64_t value, int32_t elem_type) {
  switch (elem_type) {
    case TensorProto::BOOL:
      return value != 0 ? 1 : 0;
    case TensorProto::INT8:
      return static_cast<int8_t>(value);
    case TensorProto::UINT8:
      return static_cast<uint8_t>(value);
    case TensorProto::INT16:
      return static_cast<int16_t>(value);
    case TensorProto::UINT16:
      return static_cast<uint16_t>(value);
    case TensorProto::INT32:
      return static_cast<int32_t>(value);
    case TensorProto::UINT32:
      return static_cast<uint32_t>(value);
    default:
      return value;
  }
}

namespace {

// `x` (>= 0, an integer plus a fraction exact in double) rounded to the
// nearest integer, ties to even.
double RoundHalfToEven(double x) {
  const double floor = std::floor(x);
  const double fraction = x - floor;
  if (fraction > 0.5 || (fraction == 0.5 && std::fmod(floor, 2.0) != 0.0)) return floor + 1.0;
  return floor;
}

// A 16-bit IEEE-style binary float: a sign, then 15 - kMantissaBits bits of
// exponent, then kMantissaBits of mantissa (10: float16; 7: bfloat16,
// float32's top half).
template <int kMantissaBits>
struct SixteenBitFormat {
  static constexpr int kExponentBits = 15 - kMantissaBits;
  static constexpr int kMaxExponent = (1 << kExponentBits) - 1;  // infinity and NaN
  static constexpr int kBias = (1 << (kExponentBits - 1)) - 1;   // 15; 127

  static double ToDouble(uint16_t bits) {
    const double sign = (bits & 0x8000) != 0 ? -1.0 : 1.0;
    const int exponent = (bits >> kMantissaBits) & kMaxExponent;
    const int mantissa = bits & ((1 << kMantissaBits) - 1);
    if (exponent == kMaxExponent) {
      return mantissa != 0 ? std::numeric_limits<double>::quiet_NaN()
                           : sign * std::numeric_limits<double>::infinity();
    }
    if (exponent == 0) return sign * std::ldexp(mantissa, 1 - kBias - kMantissaBits);  // subnormal
    return sign * std::ldexp((1 << kMantissaBits) + mantissa, exponent - kBias - kMantissaBits);
  }

  static uint16_t FromDouble(double value) {
    const uint16_t sign = std::signbit(value) ? 0x8000 : 0;
    const uint16_t infinity = kMaxExponent << kMantissaBits;
    if (std::isnan(value)) return sign | infinity | (1 << (kMantissaBits - 1));
    const double magnitude = std::fabs(value);
    // Halfway between the largest finite value, (2 - 2^-m) x 2^bias
    // (float16: 65504), and 2^(bias+1): from there on, round to nearest
    // gives infinity.
    if (magnitude >= std::ldexp(2.0 - std::ldexp(1.0, -kMantissaBits - 1), kBias)) {
      return sign | infinity;
    }
    if (magnitude < std::ldexp(1.0, 1 - kBias)) {
      // Subnormal: a multiple of 2^(1 - bias - m). 2^m of them is the
      // smallest normal, whose bits are the same number.
      return sign | static_cast<uint16_t>(
                        RoundHalfToEven(std::ldexp(magnitude, kBias - 1 + kMantissaBits)));
    }
    int exponent = 0;
    const double fraction = std::frexp(magnitude, &exponent);  // [0.5, 1) x 2^exponent
    // m + 1 significant bits: the mantissa's and the implicit 1. A carry
    // out of the mantissa (2^m) moves to the exponent, as it should.
    const double significand = RoundHalfToEven(std::ldexp(fraction, kMantissaBits + 1));
    return sign | static_cast<uint16_t>(((exponent + kBias - 1) << kMantissaBits) +
                                        (significand - (1 << kMantissaBits)));
  }
};

using Half = SixteenBitFormat<10>;
using BFloat16 = SixteenBitFormat<7>;

}  // namespace

double HalfToDouble(uint16_t bits) { return Half::ToDouble(bits); }
uint16_t HalfFromDouble(double value) { return Half::FromDouble(value); }
double RoundToHalf(double value) { return HalfToDouble(HalfFromDouble(value)); }

double BFloat16ToDouble(uint16_t bits) { return BFloat16::ToDouble(bits); }
uint16_t BFloat16FromDouble(double value) { return BFloat16::FromDouble(value); }
double RoundToBFloat16(double value) { return BFloat16ToDouble(BFloat16FromDouble(value)); }

double SixteenBitRealToDouble(uint16_t bits, int32_t elem_type) {
  return elem_type == TensorProto::BFLOAT16 ? BFloat16ToDouble(bits) : HalfToDouble(bits);
}

uint16_t SixteenBitRealFromDouble(double value, int32_t elem_type) {
  return elem_type == TensorProto::BFLOAT16 ? BFloat16FromDouble(value) : HalfFromDouble(value);
}

}  // namespace ordo::onnx_import
