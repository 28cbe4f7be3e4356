#include "bench/cache_ceiling.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "absl/container/flat_hash_set.h"

namespace ordo::bench {
namespace {

// All latencies over `left`, the time a ceiling leaves of the first sends.
double SpeedUp(absl::Duration all, absl::Duration left) {
  return left > absl::ZeroDuration() ? absl::FDivDuration(all, left) : 0;
}

}  // namespace

CacheCeiling CacheCeilingOf(absl::Span<const ServedCall> calls) {
  CacheCeiling ceiling;
  absl::Duration all, first_sends, scheduling, free_scheduling;
  for (const ServedCall& call : calls) {
    ++ceiling.calls;
    all += call.latency;
    if (call.repeat) {
      ++ceiling.repeats;
      continue;
    }
    first_sends += call.latency;
    // Clocks of two processes: scheduling cannot take longer than the call.
    const absl::Duration schedule = std::min(call.schedule_time, call.latency);
    scheduling += schedule;
    free_scheduling += schedule * std::clamp(call.free_schedule_share, 0.0, 1.0);
  }
  if (first_sends > absl::ZeroDuration()) {
    ceiling.schedule_share = absl::FDivDuration(scheduling, first_sends);
    ceiling.free_schedule_share = absl::FDivDuration(free_scheduling, first_sends);
  }
  ceiling.speedup = SpeedUp(all, first_sends - scheduling);
  ceiling.window_speedup = SpeedUp(all, first_sends - free_scheduling);
  return ceiling;
}

int64_t RepeatCounts::total() const {
  int64_t sum = 0;
  for (int64_t n : by_kind) sum += n;
  return sum;
}

RepeatKinds RepeatKindsOf(absl::Span<const StreamCandidate> stream) {
  RepeatKinds kinds;
  absl::flat_hash_set<std::string> earlier_candidates;
  for (const StreamCandidate& candidate : stream) {
    ++kinds.candidates;
    kinds.repeated_candidates += candidate.repeat;
    std::vector<bool>& seen = kinds.seen_before.emplace_back();
    absl::flat_hash_set<std::string> this_candidate;
    for (const StreamSegment& segment : candidate.segments) {
      RepeatKind kind = RepeatKind::kRepeatedCandidate;
      if (!candidate.repeat) {
        const bool before = earlier_candidates.contains(segment.key);
        seen.push_back(before);
        kind = !this_candidate.insert(segment.key).second ? RepeatKind::kWithinCandidate
               : before                                   ? RepeatKind::kAcrossCandidates
                                                          : RepeatKind::kNew;
      }
      const int k = static_cast<int>(kind);
      if (segment.cell) {
        ++kinds.cells.by_kind[k];
        kinds.cell_ops.by_kind[k] += segment.ops;
      } else {
        kinds.other_ops.by_kind[k] += segment.ops;
      }
    }
    // Only after the candidate: "earlier" means an earlier request.
    for (const StreamSegment& segment : candidate.segments) earlier_candidates.insert(segment.key);
  }
  return kinds;
}

double FreeScheduleShare(absl::Span<const PartTiming> parts, double exponent) {
  absl::Duration total, free;
  for (const PartTiming& part : parts) {
    total += part.time;
    if (part.ops > 0) {
      const double unseen =
          static_cast<double>(part.ops - std::clamp(part.seen_ops, 0, part.ops)) / part.ops;
      free += part.time * (1 - std::pow(unseen, exponent));
    }
  }
  return total > absl::ZeroDuration() ? absl::FDivDuration(free, total) : 0;
}

double OpsExponent(absl::Span<const SizedTime> parts) {
  double n = 0, sx = 0, sy = 0, sxx = 0, sxy = 0;
  for (const SizedTime& part : parts) {
    if (part.ops <= 0 || part.time <= absl::ZeroDuration()) continue;
    const double x = std::log(part.ops), y = std::log(absl::ToDoubleSeconds(part.time));
    n += 1;
    sx += x;
    sy += y;
    sxx += x * x;
    sxy += x * y;
  }
  const double var = n * sxx - sx * sx;
  // Equal op counts give var == 0 up to rounding.
  return n >= 2 && var > 1e-9 * n * sxx ? (n * sxy - sx * sy) / var : 0;
}

std::vector<OpsBin> ScheduleTimeByOps(std::vector<SizedTime> parts) {
  std::erase_if(parts, [](const SizedTime& p) { return p.ops <= 0; });
  std::sort(parts.begin(), parts.end(),
            [](const SizedTime& a, const SizedTime& b) { return a.ops < b.ops; });
  std::vector<OpsBin> bins;
  constexpr size_t kBins = 4;
  const size_t n = parts.size();
  for (size_t b = 0; b < kBins; ++b) {
    const size_t begin = n * b / kBins, end = n * (b + 1) / kBins;
    if (begin == end) continue;
    std::vector<double> us_per_op, ms;
    for (size_t i = begin; i < end; ++i) {
      us_per_op.push_back(absl::ToDoubleMicroseconds(parts[i].time) / parts[i].ops);
      ms.push_back(absl::ToDoubleMilliseconds(parts[i].time));
    }
    // Lower median: an element of the bin, so a one-element bin is exact.
    const auto median = [](std::vector<double>& v) {
      std::nth_element(v.begin(), v.begin() + (v.size() - 1) / 2, v.end());
      return v[(v.size() - 1) / 2];
    };
    bins.push_back({parts[begin].ops, parts[end - 1].ops, static_cast<int64_t>(end - begin),
                    median(us_per_op), median(ms)});
  }
  return bins;
}

}  // namespace ordo::bench
