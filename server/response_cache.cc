#include "server/response_cache.h"

#include <utility>

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace ordo::server {

std::string CompileRequestKey(const v1::CompileRequest& request) {
  std::string key;
  google::protobuf::io::StringOutputStream stream(&key);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  request.SerializeToCodedStream(&coded);
  coded.Trim();
  return key;
}

std::optional<v1::CompileResponse> ResponseCache::Lookup(const std::string& key) {
  if (max_bytes_ <= 0) return std::nullopt;
  std::string serialized;
  {
    absl::MutexLock lock(&mu_);
    auto it = index_.find(key);
    if (it == index_.end()) return std::nullopt;
    lru_.splice(lru_.begin(), lru_, it->second);
    serialized = it->second->response;
  }
  v1::CompileResponse response;
  if (!response.ParseFromString(serialized)) return std::nullopt;
  return response;
}

void ResponseCache::Insert(const std::string& key, const v1::CompileResponse& response) {
  // A rewrite search cut short by its time limit could end elsewhere with
  // more time: not a function of the request.
  if (key.empty() || response.status() != v1::SCHEDULE_STATUS_OPTIMAL ||
      response.rewrite().time_limit_hit()) {
    return;
  }
  std::string serialized = response.SerializeAsString();
  const int64_t size = static_cast<int64_t>(key.size() + serialized.size());
  if (size > max_bytes_ / 4) return;
  absl::MutexLock lock(&mu_);
  if (index_.contains(key)) return;
  lru_.push_front({key, std::move(serialized)});
  index_.emplace(lru_.front().key, lru_.begin());
  bytes_ += size;
  while (bytes_ > max_bytes_ && !lru_.empty()) {
    Entry& last = lru_.back();
    bytes_ -= static_cast<int64_t>(last.key.size() + last.response.size());
    index_.erase(last.key);
    lru_.pop_back();
  }
}

}  // namespace ordo::server
