#ifndef ORDO_CORE_SCHEDULE_SCHEDULE_WINDOW_H_
#define ORDO_CORE_SCHEDULE_SCHEDULE_WINDOW_H_

#include <cstdint>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/memory/memory_model.h"
#include "core/schedule/dp_scheduler.h"
#include "core/schedule/scheduler.h"

namespace ordo {

// The steps [begin, end) of a fixed schedule as a scheduling problem of
// their own: reordering them, with every other step where it is, is
// scheduling `model`.
struct ScheduleWindow {
  // Built as HourglassPartitioner builds its parts: tensors produced before
  // the window and read in it have no producer; tensors read after it (or
  // graph outputs) are live_at_end; tensors live across it untouched are
  // constant_bytes. So every step's footprint is the same here and in the
  // whole schedule, and the footprint before step 0 here is the live memory
  // after the step before the window, at most that step's footprint (or the
  // whole's initial bytes when begin is 0). Hence the whole schedule's peak
  // after reordering the window is max(peak outside it, window peak).
  MemoryModel model;
  // Window op id -> op id of the whole model; window op i ran at step
  // begin + i, so the identity is the window's current order.
  std::vector<int32_t> ops;
};

// O(ops + tensors + edges). `order` must be a valid schedule of `model`
// and 0 <= begin <= end <= ops.
ScheduleWindow ExtractWindow(const MemoryModel& model, absl::Span<const int32_t> order,
                             int32_t begin, int32_t end);

struct WindowRefinementOptions {
  // Window sizes tried around a peak step, smallest first: a larger one only
  // when the smaller was solved exactly without improving.
  std::vector<int32_t> window_ops = {16, 32, 64};
  // State bytes one window's search may use (also capped by the limits').
  int64_t window_state_bytes = int64_t{8} << 20;
  // Stop after this many windows searched in all: with no deadline, this
  // and window_state_bytes bound the work.
  int32_t max_windows = 48;
};

struct WindowRefinementResult {
  std::vector<int32_t> order;
  int64_t peak_bytes = 0;
  int32_t rounds = 0;  // windows that lowered the peak of their steps
  int32_t windows_searched = 0;
};

// Improves a schedule around its peak (ordo's addition to HMCOS): take a
// window of steps around the first step at the peak, everything else
// fixed, and find its best order exactly (DpScheduler::Improve, seeded with
// the current order, so never worse); if the window's peak drops, splice
// it in and repeat, which removes one step at the peak per round; if it
// cannot drop, try the next larger window. Stops when no window helps, at
// `stop_at` (a proven lower bound: nothing to gain below it), after
// max_windows searches, or on a limit. Local search: the result is not
// optimal in general. Errors only on a bug (an order failing the simulator).
absl::StatusOr<WindowRefinementResult> RefineAroundPeak(const MemoryModel& model,
                                                        std::vector<int32_t> order, int64_t stop_at,
                                                        const WindowRefinementOptions& options,
                                                        const ScheduleLimits& limits);

}  // namespace ordo

#endif  // ORDO_CORE_SCHEDULE_SCHEDULE_WINDOW_H_
