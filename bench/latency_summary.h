#ifndef ORDO_BENCH_LATENCY_SUMMARY_H_
#define ORDO_BENCH_LATENCY_SUMMARY_H_

#include <vector>

#include "absl/time/time.h"

namespace ordo::bench {

// Percentiles of a set of call latencies. Nearest-rank definition (the
// smallest sample with at least p% of samples at or below it), so every
// reported figure is a latency that was actually observed.
struct LatencySummary {
  int64_t count = 0;
  absl::Duration mean;
  absl::Duration p50;
  absl::Duration p90;
  absl::Duration p99;
  absl::Duration max;
};

// O(n log n): sorts a copy. All zero for no samples.
LatencySummary Summarize(std::vector<absl::Duration> samples);

}  // namespace ordo::bench

#endif  // ORDO_BENCH_LATENCY_SUMMARY_H_
