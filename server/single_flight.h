#ifndef ORDO_SERVER_SINGLE_FLIGHT_H_
#define ORDO_SERVER_SINGLE_FLIGHT_H_

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/functional/function_ref.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"

namespace ordo::server {

// What a flight without progress reports.
struct NoProgress {};

// Computes each key once among concurrent callers (Go's singleflight): the
// first caller of a key (the leader) runs `compute`; callers that arrive
// while it runs (followers) wait for it and receive a copy of its value,
// without running anything. When the leader returns, the key is forgotten:
// a later call computes again (caching is someone else's job).
//
// The leader may report progress (`Progress`, e.g. a streamed event) while
// it computes; a follower sees the latest report as it joins and each later
// one, in its own thread, so a streaming follower is never silent while it
// waits. Reports may be coalesced: a follower busy with one report sees only
// the newest after it.
//
// A follower waits until the leader finishes, its own deadline passes, or
// its call is cancelled; then it gets DEADLINE_EXCEEDED or CANCELLED and
// decides itself what to do. The leader's value is shared whatever it is;
// callers that must not share some values (a leader cancelled by its own
// client) check `shared` and recompute. Waiting costs one condition
// variable per key in flight; the map holds only keys being computed.
// Thread-safe.
template <typename Value, typename Progress = NoProgress>
class SingleFlight {
 public:
  struct Outcome {
    Value value;
    // True for a follower: `value` was computed by another call.
    bool shared = false;
  };
  using ReportFn = std::function<void(const Progress&)>;
  // How a follower waits.
  struct Wait {
    absl::Time deadline = absl::InfiniteFuture();
    // The leader's reports, called in the follower's thread; may be empty.
    ReportFn on_progress;
    // The follower's call was cancelled: checked every kCancelPoll.
    const std::atomic<bool>* cancelled = nullptr;
  };
  static constexpr absl::Duration kCancelPoll = absl::Milliseconds(100);

  SingleFlight() = default;
  SingleFlight(const SingleFlight&) = delete;
  SingleFlight& operator=(const SingleFlight&) = delete;

  // The value of `key`: computed by this call (`compute`, given the
  // function that reports its progress to the followers) or shared from a
  // concurrent one.
  absl::StatusOr<Outcome> Do(const std::string& key, const Wait& wait,
                             absl::FunctionRef<Value(const ReportFn&)> compute) {
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
    if (!leader) return flight->Await(wait);
    const ReportFn report = [&flight](const Progress& progress) { flight->Report(progress); };
    Value value = compute(report);
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

  // Without progress: the value, or nothing when this call waited and
  // `deadline` passed first.
  std::optional<Outcome> Do(const std::string& key, absl::Time deadline,
                            absl::FunctionRef<Value()> compute) {
    Wait wait;
    wait.deadline = deadline;
    absl::StatusOr<Outcome> outcome =
        Do(key, wait, [&compute](const ReportFn& /*report*/) { return compute(); });
    if (!outcome.ok()) return std::nullopt;
    return *std::move(outcome);
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
    std::condition_variable changed;   // a report or the value
    std::optional<Value> value;        // set once by the leader, under `mu`
    std::optional<Progress> progress;  // the leader's latest report
    uint64_t reports = 0;              // how many, under `mu`
    // Calls that joined, guarded by SingleFlight::mu_ (not `mu`), and final
    // once the flight has left the map.
    int followers = 0;

    void Report(const Progress& latest) {
      {
        std::lock_guard<std::mutex> lock(mu);
        progress = latest;
        ++reports;
      }
      changed.notify_all();
    }
    void Publish(Value computed) {
      {
        std::lock_guard<std::mutex> lock(mu);
        value.emplace(std::move(computed));
      }
      changed.notify_all();
    }
    absl::StatusOr<Outcome> Await(const Wait& wait) {
      std::unique_lock<std::mutex> lock(mu);
      uint64_t seen = 0;
      while (!value.has_value()) {
        if (wait.on_progress && reports != seen) {
          seen = reports;
          const Progress latest = *progress;
          lock.unlock();  // the callback may write to a stream
          wait.on_progress(latest);
          lock.lock();
          continue;
        }
        if (wait.cancelled != nullptr && wait.cancelled->load()) {
          return absl::CancelledError("cancelled while waiting for an identical call's result");
        }
        const absl::Time now = absl::Now();
        if (now >= wait.deadline) {
          return absl::DeadlineExceededError(
              "deadline passed while waiting for an identical call's result");
        }
        const absl::Time until =
            wait.cancelled == nullptr ? wait.deadline : std::min(wait.deadline, now + kCancelPoll);
        const auto woken = [&] {
          return value.has_value() || (wait.on_progress && reports != seen);
        };
        if (until == absl::InfiniteFuture()) {
          changed.wait(lock, woken);
        } else {
          changed.wait_until(lock, absl::ToChronoTime(until), woken);
        }
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
