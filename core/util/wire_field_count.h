#ifndef ORDO_CORE_UTIL_WIRE_FIELD_COUNT_H_
#define ORDO_CORE_UTIL_WIRE_FIELD_COUNT_H_

// Counts occurrences of a field in serialized protobuf bytes without
// parsing them into messages, so that an importer can refuse a model with a
// million ops (RESOURCE_EXHAUSTED) in milliseconds, before it has built
// anything per op (a protobuf message per ONNX node took about 3 s and
// 440 MB for a million nodes on the build machine).
//
// Read with wire_reader.h, by protobuf's rules, O(bytes of the scanned
// messages), no allocation. It does not validate what it skips: bytes that
// do not read give nullopt, and the caller's full parse then reports them.

#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"
#include "core/util/wire_reader.h"

namespace ordo {

// How many times length-delimited field `field` occurs at the top level of
// the message in `bytes` (a repeated message or string field's length).
inline std::optional<int64_t> CountWireField(absl::string_view bytes, uint64_t field) {
  int64_t count = 0;
  if (!wire::ForEachField(bytes, [&](const wire::Field& f) {
        count += wire::Is(f, field, wire::kLengthDelimited);
        return true;
      })) {
    return std::nullopt;
  }
  return count;
}

// How many times `inner` occurs inside every occurrence of the message field
// `outer` (protobuf merges repeated occurrences of a singular message field,
// so their repeated fields add up): ModelProto.graph (7) -> GraphProto.node
// (1) counts an ONNX model's nodes.
inline std::optional<int64_t> CountNestedWireField(absl::string_view bytes, uint64_t outer,
                                                   uint64_t inner) {
  int64_t count = 0;
  if (!wire::ForEachField(bytes, [&](const wire::Field& f) {
        if (!wire::Is(f, outer, wire::kLengthDelimited)) return true;
        const std::optional<int64_t> n = CountWireField(f.payload, inner);
        if (n) count += *n;
        return n.has_value();
      })) {
    return std::nullopt;
  }
  return count;
}

}  // namespace ordo

#endif  // ORDO_CORE_UTIL_WIRE_FIELD_COUNT_H_
