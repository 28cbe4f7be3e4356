// Stable orders of indices by numeric keys, by LSD radix sort: no
// comparisons, so no branch the data decides (a comparison sort of a few
// hundred keys mispredicts about every other comparison; the place stage
// sorts blocks this way several times per compile).
#ifndef ORDO_CORE_UTIL_RADIX_SORT_H_
#define ORDO_CORE_UTIL_RADIX_SORT_H_

#include <array>
#include <cstdint>
#include <cstring>
#include <numeric>
#include <vector>

namespace ordo {

// An unsigned integer in the order of `value` (no NaN): a < b iff
// OrderedBits(a) < OrderedBits(b); -0.0 and +0.0 map alike.
inline uint64_t OrderedBits(double value) {
  if (value == 0) value = 0.0;  // -0.0 is equal to +0.0, as for <
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return (bits >> 63) != 0 ? ~bits : bits | (uint64_t{1} << 63);
}

// The indices of `keys` in ascending order of key, equal keys in index
// order (as std::stable_sort). Eight passes of a byte at most, each skipped
// when every key has the same byte there: O(8 (n + 256)).
inline std::vector<int32_t> StableOrderByKey(const std::vector<uint64_t>& keys) {
  const size_t n = keys.size();
  std::vector<int32_t> order(n), scratch(n);
  std::iota(order.begin(), order.end(), 0);
  if (n < 2) return order;
  std::array<std::array<uint32_t, 256>, 8> counts{};
  for (uint64_t key : keys) {
    for (int digit = 0; digit < 8; ++digit) ++counts[digit][(key >> (8 * digit)) & 255];
  }
  for (int digit = 0; digit < 8; ++digit) {
    std::array<uint32_t, 256>& count = counts[digit];
    if (count[(keys[0] >> (8 * digit)) & 255] == n) continue;  // one byte for all
    uint32_t start = 0;
    for (uint32_t& c : count) {
      const uint32_t here = c;
      c = start;
      start += here;
    }
    for (int32_t i : order) scratch[count[(keys[i] >> (8 * digit)) & 255]++] = i;
    order.swap(scratch);
  }
  return order;
}

// The indices of `keys` from the highest key to the lowest (no NaN), equal
// keys in index order.
inline std::vector<int32_t> StableOrderByKeyDescending(const std::vector<double>& keys) {
  std::vector<uint64_t> bits(keys.size());
  for (size_t i = 0; i < keys.size(); ++i) bits[i] = ~OrderedBits(keys[i]);
  return StableOrderByKey(bits);
}

}  // namespace ordo

#endif  // ORDO_CORE_UTIL_RADIX_SORT_H_
