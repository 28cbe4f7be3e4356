#include "rpc/log.h"

#include <atomic>
#include <cstdio>
#include <random>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/util/printable_text.h"

namespace ordo::rpc {
namespace {

std::atomic<int> g_level{static_cast<int>(LogLevel::kInfo)};

}  // namespace

void SetLogLevel(LogLevel level) { g_level.store(static_cast<int>(level)); }

bool ParseLogLevel(absl::string_view text, LogLevel* level) {
  if (text == "debug") *level = LogLevel::kDebug;
  else if (text == "info") *level = LogLevel::kInfo;
  else if (text == "warning") *level = LogLevel::kWarning;
  else if (text == "error") *level = LogLevel::kError;
  else return false;
  return true;
}

absl::string_view LogLevelName() {
  switch (static_cast<LogLevel>(g_level.load())) {
    case LogLevel::kDebug:
      return "debug";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kWarning:
      return "warning";
    case LogLevel::kError:
      return "error";
  }
  return "info";
}

bool LogEnabled(LogLevel level) { return static_cast<int>(level) >= g_level.load(); }

void Log(LogLevel level, absl::string_view request_id, absl::string_view message) {
  if (!LogEnabled(level)) return;
  static constexpr char kLetters[] = {'D', 'I', 'W', 'E'};
  const std::string line = absl::StrCat(
      absl::FormatTime("%Y-%m-%dT%H:%M:%E3SZ", absl::Now(), absl::UTCTimeZone()), " ",
      absl::string_view(&kLetters[static_cast<int>(level)], 1), " [",
      request_id.empty() ? "-" : PrintableText(request_id, 64), "] ",
      PrintableText(message, std::string::npos), "\n");  // one line, whatever it quotes
  std::fwrite(line.data(), 1, line.size(), stderr);  // one write: lines do not interleave
}

std::string NewRequestId() {
  static std::atomic<uint64_t> counter{0};
  static const uint64_t seed = std::random_device{}() ^ (uint64_t{std::random_device{}()} << 32);
  uint64_t x = seed + 0x9e3779b97f4a7c15ULL * ++counter;
  x = (x ^ (x >> 31)) * 0xbf58476d1ce4e5b9ULL;
  return absl::StrFormat("%016x", x ^ (x >> 29));
}

}  // namespace ordo::rpc
