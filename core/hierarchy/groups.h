#ifndef ORDO_CORE_HIERARCHY_GROUPS_H_
#define ORDO_CORE_HIERARCHY_GROUPS_H_

#include <cstdint>
#include <vector>

#include "core/hierarchy/digraph.h"
#include "core/memory/memory_model.h"

namespace ordo {

struct GroupOptions {
  // Step 1: one group per inferred cell.
  bool cell_groups = true;
  // Steps 2-4: groups from the dominator sets of cell outputs.
  bool dominator_groups = true;
  // Regions of more sequences than this are not grouped: the last join of a
  // network post-dominates nearly all of it, and one group holding the
  // whole graph would hide nothing. NAS cells have tens of sequences and
  // RandWire stages about a hundred; whole networks several hundred.
  int32_t max_group_sequences = 128;
  // The minimal-boundary search of step 3 considers the first this many
  // sequences of a dominator set (in topological order); at most 32.
  int32_t max_boundary_search_sequences = 16;
  // ... and visits at most this many candidate subsets.
  int32_t max_boundary_search_subsets = 4096;
};

// A formed group: its sequences (ascending) and, for a cell, the cell
// output (kNoId for a group made of a dominator set).
struct SequenceGroup {
  std::vector<int32_t> sequences;
  int32_t cell_output = kNoId;
};

// Groups of sequences (HMCOS §3.1.2), each a set that a schedule runs as a
// block. ONNX does not say where the NAS algorithm's cells are, so they are
// inferred.
//
// Cells. A NAS cell ends in a join (NASNet/AmoebaNet/DARTS: the Concat of
// its branches) that post-dominates the whole cell: every path from a cell
// op to the graph's outputs passes through it, while the cell's inputs
// (earlier cells' outputs) also feed later cells. So a cell output is a
// sequence with two or more predecessors, and its cell is the region
// reached from it through predecessors while they are post-dominated by it
// and do not dominate it (a dominator is a waist before the cell, as in
// HMCOS's implementation). Joins are taken latest first, so a cell's inner
// joins (the Adds of its branches) fall inside it rather than forming cells
// of their own; a region is kept when it has 3 to max_group_sequences
// sequences.
//
// Dominator groups (§3.1.2 steps 2-4). For each cell output o, D = the
// sequences o dominates (dominator tree of the sequence graph from a
// virtual root before all sources). Among the subsets C of D that contain o
// and are closed under predecessors within D (so connected, and convex),
// take the one whose boundary sigma(C) = bytes of the tensors defined in C
// and used outside it (or graph outputs) is smallest and at most o's own
// boundary, the larger on ties (the minimal-boundary rule). When C - {o}
// has two or more sequences it becomes a group, taken out of the cells that
// held them: the part of the next cells that consumes o's output and
// shrinks it, scheduled as a unit right after o. The search is exhaustive
// over the first max_boundary_search_sequences of D, within
// max_boundary_search_subsets subsets.
//
// Every group is convex (no path leaves it and comes back), checked when it
// is formed on the graph with the groups formed so far contracted, so the
// groups contracted to single vertices leave a DAG; a group that would break
// this is not formed. Dominator trees: Cooper-Harvey-Kennedy
// (DominatorTree), O(V + E) here; cells O(V + E) each; the boundary search
// O(subsets x region); the convexity checks O(V + E) per group.
//
// `sequences` are the sequences' ops, `sequence_graph` their DAG numbered
// topologically (FormSequences). Deterministic.
std::vector<SequenceGroup> FormGroups(const MemoryModel& model,
                                      const std::vector<std::vector<int32_t>>& sequences,
                                      const Digraph& sequence_graph, const GroupOptions& options);

}  // namespace ordo

#endif  // ORDO_CORE_HIERARCHY_GROUPS_H_
