#ifndef ORDO_CLIENT_CLI_POOL_FLAGS_H_
#define ORDO_CLIENT_CLI_POOL_FLAGS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/pools/memory_pools.h"

namespace ordo::cli {

// "1600000000", "1.6GB/s", "200MB/s", "1.6G" -> bytes per second. SI
// prefixes (k, M, G, T are powers of 1000, as bandwidths are quoted).
absl::StatusOr<double> ParseBandwidth(absl::string_view text);

// --pool NAME:CAPACITY[:READ_BW[:WRITE_BW]][:off-chip]: capacity as for
// --memory-limit; a missing write bandwidth is the read one, a missing read
// bandwidth kDefaultPoolBytesPerSecond; "off-chip" marks external memory. INVALID_ARGUMENT naming the flag and the part.
absl::StatusOr<MemoryPool> ParsePoolFlag(absl::string_view text);

// The device's pools from --device NAME (a preset), repeated --pool flags
// (not both) and repeated --pin TENSOR:POOL. Empty pools when neither is
// given.
absl::StatusOr<PoolOptions> PoolOptionsFromFlags(const std::string* device,
                                                 const std::vector<std::string>& pools,
                                                 const std::vector<std::string>& pins);

}  // namespace ordo::cli

#endif  // ORDO_CLIENT_CLI_POOL_FLAGS_H_
