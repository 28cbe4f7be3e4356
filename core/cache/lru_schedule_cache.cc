#include "core/cache/lru_schedule_cache.h"

#include <utility>

namespace ordo {
namespace {

int64_t Charge(absl::string_view key, const CachedSchedule& entry) {
  constexpr int64_t kOverheadBytes = 128;  // list node, map slot, fields
  return kOverheadBytes + static_cast<int64_t>(key.size()) +
         static_cast<int64_t>(entry.algorithm.size()) +
         static_cast<int64_t>(entry.order.size() * sizeof(int32_t));
}

}  // namespace

LruScheduleCache::LruScheduleCache(int64_t capacity_bytes, EvictionListener on_evict)
    : capacity_bytes_(capacity_bytes), on_evict_(std::move(on_evict)) {}

absl::StatusOr<std::optional<CachedSchedule>> LruScheduleCache::Lookup(absl::string_view key) {
  absl::MutexLock lock(&mu_);
  auto it = index_.find(key);
  if (it == index_.end()) return std::optional<CachedSchedule>();
  entries_.splice(entries_.begin(), entries_, it->second);
  return std::optional<CachedSchedule>(it->second->schedule);
}

absl::Status LruScheduleCache::Insert(absl::string_view key, const CachedSchedule& entry) {
  const int64_t charge = Charge(key, entry);
  std::vector<std::string> evicted;
  {
    absl::MutexLock lock(&mu_);
    if (auto it = index_.find(key); it != index_.end()) {
      charge_bytes_ -= it->second->charge;
      entries_.erase(it->second);
      index_.erase(it);
    }
    if (charge > capacity_bytes_) return absl::OkStatus();
    entries_.push_front(Entry{std::string(key), entry, charge});
    index_[entries_.front().key] = entries_.begin();
    charge_bytes_ += charge;
    evicted = EvictLocked();
  }
  // Outside the lock: the server's listener takes the metrics' mutex and
  // may create a counter, which no other caller should wait behind.
  if (on_evict_) {
    for (const std::string& evicted_key : evicted) on_evict_(evicted_key);
  }
  return absl::OkStatus();
}

std::vector<std::string> LruScheduleCache::EvictLocked() {
  std::vector<std::string> evicted;
  while (charge_bytes_ > capacity_bytes_ && !entries_.empty()) {
    charge_bytes_ -= entries_.back().charge;
    index_.erase(entries_.back().key);
    if (on_evict_) evicted.push_back(std::move(entries_.back().key));
    entries_.pop_back();
  }
  return evicted;
}

int64_t LruScheduleCache::size() const {
  absl::MutexLock lock(&mu_);
  return static_cast<int64_t>(entries_.size());
}

int64_t LruScheduleCache::charge_bytes() const {
  absl::MutexLock lock(&mu_);
  return charge_bytes_;
}

}  // namespace ordo
