#ifndef ORDO_CORE_UTIL_WIRE_READER_H_
#define ORDO_CORE_UTIL_WIRE_READER_H_

// Reads serialized protobuf bytes field by field, without generated
// messages, by protobuf's own rules: a tag of up to 5 bytes read as 32 bits,
// field number 0 and wire types 6 and 7 refused, groups skipped whole (up to
// protobuf's nesting limit), a length or fixed value past the end refused.
// What the ONNX importer reads the model with (core/onnx/model_view.h) and
// what the importers count nodes and ops with before they build anything
// (wire_field_count.h). No allocation; O(bytes read).

#include <cstddef>
#include <cstdint>
#include <cstring>

#include "absl/base/attributes.h"
#include "absl/strings/string_view.h"

namespace ordo::wire {

enum WireType : uint32_t {
  kVarint = 0,
  kFixed64 = 1,
  kLengthDelimited = 2,
  kStartGroup = 3,
  kEndGroup = 4,
  kFixed32 = 5
};

// One field of a message: `value` for varint and fixed types, `payload` for
// length-delimited ones.
struct Field {
  uint64_t number = 0;
  uint32_t wire_type = 0;
  uint64_t value = 0;
  absl::string_view payload;
};

// protobuf's default recursion limit: a group nested deeper does not parse.
inline constexpr int kMaxGroupDepth = 100;

// A varint of at most 10 bytes, the one-byte case (tags, small ints, short
// lengths: most of a model) first.
inline bool ReadVarint(absl::string_view bytes, size_t& pos, uint64_t& value) {
  if (pos < bytes.size() && static_cast<uint8_t>(bytes[pos]) < 0x80) {
    value = static_cast<uint8_t>(bytes[pos++]);
    return true;
  }
  value = 0;
  for (int shift = 0; shift < 64; shift += 7) {
    if (pos >= bytes.size()) return false;
    const uint8_t b = static_cast<uint8_t>(bytes[pos++]);
    value |= static_cast<uint64_t>(b & 0x7f) << shift;
    if ((b & 0x80) == 0) return true;
  }
  return false;
}

// protobuf reads a tag of up to 5 bytes as 32 bits, dropping the rest of a
// 5-byte one, and refuses a longer one.
inline bool ReadTag(absl::string_view bytes, size_t& pos, uint64_t& tag) {
  const size_t at = pos;
  if (!ReadVarint(bytes, pos, tag) || pos - at > 5) return false;
  tag = static_cast<uint32_t>(tag);
  return true;
}

// Cold, so out of line: groups are rare, and inlined it would keep
// ReadField from being inlined into the scans.
ABSL_ATTRIBUTE_COLD inline bool SkipGroup(absl::string_view bytes, size_t& pos, uint64_t number,
                                          int depth);

// Reads the field at `pos` into `field`; a group is skipped whole and read
// as a field of wire type kStartGroup. False when the bytes do not parse.
inline bool ReadField(absl::string_view bytes, size_t& pos, Field& field, int depth = 0) {
  uint64_t tag;
  if (!ReadTag(bytes, pos, tag) || (tag >> 3) == 0) return false;
  field.number = tag >> 3;
  field.wire_type = static_cast<uint32_t>(tag & 7);
  switch (field.wire_type) {
    case kVarint:
      return ReadVarint(bytes, pos, field.value);
    case kFixed64:
      if (8 > bytes.size() - pos) return false;
      std::memcpy(&field.value, bytes.data() + pos, 8);  // little-endian hosts only
      pos += 8;
      return true;
    case kFixed32: {
      uint32_t value;
      if (4 > bytes.size() - pos) return false;
      std::memcpy(&value, bytes.data() + pos, 4);
      pos += 4;
      field.value = value;
      return true;
    }
    case kLengthDelimited: {
      uint64_t length;
      if (!ReadVarint(bytes, pos, length) || length > bytes.size() - pos) return false;
      field.payload = bytes.substr(pos, length);
      pos += length;
      return true;
    }
    case kStartGroup:
      return SkipGroup(bytes, pos, field.number, depth);
    default:
      return false;  // an end-group tag with no group open, or wire type 6 or 7
  }
}

// Past the end-group tag of group `number`, whose start tag was just read.
ABSL_ATTRIBUTE_COLD inline bool SkipGroup(absl::string_view bytes, size_t& pos, uint64_t number,
                                          int depth) {
  if (depth >= kMaxGroupDepth) return false;
  Field inner;
  while (pos < bytes.size()) {
    const size_t at = pos;
    uint64_t tag;
    if (!ReadTag(bytes, pos, tag)) return false;
    if ((tag & 7) == kEndGroup) return (tag >> 3) == number;
    pos = at;
    if (!ReadField(bytes, pos, inner, depth + 1)) return false;
  }
  return false;  // no end-group tag
}

// Calls visit(field) for every field of the message in `bytes`; false when
// the bytes do not parse or visit returns false.
template <typename Visit>
bool ForEachField(absl::string_view bytes, Visit visit) {
  size_t pos = 0;
  Field field;
  while (pos < bytes.size()) {
    if (!ReadField(bytes, pos, field) || !visit(field)) return false;
  }
  return true;
}

inline bool Is(const Field& field, uint64_t number, uint32_t wire_type) {
  return field.number == number && field.wire_type == wire_type;
}

}  // namespace ordo::wire

#endif  // ORDO_CORE_UTIL_WIRE_READER_H_
