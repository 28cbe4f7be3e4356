#include "core/memory/simulator.h"

#include <algorithm>
#include <string>

#include "absl/container/inlined_vector.h"
#include "absl/strings/str_cat.h"
#include "core/memory/live_memory.h"

namespace ordo {
namespace {

absl::Status CheckSchedule(const MemoryModel& model,
                           absl::Span<const int32_t> schedule,
                           std::vector<int32_t>& step_of) {
  const int32_t n = model.num_ops();
  if (static_cast<int32_t>(schedule.size()) != n) {
    return absl::InvalidArgumentError(absl::StrCat(
        "schedule has ", schedule.size(), " ops; the graph has ", n));
  }
  step_of.assign(n, -1);
  for (int32_t step = 0; step < n; ++step) {
    const int32_t op = schedule[step];
    if (op < 0 || op >= n) {
      return absl::InvalidArgumentError(
          absl::StrCat("schedule step ", step, ": op id ", op, " out of range"));
    }
    if (step_of[op] != -1) {
      return absl::InvalidArgumentError(
          absl::StrCat("schedule runs op ", op, " twice"));
    }
    step_of[op] = step;
  }
  for (int32_t op = 0; op < n; ++op) {
    for (int32_t t : model.ops[op].inputs) {
      const int32_t producer = model.tensors[t].producer;
      if (producer != kNoId && step_of[producer] > step_of[op]) {
        return absl::InvalidArgumentError(
            absl::StrCat("schedule runs op ", op, " at step ", step_of[op],
                         " before its producer op ", producer, " (step ",
                         step_of[producer], ")"));
      }
    }
  }
  return absl::OkStatus();
}

}  // namespace

int64_t InitialBytes(const MemoryModel& model) {
  int64_t bytes = model.constant_bytes;
  for (const MemoryModel::TensorInfo& t : model.tensors) {
    if (t.producer == kNoId) bytes += t.bytes;
  }
  return bytes;
}

int64_t OpStepBytes(const MemoryModel& model, int32_t op) {
  // The op's step at its cheapest, by StepTable's rule: every input live
  // (and the constant bytes), and the op their last reader.
  int64_t live = model.constant_bytes;
  for (int32_t t : model.ops[op].inputs) live += model.tensors[t].bytes;
  absl::InlinedVector<StepTable::Release, 4> releases;
  const StepBytes added = StepTable::OpRule(
      model, op, [&](const StepTable::Release& release) { releases.push_back(release); });
  StepBytes step = StepTable::Start(added, live);
  for (const StepTable::Release& release : releases) StepTable::Free(release, step);
  return step.footprint;
}

int64_t MemoryLowerBound(const MemoryModel& model) {
  int64_t bound = InitialBytes(model);
  for (int32_t op = 0; op < model.num_ops(); ++op) {
    bound = std::max(bound, OpStepBytes(model, op));
  }
  return bound;
}

absl::StatusOr<SimulationResult> Simulate(const MemoryModel& model,
                                          absl::Span<const int32_t> schedule) {
  std::vector<int32_t> step_of;
  if (absl::Status status = CheckSchedule(model, schedule, step_of); !status.ok()) {
    return status;
  }
  const int32_t n = model.num_ops();
  const int32_t num_tensors = model.num_tensors();
  SimulationResult result;
  result.intervals.assign(num_tensors, LiveInterval{});
  result.has_interval.assign(num_tensors, false);
  result.inplace_source.assign(num_tensors, kNoId);
  result.step_bytes.resize(n);

  result.initial_bytes = InitialBytes(model);
  for (int32_t t = 0; t < num_tensors; ++t) {
    const MemoryModel::TensorInfo& info = model.tensors[t];
    if (info.producer != kNoId || info.bytes == 0) continue;
    result.has_interval[t] = true;
    result.intervals[t] = {-1, info.live_at_end ? n - 1 : -1};
  }
  result.peak_bytes = result.initial_bytes;

  // The footprints come from LiveMemory (the rules); the intervals are the
  // simulator's own bookkeeping.
  LiveMemory memory(model);
  for (int32_t step = 0; step < n; ++step) {
    const MemoryModel::OpInfo& op = model.ops[schedule[step]];
    const LiveMemory::Step run = memory.Run(schedule[step]);
    const int64_t footprint = run.footprint_bytes;
    for (int32_t t : op.outputs) {
      const MemoryModel::TensorInfo& info = model.tensors[t];
      // Like a 0-byte input: it occupies nothing, so it gets no arena block
      // (graph outputs under io_outside_arena).
      result.has_interval[t] = info.bytes > 0;
      result.intervals[t] = {step, info.live_at_end ? n - 1 : step};
    }
    if (run.inplace_input != kNoId) result.inplace_source[op.outputs[0]] = run.inplace_input;
    for (int32_t t : op.inputs) {
      if (!model.tensors[t].live_at_end) result.intervals[t].last = step;
    }
    result.step_bytes[step] = footprint;
    if (footprint > result.peak_bytes) {
      result.peak_bytes = footprint;
      result.peak_step = step;
    }
  }
  return result;
}

absl::StatusOr<int64_t> SimulatePeak(const MemoryModel& model,
                                     absl::Span<const int32_t> schedule) {
  absl::StatusOr<SimulationResult> result = Simulate(model, schedule);
  if (!result.ok()) return result.status();
  return result->peak_bytes;
}

}  // namespace ordo
