#ifndef ORDO_CORE_SCHEDULE_SCHEDULE_STATE_SPACE_H_
#define ORDO_CORE_SCHEDULE_SCHEDULE_STATE_SPACE_H_

#include <cstdint>
#include <vector>

#include "core/memory/live_memory.h"
#include "core/memory/memory_model.h"
#include "core/schedule/op_dag.h"

namespace ordo {

// The state space of partial schedules of one MemoryModel, for the exact
// schedulers. A state is the set S of ops scheduled so far, a bitset of
// `words()` uint64 words: everything else follows from S alone, which is what
// makes dynamic programming over S exact (SERENITY §3.1: the zero-indegree
// set z is the signature; z and S determine each other).
//
//   live(S): a tensor is live after the steps of S when it is produced in S
//     or has no producer, and it has a consumer outside S or is live_at_end
//     (plus constant bytes).
//   Run(S, u): the footprint of the step that runs u after S, and live(S+u),
//     by the spec's step rule (StepTable, core/memory/live_memory.h), u
//     reading an input last when every other consumer of it is in S.
//
// Run is O(inputs + outputs + other consumers of u's inputs); ReadyOps is
// O(ops + their predecessors) in the worst case, usually one check per op
// of the 64-op words that can hold a ready op (see word_min_last_pred_);
// ReadyAfter updates a parent's ready list in O(ready + u's consumers).
// With `break_symmetry`, an op is also ready only after the ops that
// InterchangeableChainEdges orders before it: identical branches are then
// advanced in one order instead of every one, and a minimum-peak schedule
// is still among the complete sets (chain_symmetry.h says why; a search for
// another objective may need every order, so the caller says which).
//
// Copies what it needs from the model (no reference kept). Immutable after
// construction; thread-compatible.
class ScheduleStateSpace {
 public:
  ScheduleStateSpace(const MemoryModel& model, bool break_symmetry);

  int32_t num_ops() const { return num_ops_; }
  int32_t words() const { return words_; }

  // live(empty set).
  int64_t initial_live() const { return initial_live_; }
  // The footprint before step 0 (the simulator's initial_bytes): every
  // graph input counts there, even one nobody reads.
  int64_t initial_footprint() const { return initial_footprint_; }
  // A lower bound on Run(S, u).footprint - live(S) over all S and u: the
  // least an op can add to the live bytes at its step.
  int64_t min_step_growth() const { return min_step_growth_; }
  // Random key of each op; the hash of a set is the XOR of its ops' keys
  // (Zobrist), so adding an op updates the hash in O(1).
  uint64_t zobrist(int32_t op) const { return zobrist_[op]; }

  static bool Contains(const uint64_t* set, int32_t op) { return (set[op >> 6] >> (op & 63)) & 1; }
  static void Add(uint64_t* set, int32_t op) { set[op >> 6] |= uint64_t{1} << (op & 63); }

  // Whether `op` is outside `set` and all its producers are in it.
  bool IsReady(const uint64_t* set, int32_t op) const;
  // The ready ops of `set`, ascending (replaces the contents of `ready`).
  void ReadyOps(const uint64_t* set, std::vector<int32_t>& ready) const;
  // ReadyOps(set) from ReadyOps(set - op) in `ready` (op in `set`, ready
  // there): op leaves, and those of its consumers whose producers are now
  // all in `set` join, ascending as ReadyOps gives them. O(|ready| +
  // consumers of op and their producers) instead of a scan of the open ops:
  // the best-first search expands a child of the state it just expanded
  // most of the time (it dives), so it keeps the last ready list.
  void ReadyAfter(const uint64_t* set, int32_t op, std::vector<int32_t>& ready) const;

  // footprint: at the step that runs the op; live_after: live(set + op).
  using Step = StepBytes;
  // Running ready `op` after `set`, whose live bytes are `live`.
  Step Run(const uint64_t* set, int64_t live, int32_t op) const;

  // live(set) of `model` from scratch, O(tensors + edges): for tests.
  static int64_t LiveBytes(const MemoryModel& model, const uint64_t* set);

 private:
  // An input one op may free (StepTable::releases), with the range in
  // other_consumers_ of the tensor's other consumers: the op reads it last
  // when they are all in the set.
  struct InputUse {
    StepTable::Release release;
    int32_t others_begin;
    int32_t others_end;
  };

  bool AllIn(const uint64_t* set, int32_t begin, int32_t end) const;

  int32_t num_ops_ = 0;
  int32_t words_ = 1;
  int64_t initial_live_ = 0;
  int64_t initial_footprint_ = 0;
  int64_t min_step_growth_ = 0;
  std::vector<uint64_t> zobrist_;
  StepTable steps_;
  // Per op, compressed: distinct producers, latest id first (the one most
  // likely still unscheduled, so IsReady usually stops at the first).
  std::vector<int32_t> pred_begin_, preds_;
  // Producers and consumers of each op (ReadyAfter reads the consumers),
  // with the symmetry edges.
  OpDag dag_;
  // Per 64-op word of a set, the least "latest producer" of its ops (-1
  // when one has none): a ready op's latest producer is in the set, so a
  // word whose least is above the set's highest op holds no ready op.
  // With ops in topological order that skips most words past the frontier.
  std::vector<int32_t> word_min_last_pred_;
  // Per op, its latest producer (preds_[pred_begin_[op]]), -1 when none.
  std::vector<int32_t> latest_pred_;
  // Per op, compressed: its InputUses.
  std::vector<int32_t> use_begin_;
  std::vector<InputUse> uses_;
  std::vector<int32_t> other_consumers_;
};

}  // namespace ordo

#endif  // ORDO_CORE_SCHEDULE_SCHEDULE_STATE_SPACE_H_
