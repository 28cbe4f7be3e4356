#ifndef ORDO_CORE_CACHE_SCHEDULE_CACHE_H_
#define ORDO_CORE_CACHE_SCHEDULE_CACHE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "core/schedule/scheduler.h"

namespace ordo {

// A schedule of one canonical part (see PartKey). Sizes are in the
// canonical part's units (bytes / PartKey::scale).
struct CachedSchedule {
  // Part op ids in execution order.
  std::vector<int32_t> order;
  int64_t peak_units = 0;
  int64_t lower_bound_units = 0;
  ScheduleStatus status = ScheduleStatus::kHeuristic;
  std::string algorithm;
  // The search budget it was computed with. A non-optimal entry serves only
  // requests whose budget is at most this (a bigger budget may do better).
  absl::Duration time_limit = absl::ZeroDuration();
};

// Stored part schedules by canonical key: leveldb's Env idea, so the compile
// path runs against memory (LruScheduleCache), Redis (server/cache) or a fake.
//
// Entries are hints, not truths: callers re-check an entry against the part
// (valid order, re-simulated peak) before using it, so an implementation may
// lose, evict or even corrupt entries without making a result wrong.
// Implementations are thread-safe.
class ScheduleCache {
 public:
  virtual ~ScheduleCache() = default;
  // The entry under `key`, nullopt when absent. An error means the cache
  // could not answer (unreachable, undecodable entry); callers count it and
  // treat the part as a miss.
  virtual absl::StatusOr<std::optional<CachedSchedule>> Lookup(absl::string_view key) = 0;
  // Stores `entry` under `key`, replacing any entry. Errors are for counting
  // only; a failed insert loses nothing but time.
  virtual absl::Status Insert(absl::string_view key, const CachedSchedule& entry) = 0;
  // "memory", "redis", ... for GetInfo and logs.
  virtual absl::string_view kind() const = 0;
};

}  // namespace ordo

#endif  // ORDO_CORE_CACHE_SCHEDULE_CACHE_H_
