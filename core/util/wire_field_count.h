#ifndef ORDO_CORE_UTIL_WIRE_FIELD_COUNT_H_
#define ORDO_CORE_UTIL_WIRE_FIELD_COUNT_H_

// Counts occurrences of a field in serialized protobuf bytes without
// parsing them into messages, so that an importer can refuse a model with a
// million ops (RESOURCE_EXHAUSTED) in milliseconds, before protobuf has
// allocated a message per op (about 3 s and 440 MB for a million ONNX
// nodes on the build machine).
//
// A scan of the wire format (tag varint; skip varint, fixed64,
// length-delimited, fixed32 payloads), O(bytes of the scanned messages),
// no allocation, no recursion. It does not validate: bytes that do not scan
// give nullopt, and the caller's full parse then reports them properly.
// Groups (wire types 3/4, deprecated) are not supported (nullopt).

#include <cstddef>
#include <cstdint>
#include <optional>

#include "absl/strings/string_view.h"

namespace ordo {
namespace wire_internal {

inline bool ReadVarint(absl::string_view bytes, size_t& pos, uint64_t& value) {
  value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos >= bytes.size()) return false;
    const uint8_t b = static_cast<uint8_t>(bytes[pos++]);
    value |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

// Calls visit(field_number, payload) for each length-delimited field of the
// message in `bytes`; false when the bytes do not scan.
template <typename Visit>
bool ScanFields(absl::string_view bytes, Visit visit) {
  size_t pos = 0;
  while (pos < bytes.size()) {
    uint64_t tag;
    if (!ReadVarint(bytes, pos, tag)) return false;
    const uint64_t field = tag >> 3;
    uint64_t skip = 0;
    switch (tag & 7) {
      case 0: {
        uint64_t ignored;
        if (!ReadVarint(bytes, pos, ignored)) return false;
        break;
      }
      case 1:
        skip = 8;
        break;
      case 2: {
        uint64_t length;
        if (!ReadVarint(bytes, pos, length) || length > bytes.size() - pos) return false;
        visit(field, bytes.substr(pos, length));
        skip = length;
        break;
      }
      case 5:
        skip = 4;
        break;
      default:
        return false;
    }
    if (skip > bytes.size() - pos) return false;
    pos += skip;
  }
  return true;
}

}  // namespace wire_internal

// How many times length-delimited field `field` occurs at the top level of
// the message in `bytes` (a repeated message or string field's length).
inline std::optional<int64_t> CountWireField(absl::string_view bytes, uint64_t field) {
  int64_t count = 0;
  if (!wire_internal::ScanFields(bytes, [&](uint64_t f, absl::string_view) {
        if (f == field) ++count;
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
  bool inner_ok = true;
  if (!wire_internal::ScanFields(bytes,
                                 [&](uint64_t f, absl::string_view payload) {
                                   if (f != outer || !inner_ok) return;
                                   std::optional<int64_t> n = CountWireField(payload, inner);
                                   if (n) {
                                     count += *n;
                                   } else {
                                     inner_ok = false;
                                   }
                                 }) ||
      !inner_ok) {
    return std::nullopt;
  }
  return count;
}

}  // namespace ordo

#endif  // ORDO_CORE_UTIL_WIRE_FIELD_COUNT_H_
