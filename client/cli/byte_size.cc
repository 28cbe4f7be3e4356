#include "client/cli/byte_size.h"

#include <cmath>
#include <optional>

#include "absl/strings/ascii.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "core/util/checked_math.h"

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
  const auto out_of_range = [&] {
    return absl::InvalidArgumentError(absl::StrCat("byte size out of range: \"", text, "\""));
  };
  // Whole numbers exactly (a double would round sizes past 2^53).
  int64_t whole = 0;
  if (absl::SimpleAtoi(trimmed.substr(0, unit_start), &whole)) {
    const std::optional<int64_t> bytes = CheckedMul(whole, static_cast<int64_t>(scale));
    if (!bytes || *bytes >= int64_t{9'200'000'000'000'000'000}) return out_of_range();
    return *bytes;
  }
  const double bytes = number * scale;
  if (!(bytes >= 0 && bytes < 9.2e18)) return out_of_range();
  if (bytes != std::floor(bytes)) {
    return absl::InvalidArgumentError(
        absl::StrCat("\"", text, "\" is not a whole number of bytes"));
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
