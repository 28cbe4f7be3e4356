#ifndef ORDO_CLIENT_CLI_COMMANDS_H_
#define ORDO_CLIENT_CLI_COMMANDS_H_

#include <ostream>
#include <string>
#include <vector>

namespace ordo::cli {

// Exit codes of the `ordo` command.
inline constexpr int kExitOk = 0;
inline constexpr int kExitInternal = 1;
inline constexpr int kExitBadInput = 2;
// `ordo compile` rewrote the model in fit mode (--memory-limit with
// --rewrite, or the automatic fallback) and it still does not fit.
inline constexpr int kExitDoesNotFit = 3;

// Runs `ordo ARGS...` (argv without the program name). Output goes to `out`,
// messages to `err`; returns the exit code. No process-wide state, so tests
// call it directly.
int RunOrdo(const std::vector<std::string>& args, std::ostream& out, std::ostream& err);

}  // namespace ordo::cli

#endif  // ORDO_CLIENT_CLI_COMMANDS_H_
