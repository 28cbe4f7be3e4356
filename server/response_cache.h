#ifndef ORDO_SERVER_RESPONSE_CACHE_H_
#define ORDO_SERVER_RESPONSE_CACHE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <utility>

#include "google/protobuf/message_lite.h"
#include "ordo/v1/compiler_service.pb.h"
#include "server/byte_bounded_lru.h"

namespace ordo::server {

// The identity of a Compile request: its deterministic serialization (map
// fields in order), so equal requests give equal keys. Covers every option,
// rewriting's included.
std::string CompileRequestKey(const v1::CompileRequest& request);

// The identity of an Estimate request, in a key space of its own: a zero
// byte (no serialized message starts with one: field number 0 is not a
// valid tag), a tag, then the request's deterministic serialization. So an
// Estimate and a Compile of the same bytes never share an entry.
std::string EstimateRequestKey(const v1::EstimateRequest& request);

// Whole Compile and Estimate responses by request, in this process's
// memory: the fast path for NAS loops and build pipelines that send the
// same model again. A hit skips import, partitioning, the part cache and
// arena planning.
//
// Keyed by the request's deterministic serialization, compared in full (no
// hash can collide into a wrong answer; the key covers every option,
// rewriting's included). Only optimal Compile responses whose rewrite
// search (if any) finished within its time limit are stored: they do not
// depend on the time limit or deadline of the call that made them, and were
// verified by the simulator when they were made (entries never leave this
// process, so nothing untrusted is read back). An Estimate answer depends
// on the part cache as well: one that found parts missing is stored with
// the part-cache generation it was computed at (the caller's count of
// compiles that may have stored parts) and returned only while the
// generation is unchanged. LRU, bounded by the bytes of keys plus values; a
// request or response larger than a quarter of the budget is not stored.
// Thread-safe.
class ResponseCache {
 public:
  explicit ResponseCache(int64_t max_bytes, CacheEvictionListener on_evict = nullptr)
      : entries_(max_bytes, std::move(on_evict)) {}
  ResponseCache(const ResponseCache&) = delete;
  ResponseCache& operator=(const ResponseCache&) = delete;

  // The answer stored under `key` (a CompileRequestKey), if any.
  std::optional<v1::CompileResponse> Lookup(const std::string& key);
  void Insert(const std::string& key, const v1::CompileResponse& response);

  // The Estimate answer stored under `key` (an EstimateRequestKey) that
  // still holds at part-cache generation `parts_generation`, if any.
  std::optional<v1::EstimateResponse> LookupEstimate(const std::string& key,
                                                     uint64_t parts_generation);
  // Stores an answer computed at `parts_generation`; nullopt: the answer
  // does not change with the part cache (every part was cached, or there
  // is no part cache).
  void InsertEstimate(const std::string& key, const v1::EstimateResponse& response,
                      std::optional<uint64_t> parts_generation);

 private:
  struct Entry {
    std::string response;  // serialized
    // Set: the answer holds only at this part-cache generation.
    std::optional<uint64_t> parts_generation;
  };
  template <typename Response>
  std::optional<Response> LookupAs(const std::string& key, uint64_t parts_generation);
  void Store(const std::string& key, const google::protobuf::MessageLite& response,
             std::optional<uint64_t> parts_generation);

  ByteBoundedLru<Entry> entries_;
};

}  // namespace ordo::server

#endif  // ORDO_SERVER_RESPONSE_CACHE_H_
