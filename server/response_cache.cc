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
  std::optional<std::string> serialized = entries_.Lookup(key);
  if (!serialized) return std::nullopt;
  v1::CompileResponse response;
  if (!response.ParseFromString(*serialized)) return std::nullopt;
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
  const int64_t bytes = static_cast<int64_t>(serialized.size());
  entries_.Insert(key, std::move(serialized), bytes);
}

}  // namespace ordo::server
