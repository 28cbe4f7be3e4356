#ifndef ORDO_CORE_TESTING_FAKE_CLOCK_H_
#define ORDO_CORE_TESTING_FAKE_CLOCK_H_

#include "absl/time/time.h"
#include "core/util/clock.h"

namespace ordo::testing {

// A clock that moves forward by `tick` every time it is read: deadlines
// expire after a fixed number of reads, whatever the machine's speed.
// Not thread-safe.
class TickingClock final : public Clock {
 public:
  explicit TickingClock(absl::Duration tick) : tick_(tick) {}
  absl::Time Now() const override { return now_ += tick_; }

 private:
  absl::Duration tick_;
  mutable absl::Time now_ = absl::UnixEpoch();
};

}  // namespace ordo::testing

#endif  // ORDO_CORE_TESTING_FAKE_CLOCK_H_
