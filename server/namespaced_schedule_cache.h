#ifndef ORDO_SERVER_NAMESPACED_SCHEDULE_CACHE_H_
#define ORDO_SERVER_NAMESPACED_SCHEDULE_CACHE_H_

#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/cache/schedule_cache.h"

namespace ordo::server {

// OK for a cache namespace a client or operator may choose: at most 64
// characters of [A-Za-z0-9._-] (empty: the shared namespace); else
// INVALID_ARGUMENT naming `what` (the flag or the metadata key).
absl::Status CheckCacheNamespace(absl::string_view cache_namespace, absl::string_view what);

// Another cache's entries under "ns:<namespace>/" + key, so tenants that
// share one cache (one Redis) never read each other's entries. A view for
// one call; `inner` must outlive it. Thread-safe if `inner` is.
class NamespacedScheduleCache final : public ScheduleCache {
 public:
  NamespacedScheduleCache(ScheduleCache& inner, absl::string_view cache_namespace)
      : inner_(inner), prefix_(NamespacePrefix(cache_namespace)) {}

  // The prefix of `cache_namespace`'s keys in every cache of the server.
  static std::string NamespacePrefix(absl::string_view cache_namespace);
  // The namespace of a key that starts with a NamespacePrefix; "" (the
  // shared one) for any other key.
  static absl::string_view NamespaceOfKey(absl::string_view key);

  absl::StatusOr<std::optional<CachedSchedule>> Lookup(absl::string_view key) override {
    return inner_.Lookup(prefix_ + std::string(key));
  }
  absl::Status Insert(absl::string_view key, const CachedSchedule& entry) override {
    return inner_.Insert(prefix_ + std::string(key), entry);
  }
  absl::string_view kind() const override { return inner_.kind(); }

 private:
  ScheduleCache& inner_;
  const std::string prefix_;
};

}  // namespace ordo::server

#endif  // ORDO_SERVER_NAMESPACED_SCHEDULE_CACHE_H_
