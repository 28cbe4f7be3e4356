#include "core/schedule/scheduler.h"

#include <algorithm>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/memory/simulator.h"

namespace ordo {

absl::string_view ScheduleStatusName(ScheduleStatus status) {
  switch (status) {
    case ScheduleStatus::kHeuristic:
      return "heuristic";
    case ScheduleStatus::kBounded:
      return "bounded";
    case ScheduleStatus::kOptimal:
      return "optimal";
  }
  return "unknown";
}

absl::Time ScheduleLimits::Now() const {
  return clock != nullptr ? clock->Now() : absl::Now();
}

bool ScheduleLimits::StopRequested() const {
  return (cancelled != nullptr && cancelled->load(std::memory_order_relaxed)) ||
         (stop != nullptr && stop->load(std::memory_order_relaxed));
}

bool ScheduleLimits::Expired() const {
  if (StopRequested()) return true;
  return deadline != absl::InfiniteFuture() && Now() >= deadline;
}

void IterativeStats::Add(const IterativeStats& other) {
  sequences += other.sequences;
  groups += other.groups;
  iterations += other.iterations;
  limit_hit = limit_hit || other.limit_hit;
  group_searches += other.group_searches;
  memo_hits += other.memo_hits;
  simple_schedules += other.simple_schedules;
}

absl::StatusOr<ScheduleResult> FinishSchedule(const MemoryModel& model,
                                              std::vector<int32_t> order,
                                              std::string algorithm,
                                              absl::Time start,
                                              const ScheduleLimits& limits) {
  return FinishSchedule(model, std::move(order), std::move(algorithm), start, limits,
                        MemoryLowerBound(model));
}

absl::StatusOr<ScheduleResult> FinishSchedule(const MemoryModel& model,
                                              std::vector<int32_t> order,
                                              std::string algorithm,
                                              absl::Time start,
                                              const ScheduleLimits& limits,
                                              int64_t lower_bound_bytes) {
  absl::StatusOr<int64_t> peak = SimulatePeak(model, order);
  if (!peak.ok()) {
    return absl::InternalError(absl::StrCat("scheduler ", algorithm,
                                            " produced an invalid order: ",
                                            peak.status().message()));
  }
  ScheduleResult result;
  result.order = std::move(order);
  result.peak_bytes = *peak;
  result.lower_bound_bytes = lower_bound_bytes;
  result.status = result.peak_bytes == result.lower_bound_bytes
                      ? ScheduleStatus::kOptimal
                      : ScheduleStatus::kHeuristic;
  result.algorithm = std::move(algorithm);
  result.stats.time = limits.Now() - start;
  return result;
}

absl::StatusOr<ScheduleResult> CheckClaimedSchedule(const MemoryModel& model,
                                                    ScheduleResult claimed) {
  absl::StatusOr<int64_t> peak = SimulatePeak(model, claimed.order);
  if (!peak.ok()) {
    return absl::DataLossError(absl::StrCat("not an order of the part's ", model.num_ops(),
                                            " ops: ", peak.status().message()));
  }
  if (claimed.peak_bytes != *peak) {
    return absl::DataLossError(absl::StrCat("claims peak ", claimed.peak_bytes,
                                            " B; the simulator says ", *peak, " B"));
  }
  claimed.lower_bound_bytes =
      std::min(*peak, std::max(claimed.lower_bound_bytes, MemoryLowerBound(model)));
  if (claimed.status == ScheduleStatus::kOptimal && claimed.lower_bound_bytes < *peak) {
    claimed.status = ScheduleStatus::kBounded;  // never trust a claim we cannot see
  }
  return claimed;
}

void ApplyLowerBound(int64_t proven_bytes, int64_t spec_bound_bytes,
                     ScheduleResult& result) {
  result.lower_bound_bytes = std::min(
      result.peak_bytes, std::max({result.lower_bound_bytes, proven_bytes, spec_bound_bytes}));
  if (result.lower_bound_bytes == result.peak_bytes) {
    result.status = ScheduleStatus::kOptimal;
  } else if (result.lower_bound_bytes > spec_bound_bytes) {
    result.status = ScheduleStatus::kBounded;
  } else {
    result.status = ScheduleStatus::kHeuristic;
  }
}

}  // namespace ordo
