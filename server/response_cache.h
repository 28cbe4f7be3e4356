#ifndef ORDO_SERVER_RESPONSE_CACHE_H_
#define ORDO_SERVER_RESPONSE_CACHE_H_

#include <cstdint>
#include <list>
#include <optional>
#include <string>
#include <string_view>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "ordo/v1/compiler_service.pb.h"

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
  explicit ResponseCache(int64_t max_bytes) : max_bytes_(max_bytes) {}
  ResponseCache(const ResponseCache&) = delete;
  ResponseCache& operator=(const ResponseCache&) = delete;

  // The answer stored under `key` (a CompileRequestKey), if any.
  std::optional<v1::CompileResponse> Lookup(const std::string& key);
  void Insert(const std::string& key, const v1::CompileResponse& response);

 private:
  struct Entry {
    std::string key;
    std::string response;  // serialized
  };
  const int64_t max_bytes_;
  absl::Mutex mu_;
  std::list<Entry> lru_ ABSL_GUARDED_BY(mu_);  // most recent first
  absl::flat_hash_map<std::string_view, std::list<Entry>::iterator> index_ ABSL_GUARDED_BY(mu_);
  int64_t bytes_ ABSL_GUARDED_BY(mu_) = 0;
};

}  // namespace ordo::server

#endif  // ORDO_SERVER_RESPONSE_CACHE_H_
