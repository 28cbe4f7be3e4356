#ifndef ORDO_CORE_SCHEDULE_HIERARCHICAL_SEARCH_H_
#define ORDO_CORE_SCHEDULE_HIERARCHICAL_SEARCH_H_

#include <cstdint>
#include <memory>
#include <vector>

#include "core/hierarchy/hierarchical_graph.h"
#include "core/memory/memory_model.h"
#include "core/schedule/scheduler.h"
#include "core/schedule/sequence_state_space.h"

namespace ordo {

struct HierarchicalSearchOptions {
  // Optimization 2 (scheduling strategy selection): run a group in its
  // reverse post-order when that does not lift the partial schedule's peak.
  bool strategy_selection = true;
  // Optimization 3 (group schedule memoization), keyed by value context.
  bool memoization = true;
  // At most this many partial schedules per level are expanded, the lowest
  // (peak, live bytes) first, in the top level and in every group; 0 = all
  // (the paper's dynamic program, exponential in the width).
  int32_t max_level_states = 2048;
  // Expansions between two reads of the clock and the cancellation flag.
  int32_t check_every = 256;
  // A work cap: the search stops (kLimit) once it has expanded more states
  // than this over all its Schedule calls; 0 = none. Unlike the deadline it
  // cuts at the same point on every machine and load.
  int64_t max_states_expanded = 0;
};

enum class SearchOutcome : int8_t {
  kFound,       // a schedule within the budget
  kOverBudget,  // none within the budget (among those the search kept)
  kLimit,       // deadline, cancellation, max_state_bytes or max_states_expanded
};

struct HierarchicalSearchResult {
  SearchOutcome outcome = SearchOutcome::kLimit;
  // The ops in execution order, and the search's count of its peak (the
  // caller re-simulates), when kFound.
  std::vector<int32_t> order;
  int64_t peak_bytes = 0;
  // No partial schedule was dropped by max_level_states, here or in the
  // group schedules used: kFound is then the least peak of all schedules
  // that run every sequence and every assembled group as a block, and
  // kOverBudget proves they all exceed the budget.
  bool exhaustive = true;
};

struct HierarchicalSearchStats {
  int64_t states_expanded = 0;
  int64_t states_stored = 0;
  int64_t group_searches = 0;    // dynamic programs run on a group
  int64_t memo_hits = 0;         // group schedules reused (Optimization 3)
  int64_t simple_schedules = 0;  // groups run in reverse post-order (Optimization 2)
};

// Scheduling a fixed hierarchical graph: HMCOS Algorithm 2 with its three
// optimizations (§3.2), under the spec's memory rules.
//
// ScheduleGraph: a dynamic program level by level, level k holding for
// every set of k top-level vertices run (the signature: it fixes the
// zero-indegree set and the live bytes) the partial schedule of least peak
// reaching it, with a parent pointer. Each is extended by every ready
// vertex: a sequence by running its ops (SequenceStateSpace, Equations 4
// and 5), a group by ScheduleVertex = ScheduleGraph over its sequences from
// the current state. Partial schedules whose peak exceeds the budget are
// dropped (Optimization 1; the iterative scheduler passes the previous
// iteration's peak).
//
// Groups. A group's best internal order depends on the state before it
// only through its value context (§3.2, Equation 6): which of the tensors
// it reads from outside die inside it, i.e. have all their other readers
// already run. Footprints inside are the live bytes before it plus amounts
// fixed by the context, so the group's schedule for a context is reused
// (Optimization 3), stored with its peak relative to the live bytes; a
// context found infeasible under a relative budget stays so under any
// lower one. Before searching, the group's reverse post-order is tried: if
// it does not lift the partial schedule's peak, no order could do better
// for that schedule (the live bytes after a group do not depend on its
// order), so it is taken (Optimization 2). This check comes before the
// memo so that memoization never changes a result.
//
// Deviation: levels (top and group) larger than max_level_states keep only
// the partial schedules of least (peak, live bytes, first found). The
// paper's program has no such cap and runs out of memory on RandWire (see
// ../shared/models/README.md); with it the search is polynomial,
// O(vertices x max_level_states x ready vertices x vertex cost), and
// `exhaustive` reports whether the cap ever bit. The cap ranks by peak
// first, so a budget changes which partial schedules exist only above the
// budget: results, and so memoized group schedules, do not depend on the
// budget they were found under.
//
// Limits: the clock and cancellation every `check_every` expansions, the
// work cap (max_states_expanded) at every one;
// stored states, plans and memo kept under max_state_bytes. `model` and
// `graph` must outlive the search. Not thread-safe; one search per thread.
class HierarchicalSearch {
 public:
  HierarchicalSearch(const MemoryModel& model, const HierarchicalGraph& graph,
                     HierarchicalSearchOptions options);
  ~HierarchicalSearch();

  HierarchicalSearch(const HierarchicalSearch&) = delete;
  HierarchicalSearch& operator=(const HierarchicalSearch&) = delete;

  // ScheduleGraph on the current top level of the graph. The graph may be
  // disassembled between calls; memoized schedules of the remaining groups
  // stay valid (a group never changes; it only stops being a vertex).
  HierarchicalSearchResult Schedule(int64_t budget, const ScheduleLimits& limits);

  const HierarchicalSearchStats& stats() const { return stats_; }

 private:
  class LevelSearch;
  struct Unit;
  struct UnitRun;
  struct GroupInfo;

  UnitRun RunUnit(const Unit& unit, const uint64_t* set, int64_t live, int64_t path_peak,
                  int64_t budget, const ScheduleLimits& limits);
  UnitRun RunGroup(int32_t group, const uint64_t* set, int64_t live, int64_t path_peak,
                   int64_t budget, const ScheduleLimits& limits);
  UnitRun RunPlan(int32_t plan, const uint64_t* set, int64_t live);
  UnitRun MemoizedSearch(GroupInfo& info, const uint64_t* set, int64_t live, int64_t budget,
                         const ScheduleLimits& limits);
  UnitRun SearchGroup(GroupInfo& info, const uint64_t* set, int64_t live, int64_t budget,
                      const ScheduleLimits& limits);
  GroupInfo& Group(int32_t group);
  void AddContext(const std::vector<int32_t>& members, GroupInfo& info) const;
  std::vector<Unit> TopLevelUnits() const;
  void LinkUnits(std::vector<Unit>& units) const;
  Unit MakeUnit(std::vector<int32_t> sequences, int32_t group) const;
  int32_t AddPlan(std::vector<int32_t> sequences);
  // Bytes held outside the running level searches (plans, memo).
  int64_t HeldBytes() const;
  // Counts an expansion; true when a limit stops the search.
  bool CountExpansion(const ScheduleLimits& limits);

  const MemoryModel& model_;
  const HierarchicalGraph& graph_;
  const HierarchicalSearchOptions options_;
  const SequenceStateSpace space_;
  std::vector<std::unique_ptr<GroupInfo>> groups_;  // by group id, built lazily
  // Orders of sequences chosen for groups, by plan id.
  std::vector<std::vector<int32_t>> plans_;
  int64_t plan_bytes_ = 0;
  int64_t memo_bytes_ = 0;
  HierarchicalSearchStats stats_;
  bool limit_hit_ = false;
  std::vector<uint64_t> scratch_;  // a set, for Optimization 2
};

}  // namespace ordo

#endif  // ORDO_CORE_SCHEDULE_HIERARCHICAL_SEARCH_H_
