#ifndef ORDO_CORE_TESTING_TRIALS_H_
#define ORDO_CORE_TESTING_TRIALS_H_

#include <algorithm>
#include <cstdlib>

namespace ordo::testing {

// How many random trials a property test runs: `n` scaled by
// ORDO_TEST_TRIALS_SCALE (default 1), at least 10. Sanitizer builds run
// 10-50x slower; scripts/sanitize sets the scale to 0.1 so their suite
// still checks every property (on fewer graphs) within CI's time.
inline int Trials(int n) {
  static const double scale = [] {
    const char* text = std::getenv("ORDO_TEST_TRIALS_SCALE");
    const double value = text != nullptr ? std::atof(text) : 1.0;
    return value > 0 ? value : 1.0;
  }();
  return std::max(std::min(n, 10), static_cast<int>(n * scale));
}

}  // namespace ordo::testing

#endif  // ORDO_CORE_TESTING_TRIALS_H_
