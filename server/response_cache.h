#ifndef ORDO_SERVER_RESPONSE_CACHE_H_
#define ORDO_SERVER_RESPONSE_CACHE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "ordo/v1/compiler_service.pb.h"
#include "server/byte_bounded_lru.h"

namespace ordo::server {

// The identity of a Compile request: its deterministic serialization (map
// fields in order), so equal requests give equal keys. Covers every option,
// rewriting's included.
std::string CompileRequestKey(const v1::CompileRequest& request);

// Whole Compile responses by request, in this process's memory: the fast
// path for NAS loops and build pipelines that send the same model again.
// A hit skips import, partitioning, the part cache and arena planning.
//
// Keyed by the request's deterministic serialization, compared in full (no
// hash can collide into a wrong answer; the key covers every option,
// rewriting's included). Only optimal responses whose rewrite search (if
// any) finished within its time limit are stored: they do not depend on
// the time limit or deadline of the call that made them, and were verified by the simulator when
// they were made (entries never leave this process, so nothing untrusted is read back). LRU,
// bounded by the bytes of keys plus values; a request or response larger
// than a quarter of the budget is not stored. Thread-safe.
class ResponseCache {
 public:
  explicit ResponseCache(int64_t max_bytes, CacheEvictionListener on_evict = nullptr)
      : entries_(max_bytes, std::move(on_evict)) {}
  ResponseCache(const ResponseCache&) = delete;
  ResponseCache& operator=(const ResponseCache&) = delete;

  // The answer stored under `key` (a CompileRequestKey), if any.
  std::optional<v1::CompileResponse> Lookup(const std::string& key);
  void Insert(const std::string& key, const v1::CompileResponse& response);

 private:
  // Serialized responses.
  ByteBoundedLru<std::string> entries_;
};

}  // namespace ordo::server

#endif  // ORDO_SERVER_RESPONSE_CACHE_H_
