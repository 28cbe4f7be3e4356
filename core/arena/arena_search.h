#ifndef ORDO_CORE_ARENA_ARENA_SEARCH_H_
#define ORDO_CORE_ARENA_ARENA_SEARCH_H_

#include <cstdint>
#include <string>
#include <vector>

#include "core/arena/arena_planner.h"
#include "core/arena/arena_problem.h"

namespace ordo {

enum class ArenaSearchOutcome : int8_t {
  kFound,       // offsets fit in the capacity
  kInfeasible,  // proved: no placement fits in the capacity
  kAborted,     // node budget or deadline hit first
};

struct ArenaSearchResult {
  ArenaSearchOutcome outcome = ArenaSearchOutcome::kAborted;
  // One per block when kFound; empty otherwise.
  std::vector<int64_t> offsets;
  int64_t nodes = 0;
};

// Static block priority of the search, MiniMalloc's preordering heuristics:
// a string of keys compared in turn: 'W' lifetime width in steps, 'A' area
// (size x width), 'T' the largest total size of blocks live at a step of the
// block, 'Z' size, all larger first; 'F' first step, 'E' last step, earlier
// first. Remaining ties: lower block index.
using ArenaPreordering = std::string;

// Decides whether the blocks of `problem` fit in `capacity` bytes by
// depth-first branch and bound over canonical placements (MiniMalloc,
// Moffitt, ASPLOS 2023, §3-4):
//  - Canonical: blocks are placed in non-decreasing offset order, each at its
//    lowest offset above the placed blocks it overlaps in time; any solution
//    can be pushed down into this form, so nothing is lost. A node branches
//    on which unplaced block goes next, in (lowest offset, preordering)
//    order (dynamic ordering).
//  - Dominance: a block is not placed at or above the lowest top any unplaced
//    block could reach (that block could go below it first).
//  - Section inference: at every step, the floor (the current offset, or the
//    top of placed blocks there) plus the sizes of the unplaced blocks live
//    there must fit in the capacity.
//  - Dynamic decomposition: once no unplaced block spans the boundary
//    between two steps, the unplaced blocks on either side no longer
//    interact; each side is searched on its own, in turn, and a side that
//    fails fails the placement that split them (no backtracking into a side
//    already solved). On networks this keeps a hard region from being
//    re-searched for every arrangement of unrelated layers.
// Gives up (kAborted) at once when more than 2^23 pairs of blocks are live
// together, and when the stack would hold more than 2^23 candidates, so
// memory stays bounded on any input.
// Iterative (explicit stack, no recursion); undo logs restore state on
// backtrack. Per node O(B + k log k + S) for B blocks, S steps of the current
// part and k blocks whose lowest offset the placement raised (the child's
// candidate order is derived from its parent's; O(B log B) only for the
// first node of a part); candidate buffers are reused. Exponential in the worst case: bounded by `max_nodes` and `limits`
// (deadline, checked every 256 nodes). Deterministic for a given node budget.
ArenaSearchResult SearchArena(const ArenaProblem& problem, int64_t capacity,
                              const ArenaPreordering& preordering, int64_t max_nodes,
                              const ArenaLimits& limits);

// Pairs of positive-size blocks live at a common step. O(B log B).
int64_t CountOverlappingPairs(const ArenaProblem& problem);

// MiniMalloc's round robin: runs SearchArena with each preordering in
// {"TF", "WAT", "TWA", "FT", "TAW"} under a node limit that starts at the
// block count and doubles each round, until one finds a placement or proves
// there is none, `max_nodes` nodes have been spent in total, or the deadline
// passes. Restarting with other orders tames the heavy tail of a single
// depth-first search.
ArenaSearchResult SearchArenaRoundRobin(const ArenaProblem& problem, int64_t capacity,
                                        int64_t max_nodes, const ArenaLimits& limits);

}  // namespace ordo

#endif  // ORDO_CORE_ARENA_ARENA_SEARCH_H_
