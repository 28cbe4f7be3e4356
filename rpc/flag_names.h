#ifndef ORDO_RPC_FLAG_NAMES_H_
#define ORDO_RPC_FLAG_NAMES_H_

#include <string>
#include <vector>

namespace ordo::rpc {

// absl flags are named with underscores; our documented flags use dashes
// (`--local-workers`). Returns argv with every `--flag-name[=value]` spelled
// `--flag_name[=value]` (values and positional arguments untouched), for
// absl::ParseCommandLine. The result must outlive the parsing.
std::vector<std::string> DashedFlagsToUnderscores(int argc, char** argv);

// DashedFlagsToUnderscores, then absl::ParseCommandLine (which exits with a
// message on an unknown or malformed flag). Positional arguments are dropped.
void ParseDashedCommandLine(int argc, char** argv);

}  // namespace ordo::rpc

#endif  // ORDO_RPC_FLAG_NAMES_H_
