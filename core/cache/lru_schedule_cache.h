#ifndef ORDO_CORE_CACHE_LRU_SCHEDULE_CACHE_H_
#define ORDO_CORE_CACHE_LRU_SCHEDULE_CACHE_H_

#include <cstdint>
#include <functional>
#include <list>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "core/cache/schedule_cache.h"

namespace ordo {

// An in-memory ScheduleCache that evicts the least recently used entries
// once their total charge exceeds a byte budget. The charge of an entry is
// an estimate of its memory: key, order (4 bytes per op), algorithm name and
// a fixed overhead. Lookup and Insert are O(1) plus copying the entry. An
// entry bigger than the whole budget is not stored. Thread-safe (one mutex).
class LruScheduleCache final : public ScheduleCache {
 public:
  // Called with the key of each entry evicted to make room (not of one
  // replaced under its own key, nor of one too big to store), after the
  // cache's lock is released, on the inserting thread: it may be slow
  // (the server's takes a metrics mutex) or call back into the cache
  // without holding up or deadlocking other callers. For metrics (the
  // server counts evictions by the key's namespace).
  using EvictionListener = std::function<void(absl::string_view key)>;

  explicit LruScheduleCache(int64_t capacity_bytes, EvictionListener on_evict = nullptr);
  LruScheduleCache(const LruScheduleCache&) = delete;
  LruScheduleCache& operator=(const LruScheduleCache&) = delete;

  absl::StatusOr<std::optional<CachedSchedule>> Lookup(absl::string_view key) override;
  absl::Status Insert(absl::string_view key, const CachedSchedule& entry) override;
  absl::string_view kind() const override { return "memory"; }

  int64_t size() const;
  int64_t charge_bytes() const;

 private:
  struct Entry {
    std::string key;
    CachedSchedule schedule;
    int64_t charge = 0;
  };
  // Drops least recently used entries until the charge fits; returns
  // their keys (moved out, not copied) for the listener.
  std::vector<std::string> EvictLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const int64_t capacity_bytes_;
  const EvictionListener on_evict_;
  mutable absl::Mutex mu_;
  // Most recently used first.
  std::list<Entry> entries_ ABSL_GUARDED_BY(mu_);
  absl::flat_hash_map<std::string, std::list<Entry>::iterator> index_ ABSL_GUARDED_BY(mu_);
  int64_t charge_bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace ordo

#endif  // ORDO_CORE_CACHE_LRU_SCHEDULE_CACHE_H_
