#ifndef ORDO_CORE_HIERARCHY_SEQUENCES_H_
#define ORDO_CORE_HIERARCHY_SEQUENCES_H_

#include <cstdint>
#include <vector>

#include "core/hierarchy/digraph.h"
#include "core/memory/memory_model.h"

namespace ordo {

// Cuts the ops of `model` into sequences (HMCOS §3.1.1): runs of ops that
// every schedule may execute back to back without raising its peak, so a
// scheduler can treat each as one vertex.
//
// Structure: op v follows op u in a sequence only when u's one successor is
// v, v's one predecessor is u, and v reads nothing but u's outputs (a graph
// input read later in a sequence would make its footprints depend on the
// order of other ops). Memory, relative to the live bytes before the first
// op, by the spec's rules (stable = at an op's step, transient = after it):
//   Condition 1: the first op's stable footprint is the sequence's highest;
//   Condition 2: transient footprints never increase.
// Footprints of the first op count an input as dying there only when no
// other op reads it (and it is no graph output), and its in-place discount
// only then: the worst case, so the conditions hold whatever the rest of the
// schedule does. Walking each maximal chain of such links, a new sequence
// starts where appending the next op would break a condition.
//
// Why this loses nothing: take any schedule and move the ops v2..vn of a
// sequence to just after v1. Each moved step costs at most v1's step
// (Condition 1); an op that ran between them now sees the sequence's last
// transient footprint instead of an earlier one, no more (Condition 2); no
// other tensor's lifetime changes. So some optimal schedule runs every
// sequence contiguously, and a dynamic program over sequences stays exact.
//
// Returns the sequences, each its ops in execution order, numbered in the
// topological order of their first ops (so every dependency between two
// sequences goes from a lower to a higher number). O(ops + edges).
std::vector<std::vector<int32_t>> FormSequences(const MemoryModel& model, const Digraph& ops);

// One sequence per op, numbered in topological order: the hierarchy
// switched off (the ablation's "no hierarchy").
std::vector<std::vector<int32_t>> SingletonSequences(const Digraph& ops);

}  // namespace ordo

#endif  // ORDO_CORE_HIERARCHY_SEQUENCES_H_
