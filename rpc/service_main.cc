#include "rpc/service_main.h"

#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "rpc/flag_names.h"
#include "rpc/log.h"
#include "rpc/termination_signals.h"

ABSL_FLAG(std::string, log_level, "info", "debug|info|warning|error");

namespace ordo::rpc {
namespace {

// absl's --help lists only flags defined in a file named like the program;
// ours live in server/, workers/ and rpc/ (shared ones), so name those.
bool IsOrdoFlagFile(absl::string_view file) {
  return absl::StrContains(file, "server/") || absl::StrContains(file, "workers/") ||
         absl::StrContains(file, "rpc/");
}

}  // namespace

bool InitServiceMain(int argc, char** argv, absl::string_view program,
                     absl::string_view usage) {
  BlockTerminationSignals();
  absl::SetProgramUsageMessage(usage);
  absl::FlagsUsageConfig config;
  config.contains_help_flags = IsOrdoFlagFile;
  config.contains_helpshort_flags = IsOrdoFlagFile;
  absl::SetFlagsUsageConfig(config);
  if (absl::Status parsed = ParseDashedCommandLine(argc, argv); !parsed.ok()) {
    std::fprintf(stderr, "%.*s: %s\n", static_cast<int>(program.size()), program.data(),
                 std::string(parsed.message()).c_str());
    return false;
  }
  LogLevel level;
  if (!ParseLogLevel(absl::GetFlag(FLAGS_log_level), &level)) {
    std::fprintf(stderr, "%.*s: unknown --log-level\n", static_cast<int>(program.size()),
                 program.data());
    return false;
  }
  SetLogLevel(level);
  return true;
}

absl::Status CheckListenFlag(absl::string_view flag, absl::string_view address) {
  if (absl::StartsWith(address, "unix:")) return absl::OkStatus();
  const size_t colon = address.rfind(':');
  int port = -1;
  if (colon == absl::string_view::npos || !absl::SimpleAtoi(address.substr(colon + 1), &port) ||
      port < 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        flag, ": \"", address, "\" is not HOST:PORT with a port from 0 (any free one) to 65535"));
  }
  return absl::OkStatus();
}

absl::Status CheckFlagRange(absl::string_view flag, int64_t value, int64_t least, int64_t most) {
  if (value < least || value > most) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": must be from ", least, " to ", most, ", got ", value));
  }
  return absl::OkStatus();
}

absl::Status CheckFlagPositive(absl::string_view flag, absl::Duration value) {
  if (value <= absl::ZeroDuration()) {
    return absl::InvalidArgumentError(
        absl::StrCat(flag, ": must be positive, got ", absl::FormatDuration(value)));
  }
  return absl::OkStatus();
}

absl::Status CheckSharedServiceFlags(absl::string_view listen, int metrics_port, int max_state_mb) {
  for (const absl::Status& status : {CheckListenFlag("--listen", listen),
                                     CheckFlagRange("--metrics-port", metrics_port, 0, 65535),
                                     CheckFlagRange("--max-state-mb", max_state_mb, 1, 1 << 20)}) {
    if (!status.ok()) return status;
  }
  return absl::OkStatus();
}

}  // namespace ordo::rpc
