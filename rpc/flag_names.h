#ifndef ORDO_RPC_FLAG_NAMES_H_
#define ORDO_RPC_FLAG_NAMES_H_

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace ordo::rpc {

// absl flags are named with underscores; our documented flags use dashes
// (`--local-workers`). Returns argv with every `--flag-name[=value]` spelled
// `--flag_name[=value]` (values and positional arguments untouched), for
// absl::ParseCommandLine. The result must outlive the parsing.
std::vector<std::string> DashedFlagsToUnderscores(int argc, char** argv);

// Whether every --flag[=value] of `args` (DashedFlagsToUnderscores' result)
// is a flag this binary defines, with a value its type parses: absl's parser
// exits with code 1 on those, where our binaries' contract is 2 for a bad
// flag. INVALID_ARGUMENT naming the flag. absl's own flags (--help,
// --flagfile, ...) are left to it.
absl::Status CheckCommandLine(const std::vector<std::string>& args);

// CheckCommandLine, then absl::ParseCommandLine. Positional arguments are
// dropped.
absl::Status ParseDashedCommandLine(int argc, char** argv);

}  // namespace ordo::rpc

#endif  // ORDO_RPC_FLAG_NAMES_H_
