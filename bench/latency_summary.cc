#include "bench/latency_summary.h"

#include <algorithm>
#include <cmath>

namespace ordo::bench {
namespace {

absl::Duration NearestRank(const std::vector<absl::Duration>& sorted, double percent) {
  const auto n = static_cast<double>(sorted.size());
  const auto rank = static_cast<size_t>(std::ceil(percent / 100.0 * n));
  return sorted[std::clamp<size_t>(rank, 1, sorted.size()) - 1];
}

}  // namespace

LatencySummary Summarize(std::vector<absl::Duration> samples) {
  LatencySummary summary;
  if (samples.empty()) return summary;
  std::sort(samples.begin(), samples.end());
  absl::Duration total;
  for (absl::Duration d : samples) total += d;
  summary.count = static_cast<int64_t>(samples.size());
  summary.mean = total / summary.count;
  summary.p50 = NearestRank(samples, 50);
  summary.p90 = NearestRank(samples, 90);
  summary.p99 = NearestRank(samples, 99);
  summary.max = samples.back();
  return summary;
}

}  // namespace ordo::bench
