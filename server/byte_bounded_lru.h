#ifndef ORDO_SERVER_BYTE_BOUNDED_LRU_H_
#define ORDO_SERVER_BYTE_BOUNDED_LRU_H_

#include <cstdint>
#include <functional>
#include <list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/strings/string_view.h"
#include "absl/synchronization/mutex.h"

namespace ordo::server {

// Called with the key of each entry a ByteBoundedLru evicts to make room
// (for metrics), on the inserting thread after the cache's lock is
// released: it may be slow (the server's takes a metrics mutex) or use the
// cache without holding up other callers.
using CacheEvictionListener = std::function<void(absl::string_view key)>;

// A map from string keys to values that keeps the most recently used
// entries within a byte budget (each entry's size given by the caller, its
// key counted as well); an entry larger than a quarter of the budget is not
// kept. Keys are compared in full. The store of the server's whole-answer
// caches (ResponseCache, NameFreeResultCache). Thread-safe; Lookup copies
// the value out, so cheap-to-copy values (strings, shared pointers) suit it.
template <typename Value>
class ByteBoundedLru {
 public:
  explicit ByteBoundedLru(int64_t max_bytes, CacheEvictionListener on_evict = nullptr)
      : max_bytes_(max_bytes), on_evict_(std::move(on_evict)) {}
  ByteBoundedLru(const ByteBoundedLru&) = delete;
  ByteBoundedLru& operator=(const ByteBoundedLru&) = delete;

  int64_t max_bytes() const { return max_bytes_; }

  std::optional<Value> Lookup(std::string_view key) {
    if (max_bytes_ <= 0) return std::nullopt;
    absl::MutexLock lock(&mu_);
    auto it = index_.find(IndexKey(key));
    if (it == index_.end()) return std::nullopt;
    lru_.splice(lru_.begin(), lru_, it->second);
    return it->second->value;
  }

  // Drops the entry under `key`, if any (not an eviction: no listener
  // call).
  void Erase(std::string_view key) {
    absl::MutexLock lock(&mu_);
    auto it = index_.find(IndexKey(key));
    if (it == index_.end()) return;
    bytes_ -= it->second->bytes;
    const auto entry = it->second;
    index_.erase(it);
    lru_.erase(entry);
  }

  // Keeps the first value stored under a key.
  void Insert(std::string key, Value value, int64_t value_bytes) {
    const int64_t size = static_cast<int64_t>(key.size()) + value_bytes;
    if (key.empty() || size > max_bytes_ / 4) return;
    std::vector<std::string> evicted;  // keys moved out, not copied
    {
      absl::MutexLock lock(&mu_);
      if (index_.contains(IndexKey(key))) return;
      lru_.push_front({std::move(key), std::move(value), size});
      index_.emplace(IndexKey(lru_.front().key), lru_.begin());
      bytes_ += size;
      while (bytes_ > max_bytes_ && !lru_.empty()) {
        Entry& last = lru_.back();
        bytes_ -= last.bytes;
        index_.erase(IndexKey(last.key));  // before the key it views moves
        if (on_evict_) evicted.push_back(std::move(last.key));
        lru_.pop_back();
      }
    }
    for (const std::string& evicted_key : evicted) on_evict_(evicted_key);
  }

 private:
  struct Entry {
    std::string key;
    Value value;
    int64_t bytes = 0;
  };
  const int64_t max_bytes_;
  const CacheEvictionListener on_evict_;
  absl::Mutex mu_;
  std::list<Entry> lru_ ABSL_GUARDED_BY(mu_);  // most recent first
  // Keyed by absl::string_view, not std::string_view: this abseil hashes
  // the latter through std::hash, 3x slower on a DARTS candidate's 37 KB
  // request key, which a miss hashes on every lookup and insert (perf:
  // the largest share of what a miss paid the whole-answer caches,
  // docs/nas-log.md, "The cache per kind of repeat").
  static absl::string_view IndexKey(std::string_view key) { return {key.data(), key.size()}; }
  absl::flat_hash_map<absl::string_view, typename std::list<Entry>::iterator> index_
      ABSL_GUARDED_BY(mu_);
  int64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace ordo::server

#endif  // ORDO_SERVER_BYTE_BOUNDED_LRU_H_
