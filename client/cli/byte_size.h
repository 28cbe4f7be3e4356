#ifndef ORDO_CLIENT_CLI_BYTE_SIZE_H_
#define ORDO_CLIENT_CLI_BYTE_SIZE_H_

#include <cstdint>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ordo::cli {

// "1048576", "512KiB", "2 MiB", "1.5MB", "1GiB" -> bytes. K/M/G are powers of
// 1024 with or without "i" (memory sizes, as device sheets use them).
absl::StatusOr<int64_t> ParseByteSize(absl::string_view text);

// ParseByteSize of flag `flag`'s value, its error naming the flag.
absl::StatusOr<int64_t> ParseByteSizeFlag(absl::string_view flag, absl::string_view text);

}  // namespace ordo::cli

#endif  // ORDO_CLIENT_CLI_BYTE_SIZE_H_
