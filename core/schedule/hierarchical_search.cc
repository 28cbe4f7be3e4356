#include "core/schedule/hierarchical_search.h"

#include <algorithm>
#include <functional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "core/schedule/op_set_table.h"
#include "core/util/check.h"

namespace ordo {

// A vertex of the graph being scheduled: a sequence, or a group (at the top
// level only; a group's own search has its sequences as units).
struct HierarchicalSearch::Unit {
  std::vector<int32_t> sequences;  // one, or the group's
  int32_t group = kNoId;
  uint64_t key = 0;  // XOR of the sequences' Zobrist keys
  // Sequences outside the unit producing its inputs, latest first (the one
  // most likely still to run, so readiness checks usually stop there).
  std::vector<int32_t> preds;
  // Units (indices in the same unit list) reading its outputs.
  std::vector<int32_t> succs;
};

// The result of running one unit after a state.
struct HierarchicalSearch::UnitRun {
  SearchOutcome outcome = SearchOutcome::kFound;
  int64_t peak = 0;
  int64_t live_after = 0;
  int32_t plan = kNoId;  // groups: the order of their sequences
  bool exhaustive = true;
};

namespace {

constexpr int64_t kMemoryCheckEvery = 64;

// What the memo keeps per value context, footprints relative to the live
// bytes before the group.
struct MemoEntry {
  bool found = false;
  int64_t peak = 0;
  int64_t live_delta = 0;
  int32_t plan = kNoId;
  bool exhaustive = true;
  // No schedule within this relative budget (when !found).
  int64_t infeasible_within = INT64_MIN;
};

// Sequences of `group` (ascending) in reverse post-order of their DAG (the
// paper's "simple scheduling"), by an explicit-stack DFS from the group's
// entries. Linear lookups: it runs once per group.
std::vector<int32_t> GroupReversePostOrder(const Digraph& graph,
                                           const std::vector<int32_t>& group) {
  auto inside = [&](int32_t s) { return std::binary_search(group.begin(), group.end(), s); };
  std::vector<int32_t> post;
  std::vector<int32_t> visited;
  auto seen = [&](int32_t s) {
    return std::find(visited.begin(), visited.end(), s) != visited.end();
  };
  std::vector<std::pair<int32_t, int32_t>> stack;
  for (int32_t root : group) {
    const auto preds = graph.predecessors(root);
    if (seen(root) || std::any_of(preds.begin(), preds.end(), inside)) continue;
    visited.push_back(root);
    stack.push_back({root, 0});
    while (!stack.empty()) {
      auto& [s, next] = stack.back();
      const auto succs = graph.successors(s);
      if (next < static_cast<int32_t>(succs.size())) {
        const int32_t w = succs[next++];
        if (inside(w) && !seen(w)) {
          visited.push_back(w);
          stack.push_back({w, 0});
        }
      } else {
        post.push_back(s);
        stack.pop_back();
      }
    }
  }
  std::reverse(post.begin(), post.end());
  return post;
}

}  // namespace

struct HierarchicalSearch::GroupInfo {
  std::vector<Unit> units;  // one per sequence
  int32_t simple_plan = kNoId;
  // Per tensor read from outside and dying inside (unless read elsewhere):
  // the range in `readers` of its readers outside the group.
  std::vector<std::pair<int32_t, int32_t>> context;
  std::vector<int32_t> readers;
  absl::flat_hash_map<std::vector<uint64_t>, MemoEntry> memo;

  // Equation 6: one bit per context tensor, set when it dies in the group.
  std::vector<uint64_t> ContextKey(const uint64_t* set) const {
    std::vector<uint64_t> key((context.size() + 63) / 64, 0);
    for (size_t i = 0; i < context.size(); ++i) {
      bool dies = true;
      for (int32_t r = context[i].first; r < context[i].second && dies; ++r) {
        dies = SequenceStateSpace::Contains(set, readers[r]);
      }
      if (dies) key[i >> 6] |= uint64_t{1} << (i & 63);
    }
    return key;
  }
};

// One ScheduleGraph (Algorithm 2, lines 10-25) over `units`, from `base`
// (the sequences already run; live bytes `live`, partial peak `peak`).
class HierarchicalSearch::LevelSearch {
 public:
  LevelSearch(HierarchicalSearch& owner, const std::vector<Unit>& units, const uint64_t* base,
              int64_t live, int64_t peak, int64_t budget, const ScheduleLimits& limits)
      : owner_(owner),
        units_(units),
        budget_(budget),
        limits_(limits),
        words_(owner.space_.words()),
        current_(words_),
        next_(words_),
        set_(base, base + words_),
        child_(words_) {
    current_.FindOrInsert(set_.data(), 0);
    records_.push_back({peak, live, kNoId, kNoId, kNoId, 0, 0});
    for (int32_t u = 0; u < static_cast<int32_t>(units.size()); ++u) {
      if (Ready(units[u])) ready_[0].push_back(u);
    }
    records_[0].ready_count = static_cast<int32_t>(ready_[0].size());
    expand_.push_back(0);
  }

  SearchOutcome Run();

  // The (unit, plan) steps of the schedule found, in order.
  std::vector<std::pair<int32_t, int32_t>> Path() const;
  int64_t peak() const { return records_[level_begin_].peak; }
  int64_t live_after() const { return records_[level_begin_].live; }
  bool exhaustive() const { return exhaustive_; }
  int64_t stored() const { return static_cast<int64_t>(records_.size()); }
  int64_t MemoryBytes() const {
    return current_.MemoryBytes() + next_.MemoryBytes() +
           static_cast<int64_t>(records_.capacity() * sizeof(Record) +
                                (expand_.capacity() + ready_[0].capacity() + ready_[1].capacity()) *
                                    sizeof(int32_t));
  }

 private:
  struct Record {
    int64_t peak;
    int64_t live;
    int32_t parent;  // index in records_
    int32_t unit;
    int32_t plan;
    // Its ready units, in the ready pool of its level's parity; set when it
    // is expanded.
    int32_t ready_begin;
    int32_t ready_count;
  };

  SearchOutcome ExpandLevel();
  SearchOutcome Expand(int32_t entry);
  void Offer(int32_t parent, int32_t unit, const UnitRun& run, uint64_t hash);
  bool Ready(const Unit& unit) const;
  bool OverMemory();
  void ComputeReady(int32_t record);
  void SelectNextLevel();

  HierarchicalSearch& owner_;
  const std::vector<Unit>& units_;
  const int64_t budget_;
  const ScheduleLimits& limits_;
  const int32_t words_;
  OpSetTable current_, next_;
  std::vector<Record> records_;
  int32_t level_begin_ = 0;  // records_ index of current_'s entry 0
  int32_t next_begin_ = 0;
  std::vector<int32_t> expand_;  // entries of current_ to expand, in order
  int32_t depth_ = 0;
  // Ready units of the expanded states of the previous and the current
  // level, by depth parity (Record::ready_begin).
  std::vector<int32_t> ready_[2];
  std::vector<uint64_t> set_, child_;
  bool exhaustive_ = true;
};

SearchOutcome HierarchicalSearch::LevelSearch::Run() {
  for (size_t depth = 0; depth < units_.size(); ++depth) {
    const SearchOutcome outcome = ExpandLevel();
    if (outcome != SearchOutcome::kFound) return outcome;
  }
  ORDO_CHECK(current_.size() == 1);  // every unit run: one set
  return SearchOutcome::kFound;
}

SearchOutcome HierarchicalSearch::LevelSearch::ExpandLevel() {
  if (depth_ > 0) ready_[depth_ & 1].clear();
  next_.Clear();
  next_begin_ = static_cast<int32_t>(records_.size());
  for (int32_t entry : expand_) {
    const SearchOutcome outcome = Expand(entry);
    if (outcome == SearchOutcome::kLimit) return outcome;
  }
  if (next_.size() == 0) return SearchOutcome::kOverBudget;
  std::swap(current_, next_);
  level_begin_ = next_begin_;
  ++depth_;
  SelectNextLevel();
  return OverMemory() ? SearchOutcome::kLimit : SearchOutcome::kFound;
}

bool HierarchicalSearch::LevelSearch::OverMemory() {
  if (MemoryBytes() + owner_.HeldBytes() <= limits_.max_state_bytes) return false;
  owner_.limit_hit_ = true;
  return true;
}

// Lowest (peak, live, first found) first; only max_level_states of them
// when the level is larger (class comment: the deviation).
void HierarchicalSearch::LevelSearch::SelectNextLevel() {
  expand_.resize(current_.size());
  for (int32_t e = 0; e < current_.size(); ++e) expand_[e] = e;
  auto before = [&](int32_t a, int32_t b) {
    const Record& ra = records_[level_begin_ + a];
    const Record& rb = records_[level_begin_ + b];
    if (ra.peak != rb.peak) return ra.peak < rb.peak;
    if (ra.live != rb.live) return ra.live < rb.live;
    return a < b;
  };
  const int32_t cap = owner_.options_.max_level_states;
  if (cap > 0 && static_cast<int32_t>(expand_.size()) > cap) {
    std::nth_element(expand_.begin(), expand_.begin() + cap, expand_.end(), before);
    expand_.resize(cap);
    exhaustive_ = false;
  }
  std::sort(expand_.begin(), expand_.end(), before);
}

SearchOutcome HierarchicalSearch::LevelSearch::Expand(int32_t entry) {
  std::copy_n(current_.set(entry), words_, set_.data());
  const int32_t index = level_begin_ + entry;
  if (depth_ > 0) ComputeReady(index);
  const Record record = records_[index];
  const uint64_t hash = current_.hash(entry);
  const std::vector<int32_t>& pool = ready_[depth_ & 1];
  for (int32_t i = record.ready_begin; i < record.ready_begin + record.ready_count; ++i) {
    const int32_t u = pool[i];
    const UnitRun run =
        owner_.RunUnit(units_[u], set_.data(), record.live, record.peak, budget_, limits_);
    if (run.outcome == SearchOutcome::kLimit) return run.outcome;
    if (run.outcome == SearchOutcome::kOverBudget) continue;
    if (!run.exhaustive) exhaustive_ = false;
    if (std::max(record.peak, run.peak) > budget_) continue;  // Optimization 1
    Offer(index, u, run, hash ^ units_[u].key);
  }
  if (owner_.CountExpansion(limits_)) return SearchOutcome::kLimit;
  // Within a level too: an uncapped level can outgrow memory by itself.
  if (owner_.stats_.states_expanded % kMemoryCheckEvery == 0 && OverMemory()) {
    return SearchOutcome::kLimit;
  }
  return SearchOutcome::kFound;
}

// The ready units of a state from its parent's (expanded one level
// earlier): all but the unit just run, plus those of its successors whose
// producers have now all run. O(ready + successors x their producers),
// where scanning every unit would be O(units).
void HierarchicalSearch::LevelSearch::ComputeReady(int32_t record) {
  Record& r = records_[record];
  const Record& parent = records_[r.parent];
  const std::vector<int32_t>& from = ready_[(depth_ - 1) & 1];
  std::vector<int32_t>& to = ready_[depth_ & 1];
  r.ready_begin = static_cast<int32_t>(to.size());
  for (int32_t i = parent.ready_begin; i < parent.ready_begin + parent.ready_count; ++i) {
    if (from[i] != r.unit) to.push_back(from[i]);
  }
  for (int32_t w : units_[r.unit].succs) {
    if (Ready(units_[w])) to.push_back(w);
  }
  r.ready_count = static_cast<int32_t>(to.size()) - r.ready_begin;
  // Ascending, as a scan would list them: ties between children go to the
  // same one whatever path reached the state.
  std::sort(to.begin() + r.ready_begin, to.end());
}

bool HierarchicalSearch::LevelSearch::Ready(const Unit& unit) const {
  if (SequenceStateSpace::Contains(set_.data(), unit.sequences[0])) return false;
  for (int32_t p : unit.preds) {
    if (!SequenceStateSpace::Contains(set_.data(), p)) return false;
  }
  return true;
}

void HierarchicalSearch::LevelSearch::Offer(int32_t parent, int32_t unit, const UnitRun& run,
                                            uint64_t hash) {
  const Record child{
      std::max(records_[parent].peak, run.peak), run.live_after, parent, unit, run.plan, 0, 0};
  std::copy(set_.begin(), set_.end(), child_.begin());
  for (int32_t s : units_[unit].sequences) SequenceStateSpace::Add(child_.data(), s);
  const auto [entry, inserted] = next_.FindOrInsert(child_.data(), hash);
  if (inserted) {
    records_.push_back(child);
    return;
  }
  // The same set by another path: keep the least peak, the first on ties.
  Record& known = records_[next_begin_ + entry];
  ORDO_CHECK(known.live == child.live);  // live bytes depend on the set alone
  if (child.peak < known.peak) known = child;
}

std::vector<std::pair<int32_t, int32_t>> HierarchicalSearch::LevelSearch::Path() const {
  std::vector<std::pair<int32_t, int32_t>> path;
  for (int32_t r = level_begin_; records_[r].parent != kNoId; r = records_[r].parent) {
    path.push_back({records_[r].unit, records_[r].plan});
  }
  std::reverse(path.begin(), path.end());
  return path;
}

HierarchicalSearch::HierarchicalSearch(const MemoryModel& model, const HierarchicalGraph& graph,
                                       HierarchicalSearchOptions options)
    : model_(model), graph_(graph), options_(options), space_(model, graph) {
  groups_.resize(graph.num_groups());
}

HierarchicalSearch::~HierarchicalSearch() = default;

HierarchicalSearch::Unit HierarchicalSearch::MakeUnit(std::vector<int32_t> sequences,
                                                      int32_t group) const {
  Unit unit;
  unit.group = group;
  for (int32_t s : sequences) {
    unit.key ^= space_.zobrist(s);
    for (int32_t p : graph_.sequence_graph().predecessors(s)) {
      if (!std::binary_search(sequences.begin(), sequences.end(), p)) unit.preds.push_back(p);
    }
  }
  std::sort(unit.preds.begin(), unit.preds.end(), std::greater<int32_t>());
  unit.preds.erase(std::unique(unit.preds.begin(), unit.preds.end()), unit.preds.end());
  unit.sequences = std::move(sequences);
  return unit;
}

std::vector<HierarchicalSearch::Unit> HierarchicalSearch::TopLevelUnits() const {
  std::vector<Unit> units;
  for (int32_t s = 0; s < graph_.num_sequences(); ++s) {
    const int32_t g = graph_.group_of_sequence(s);
    if (g == kNoId) {
      units.push_back(MakeUnit({s}, kNoId));
    } else if (graph_.group(g).front() == s) {
      units.push_back(MakeUnit(graph_.group(g), g));
    }
  }
  LinkUnits(units);
  return units;
}

// Fills every unit's successors among `units` (sequences outside them, as
// in a group's search, are ignored).
void HierarchicalSearch::LinkUnits(std::vector<Unit>& units) const {
  std::vector<int32_t> unit_of(graph_.num_sequences(), kNoId);
  for (int32_t u = 0; u < static_cast<int32_t>(units.size()); ++u) {
    for (int32_t s : units[u].sequences) unit_of[s] = u;
  }
  for (int32_t u = 0; u < static_cast<int32_t>(units.size()); ++u) {
    for (int32_t s : units[u].sequences) {
      for (int32_t w : graph_.sequence_graph().successors(s)) {
        if (unit_of[w] != kNoId && unit_of[w] != u) units[u].succs.push_back(unit_of[w]);
      }
    }
    std::sort(units[u].succs.begin(), units[u].succs.end());
    units[u].succs.erase(std::unique(units[u].succs.begin(), units[u].succs.end()),
                         units[u].succs.end());
  }
}

HierarchicalSearchResult HierarchicalSearch::Schedule(int64_t budget,
                                                      const ScheduleLimits& limits) {
  limit_hit_ = false;
  const std::vector<Unit> units = TopLevelUnits();
  const std::vector<uint64_t> empty(space_.words(), 0);
  LevelSearch search(*this, units, empty.data(), space_.initial_live(), space_.initial_footprint(),
                     budget, limits);
  HierarchicalSearchResult result;
  result.outcome = search.Run();
  result.exhaustive = search.exhaustive();
  stats_.states_stored += search.stored();
  if (result.outcome != SearchOutcome::kFound) return result;
  result.peak_bytes = search.peak();
  for (const auto& [u, plan] : search.Path()) {
    const std::vector<int32_t>& sequences = plan == kNoId ? units[u].sequences : plans_[plan];
    for (int32_t s : sequences) {
      for (int32_t op : space_.ops(s)) result.order.push_back(op);
    }
  }
  return result;
}

HierarchicalSearch::UnitRun HierarchicalSearch::RunUnit(const Unit& unit, const uint64_t* set,
                                                        int64_t live, int64_t path_peak,
                                                        int64_t budget,
                                                        const ScheduleLimits& limits) {
  if (unit.group != kNoId) return RunGroup(unit.group, set, live, path_peak, budget, limits);
  const SequenceStateSpace::Run run = space_.RunSequence(set, live, unit.sequences[0]);
  return {SearchOutcome::kFound, run.peak, run.live_after, kNoId, true};
}

HierarchicalSearch::GroupInfo& HierarchicalSearch::Group(int32_t group) {
  if (groups_[group] != nullptr) return *groups_[group];
  auto info = std::make_unique<GroupInfo>();
  const std::vector<int32_t>& members = graph_.group(group);
  for (int32_t s : members) info->units.push_back(MakeUnit({s}, kNoId));
  LinkUnits(info->units);
  info->simple_plan = AddPlan(GroupReversePostOrder(graph_.sequence_graph(), members));
  AddContext(members, *info);
  groups_[group] = std::move(info);
  return *groups_[group];
}

// The value context of a group (Equation 6): the tensors read in it,
// produced outside it, that die in it once their readers outside it have
// run. A tensor no one outside reads always dies in it, and needs no bit.
void HierarchicalSearch::AddContext(const std::vector<int32_t>& members, GroupInfo& info) const {
  auto inside = [&](int32_t s) { return std::binary_search(members.begin(), members.end(), s); };
  std::vector<int32_t> tensors;
  for (int32_t s : members) {
    for (int32_t op : graph_.sequence(s)) {
      for (int32_t t : model_.ops[op].inputs) {
        const MemoryModel::TensorInfo& tensor = model_.tensors[t];
        if (tensor.live_at_end) continue;
        if (tensor.producer != kNoId && inside(graph_.sequence_of_op(tensor.producer))) continue;
        tensors.push_back(t);
      }
    }
  }
  std::sort(tensors.begin(), tensors.end());
  tensors.erase(std::unique(tensors.begin(), tensors.end()), tensors.end());
  for (int32_t t : tensors) {
    const int32_t begin = static_cast<int32_t>(info.readers.size());
    for (int32_t consumer : model_.tensors[t].consumers) {
      const int32_t s = graph_.sequence_of_op(consumer);
      if (!inside(s)) info.readers.push_back(s);
    }
    if (static_cast<int32_t>(info.readers.size()) > begin) {
      info.context.push_back({begin, static_cast<int32_t>(info.readers.size())});
    }
  }
}

int32_t HierarchicalSearch::AddPlan(std::vector<int32_t> sequences) {
  plan_bytes_ +=
      static_cast<int64_t>(sizeof(std::vector<int32_t>) + sequences.size() * sizeof(int32_t));
  plans_.push_back(std::move(sequences));
  return static_cast<int32_t>(plans_.size()) - 1;
}

HierarchicalSearch::UnitRun HierarchicalSearch::RunGroup(int32_t group, const uint64_t* set,
                                                         int64_t live, int64_t path_peak,
                                                         int64_t budget,
                                                         const ScheduleLimits& limits) {
  GroupInfo& info = Group(group);
  if (options_.strategy_selection) {
    const UnitRun simple = RunPlan(info.simple_plan, set, live);
    if (simple.peak <= path_peak) {
      ++stats_.simple_schedules;
      return simple;
    }
  }
  if (!options_.memoization) return SearchGroup(info, set, live, budget, limits);
  return MemoizedSearch(info, set, live, budget, limits);
}

// Optimization 2's candidate: the sequences of `plan` in order.
HierarchicalSearch::UnitRun HierarchicalSearch::RunPlan(int32_t plan, const uint64_t* set,
                                                        int64_t live) {
  UnitRun run{SearchOutcome::kFound, INT64_MIN, live, plan, true};
  scratch_.assign(set, set + space_.words());
  for (int32_t s : plans_[plan]) {
    const SequenceStateSpace::Run step = space_.RunSequence(scratch_.data(), run.live_after, s);
    run.peak = std::max(run.peak, step.peak);
    run.live_after = step.live_after;
    SequenceStateSpace::Add(scratch_.data(), s);
  }
  return run;
}

// Optimization 3: SearchGroup once per value context (and per budget the
// context was found infeasible under, while the budget rises).
HierarchicalSearch::UnitRun HierarchicalSearch::MemoizedSearch(GroupInfo& info, const uint64_t* set,
                                                               int64_t live, int64_t budget,
                                                               const ScheduleLimits& limits) {
  const std::vector<uint64_t> key = info.ContextKey(set);
  if (auto it = info.memo.find(key); it != info.memo.end()) {
    const MemoEntry& entry = it->second;
    if (entry.found) {
      ++stats_.memo_hits;
      if (live + entry.peak > budget) return {SearchOutcome::kOverBudget};
      return {SearchOutcome::kFound, live + entry.peak, live + entry.live_delta, entry.plan,
              entry.exhaustive};
    }
    if (budget - live <= entry.infeasible_within) {
      ++stats_.memo_hits;
      return {SearchOutcome::kOverBudget};
    }
  }
  const UnitRun run = SearchGroup(info, set, live, budget, limits);
  if (run.outcome == SearchOutcome::kLimit) return run;
  MemoEntry& entry = info.memo[key];
  if (run.outcome == SearchOutcome::kFound) {
    entry = {true, run.peak - live, run.live_after - live, run.plan, run.exhaustive, INT64_MIN};
  } else {
    entry.infeasible_within = std::max(entry.infeasible_within, budget - live);
  }
  memo_bytes_ += static_cast<int64_t>(key.size() * sizeof(uint64_t) + sizeof(MemoEntry) + 32);
  return run;
}

HierarchicalSearch::UnitRun HierarchicalSearch::SearchGroup(GroupInfo& info, const uint64_t* set,
                                                            int64_t live, int64_t budget,
                                                            const ScheduleLimits& limits) {
  ++stats_.group_searches;
  LevelSearch search(*this, info.units, set, live, INT64_MIN, budget, limits);
  const SearchOutcome outcome = search.Run();
  stats_.states_stored += search.stored();
  if (outcome != SearchOutcome::kFound) return {outcome, 0, 0, kNoId, search.exhaustive()};
  std::vector<int32_t> order;
  for (const auto& [u, plan] : search.Path()) order.push_back(info.units[u].sequences[0]);
  return {SearchOutcome::kFound, search.peak(), search.live_after(), AddPlan(std::move(order)),
          search.exhaustive()};
}

int64_t HierarchicalSearch::HeldBytes() const { return plan_bytes_ + memo_bytes_; }

bool HierarchicalSearch::CountExpansion(const ScheduleLimits& limits) {
  ++stats_.states_expanded;
  if (limit_hit_) return true;
  const bool over_cap =
      options_.max_states_expanded > 0 && stats_.states_expanded > options_.max_states_expanded;
  limit_hit_ = over_cap || (stats_.states_expanded % std::max(1, options_.check_every) == 0 &&
                            limits.Expired());
  return limit_hit_;
}

}  // namespace ordo
