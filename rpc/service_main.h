#ifndef ORDO_RPC_SERVICE_MAIN_H_
#define ORDO_RPC_SERVICE_MAIN_H_

#include <cstdint>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"

namespace ordo::rpc {

// The start of every service binary's main(): blocks SIGTERM/SIGINT for
// rpc::TerminationSignals, parses the command line with absl flags
// (accepting --dashed-names as well as --underscored ones) and applies
// --log-level, a flag this library defines for every service. False, after
// a message on stderr naming `program`, when a flag is unknown or its value
// malformed (CheckCommandLine) or --log-level is unknown: callers exit 2.
bool InitServiceMain(int argc, char** argv, absl::string_view program,
                     absl::string_view usage);

// A listening flag's HOST:PORT (or gRPC's unix:PATH): a port from 0 (any)
// to 65535. gRPC itself takes port 99999 as 34463. INVALID_ARGUMENT naming
// `flag` (dashed, e.g. "--listen").
absl::Status CheckListenFlag(absl::string_view flag, absl::string_view address);

// `value` within [least, most], else INVALID_ARGUMENT naming `flag`.
absl::Status CheckFlagRange(absl::string_view flag, int64_t value, int64_t least, int64_t most);
// `value` above zero, else INVALID_ARGUMENT naming `flag`.
absl::Status CheckFlagPositive(absl::string_view flag, absl::Duration value);

// The flags ordo-server and ordo-worker share, with one range each:
// --listen, --metrics-port (0: off) and --max-state-mb (1 MiB to 1 TiB).
absl::Status CheckSharedServiceFlags(absl::string_view listen, int metrics_port, int max_state_mb);

}  // namespace ordo::rpc

#endif  // ORDO_RPC_SERVICE_MAIN_H_
