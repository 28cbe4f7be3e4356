#ifndef ORDO_CORE_UTIL_PRINTABLE_TEXT_H_
#define ORDO_CORE_UTIL_PRINTABLE_TEXT_H_

// Error messages quote names taken from untrusted models, and protobuf's
// parsers quote the offending input; a name may hold NUL, newlines, escape
// sequences or invalid UTF-8. These keep such messages one printable line
// (STYLE: messages name the node or tensor) before they reach a terminal,
// a log line or a gRPC status.

#include <cstddef>
#include <cstdint>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"

namespace ordo {

// `text` with every byte that is not printable ASCII or part of a valid,
// non-control UTF-8 sequence written as an escape: \n, \r, \t, or \xHH per
// byte. Printable text (including non-ASCII names) comes back unchanged.
// Longer than `max_bytes` after escaping: cut there (on an escape
// boundary) and marked with "...". O(size).
inline std::string PrintableText(absl::string_view text, size_t max_bytes = 4096) {
  std::string out;
  out.reserve(text.size() < max_bytes ? text.size() : max_bytes);
  auto byte = [&](size_t i) { return static_cast<uint8_t>(text[i]); };
  size_t i = 0;
  while (i < text.size() && out.size() < max_bytes) {
    const uint8_t c = byte(i);
    if (c >= 0x20 && c < 0x7f) {
      out.push_back(static_cast<char>(c));
      ++i;
      continue;
    }
    // Length and smallest code point of a UTF-8 sequence led by `c`
    // (overlong encodings and surrogates are invalid, as are C1 controls).
    size_t length = 0;
    uint32_t code = 0;
    if (c >= 0xc2 && c <= 0xdf) {
      length = 2;
      code = c & 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
      length = 3;
      code = c & 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
      length = 4;
      code = c & 0x07;
    }
    bool valid = length > 0 && i + length <= text.size();
    for (size_t k = 1; valid && k < length; ++k) {
      valid = (byte(i + k) & 0xc0) == 0x80;
      code = (code << 6) | (byte(i + k) & 0x3f);
    }
    if (valid) {
      const uint32_t kMin[] = {0, 0, 0x80, 0x800, 0x10000};
      valid = code >= kMin[length] && code <= 0x10ffff && (code < 0xd800 || code > 0xdfff) &&
              code >= 0xa0;  // below: C1 controls (0x80-0x9f)
    }
    if (valid) {
      out.append(text.data() + i, length);
      i += length;
      continue;
    }
    switch (c) {
      case '\n':
        out += "\\n";
        break;
      case '\r':
        out += "\\r";
        break;
      case '\t':
        out += "\\t";
        break;
      default: {
        static constexpr char kHex[] = "0123456789abcdef";
        out += "\\x";
        out.push_back(kHex[c >> 4]);
        out.push_back(kHex[c & 0xf]);
      }
    }
    ++i;
  }
  if (i < text.size()) out += "...";
  return out;
}

// `status` with PrintableText(message); OK stays OK.
inline absl::Status WithPrintableMessage(const absl::Status& status) {
  if (status.ok()) return status;
  return absl::Status(status.code(), PrintableText(status.message()));
}

}  // namespace ordo

#endif  // ORDO_CORE_UTIL_PRINTABLE_TEXT_H_
