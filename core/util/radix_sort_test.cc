#include "core/util/radix_sort.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <vector>

#include "gtest/gtest.h"

namespace ordo {
namespace {

// The order std::stable_sort gives: by key, then by index.
template <typename Key, typename Less>
std::vector<int32_t> ComparisonOrder(const std::vector<Key>& keys, Less less) {
  std::vector<int32_t> order(keys.size());
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](int32_t a, int32_t b) { return less(keys[a], keys[b]); });
  return order;
}

TEST(RadixSortTest, OrderedBitsKeepTheOrderOfDoubles) {
  const std::vector<double> ascending = {-std::numeric_limits<double>::infinity(),
                                         -1e300,
                                         -2.5,
                                         -std::numeric_limits<double>::denorm_min(),
                                         0.0,
                                         std::numeric_limits<double>::denorm_min(),
                                         1e-300,
                                         1.0,
                                         1.0000000000000002,
                                         1e300,
                                         std::numeric_limits<double>::infinity()};
  for (size_t i = 0; i + 1 < ascending.size(); ++i) {
    EXPECT_LT(OrderedBits(ascending[i]), OrderedBits(ascending[i + 1])) << ascending[i];
  }
  EXPECT_EQ(OrderedBits(-0.0), OrderedBits(0.0));
}

// Against std::stable_sort on random keys with many ties, both signs,
// both zeros, and sizes around the byte boundaries.
TEST(RadixSortTest, IsTheStableSortDescending) {
  std::mt19937_64 rng(7);
  for (int trial = 0; trial < 300; ++trial) {
    const size_t n = rng() % 700;
    std::vector<double> keys(n);
    for (double& key : keys) {
      switch (rng() % 5) {
        case 0:
          key = static_cast<double>(rng() % 4);
          break;  // ties
        case 1:
          key = rng() % 2 ? 0.0 : -0.0;
          break;
        case 2:
          key = std::ldexp(static_cast<double>(rng() % 1000) - 500, rng() % 80 - 40);
          break;
        default:
          key = std::uniform_real_distribution<double>(-1e6, 1e6)(rng);
      }
    }
    EXPECT_EQ(StableOrderByKeyDescending(keys),
              ComparisonOrder(keys, [](double a, double b) { return a > b; }))
        << "trial " << trial;
  }
}

TEST(RadixSortTest, IsTheStableSortOfIntegers) {
  std::mt19937_64 rng(11);
  for (int trial = 0; trial < 300; ++trial) {
    const size_t n = rng() % 700;
    const int shift = static_cast<int>(rng() % 64);
    std::vector<uint64_t> keys(n);
    for (uint64_t& key : keys) key = (rng() % 16) << shift | (trial % 2 ? rng() % 3 : 0);
    EXPECT_EQ(StableOrderByKey(keys),
              ComparisonOrder(keys, [](uint64_t a, uint64_t b) { return a < b; }))
        << "trial " << trial;
  }
}

}  // namespace
}  // namespace ordo
