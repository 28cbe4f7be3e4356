#include "server/response_cache.h"

#include <utility>

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace ordo::server {
namespace {

// Appends the deterministic serialization of `request` to `key`.
void AppendDeterministic(const google::protobuf::MessageLite& request, std::string& key) {
  google::protobuf::io::StringOutputStream stream(&key);
  google::protobuf::io::CodedOutputStream coded(&stream);
  coded.SetSerializationDeterministic(true);
  request.SerializeToCodedStream(&coded);
  coded.Trim();
}

}  // namespace

std::string CompileRequestKey(const v1::CompileRequest& request) {
  std::string key;
  AppendDeterministic(request, key);
  return key;
}

std::string EstimateRequestKey(const v1::EstimateRequest& request) {
  std::string key("\0estimate:", 10);
  AppendDeterministic(request, key);
  return key;
}

template <typename Response>
std::optional<Response> ResponseCache::LookupAs(const std::string& key,
                                                uint64_t parts_generation) {
  std::optional<Entry> entry = entries_.Lookup(key);
  if (!entry) return std::nullopt;
  if (entry->parts_generation && *entry->parts_generation != parts_generation) {
    // Stale for good (generations only grow): make room for the answer
    // this call will store.
    entries_.Erase(key);
    return std::nullopt;
  }
  Response response;
  if (!response.ParseFromString(entry->response)) return std::nullopt;
  return response;
}

void ResponseCache::Store(const std::string& key, const google::protobuf::MessageLite& response,
                          std::optional<uint64_t> parts_generation) {
  if (key.empty()) return;
  std::string serialized = response.SerializeAsString();
  const int64_t bytes = static_cast<int64_t>(serialized.size());
  entries_.Insert(key, Entry{std::move(serialized), parts_generation}, bytes);
}

std::optional<v1::CompileResponse> ResponseCache::Lookup(const std::string& key) {
  return LookupAs<v1::CompileResponse>(key, 0);
}

void ResponseCache::Insert(const std::string& key, const v1::CompileResponse& response) {
  // A rewrite search cut short by its time limit could end elsewhere with
  // more time: not a function of the request.
  if (response.status() != v1::SCHEDULE_STATUS_OPTIMAL || response.rewrite().time_limit_hit()) {
    return;
  }
  Store(key, response, std::nullopt);
}

std::optional<v1::EstimateResponse> ResponseCache::LookupEstimate(const std::string& key,
                                                                  uint64_t parts_generation) {
  return LookupAs<v1::EstimateResponse>(key, parts_generation);
}

void ResponseCache::InsertEstimate(const std::string& key, const v1::EstimateResponse& response,
                                   std::optional<uint64_t> parts_generation) {
  Store(key, response, parts_generation);
}

}  // namespace ordo::server
