#include "server/cache/redis_schedule_cache.h"

#include <sys/time.h>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/strip.h"
#include "hiredis/hiredis.h"
#include "ordo/v1/schedule.pb.h"
#include "rpc/memory_model_proto.h"

namespace ordo::server {
namespace {


// Frees a reply on every path.
struct ReplyDeleter {
  void operator()(redisReply* reply) const { freeReplyObject(reply); }
};
using Reply = std::unique_ptr<redisReply, ReplyDeleter>;

}  // namespace

absl::Status RedisScheduleCache::ParseUrl(absl::string_view url, Options& options) {
  absl::string_view rest = url;
  if (!absl::ConsumePrefix(&rest, "redis://")) {
    return absl::InvalidArgumentError(
        absl::StrCat("redis url \"", url, "\": must start with redis://"));
  }
  absl::string_view db;
  if (size_t slash = rest.find('/'); slash != absl::string_view::npos) {
    db = rest.substr(slash + 1);
    rest = rest.substr(0, slash);
  }
  absl::string_view host = rest;
  int port = 6379;
  if (size_t colon = rest.rfind(':'); colon != absl::string_view::npos) {
    host = rest.substr(0, colon);
    if (!absl::SimpleAtoi(rest.substr(colon + 1), &port) || port <= 0 || port > 65535) {
      return absl::InvalidArgumentError(absl::StrCat("redis url \"", url, "\": bad port"));
    }
  }
  int db_number = 0;
  if (!db.empty() && (!absl::SimpleAtoi(db, &db_number) || db_number < 0)) {
    return absl::InvalidArgumentError(absl::StrCat("redis url \"", url, "\": bad db"));
  }
  if (host.empty()) {
    return absl::InvalidArgumentError(absl::StrCat("redis url \"", url, "\": no host"));
  }
  options.host = std::string(host);
  options.port = port;
  options.db = db_number;
  return absl::OkStatus();
}

RedisScheduleCache::RedisScheduleCache(Options options) : options_(std::move(options)) {}

RedisScheduleCache::~RedisScheduleCache() {
  absl::MutexLock lock(&mu_);
  DisconnectLocked();
}

void RedisScheduleCache::DisconnectLocked() {
  if (context_ != nullptr) redisFree(context_);
  context_ = nullptr;
}

absl::Status RedisScheduleCache::EnsureConnectedLocked() {
  if (context_ != nullptr) return absl::OkStatus();
  const absl::Time now = absl::Now();
  if (now - last_connect_attempt_ < options_.reconnect_interval) {
    return absl::UnavailableError("redis: not connected (waiting to reconnect)");
  }
  last_connect_attempt_ = now;
  redisContext* context = redisConnectWithTimeout(options_.host.c_str(), options_.port,
                                                  absl::ToTimeval(options_.connect_timeout));
  if (context == nullptr || context->err != 0) {
    std::string error = context != nullptr ? context->errstr : "out of memory";
    if (context != nullptr) redisFree(context);
    return absl::UnavailableError(absl::StrCat("redis: connect to ", options_.host, ":",
                                               options_.port, ": ", error));
  }
  redisSetTimeout(context, absl::ToTimeval(options_.command_timeout));
  if (options_.db != 0) {
    Reply reply(static_cast<redisReply*>(redisCommand(context, "SELECT %d", options_.db)));
    if (reply == nullptr || reply->type == REDIS_REPLY_ERROR) {
      redisFree(context);
      return absl::UnavailableError(absl::StrCat("redis: SELECT ", options_.db, " failed"));
    }
  }
  context_ = context;
  return absl::OkStatus();
}

absl::StatusOr<std::optional<CachedSchedule>> RedisScheduleCache::Lookup(absl::string_view key) {
  const std::string redis_key = absl::StrCat(options_.key_prefix, key);
  std::string value;
  {
    absl::MutexLock lock(&mu_);
    if (absl::Status s = EnsureConnectedLocked(); !s.ok()) return s;
    Reply reply(static_cast<redisReply*>(
        redisCommand(context_, "GET %b", redis_key.data(), redis_key.size())));
    if (reply == nullptr) {
      std::string error = context_->errstr;
      DisconnectLocked();
      return absl::UnavailableError(absl::StrCat("redis: GET: ", error));
    }
    if (reply->type == REDIS_REPLY_NIL) return std::optional<CachedSchedule>();
    if (reply->type != REDIS_REPLY_STRING) {
      return absl::UnavailableError(absl::StrCat("redis: GET: unexpected reply type ",
                                                 reply->type));
    }
    value.assign(reply->str, reply->len);
  }
  v1::CachedPartSchedule proto;
  if (!proto.ParseFromString(value) || proto.key() != key || proto.peak_units() < 0) {
    return absl::DataLossError(absl::StrCat("redis: entry ", key, " does not decode"));
  }
  CachedSchedule entry;
  entry.order.assign(proto.order().begin(), proto.order().end());
  entry.peak_units = proto.peak_units();
  entry.lower_bound_units = proto.lower_bound_units();
  entry.status = rpc::ScheduleStatusFromProto(proto.status());
  entry.algorithm = proto.algorithm();
  entry.time_limit = rpc::DurationFromProto(proto.time_limit());
  return std::optional<CachedSchedule>(std::move(entry));
}

absl::Status RedisScheduleCache::Insert(absl::string_view key, const CachedSchedule& entry) {
  v1::CachedPartSchedule proto;
  proto.set_key(std::string(key));
  proto.mutable_order()->Add(entry.order.begin(), entry.order.end());
  proto.set_peak_units(entry.peak_units);
  proto.set_lower_bound_units(entry.lower_bound_units);
  proto.set_status(rpc::ScheduleStatusToProto(entry.status));
  proto.set_algorithm(entry.algorithm);
  *proto.mutable_time_limit() = rpc::DurationToProto(entry.time_limit);
  const std::string value = proto.SerializeAsString();
  const std::string redis_key = absl::StrCat(options_.key_prefix, key);

  absl::MutexLock lock(&mu_);
  if (absl::Status s = EnsureConnectedLocked(); !s.ok()) return s;
  const int64_t ttl_seconds = absl::ToInt64Seconds(options_.ttl);
  Reply reply(static_cast<redisReply*>(
      ttl_seconds > 0
          ? redisCommand(context_, "SET %b %b EX %lld", redis_key.data(), redis_key.size(),
                         value.data(), value.size(), static_cast<long long>(ttl_seconds))
          : redisCommand(context_, "SET %b %b", redis_key.data(), redis_key.size(),
                         value.data(), value.size())));
  if (reply == nullptr) {
    std::string error = context_->errstr;
    DisconnectLocked();
    return absl::UnavailableError(absl::StrCat("redis: SET: ", error));
  }
  if (reply->type == REDIS_REPLY_ERROR) {
    return absl::UnavailableError(absl::StrCat("redis: SET: ", std::string(reply->str, reply->len)));
  }
  return absl::OkStatus();
}

}  // namespace ordo::server
