#ifndef ORDO_BENCH_CACHE_CEILING_H_
#define ORDO_BENCH_CACHE_CEILING_H_

#include <cstdint>

#include "absl/time/time.h"
#include "absl/types/span.h"

namespace ordo::bench {

// One compile of a candidate stream, as the server reported it.
struct ServedCall {
  absl::Duration latency;        // at the client
  absl::Duration schedule_time;  // CompileStats.schedule_time
  bool repeat = false;           // the candidate was sent before (any names)
};

// The most any cache could speed a stream up, by Amdahl's law: a perfect
// cache answers every repeated candidate at no cost and schedules no part of
// the others for free; the round trip, importing, verifying, placing and
// answering a new candidate stay. Read off a run with the cache off
// (--cache-mb=0) at concurrency 1, where the stream takes the sum of its
// latencies, it bounds the speed-up of cache on over cache off from above,
// whatever the cache keeps (whole requests, parts, cell windows). Generous:
// a real hit still costs a round trip and a lookup.
struct CacheCeiling {
  int64_t calls = 0;
  int64_t repeats = 0;
  // Of the latency of the first sends, the share the server spent scheduling.
  double schedule_share = 0;
  // Sum of all latencies over the sum of (latency - schedule_time) of first sends;
  // 0 when there is nothing left to time.
  double speedup = 0;
};

CacheCeiling CacheCeilingOf(absl::Span<const ServedCall> calls);

}  // namespace ordo::bench

#endif  // ORDO_BENCH_CACHE_CEILING_H_
