#ifndef ORDO_SERVER_CACHE_REDIS_SCHEDULE_CACHE_H_
#define ORDO_SERVER_CACHE_REDIS_SCHEDULE_CACHE_H_

#include <memory>
#include <string>

#include "absl/base/thread_annotations.h"
#include "absl/status/statusor.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "core/cache/schedule_cache.h"

struct redisContext;

namespace ordo::server {

// A ScheduleCache in Redis, shared by every front server pointing at it.
// Entries are ordo.v1.CachedPartSchedule messages under "<prefix><key>",
// written with SET ... EX ttl.
//
// Failure model: every command runs under a command timeout on one
// connection (mutex-serialised). An I/O error drops the connection; the
// next call reconnects, but not more often than `reconnect_interval`, so a
// dead Redis costs one failed connect per interval, not a timeout per
// lookup. Errors come back as statuses (UNAVAILABLE); the compile path
// counts them and treats the part as a miss. Entries that do not decode or
// were stored under another key come back as DATA_LOSS; entries that decode
// are still re-checked against the part by the caller.
// Thread-safe.
class RedisScheduleCache final : public ScheduleCache {
 public:
  struct Options {
    std::string host = "127.0.0.1";
    int port = 6379;
    int db = 0;
    absl::Duration connect_timeout = absl::Milliseconds(250);
    absl::Duration command_timeout = absl::Milliseconds(250);
    absl::Duration reconnect_interval = absl::Seconds(1);
    // Expiry of entries; zero keeps them forever.
    absl::Duration ttl = absl::Hours(24 * 7);
    std::string key_prefix = "ordo:part:";
  };

  // Parses "redis://host:port[/db]" (port defaults to 6379, db to 0) into
  // `options` (other fields kept). INVALID_ARGUMENT when malformed.
  static absl::Status ParseUrl(absl::string_view url, Options& options);

  // Does not connect yet: a Redis that is down at start is a cache that
  // misses, not a server that fails.
  explicit RedisScheduleCache(Options options);
  ~RedisScheduleCache() override;
  RedisScheduleCache(const RedisScheduleCache&) = delete;
  RedisScheduleCache& operator=(const RedisScheduleCache&) = delete;

  absl::StatusOr<std::optional<CachedSchedule>> Lookup(absl::string_view key) override;
  absl::Status Insert(absl::string_view key, const CachedSchedule& entry) override;
  absl::string_view kind() const override { return "redis"; }

 private:
  absl::Status EnsureConnectedLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void DisconnectLocked() ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);

  const Options options_;
  absl::Mutex mu_;
  redisContext* context_ ABSL_GUARDED_BY(mu_) = nullptr;
  absl::Time last_connect_attempt_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

}  // namespace ordo::server

#endif  // ORDO_SERVER_CACHE_REDIS_SCHEDULE_CACHE_H_
