#ifndef ORDO_CLIENT_CLI_FILES_H_
#define ORDO_CLIENT_CLI_FILES_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace ordo::cli {

// Whole file; NOT_FOUND / INVALID_ARGUMENT naming the path; refuses files
// over `max_bytes` (RESOURCE_EXHAUSTED) before reading them.
absl::StatusOr<std::string> ReadFile(const std::string& path,
                                     int64_t max_bytes = int64_t{2} << 30);
absl::Status WriteFile(const std::string& path, const std::string& contents);

// Runs a program found on PATH with these arguments (no shell) and waits for
// it; its exit code, or nullopt when it cannot be started (not installed).
std::optional<int> RunProgram(const std::vector<std::string>& argv);

}  // namespace ordo::cli

#endif  // ORDO_CLIENT_CLI_FILES_H_
