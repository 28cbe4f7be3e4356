#ifndef ORDO_RPC_SERVICE_MAIN_H_
#define ORDO_RPC_SERVICE_MAIN_H_

#include "absl/strings/string_view.h"

namespace ordo::rpc {

// The start of every service binary's main(): blocks SIGTERM/SIGINT for
// rpc::TerminationSignals, parses the command line with absl flags
// (accepting --dashed-names as well as --underscored ones) and applies
// --log-level, a flag this library defines for every service. False, after
// a message on stderr naming `program`, when --log-level is unknown.
bool InitServiceMain(int argc, char** argv, absl::string_view program,
                     absl::string_view usage);

}  // namespace ordo::rpc

#endif  // ORDO_RPC_SERVICE_MAIN_H_
