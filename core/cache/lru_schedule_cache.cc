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
  EvictLocked();
  return absl::OkStatus();
}

void LruScheduleCache::EvictLocked() {
  while (charge_bytes_ > capacity_bytes_ && !entries_.empty()) {
    if (on_evict_) on_evict_(entries_.back().key);
    charge_bytes_ -= entries_.back().charge;
    index_.erase(entries_.back().key);
    entries_.pop_back();
  }
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
