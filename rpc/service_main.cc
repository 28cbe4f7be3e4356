#include "rpc/service_main.h"

#include <cstdio>
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "rpc/flag_names.h"
#include "rpc/log.h"
#include "rpc/termination_signals.h"

ABSL_FLAG(std::string, log_level, "info", "debug|info|warning|error");

namespace ordo::rpc {

bool InitServiceMain(int argc, char** argv, absl::string_view program,
                     absl::string_view usage) {
  BlockTerminationSignals();
  absl::SetProgramUsageMessage(usage);
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
