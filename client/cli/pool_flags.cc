#include "client/cli/pool_flags.h"

#include <cmath>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "client/cli/byte_size.h"
#include "core/pools/device_presets.h"
#include "core/util/status_macros.h"

namespace ordo::cli {

absl::StatusOr<double> ParseBandwidth(absl::string_view text) {
  const auto refuse = [&](absl::string_view why) {
    return absl::InvalidArgumentError(
        absl::StrCat("not a positive bandwidth: \"", text, "\" (", why, ")"));
  };
  std::string unit(absl::StripAsciiWhitespace(text));
  for (absl::string_view per_second : {"/s", "ps"}) {
    if (absl::EndsWith(unit, per_second)) {
      unit.resize(unit.size() - per_second.size());
      break;
    }
  }
  // B is a byte, b a bit: "1.6Gbps" is 200 MB/s, not 1.6 GB/s.
  if (absl::EndsWith(unit, "b")) {
    return refuse("a lowercase b is bits; give bytes per second with B, e.g. 200MB/s for 1.6Gb/s");
  }
  if (absl::EndsWith(unit, "B")) unit.pop_back();
  double scale = 1;
  const bool binary = unit.size() >= 2 && (unit.back() == 'i' || unit.back() == 'I');
  if (binary) unit.pop_back();
  if (!unit.empty()) {
    static constexpr absl::string_view kPrefixes = "kmgt";
    const size_t power = kPrefixes.find(absl::ascii_tolower(unit.back()));
    if (power != absl::string_view::npos) {
      scale = std::pow(binary ? 1024.0 : 1000.0, static_cast<double>(power + 1));
      unit.pop_back();
    } else if (binary) {
      return refuse("unknown unit; bytes per second, e.g. 1600000000, 1.6GB/s or 1.5GiB/s");
    }
  }
  // Decimal only: strtod would also read hex ("0x10") and "inf".
  const bool decimal =
      !unit.empty() && unit.find_first_not_of("0123456789.eE+-") == std::string::npos;
  double number = 0;
  if (!decimal || !absl::SimpleAtod(unit, &number) || !std::isfinite(number) || number <= 0) {
    return refuse("bytes per second, e.g. 1600000000, 1.6GB/s or 1.5GiB/s");
  }
  return number * scale;
}

absl::StatusOr<MemoryPool> ParsePoolFlag(absl::string_view text) {
  std::vector<std::string> parts = absl::StrSplit(text, ':');
  MemoryPool pool;
  if (parts.size() > 2 && parts.back() == "off-chip") {
    pool.off_chip = true;
    parts.pop_back();
  }
  if (parts.size() < 2 || parts.size() > 4 || parts[0].empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("--pool \"", text,
                     "\": expected NAME:CAPACITY[:READ_BW[:WRITE_BW]][:off-chip], e.g. "
                     "axi:512KiB:1.6GB/s or psram:8MiB:160MB/s:off-chip"));
  }
  pool.name = parts[0];
  absl::StatusOr<int64_t> capacity = ParseByteSize(parts[1]);
  if (!capacity.ok()) {
    // The parser's reason (an unknown unit, out of range), not just "bad".
    return absl::InvalidArgumentError(absl::StrCat("--pool \"", text, "\": capacity of pool \"",
                                                   pool.name, "\": ", capacity.status().message()));
  }
  if (*capacity <= 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("--pool \"", text, "\": capacity of pool \"", pool.name,
                     "\" must be a positive byte size (e.g. 128KiB), got \"", parts[1], "\""));
  }
  pool.capacity_bytes = *capacity;
  for (size_t i = 2; i < parts.size(); ++i) {
    absl::StatusOr<double> bandwidth = ParseBandwidth(parts[i]);
    if (!bandwidth.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--pool \"", text, "\": pool \"", pool.name,
                                                     "\": ", bandwidth.status().message()));
    }
    (i == 2 ? pool.read_bytes_per_second : pool.write_bytes_per_second) = *bandwidth;
    if (i == 2) pool.write_bytes_per_second = *bandwidth;
  }
  return pool;
}

absl::StatusOr<PoolOptions> PoolOptionsFromFlags(const std::string* device,
                                                 const std::vector<std::string>& pools,
                                                 const std::vector<std::string>& pins) {
  PoolOptions options;
  if (device != nullptr && !pools.empty()) {
    return absl::InvalidArgumentError("give either --device or --pool, not both");
  }
  if (device != nullptr) {
    absl::StatusOr<DevicePreset> preset = FindDevicePreset(*device);
    if (!preset.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("--device: ", preset.status().message()));
    }
    options.pools = std::move(preset->pools);
  }
  for (const std::string& text : pools) {
    ORDO_ASSIGN_OR_RETURN(MemoryPool pool, ParsePoolFlag(text));
    options.pools.push_back(std::move(pool));
  }
  for (const std::string& pin : pins) {
    const size_t colon = pin.rfind(':');
    if (colon == std::string::npos || colon == 0 || colon + 1 == pin.size()) {
      return absl::InvalidArgumentError(
          absl::StrCat("--pin \"", pin, "\": expected TENSOR:POOL"));
    }
    const std::string tensor = pin.substr(0, colon);
    if (!options.pinned.emplace(tensor, pin.substr(colon + 1)).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("--pin: tensor \"", tensor, "\" is pinned twice; give one pool"));
    }
  }
  if (!options.pinned.empty() && options.pools.empty()) {
    return absl::InvalidArgumentError("--pin needs memory pools (--pool or --device)");
  }
  if (absl::Status status = ValidatePoolOptions(options); !status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--pool: ", status.message()));
  }
  return options;
}

}  // namespace ordo::cli
