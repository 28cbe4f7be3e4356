#ifndef ORDO_SERVER_SINGLE_FLIGHT_H_
#define ORDO_SERVER_SINGLE_FLIGHT_H_

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace ordo::server {

// Computes each key once among concurrent callers (Go's singleflight): the
// first caller of a key (the leader) runs `compute`; callers that arrive
// while it runs (followers) wait for it and receive a copy of its value,
// without running anything. When the leader returns, the key is forgotten:
// a later call computes again (caching is someone else's job).
//
// A follower waits until the leader finishes or until its own deadline;
// then it gets nothing (std::nullopt) and decides itself what to do. The
// leader's value is shared whatever it is; callers that must not share some
// values (a leader cancelled by its own client) check `shared` and
// recompute. Waiting costs one condition variable per key in flight; the map
// holds only keys being computed. Thread-safe.
template <typename Value>
class SingleFlight {
 public:
  struct Outcome {
    Value value;
    // True for a follower: `value` was computed by another call.
    bool shared = false;
  };

  SingleFlight() = default;
  SingleFlight(const SingleFlight&) = delete;
  SingleFlight& operator=(const SingleFlight&) = delete;

  // The value of `key`: computed by this call or shared from a concurrent
  // one. Nothing when this call waited and `deadline` passed first.
  std::optional<Outcome> Do(const std::string& key, absl::Time deadline,
                            absl::FunctionRef<Value()> compute) {
    std::shared_ptr<Flight> flight;
    bool leader = false;
    {
      absl::MutexLock lock(&mu_);
      std::shared_ptr<Flight>& slot = flights_[key];
      if (slot == nullptr) {
        slot = std::make_shared<Flight>();
        leader = true;
      } else {
        ++followers_total_;
        ++slot->followers;
      }
      flight = slot;
    }
    if (!leader) return flight->Await(deadline);
    Value value = compute();
    int followers = 0;
    {
      absl::MutexLock lock(&mu_);
      flights_.erase(key);  // no call joins this flight from here on
      followers = flight->followers;
    }
    // Followers hold their own reference: the published value outlives the
    // map entry. Without followers nothing is published, so the leader's
    // value (a whole response) is neither copied nor kept.
    if (followers > 0) flight->Publish(value);
    return Outcome{std::move(value), false};
  }

  // Keys being computed now.
  int InFlight() const {
    absl::MutexLock lock(&mu_);
    return static_cast<int>(flights_.size());
  }
  // Calls that joined another call's flight, since construction.
  int64_t FollowersTotal() const {
    absl::MutexLock lock(&mu_);
    return followers_total_;
  }

 private:
  // std::mutex and std::condition_variable rather than absl::Notification:
  // the hand-off of `value` must be visible to ThreadSanitizer, which does
  // not see the atomics inside Debian's (uninstrumented) libabsl.
  struct Flight {
    std::mutex mu;
    std::condition_variable published;
    std::optional<Value> value;  // set once by the leader, under `mu`
    // Calls that joined, guarded by SingleFlight::mu_ (not `mu`), and final
    // once the flight has left the map.
    int followers = 0;

    void Publish(Value computed) {
      {
        std::lock_guard<std::mutex> lock(mu);
        value.emplace(std::move(computed));
      }
      published.notify_all();
    }
    std::optional<Outcome> Await(absl::Time deadline) {
      std::unique_lock<std::mutex> lock(mu);
      const auto ready = [this] { return value.has_value(); };
      if (deadline == absl::InfiniteFuture()) {
        published.wait(lock, ready);
      } else if (!published.wait_until(lock, absl::ToChronoTime(deadline), ready)) {
        return std::nullopt;
      }
      return Outcome{*value, true};
    }
  };
  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, std::shared_ptr<Flight>> flights_ ABSL_GUARDED_BY(mu_);
  int64_t followers_total_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace ordo::server

#endif  // ORDO_SERVER_SINGLE_FLIGHT_H_
