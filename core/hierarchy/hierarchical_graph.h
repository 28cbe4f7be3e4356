#ifndef ORDO_CORE_HIERARCHY_HIERARCHICAL_GRAPH_H_
#define ORDO_CORE_HIERARCHY_HIERARCHICAL_GRAPH_H_

#include <cstdint>
#include <vector>

#include "core/hierarchy/digraph.h"
#include "core/hierarchy/groups.h"
#include "core/memory/memory_model.h"

namespace ordo {

struct HierarchyOptions {
  // Join ops into sequences (§3.1.1); off: one sequence per op.
  bool sequences = true;
  // Which groups to form (§3.1.2); both off: no groups.
  GroupOptions groups;
};

// The hierarchical graph of HMCOS §3.1 (Definition 3.1) over a
// MemoryModel, with its two levels: sequences of ops (FormSequences) and
// groups of sequences (FormGroups). The vertices a scheduler sees are the
// top level: every assembled group, and every sequence in no assembled
// group. Disassemble() frees a group's sequences to the top level
// (Algorithm 1, line 7); nothing else changes after Build.
//
// Sequences are numbered topologically, so are the top-level vertices
// built from them; group ids are stable across disassembly. Holds no
// reference to the model. Build is O(ops + edges) plus FormGroups' cost.
// Not thread-safe (Disassemble mutates).
class HierarchicalGraph {
 public:
  // `model`'s dependencies must be acyclic (models built from a Graph are).
  static HierarchicalGraph Build(const MemoryModel& model, const HierarchyOptions& options);

  int32_t num_ops() const { return static_cast<int32_t>(sequence_of_op_.size()); }
  int32_t num_sequences() const { return static_cast<int32_t>(sequences_.size()); }
  // Ops of sequence `s`, in execution order.
  const std::vector<int32_t>& sequence(int32_t s) const { return sequences_[s]; }
  int32_t sequence_of_op(int32_t op) const { return sequence_of_op_[op]; }
  // Dependencies between sequences (numbered topologically).
  const Digraph& sequence_graph() const { return sequence_graph_; }

  // Every group formed, assembled or not.
  int32_t num_groups() const { return static_cast<int32_t>(groups_.size()); }
  // Sequences of group `g`, ascending.
  const std::vector<int32_t>& group(int32_t g) const { return groups_[g].sequences; }
  bool is_cell(int32_t g) const { return groups_[g].cell_output != kNoId; }
  bool assembled(int32_t g) const { return assembled_[g]; }
  // The assembled group holding sequence `s`, or kNoId.
  int32_t group_of_sequence(int32_t s) const {
    const int32_t g = group_of_[s];
    return g != kNoId && assembled_[g] ? g : kNoId;
  }
  int32_t num_assembled_groups() const;

  void Disassemble(int32_t g) { assembled_[g] = false; }

 private:
  std::vector<std::vector<int32_t>> sequences_;
  std::vector<int32_t> sequence_of_op_;
  Digraph sequence_graph_;
  std::vector<SequenceGroup> groups_;
  std::vector<int32_t> group_of_;
  std::vector<bool> assembled_;
};

}  // namespace ordo

#endif  // ORDO_CORE_HIERARCHY_HIERARCHICAL_GRAPH_H_
