#ifndef ORDO_RPC_LOG_H_
#define ORDO_RPC_LOG_H_

#include <string>

#include "absl/strings/string_view.h"

namespace ordo::rpc {

enum class LogLevel { kDebug = 0, kInfo = 1, kWarning = 2, kError = 3 };

// Levelled logs of the service processes, one line per call to stderr:
// `2024-05-01T12:00:00.123Z I [req-id] message`. Lines below the process's
// level are dropped. The level is process-wide (set once by main);
// thread-safe. Core never logs: it returns stats and statuses.
void SetLogLevel(LogLevel level);
// "debug" | "info" | "warning" | "error"; false when unknown.
bool ParseLogLevel(absl::string_view text, LogLevel* level);
bool LogEnabled(LogLevel level);
// The current level as --log-level spells it (for child processes).
absl::string_view LogLevelName();
void Log(LogLevel level, absl::string_view request_id, absl::string_view message);

// A fresh request id: 16 hex digits, unique within the process with high
// probability across processes.
std::string NewRequestId();

}  // namespace ordo::rpc

#endif  // ORDO_RPC_LOG_H_
