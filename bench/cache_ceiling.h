#ifndef ORDO_BENCH_CACHE_CEILING_H_
#define ORDO_BENCH_CACHE_CEILING_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/time/time.h"
#include "absl/types/span.h"

namespace ordo::bench {

// One compile of a candidate stream, as the server reported it.
struct ServedCall {
  absl::Duration latency;        // at the client
  absl::Duration schedule_time;  // CompileStats.schedule_time
  bool repeat = false;           // the candidate was sent before (any names)
  // Of schedule_time, the share a perfect cross-request window cache would
  // remove: FreeScheduleShare of the call's parts.
  double free_schedule_share = 0;
};

// The most any cache could speed a stream up, by Amdahl's law, read off a
// run with the cache off (--cache-mb=0) at concurrency 1, where the stream
// takes the sum of its latencies. Two ceilings:
// - `speedup`: every repeated candidate answered at no cost and every part
//   of the others scheduled for free; the round trip, importing, verifying,
//   placing and answering a new candidate stay. It bounds cache on over
//   cache off from above whatever the cache keeps, but counts as free the
//   scheduling of cells no earlier request ever held, which no cache has.
// - `window_speedup`: repeated candidates free, and of every other
//   candidate's scheduling time only the share FreeScheduleShare gives
//   (the ops of segments an earlier candidate already held): what a perfect
//   cache of solved cells across requests could remove, if scheduling time
//   is proportional to the ops left to search (an assumption:
//   ScheduleTimeByOps and OpsExponent are the check; FreeScheduleShare
//   takes another exponent).
// Both generous: a real hit still costs a round trip and a lookup.
struct CacheCeiling {
  int64_t calls = 0;
  int64_t repeats = 0;
  // Of the latency of the first sends, the share the server spent scheduling.
  double schedule_share = 0;
  // Of the latency of the first sends, the scheduling a window cache removes.
  double free_schedule_share = 0;
  // Sum of all latencies over what each ceiling leaves of the first sends;
  // 0 when there is nothing left to time.
  double speedup = 0;
  double window_speedup = 0;
};

CacheCeiling CacheCeilingOf(absl::Span<const ServedCall> calls);

// One piece of a candidate, by identity: equal keys are the same subgraph
// (DartsCandidateStream::Segment: a cell, the stem, the head).
struct StreamSegment {
  std::string key;
  int32_t ops = 0;
  bool cell = true;
};
struct StreamCandidate {
  bool repeat = false;  // the whole candidate was sent before (any names)
  std::vector<StreamSegment> segments;
};

// The three kinds of repeat of issue 19, in this order of precedence: a
// segment of a repeated candidate; else one equal to an earlier segment of
// the same candidate (caught inside one request if at all); else one
// held by an earlier candidate (only a cache across requests catches it);
// else new.
enum class RepeatKind { kRepeatedCandidate, kWithinCandidate, kAcrossCandidates, kNew };
inline constexpr int kRepeatKinds = 4;

struct RepeatCounts {
  int64_t by_kind[kRepeatKinds] = {};
  int64_t of(RepeatKind kind) const { return by_kind[static_cast<int>(kind)]; }
  int64_t total() const;
};

struct RepeatKinds {
  int64_t candidates = 0;
  int64_t repeated_candidates = 0;
  RepeatCounts cells;      // how many cells
  RepeatCounts cell_ops;   // their ops
  RepeatCounts other_ops;  // ops of the stem and head segments
  // Per candidate, per segment: whether an EARLIER candidate held a
  // segment of this key (whatever the kind above): what a window cache
  // could serve. Empty vectors for repeated candidates.
  std::vector<std::vector<bool>> seen_before;
};

// Classifies every segment of `stream` (in send order). O(total segments)
// hash lookups.
RepeatKinds RepeatKindsOf(absl::Span<const StreamCandidate> stream);

// One part of a compiled candidate: its scheduling time (PartStats.time),
// its ops and how many of them lie in segments seen before.
struct PartTiming {
  absl::Duration time;
  int32_t ops = 0;
  int32_t seen_ops = 0;
};

// Of a candidate's scheduling time, the share a perfect window cache would
// remove if a part's time grows as (its ops) ^ `exponent`: each part keeps
// (unseen ops / ops) ^ exponent of its time (with exponent 1, the share of
// its ops seen before is free), over the parts' total time (so parts
// scheduled in parallel weigh by their own time). 0 when no part took time.
double FreeScheduleShare(absl::Span<const PartTiming> parts, double exponent = 1);

// The check of window_speedup's assumption: new candidates' largest parts
// in (up to) four bins of equal count by op count, with the median
// scheduling time per op of each. Proportional time gives equal medians.
struct OpsBin {
  int32_t min_ops = 0;
  int32_t max_ops = 0;
  int64_t count = 0;
  double median_us_per_op = 0;
  double median_ms = 0;
};
struct SizedTime {
  int32_t ops = 0;
  absl::Duration time;
};
std::vector<OpsBin> ScheduleTimeByOps(std::vector<SizedTime> parts);

// The k of time = c * ops ^ k that fits `parts` best in least squares on
// logarithms; 0 with fewer than two distinct op counts.
double OpsExponent(absl::Span<const SizedTime> parts);

}  // namespace ordo::bench

#endif  // ORDO_BENCH_CACHE_CEILING_H_
