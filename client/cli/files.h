#ifndef ORDO_CLIENT_CLI_FILES_H_
#define ORDO_CLIENT_CLI_FILES_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"

namespace ordo::cli {

// Whole file; NOT_FOUND / INVALID_ARGUMENT naming the path; refuses files
// over `max_bytes` (RESOURCE_EXHAUSTED) before reading them.
absl::StatusOr<std::string> ReadFile(const std::string& path,
                                     int64_t max_bytes = int64_t{2} << 30);
absl::Status WriteFile(const std::string& path, const std::string& contents);

}  // namespace ordo::cli

#endif  // ORDO_CLIENT_CLI_FILES_H_
