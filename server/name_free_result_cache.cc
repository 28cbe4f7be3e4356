#include "server/name_free_result_cache.h"

#include <utility>

#include "google/protobuf/io/coded_stream.h"
#include "google/protobuf/io/zero_copy_stream_impl_lite.h"

namespace ordo::server {
namespace {

void AppendDeterministic(const google::protobuf::Message& message, std::string& out) {
  std::string bytes;
  google::protobuf::io::StringOutputStream stream(&bytes);
  {
    google::protobuf::io::CodedOutputStream coded(&stream);
    coded.SetSerializationDeterministic(true);
    message.SerializeToCodedStream(&coded);
  }
  out += std::to_string(bytes.size());
  out += ':';
  out += bytes;
}

// What an entry holds, roughly: the vectors that grow with the graph.
int64_t EstimatedBytes(const CompileResult& result) {
  int64_t bytes = static_cast<int64_t>(sizeof(CompileResult));
  bytes += static_cast<int64_t>(result.schedule.size() * sizeof(OpId));
  bytes += static_cast<int64_t>(result.arena.tensors.size() * sizeof(TensorPlacement));
  bytes += static_cast<int64_t>(result.parts.size() * (sizeof(PartStats) + 32));
  if (result.traffic) bytes += static_cast<int64_t>(result.traffic->resident_bytes.size() * 8);
  if (result.model_order_traffic) {
    bytes += static_cast<int64_t>(result.model_order_traffic->resident_bytes.size() * 8);
  }
  return bytes;
}

}  // namespace

std::string NameFreeRequestKey(const v1::CompileRequest& request, const CanonicalGraph& graph) {
  std::string key;
  key.reserve(graph.form.size() + 64);
  // The model's format decides how it was imported (an ONNX model and a
  // native graph of one form are the same problem, but keep them apart:
  // their responses differ in reordered models).
  key += std::to_string(static_cast<int>(request.model_case()));
  key += ':';
  AppendDeterministic(request.device(), key);
  AppendDeterministic(request.options(), key);
  key += graph.form;
  return key;
}

std::shared_ptr<const CompileResult> NameFreeResultCache::Lookup(const std::string& key) {
  return entries_.Lookup(key).value_or(nullptr);
}

void NameFreeResultCache::Insert(const std::string& key, CompileResult canonical_result) {
  const int64_t bytes = EstimatedBytes(canonical_result);
  entries_.Insert(key, std::make_shared<const CompileResult>(std::move(canonical_result)), bytes);
}

}  // namespace ordo::server
