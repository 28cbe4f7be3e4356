#ifndef ORDO_CORE_TESTING_FAKE_CLOCK_H_
#define ORDO_CORE_TESTING_FAKE_CLOCK_H_

#include "absl/base/thread_annotations.h"
#include "absl/synchronization/mutex.h"
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

// A clock that stands still until the test moves it: what a deadline or a
// cached answer's age is measured against, with no sleeps. Thread-safe
// (the service reads it from several threads).
class FakeClock final : public Clock {
 public:
  explicit FakeClock(absl::Time now = absl::FromUnixSeconds(1'700'000'000)) : now_(now) {}
  absl::Time Now() const override {
    absl::MutexLock lock(&mu_);
    return now_;
  }
  void Advance(absl::Duration by) {
    absl::MutexLock lock(&mu_);
    now_ += by;
  }

 private:
  mutable absl::Mutex mu_;
  absl::Time now_ ABSL_GUARDED_BY(mu_);
};

}  // namespace ordo::testing

#endif  // ORDO_CORE_TESTING_FAKE_CLOCK_H_
