#ifndef ORDO_CORE_MEMORY_LIVE_MEMORY_H_
#define ORDO_CORE_MEMORY_LIVE_MEMORY_H_

#include <cstdint>
#include <vector>

#include "core/memory/memory_model.h"

namespace ordo {

// The spec's lifetime rules (Lifetimes and the footprint; In-place), written
// once for the simulator, the schedulers and the state spaces.

// A tensor holds memory after the step that produces it when it is read
// later or is a graph (part) output; otherwise only during that step.
inline bool OutlivesProducer(const MemoryModel::TensorInfo& t) {
  return t.live_at_end || !t.consumers.empty();
}

// Whether `op` may write its output over input `t`: `t` is its in-place
// input and not an output. It happens at the step where `op` is `t`'s last
// reader.
inline bool MayOverwrite(const MemoryModel& model, const MemoryModel::OpInfo& op, int32_t t) {
  return t != kNoId && t == op.inplace_input && !model.tensors[t].live_at_end;
}

// Bytes live once steps begin: constant bytes and the inputs that outlive
// the start (read by some op, or outputs). The footprint before step 0 is
// InitialBytes (simulator.h).
int64_t InitialLiveBytes(const MemoryModel& model);

// The live memory of a schedule built one op at a time, by the spec's rules
// (Lifetimes and the footprint): the bytes live between steps, the footprint
// of the step that runs an op next, and the input it overwrites in place.
// Simulate runs a whole schedule through it; greedy previews every ready op
// with it. O(inputs + outputs) per step, no allocation after construction.
// Does not check dependencies (Simulate does). Holds `model`, which must
// outlive it. Not thread-safe; cheap to copy.
class LiveMemory {
 public:
  explicit LiveMemory(const MemoryModel& model);

  struct Step {
    int64_t footprint_bytes = 0;   // while the op runs
    int64_t live_after_bytes = 0;  // once it has run
    int32_t inplace_input = kNoId;  // the input its output overwrites, if any
  };

  // Bytes live between steps: constant bytes, and every tensor produced (or
  // a graph input) that is still to be read or is an output.
  int64_t live_bytes() const { return live_bytes_; }

  // What running `op` next would cost; changes nothing.
  Step Preview(int32_t op) const {
    const MemoryModel::OpInfo& info = model_->ops[op];
    Step step{live_bytes_, live_bytes_, kNoId};
    for (int32_t t : info.outputs) {
      const MemoryModel::TensorInfo& out = model_->tensors[t];
      step.footprint_bytes += out.bytes;
      if (OutlivesProducer(out)) step.live_after_bytes += out.bytes;
    }
    const int32_t inplace = info.inplace_input;
    if (inplace != kNoId && readers_left_[inplace] == 1 && MayOverwrite(*model_, info, inplace)) {
      step.footprint_bytes -= model_->tensors[inplace].bytes;
      step.inplace_input = inplace;
    }
    for (int32_t t : info.inputs) {
      if (readers_left_[t] == 1 && !model_->tensors[t].live_at_end) {
        step.live_after_bytes -= model_->tensors[t].bytes;
      }
    }
    return step;
  }

  // Runs `op`: its inputs lose a reader, its outputs become live.
  Step Run(int32_t op) {
    const Step step = Preview(op);
    live_bytes_ = step.live_after_bytes;
    for (int32_t t : model_->ops[op].inputs) --readers_left_[t];
    return step;
  }

 private:
  const MemoryModel* model_;  // must outlive this
  std::vector<int32_t> readers_left_;
  int64_t live_bytes_ = 0;
};

}  // namespace ordo

#endif  // ORDO_CORE_MEMORY_LIVE_MEMORY_H_
