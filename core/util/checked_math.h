#ifndef ORDO_CORE_UTIL_CHECKED_MATH_H_
#define ORDO_CORE_UTIL_CHECKED_MATH_H_

#include <cstdint>
#include <optional>

namespace ordo {

// a * b, or nullopt when the product does not fit in int64.
inline std::optional<int64_t> CheckedMul(int64_t a, int64_t b) {
  int64_t result;
  if (__builtin_mul_overflow(a, b, &result)) return std::nullopt;
  return result;
}

// a + b, or nullopt when the sum does not fit in int64.
inline std::optional<int64_t> CheckedAdd(int64_t a, int64_t b) {
  int64_t result;
  if (__builtin_add_overflow(a, b, &result)) return std::nullopt;
  return result;
}

}  // namespace ordo

#endif  // ORDO_CORE_UTIL_CHECKED_MATH_H_
