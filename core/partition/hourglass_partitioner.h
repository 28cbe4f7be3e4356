#ifndef ORDO_CORE_PARTITION_HOURGLASS_PARTITIONER_H_
#define ORDO_CORE_PARTITION_HOURGLASS_PARTITIONER_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "core/memory/memory_model.h"

namespace ordo {

// One self-contained piece of a scheduling problem: a plain value, so it can
// be scheduled anywhere (a thread, a worker) and its order mapped back.
struct Part {
  // The sub-problem. Tensors entering the part have producer kNoId; tensors
  // still needed after it (or graph outputs) are live_at_end; tensors live
  // across the part but untouched by it are folded into constant_bytes, with
  // the whole model's constant bytes. Options are the whole model's.
  MemoryModel model;
  // Part op id -> op id in the whole model, ascending (so the part's model
  // order is the whole model's order restricted to the part).
  std::vector<int32_t> ops;
};

struct Partition {
  // In the order every schedule runs them.
  std::vector<Part> parts;
};

// Divide-and-conquer of SERENITY §3.2 (Wilken et al. 2000): splits a
// scheduling problem at cut ops, the ops every other op is an ancestor or a
// descendant of ("hourglass" waists, the single-input single-output cells of
// NAS and random-wired networks, and every op of a chain). Every schedule
// runs the ops before a cut, then the cut, then the ops after it, so each
// part (the ops after one cut up to and including the next) is a contiguous
// block of every schedule, and the blocks' orders are independent.
//
// Exactness. The footprint at a step of the whole schedule is the sum of the
// tensors live at that step. A tensor touched by the part (produced or read
// in it) is live at that step in the whole exactly when it is in the part's
// model: a tensor from an earlier part is live from the part's start and
// dies at its last reader in the part unless a later part reads it
// (live_at_end), which is also when the whole lets it die; an in-place
// write is allowed in the whole exactly when the part allows it (its
// earlier readers are done, later ones would make it live_at_end). Tensors
// live across the part without being touched are constant_bytes. So each
// step's footprint is the same in the part and in the whole. The part's
// footprint before its step 0 is the live memory after the previous part's
// last step, at most that step's footprint (a step's footprint includes
// everything live after it); for the first part it is the whole's. Hence
// peak(concatenation) = max over parts of peak(part order), every schedule
// of the whole is such a concatenation, and concatenating optimal part
// orders is optimal for the whole; likewise the max of the parts' lower
// bounds is a lower bound for the whole. (Tests check the peak identity
// with the simulator on random graphs.)
//
// Algorithm, O(ops + tensors + edges): in a topological order pi, op c at
// position k is a cut exactly when every op after it has a producer at
// position >= k (by induction along pi, each is then a descendant of c) and
// every op before it has a consumer at position <= k (each an ancestor):
// a suffix minimum of the latest producer position and a prefix maximum of
// the earliest consumer position. Consecutive parts are merged while their
// total stays within `merge_up_to_ops` (exactness is unchanged: a union of
// consecutive blocks is still a block); big parts stay as they are.
//
// Stateless; thread-safe.
class HourglassPartitioner {
 public:
  struct Options {
    // Merge consecutive parts while the merged part has at most this many
    // ops: fewer, bigger trivial parts cost less than many tiny ones.
    int32_t merge_up_to_ops = 16;
  };

  HourglassPartitioner() = default;
  explicit HourglassPartitioner(Options options) : options_(options) {}

  // The cut ops of `model`, in execution order. The model's dependencies
  // must be acyclic (models built from a Graph are).
  std::vector<int32_t> CutOps(const MemoryModel& model) const;

  // Splits `model` after each cut op (subject to merging). A model without
  // cuts, or with no ops, is one part.
  Partition Split(const MemoryModel& model) const;

 private:
  Options options_;
};

// The order of the whole model that runs the parts in turn, each in
// `part_orders[i]` (part op ids).
std::vector<int32_t> ConcatenatePartOrders(const Partition& partition,
                                           absl::Span<const std::vector<int32_t>> part_orders);

}  // namespace ordo

#endif  // ORDO_CORE_PARTITION_HOURGLASS_PARTITIONER_H_
