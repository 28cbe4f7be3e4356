#include "core/hierarchy/groups.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "core/hierarchy/dominator_tree.h"

namespace ordo {
namespace {

// The sequence graph plus a virtual node (id = number of sequences) joined
// to every source (forward) or from every sink (reversed, for
// post-dominators), so that one root reaches everything.
Digraph FlowGraph(const Digraph& graph, bool reversed) {
  const int32_t n = graph.num_nodes();
  std::vector<std::pair<int32_t, int32_t>> edges;
  for (int32_t v = 0; v < n; ++v) {
    for (int32_t w : graph.successors(v)) {
      edges.push_back(reversed ? std::make_pair(w, v) : std::make_pair(v, w));
    }
    const bool end = reversed ? graph.successors(v).empty() : graph.predecessors(v).empty();
    if (end) edges.push_back({n, v});
  }
  return Digraph(n + 1, edges);
}

// A tensor a sequence defines, for boundaries (sigma of §3.1.2).
struct DefinedTensor {
  int64_t bytes;
  bool live_at_end;
  std::vector<int32_t> consumer_sequences;  // distinct
};

class GroupBuilder {
 public:
  GroupBuilder(const MemoryModel& model, const std::vector<std::vector<int32_t>>& sequences,
               const Digraph& graph, const GroupOptions& options)
      : graph_(graph),
        options_(options),
        dom_(FlowGraph(graph, false), graph.num_nodes()),
        post_dom_(FlowGraph(graph, true), graph.num_nodes()),
        group_of_(graph.num_nodes(), kNoId),
        stamp_(graph.num_nodes(), 0) {
    std::vector<int32_t> sequence_of_op(model.num_ops());
    for (int32_t s = 0; s < static_cast<int32_t>(sequences.size()); ++s) {
      for (int32_t op : sequences[s]) sequence_of_op[op] = s;
    }
    defined_.resize(sequences.size());
    for (int32_t s = 0; s < static_cast<int32_t>(sequences.size()); ++s) {
      for (int32_t op : sequences[s]) {
        for (int32_t t : model.ops[op].outputs) {
          const MemoryModel::TensorInfo& info = model.tensors[t];
          DefinedTensor defined{info.bytes, info.live_at_end, {}};
          for (int32_t consumer : info.consumers) {
            defined.consumer_sequences.push_back(sequence_of_op[consumer]);
          }
          std::sort(defined.consumer_sequences.begin(), defined.consumer_sequences.end());
          defined.consumer_sequences.erase(
              std::unique(defined.consumer_sequences.begin(), defined.consumer_sequences.end()),
              defined.consumer_sequences.end());
          defined_[s].push_back(std::move(defined));
        }
      }
    }
  }

  std::vector<SequenceGroup> Build() && {
    if (options_.cell_groups) FormCells();
    if (options_.dominator_groups) FormDominatorGroups();
    std::vector<SequenceGroup> groups;
    for (SequenceGroup& group : groups_) {
      if (group.sequences.size() < 2) continue;
      std::sort(group.sequences.begin(), group.sequences.end());
      groups.push_back(std::move(group));
    }
    return groups;
  }

 private:
  void FormCells();
  void FormDominatorGroups();
  std::vector<int32_t> CellRegion(int32_t output);
  std::vector<int32_t> MinimalBoundarySet(const std::vector<int32_t>& region) const;
  int64_t Boundary(uint32_t mask, const std::vector<int32_t>& region,
                   const std::vector<int32_t>& index) const;
  bool TryForm(std::vector<int32_t> members, int32_t cell_output);
  bool Convex(int32_t group) const;

  const Digraph& graph_;
  const GroupOptions options_;
  const DominatorTree dom_, post_dom_;
  std::vector<std::vector<DefinedTensor>> defined_;
  // Per sequence: index into groups_, or kNoId.
  std::vector<int32_t> group_of_;
  // Groups formed so far; one emptied by later extractions stays, empty.
  std::vector<SequenceGroup> groups_;
  // Visit marks of CellRegion, reset by bumping the stamp.
  std::vector<int32_t> stamp_;
  int32_t current_stamp_ = 0;
};

// Joins latest first (class comment of FormGroups), so that a cell claims
// its inner joins before they could claim a piece of it.
void GroupBuilder::FormCells() {
  for (int32_t v = graph_.num_nodes() - 1; v >= 0; --v) {
    if (group_of_[v] != kNoId || graph_.predecessors(v).size() < 2) continue;
    std::vector<int32_t> region = CellRegion(v);
    if (region.size() >= 3 && static_cast<int32_t>(region.size()) <= options_.max_group_sequences) {
      TryForm(std::move(region), v);
    }
  }
}

// The sequences reached from `output` through predecessors while they are
// ungrouped, post-dominated by it and do not dominate it. Stops early (the
// result is then too large to use) past max_group_sequences.
std::vector<int32_t> GroupBuilder::CellRegion(int32_t output) {
  ++current_stamp_;
  std::vector<int32_t> region = {output};
  stamp_[output] = current_stamp_;
  for (size_t next = 0; next < region.size(); ++next) {
    if (static_cast<int32_t>(region.size()) > options_.max_group_sequences) break;
    for (int32_t p : graph_.predecessors(region[next])) {
      if (stamp_[p] == current_stamp_ || group_of_[p] != kNoId) continue;
      if (!post_dom_.Dominates(output, p) || dom_.Dominates(p, output)) continue;
      stamp_[p] = current_stamp_;
      region.push_back(p);
    }
  }
  return region;
}

void GroupBuilder::FormDominatorGroups() {
  std::vector<int32_t> outputs;
  for (const SequenceGroup& group : groups_) {
    if (group.cell_output != kNoId) outputs.push_back(group.cell_output);
  }
  std::sort(outputs.begin(), outputs.end());
  const int32_t limit = std::min(options_.max_boundary_search_sequences, 32);
  for (int32_t output : outputs) {
    auto in_dominator_group = [&](int32_t s) {
      return group_of_[s] != kNoId && groups_[group_of_[s]].cell_output == kNoId;
    };
    if (in_dominator_group(output)) continue;
    // D, output first, then the others in topological order.
    std::vector<int32_t> region;
    for (int32_t s : dom_.Dominated(output)) {
      if (s != output && s < graph_.num_nodes() && !in_dominator_group(s)) region.push_back(s);
    }
    std::sort(region.begin(), region.end());
    if (static_cast<int32_t>(region.size()) > limit - 1) region.resize(std::max(0, limit - 1));
    region.insert(region.begin(), output);
    std::vector<int32_t> chosen = MinimalBoundarySet(region);
    if (chosen.size() < 3) continue;  // C - {o} would be a single sequence
    chosen.erase(std::find(chosen.begin(), chosen.end(), output));
    TryForm(std::move(chosen), kNoId);
  }
}

// Exhaustive search (within the subset cap) over the predecessor-closed
// subsets of `region` containing region[0]; see the class comment.
std::vector<int32_t> GroupBuilder::MinimalBoundarySet(const std::vector<int32_t>& region) const {
  const int32_t k = static_cast<int32_t>(region.size());
  std::vector<int32_t> index(graph_.num_nodes(), kNoId);
  for (int32_t i = 0; i < k; ++i) index[region[i]] = i;
  // Per member: the members it needs first; members with a predecessor
  // outside the region can never join.
  std::vector<uint32_t> needs(k, 0);
  std::vector<bool> addable(k, true);
  for (int32_t i = 1; i < k; ++i) {
    for (int32_t p : graph_.predecessors(region[i])) {
      if (index[p] == kNoId) {
        addable[i] = false;
      } else {
        needs[i] |= uint32_t{1} << index[p];
      }
    }
  }
  uint32_t best = 1;
  int64_t best_boundary = Boundary(best, region, index);
  absl::flat_hash_set<uint32_t> seen = {best};
  std::vector<uint32_t> stack = {best};
  while (!stack.empty()) {
    const uint32_t mask = stack.back();
    stack.pop_back();
    const int64_t boundary = Boundary(mask, region, index);
    if (boundary < best_boundary ||
        (boundary == best_boundary && __builtin_popcount(mask) > __builtin_popcount(best))) {
      best = mask;
      best_boundary = boundary;
    }
    for (int32_t i = 1; i < k; ++i) {
      const uint32_t bit = uint32_t{1} << i;
      if ((mask & bit) || !addable[i] || (needs[i] & ~mask) != 0) continue;
      if (static_cast<int32_t>(seen.size()) >= options_.max_boundary_search_subsets) break;
      if (seen.insert(mask | bit).second) stack.push_back(mask | bit);
    }
  }
  std::vector<int32_t> chosen;
  for (int32_t i = 0; i < k; ++i) {
    if (best & (uint32_t{1} << i)) chosen.push_back(region[i]);
  }
  return chosen;
}

int64_t GroupBuilder::Boundary(uint32_t mask, const std::vector<int32_t>& region,
                               const std::vector<int32_t>& index) const {
  auto inside = [&](int32_t s) { return index[s] != kNoId && (mask >> index[s]) & 1; };
  int64_t bytes = 0;
  for (int32_t i = 0; i < static_cast<int32_t>(region.size()); ++i) {
    if (!((mask >> i) & 1)) continue;
    for (const DefinedTensor& t : defined_[region[i]]) {
      const bool used_outside =
          t.live_at_end || std::any_of(t.consumer_sequences.begin(), t.consumer_sequences.end(),
                                       [&](int32_t s) { return !inside(s); });
      if (used_outside) bytes += t.bytes;
    }
  }
  return bytes;
}

// Forms a group of `members`, taking them out of the groups holding them;
// keeps it only if the new group and every group it shrank stay convex
// (groups left with one sequence dissolve).
bool GroupBuilder::TryForm(std::vector<int32_t> members, int32_t cell_output) {
  const std::vector<int32_t> saved_group_of = group_of_;
  std::vector<std::pair<int32_t, std::vector<int32_t>>> saved_groups;
  for (int32_t s : members) {
    const int32_t old = group_of_[s];
    if (old == kNoId) continue;
    if (std::none_of(saved_groups.begin(), saved_groups.end(),
                     [&](const auto& saved) { return saved.first == old; })) {
      saved_groups.push_back({old, groups_[old].sequences});
    }
  }
  const int32_t id = static_cast<int32_t>(groups_.size());
  for (int32_t s : members) group_of_[s] = id;
  groups_.push_back({std::move(members), cell_output});
  for (const auto& saved : saved_groups) {
    std::vector<int32_t>& left = groups_[saved.first].sequences;
    left.erase(
        std::remove_if(left.begin(), left.end(), [&](int32_t s) { return group_of_[s] == id; }),
        left.end());
    if (left.size() < 2) {
      for (int32_t s : left) group_of_[s] = kNoId;
      left.clear();
    }
  }
  bool ok = Convex(id);
  for (const auto& saved : saved_groups) {
    if (!groups_[saved.first].sequences.empty()) ok = ok && Convex(saved.first);
  }
  if (ok) return true;
  group_of_ = saved_group_of;
  for (auto& [old, sequences] : saved_groups) groups_[old].sequences = std::move(sequences);
  groups_.pop_back();
  return false;
}

// No path leaves the group and re-enters it, with the other groups
// contracted to single vertices: a forward search from the group's
// successors, entering a group means reaching all of its members.
bool GroupBuilder::Convex(int32_t group) const {
  std::vector<bool> visited(graph_.num_nodes(), false);
  std::vector<int32_t> queue;
  auto reach = [&](int32_t s) {
    if (group_of_[s] == group) return false;
    if (visited[s]) return true;
    if (group_of_[s] == kNoId) {
      visited[s] = true;
      queue.push_back(s);
      return true;
    }
    for (int32_t member : groups_[group_of_[s]].sequences) {
      visited[member] = true;
      queue.push_back(member);
    }
    return true;
  };
  for (int32_t s : groups_[group].sequences) {
    for (int32_t w : graph_.successors(s)) {
      if (group_of_[w] != group) reach(w);
    }
  }
  for (size_t next = 0; next < queue.size(); ++next) {
    for (int32_t w : graph_.successors(queue[next])) {
      if (!reach(w)) return false;
    }
  }
  return true;
}

}  // namespace

std::vector<SequenceGroup> FormGroups(const MemoryModel& model,
                                      const std::vector<std::vector<int32_t>>& sequences,
                                      const Digraph& sequence_graph, const GroupOptions& options) {
  if (sequence_graph.num_nodes() == 0) return {};
  return GroupBuilder(model, sequences, sequence_graph, options).Build();
}

}  // namespace ordo
