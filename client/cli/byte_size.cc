#include "client/cli/byte_size.h"

#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace ordo::cli {

absl::StatusOr<int64_t> ParseByteSize(absl::string_view text) {
  absl::string_view trimmed = absl::StripAsciiWhitespace(text);
  size_t unit_start = 0;
  while (unit_start < trimmed.size() &&
         (absl::ascii_isdigit(trimmed[unit_start]) || trimmed[unit_start] == '.')) {
    ++unit_start;
  }
  double number = 0;
  if (unit_start == 0 || !absl::SimpleAtod(trimmed.substr(0, unit_start), &number)) {
    return absl::InvalidArgumentError(absl::StrCat("not a byte size: \"", text, "\""));
  }
  std::string unit = absl::AsciiStrToLower(
      absl::StripAsciiWhitespace(trimmed.substr(unit_start)));
  double scale = 0;
  if (unit.empty() || unit == "b") scale = 1;
  else if (unit == "k" || unit == "kb" || unit == "kib") scale = 1024.0;
  else if (unit == "m" || unit == "mb" || unit == "mib") scale = 1024.0 * 1024;
  else if (unit == "g" || unit == "gb" || unit == "gib") scale = 1024.0 * 1024 * 1024;
  if (scale == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("unknown unit \"", unit, "\" in \"", text, "\" (use B, KiB, MiB, GiB)"));
  }
  double bytes = std::round(number * scale);
  if (!(bytes >= 0 && bytes < 9.2e18)) {
    return absl::InvalidArgumentError(absl::StrCat("byte size out of range: \"", text, "\""));
  }
  return static_cast<int64_t>(bytes);
}

absl::StatusOr<int64_t> ParseByteSizeFlag(absl::string_view flag, absl::string_view text) {
  absl::StatusOr<int64_t> bytes = ParseByteSize(text);
  if (!bytes.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": ", bytes.status().message()));
  }
  return bytes;
}

}  // namespace ordo::cli
