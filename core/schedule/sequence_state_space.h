#ifndef ORDO_CORE_SCHEDULE_SEQUENCE_STATE_SPACE_H_
#define ORDO_CORE_SCHEDULE_SEQUENCE_STATE_SPACE_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "core/hierarchy/hierarchical_graph.h"
#include "core/memory/live_memory.h"
#include "core/memory/memory_model.h"

namespace ordo {

// The state space of partial schedules at the granularity of sequences
// (HMCOS §3.1.1), for the hierarchical schedulers: ScheduleStateSpace's
// rules with one step running a whole sequence. A state is the set of
// sequences run so far, a bitset of `words()` words; the live bytes after
// it depend on the set alone.
//
// RunSequence(S, s) is HMCOS's ScheduleVertex for a sequence (Algorithm 2,
// lines 2-7, Equations 4 and 5) under the spec's step rule (StepTable,
// core/memory/live_memory.h): an op of s reads an input last when it is
// its last reader in s and every other sequence reading it is in S (the
// uses_after count of U_i reaching zero).
// So the footprints equal the simulator's for any schedule that runs the
// sequences of S, then s's ops in order.
//
// RunSequence is O(ops of s + their inputs + the other readers of those
// inputs). Copies what it needs (no reference to the model or graph kept).
// Immutable; thread-compatible.
class SequenceStateSpace {
 public:
  SequenceStateSpace(const MemoryModel& model, const HierarchicalGraph& graph);

  int32_t num_sequences() const { return num_sequences_; }
  int32_t words() const { return words_; }
  // Live bytes after no step (ScheduleStateSpace::initial_live).
  int64_t initial_live() const { return initial_live_; }
  // The footprint before step 0 (the simulator's initial_bytes).
  int64_t initial_footprint() const { return initial_footprint_; }
  // Random key per sequence; a set's hash is the XOR of its keys.
  uint64_t zobrist(int32_t s) const { return zobrist_[s]; }
  // The ops of sequence s, in order.
  absl::Span<const int32_t> ops(int32_t s) const {
    return {ops_.data() + op_begin_[s], static_cast<size_t>(op_begin_[s + 1] - op_begin_[s])};
  }

  static bool Contains(const uint64_t* set, int32_t s) { return (set[s >> 6] >> (s & 63)) & 1; }
  static void Add(uint64_t* set, int32_t s) { set[s >> 6] |= uint64_t{1} << (s & 63); }

  struct Run {
    int64_t peak;        // the highest footprint of s's steps
    int64_t live_after;  // live bytes after s
  };
  // Runs sequence `s` after the sequences of `set` (live bytes `live`); s's
  // producers must all be in `set`.
  Run RunSequence(const uint64_t* set, int64_t live, int32_t s) const;

 private:
  // An input one op of a sequence frees when `others` (the other sequences
  // reading it) are all done: its last reader in the sequence.
  struct Death {
    StepTable::Release release;
    int32_t others_begin, others_end;  // range in others_
  };
  struct OpStep {
    StepBytes added;                   // StepTable::added of the op
    int32_t deaths_begin, deaths_end;  // range in deaths_
  };

  void AddOp(const MemoryModel& model, const StepTable& table, const HierarchicalGraph& graph,
             int32_t s, int32_t op, const std::vector<int32_t>& last_reader);

  int32_t num_sequences_ = 0;
  int32_t words_ = 1;
  int64_t initial_live_ = 0;
  int64_t initial_footprint_ = 0;
  std::vector<uint64_t> zobrist_;
  std::vector<int32_t> op_begin_, ops_;
  std::vector<OpStep> steps_;  // parallel to ops_
  std::vector<Death> deaths_;
  std::vector<int32_t> others_;
};

}  // namespace ordo

#endif  // ORDO_CORE_SCHEDULE_SEQUENCE_STATE_SPACE_H_
