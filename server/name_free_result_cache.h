#ifndef ORDO_SERVER_NAME_FREE_RESULT_CACHE_H_
#define ORDO_SERVER_NAME_FREE_RESULT_CACHE_H_

#include <cstdint>
#include <memory>
#include <string>
#include <utility>

#include "core/compile/compile.h"
#include "core/graph/canonical_graph.h"
#include "ordo/v1/compiler_service.pb.h"
#include "server/byte_bounded_lru.h"

namespace ordo::server {

// The name-free identity of a Compile request: the deterministic
// serialization of its device and options, then the canonical form of its
// imported graph (CanonicalizeGraph). Requests whose models differ only in
// names (a re-export by another tool) get equal keys.
std::string NameFreeRequestKey(const v1::CompileRequest& request, const CanonicalGraph& graph);

// Whole compile results by NameFreeRequestKey, in canonical numbering
// (CanonicalizeResult), in this process's memory: the second level of the
// response cache, for NAS streams that re-send a candidate under other
// names. Entries are shared immutable CompileResults, so a hit copies no
// protobuf and parses nothing; the caller maps one to the request's graph
// and re-simulates it there (ResultForGraph) before answering.
//
// Only optimal results without rewriting or pools are stored (the caller
// checks): like the response cache's, they do not depend on the time
// limit of the call that made them. Keys are compared in full. LRU, bounded
// by an estimate of the bytes of keys plus results; an entry larger than a
// quarter of the budget is not stored. Thread-safe.
class NameFreeResultCache {
 public:
  explicit NameFreeResultCache(int64_t max_bytes, CacheEvictionListener on_evict = nullptr)
      : entries_(max_bytes, std::move(on_evict)) {}
  NameFreeResultCache(const NameFreeResultCache&) = delete;
  NameFreeResultCache& operator=(const NameFreeResultCache&) = delete;

  std::shared_ptr<const CompileResult> Lookup(const std::string& key);
  void Insert(const std::string& key, CompileResult canonical_result);

 private:
  ByteBoundedLru<std::shared_ptr<const CompileResult>> entries_;
};

}  // namespace ordo::server

#endif  // ORDO_SERVER_NAME_FREE_RESULT_CACHE_H_
