#ifndef ORDO_CORE_MEMORY_LIVE_MEMORY_H_
#define ORDO_CORE_MEMORY_LIVE_MEMORY_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
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

// The bytes of one step of a schedule: while its op runs, and once it has.
struct StepBytes {
  int64_t footprint = 0;
  int64_t live_after = 0;
};

// The spec's step rule (Lifetimes and the footprint; In-place), precomputed
// per op so that the simulator, greedy and the exact state spaces apply one
// definition in their inner loops. Running op u on live bytes L:
//   Start: L + (bytes of u's outputs) while u runs, L + (bytes of u's
//     outputs that outlive it, OutlivesProducer) after it;
//   Free, for each input of u that u reads last (the caller knows: it
//     depends on what ran before): the input dies after the step, and when
//     u may write over it (MayOverwrite) it costs nothing during the step.
// Only inputs that can die are listed (not live_at_end), in the order of
// OpInfo::inputs. Built in O(ops + edges); holds no reference to the
// model; immutable, thread-compatible.
class StepTable {
 public:
  // An input that `op` frees when it reads it last.
  struct Release {
    int64_t bytes;
    int32_t tensor;
    bool overwritten;  // the op's output is written over it
  };

  explicit StepTable(const MemoryModel& model);

  // The rule for one op, which the table holds for every op: returns what
  // `op` adds and passes each input it may free to `release(Release)`, in
  // the order of OpInfo::inputs. For callers that need one op's step
  // without the table (OpStepBytes).
  template <typename ReleaseFn>
  static StepBytes OpRule(const MemoryModel& model, int32_t op, ReleaseFn&& release) {
    const MemoryModel::OpInfo& info = model.ops[op];
    StepBytes added;
    for (int32_t t : info.outputs) {
      added.footprint += model.tensors[t].bytes;
      if (OutlivesProducer(model.tensors[t])) added.live_after += model.tensors[t].bytes;
    }
    for (int32_t t : info.inputs) {
      if (model.tensors[t].live_at_end) continue;  // never dies
      release(Release{model.tensors[t].bytes, t, MayOverwrite(model, info, t)});
    }
    return added;
  }

  int32_t num_ops() const { return static_cast<int32_t>(added_.size()); }

  // What running `op` adds before any of its inputs is freed: the bytes of
  // its outputs while it runs, of those that outlive it after. A caller
  // may keep a copy beside its own per-op data and start from it.
  StepBytes added(int32_t op) const { return added_[op]; }
  // Running an op that adds `added` on `live` bytes, before any of its
  // inputs is freed.
  static StepBytes Start(const StepBytes& added, int64_t live) {
    return {live + added.footprint, live + added.live_after};
  }
  StepBytes Start(int32_t op, int64_t live) const { return Start(added_[op], live); }
  // The inputs `op` may free, each when it is their last reader.
  absl::Span<const Release> releases(int32_t op) const {
    return {releases_.data() + release_begin_[op],
            static_cast<size_t>(release_begin_[op + 1] - release_begin_[op])};
  }
  // The step's op reads `release` last.
  static void Free(const Release& release, StepBytes& step) {
    step.live_after -= release.bytes;
    if (release.overwritten) step.footprint -= release.bytes;
  }

 private:
  std::vector<StepBytes> added_;
  std::vector<int32_t> release_begin_;  // per op, into releases_; num_ops + 1
  std::vector<Release> releases_;
};

// The live memory of a schedule built one op at a time, by StepTable's rule:
// the bytes live between steps, the footprint of the step that runs an op
// next, and the input it overwrites in place. Simulate runs a whole schedule
// through it; greedy previews every ready op with it. O(inputs that may die)
// per step, no allocation after construction. Does not check dependencies
// (Simulate does). Holds `model`, which must outlive it. Not thread-safe.
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
    StepBytes bytes = steps_.Start(op, live_bytes_);
    int32_t inplace = kNoId;
    for (const StepTable::Release& release : steps_.releases(op)) {
      if (readers_left_[release.tensor] != 1) continue;
      StepTable::Free(release, bytes);
      if (release.overwritten) inplace = release.tensor;
    }
    return {bytes.footprint, bytes.live_after, inplace};
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
  StepTable steps_;
  std::vector<int32_t> readers_left_;
  int64_t live_bytes_ = 0;
};

}  // namespace ordo

#endif  // ORDO_CORE_MEMORY_LIVE_MEMORY_H_
