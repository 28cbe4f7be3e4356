#include "bench/cache_ceiling.h"

#include <algorithm>

namespace ordo::bench {

CacheCeiling CacheCeilingOf(absl::Span<const ServedCall> calls) {
  CacheCeiling ceiling;
  absl::Duration all, first_sends, first_sends_scheduling;
  for (const ServedCall& call : calls) {
    ++ceiling.calls;
    all += call.latency;
    if (call.repeat) {
      ++ceiling.repeats;
      continue;
    }
    first_sends += call.latency;
    // Clocks of two processes: scheduling cannot take longer than the call.
    first_sends_scheduling += std::min(call.schedule_time, call.latency);
  }
  if (first_sends > absl::ZeroDuration()) {
    ceiling.schedule_share = absl::FDivDuration(first_sends_scheduling, first_sends);
  }
  const absl::Duration left = first_sends - first_sends_scheduling;
  if (left > absl::ZeroDuration()) ceiling.speedup = absl::FDivDuration(all, left);
  return ceiling;
}

}  // namespace ordo::bench
