#ifndef ORDO_CORE_TESTING_SCHEDULE_CHECKS_H_
#define ORDO_CORE_TESTING_SCHEDULE_CHECKS_H_

#include "absl/status/statusor.h"
#include "core/graph/graph.h"
#include "core/memory/memory_model.h"
#include "core/memory/simulator.h"
#include "core/schedule/scheduler.h"
#include "gtest/gtest.h"

namespace ordo::testing {

// What every scheduler's result must satisfy: a valid order whose
// re-simulated peak is the one reported, and an honest lower bound between
// the spec's bound and the peak.
inline void ExpectValidSchedule(const MemoryModel& model, const ScheduleResult& result) {
  absl::StatusOr<int64_t> peak = SimulatePeak(model, result.order);
  ASSERT_TRUE(peak.ok()) << peak.status();
  EXPECT_EQ(result.peak_bytes, *peak);
  EXPECT_LE(result.lower_bound_bytes, result.peak_bytes);
  EXPECT_GE(result.lower_bound_bytes, MemoryLowerBound(model));
}

}  // namespace ordo::testing

#endif  // ORDO_CORE_TESTING_SCHEDULE_CHECKS_H_
