#include "server/compile_budget.h"

#include <algorithm>

#include "absl/status/status.h"

namespace ordo::server {

absl::Time CallDeadline(absl::Time client_deadline, absl::Time now, const CompilerLimits& limits) {
  return client_deadline == absl::InfiniteFuture()
             ? now + limits.default_deadline
             : std::min(client_deadline, now + limits.max_deadline);
}

CompileBudget SplitDeadline(absl::Duration requested_search_time, absl::Time deadline,
                            absl::Time now) {
  CompileBudget budget;
  if (deadline == absl::InfiniteFuture()) {
    budget.search_time = requested_search_time;
    return budget;
  }
  const absl::Duration remaining = deadline - now;
  const absl::Duration reserve = std::max(remaining / 5, kMinReserve);
  budget.search_time =
      std::max(std::min(requested_search_time, remaining - reserve), absl::ZeroDuration());
  budget.stages_deadline = deadline - reserve;
  return budget;
}

absl::StatusOr<int64_t> StateBudget(int64_t requested_bytes, const CompilerLimits& limits) {
  if (requested_bytes < 0) {
    return absl::InvalidArgumentError("options.max_state_bytes: must not be negative");
  }
  return requested_bytes == 0 ? limits.max_state_bytes
                              : std::min(requested_bytes, limits.max_state_bytes);
}

}  // namespace ordo::server
