#include "rpc/service_main.h"

#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/flags/usage_config.h"
#include "absl/strings/match.h"
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
  ParseDashedCommandLine(argc, argv);
  LogLevel level;
  if (!ParseLogLevel(absl::GetFlag(FLAGS_log_level), &level)) {
    std::fprintf(stderr, "%.*s: unknown --log-level\n", static_cast<int>(program.size()),
                 program.data());
    return false;
  }
  SetLogLevel(level);
  return true;
}

}  // namespace ordo::rpc
