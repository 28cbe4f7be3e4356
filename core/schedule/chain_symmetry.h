#ifndef ORDO_CORE_SCHEDULE_CHAIN_SYMMETRY_H_
#define ORDO_CORE_SCHEDULE_CHAIN_SYMMETRY_H_

#include <cstdint>
#include <vector>

#include "core/memory/memory_model.h"
#include "core/schedule/op_dag.h"

namespace ordo {

// Ordering edges that break the symmetry of interchangeable chains, so that
// an exact search does not visit every permutation of identical branches
// (48 identical Conv-BN-Relu branches summed by one op are 4^48 sets of
// scheduled ops, and 20,825 sets once ordered).
//
// A chain is a maximal path of ops in which each op's one output is read by
// the next op only, and that next op has no other such input. Two chains
// are interchangeable when position by position they have the same output
// sizes and in-place input, the same shared inputs (tensor ids), inputs of
// their own of the same size, producer and lifetime (a Split's outputs,
// say), and last outputs read by the same ops. Swapping them then maps the
// memory model onto itself but for one thing: an op outside that reads
// both chains' ends and may write over one of them would write over the
// other. The two are of one size and die at the same step (they have the
// same readers), so no footprint of any schedule changes.
//
// The edges say: among interchangeable chains c_1..c_k (ordered by their
// first op), op i of c_j runs after op i of c_(j-1). That keeps an optimal
// schedule: in any schedule, let each step that advances some chain of the
// group from progress p advance instead the first chain at progress p.
// Chains of equal progress swap freely, so every step's footprint stays
// the same, and the chains' progress then never increases from c_1 to c_k,
// which is what the edges require. Any subset of the edges is satisfied
// too; only edges from a lower op id to a higher one are returned, so the
// ids stay a topological order of the constrained graph.
//
// O(ops + edges of the model), sorted by `after`.
std::vector<OrderEdge> InterchangeableChainEdges(const MemoryModel& model);

}  // namespace ordo

#endif  // ORDO_CORE_SCHEDULE_CHAIN_SYMMETRY_H_
