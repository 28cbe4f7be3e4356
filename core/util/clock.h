#ifndef ORDO_CORE_UTIL_CLOCK_H_
#define ORDO_CORE_UTIL_CLOCK_H_

#include "absl/time/clock.h"
#include "absl/time/time.h"

namespace ordo {

// Time source, injected so tests can use a fake one (leveldb's Env idea).
class Clock {
 public:
  virtual ~Clock() = default;
  virtual absl::Time Now() const = 0;
};

// The system clock. Stateless; thread-safe.
class RealClock final : public Clock {
 public:
  absl::Time Now() const override { return absl::Now(); }
};

}  // namespace ordo

#endif  // ORDO_CORE_UTIL_CLOCK_H_
