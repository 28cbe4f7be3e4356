#include "core/schedule/schedule_window.h"

#include <algorithm>
#include <utility>

#include "core/memory/live_memory.h"
#include "core/memory/simulator.h"
#include "core/memory/sub_model.h"
#include "core/util/check.h"
#include "core/util/status_macros.h"

namespace ordo {
namespace {

// Chooses the window's tensors and constant bytes (ScheduleWindow's
// comment); SubModelBuilder renumbers.
class WindowBuilder {
 public:
  WindowBuilder(const MemoryModel& model, absl::Span<const int32_t> order, int32_t begin,
                int32_t end)
      : model_(model), begin_(begin), end_(end), position_(model.num_ops()) {
    for (int32_t k = 0; k < static_cast<int32_t>(order.size()); ++k) position_[order[k]] = k;
    window_.ops.assign(order.begin() + begin, order.begin() + end);
  }

  ScheduleWindow Build() && {
    int64_t constant_bytes = model_.constant_bytes;
    for (int32_t t = 0; t < model_.num_tensors(); ++t) PlaceTensor(t, constant_bytes);
    window_.model = SubModelBuilder(model_).Build(window_.ops, tensors_, constant_bytes);
    return std::move(window_);
  }

 private:
  bool Inside(int32_t op) const { return position_[op] >= begin_ && position_[op] < end_; }

  void PlaceTensor(int32_t t, int64_t& constant_bytes) {
    const MemoryModel::TensorInfo& info = model_.tensors[t];
    const bool produced_inside = info.producer != kNoId && Inside(info.producer);
    bool read_inside = false, read_after = false;
    for (int32_t c : info.consumers) {
      read_inside = read_inside || Inside(c);
      read_after = read_after || position_[c] >= end_;
    }
    if (produced_inside || read_inside) {
      tensors_.push_back({t, info.live_at_end || read_after});
      return;
    }
    // Untouched: counts only if live across the whole window.
    const bool born_before = info.producer == kNoId || position_[info.producer] < begin_;
    if (born_before && OutlivesProducer(info) && (info.live_at_end || read_after)) {
      constant_bytes += info.bytes;
    }
  }

  const MemoryModel& model_;
  const int32_t begin_, end_;
  std::vector<int32_t> position_;
  std::vector<SubModelTensor> tensors_;
  ScheduleWindow window_;
};

// The window's best order, if it lowers the peak of the window's steps.
absl::StatusOr<bool> ImproveWindow(const MemoryModel& model, std::vector<int32_t>& order,
                                   int32_t begin, int32_t end, const ScheduleLimits& limits,
                                   int64_t state_bytes, bool& proved) {
  ScheduleWindow window = ExtractWindow(model, order, begin, end);
  std::vector<int32_t> current(window.ops.size());
  for (int32_t i = 0; i < static_cast<int32_t>(current.size()); ++i) current[i] = i;
  ScheduleLimits window_limits = limits;
  window_limits.max_state_bytes = std::min(limits.max_state_bytes, state_bytes);
  ORDO_ASSIGN_OR_RETURN(const int64_t before, SimulatePeak(window.model, current));
  ORDO_ASSIGN_OR_RETURN(ScheduleResult best,
                        DpScheduler().Improve(window.model, window_limits, current, "window"));
  proved = best.status == ScheduleStatus::kOptimal;
  if (best.peak_bytes >= before) return false;
  for (int32_t i = 0; i < static_cast<int32_t>(best.order.size()); ++i) {
    order[begin + i] = window.ops[best.order[i]];
  }
  return true;
}

}  // namespace

ScheduleWindow ExtractWindow(const MemoryModel& model, absl::Span<const int32_t> order,
                             int32_t begin, int32_t end) {
  ORDO_CHECK(0 <= begin && begin <= end && end <= static_cast<int32_t>(order.size()));
  return WindowBuilder(model, order, begin, end).Build();
}

absl::StatusOr<WindowRefinementResult> RefineAroundPeak(const MemoryModel& model,
                                                        std::vector<int32_t> order, int64_t stop_at,
                                                        const WindowRefinementOptions& options,
                                                        const ScheduleLimits& limits) {
  WindowRefinementResult result;
  const int32_t n = static_cast<int32_t>(order.size());
  while (result.windows_searched < options.max_windows && !limits.Expired()) {
    ORDO_ASSIGN_OR_RETURN(SimulationResult simulation, Simulate(model, order));
    result.peak_bytes = simulation.peak_bytes;
    const int32_t k = simulation.peak_step;
    if (k < 0 || simulation.peak_bytes <= stop_at) break;  // nothing a window can change
    bool improved = false;
    for (int32_t size : options.window_ops) {
      if (limits.Expired() || result.windows_searched >= options.max_windows) break;
      const int32_t end = std::min(n, std::max(k + 1, k - size / 2 + size));
      const int32_t begin = std::max(0, end - size);
      bool proved = false;
      ++result.windows_searched;
      ORDO_ASSIGN_OR_RETURN(improved, ImproveWindow(model, order, begin, end, limits,
                                                    options.window_state_bytes, proved));
      // A larger window only helps when this one is exhausted; one that hit
      // its limits would hit them again.
      if (improved || !proved || (begin == 0 && end == n)) break;
    }
    if (!improved) break;
    ++result.rounds;
  }
  ORDO_ASSIGN_OR_RETURN(result.peak_bytes, SimulatePeak(model, order));
  result.order = std::move(order);
  return result;
}

}  // namespace ordo
