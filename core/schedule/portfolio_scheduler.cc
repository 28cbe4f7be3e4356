#include "core/schedule/portfolio_scheduler.h"

#include <algorithm>
#include <optional>

namespace ordo {

absl::StatusOr<ScheduleResult> PortfolioScheduler::Schedule(
    const MemoryModel& model, const ScheduleLimits& limits) const {
  const absl::Time start = limits.Now();
  std::optional<ScheduleResult> best;
  absl::Status last_error = absl::InternalError("empty portfolio");
  int64_t lower_bound = 0;
  ScheduleStats total;
  for (const auto& member : members_) {
    // Cheap members always run, so a result exists even past the deadline.
    if (best && limits.Expired()) break;
    absl::StatusOr<ScheduleResult> result = member->Schedule(model, limits);
    if (!result.ok()) {
      last_error = result.status();
      continue;
    }
    lower_bound = std::max(lower_bound, result->lower_bound_bytes);
    total.states_expanded += result->stats.states_expanded;
    total.states_stored = std::max(total.states_stored, result->stats.states_stored);
    if (!best || result->peak_bytes < best->peak_bytes ||
        (result->peak_bytes == best->peak_bytes && result->status > best->status)) {
      best = *std::move(result);
    }
    if (best->status == ScheduleStatus::kOptimal) break;
  }
  if (!best) return last_error;
  best->lower_bound_bytes = lower_bound;
  if (best->peak_bytes == lower_bound) {
    best->status = ScheduleStatus::kOptimal;
  } else if (best->status == ScheduleStatus::kOptimal) {
    best->status = ScheduleStatus::kBounded;  // cannot happen: a proof lifts the bound
  }
  best->stats.states_expanded = total.states_expanded;
  best->stats.states_stored = total.states_stored;
  best->stats.time = limits.Now() - start;
  return *std::move(best);
}

}  // namespace ordo
