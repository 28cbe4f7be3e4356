#include "core/schedule/dp_scheduler.h"

#include <algorithm>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/memory/simulator.h"
#include "core/schedule/greedy_scheduler.h"
#include "core/schedule/op_dag.h"
#include "core/schedule/op_set_table.h"
#include "core/schedule/schedule_state_space.h"
#include "core/schedule/topological_orders.h"
#include "core/util/status_macros.h"

namespace ordo {
namespace {

// What the search keeps per signature (besides the set itself, in the table,
// under the same number). 24 bytes.
struct StateRecord {
  int64_t peak;    // g: the least peak of a path found to this set
  int64_t live;    // live(set)
  int32_t parent;  // state the best path came from; kNoId for the root
  int32_t op;      // op that path ran last; kNoId for the root
};

struct OpenEntry {
  int64_t key;
  int32_t depth;
  int32_t state;
};

// std::push_heap keeps the greatest element on top: "a < b" means b leaves
// first. Least key first; then deeper (dive toward a complete schedule);
// then newer (depth-first among equals).
struct LeavesLater {
  bool operator()(const OpenEntry& a, const OpenEntry& b) const {
    if (a.key != b.key) return a.key > b.key;
    if (a.depth != b.depth) return a.depth < b.depth;
    return a.state < b.state;
  }
};

enum class SearchEnd { kProved, kLimit, kCancelled };

constexpr int32_t kMemoryCheckEvery = 64;
// States are numbered with int32_t; stop well before that runs out (only a
// max_state_bytes far above any real machine gets here).
constexpr int32_t kMaxStates = INT32_MAX / 2;

class BestFirstSearch {
 public:
  BestFirstSearch(const ScheduleStateSpace& space, const DpOptions& options,
                  const ScheduleLimits& limits, int64_t floor, std::vector<int32_t> incumbent,
                  int64_t incumbent_peak)
      : space_(space),
        options_(options),
        limits_(limits),
        floor_(floor),
        n_(space.num_ops()),
        table_(space.words()),
        set_(space.words()),
        child_(space.words()),
        best_order_(std::move(incumbent)),
        best_peak_(incumbent_peak) {}

  SearchEnd Run();

  const std::vector<int32_t>& best_order() const { return best_order_; }
  int64_t best_peak() const { return best_peak_; }
  bool improved() const { return improved_; }
  // Proved: no schedule has a lower peak.
  int64_t proven_lower_bound() const { return proven_lower_bound_; }
  int64_t expanded() const { return expanded_; }
  int64_t stored() const { return table_.size(); }

 private:
  int64_t Key(const StateRecord& record, int32_t depth) const {
    if (depth == n_) return record.peak;
    return std::max({record.peak, floor_, record.live + space_.min_step_growth()});
  }
  void Push(int32_t state, int32_t depth) {
    open_.push_back({Key(records_[state], depth), depth, state});
    std::push_heap(open_.begin(), open_.end(), LeavesLater());
  }
  void Expand(int32_t state, int64_t key, int32_t depth);
  // Dominance (class comment, step 4). Moving a free op u to the front of
  // any completion C of S: each step v of C before u gains u's outputs and
  // loses u's dying inputs, at most live(S+u) - live(S) <= 0 in total, and
  // v can only gain an in-place discount; u's own step is <= `bound`, a
  // lower bound on the peak of every schedule through S. So no schedule
  // through S gets worse and u alone is expanded.
  bool Dominant(const ScheduleStateSpace::Step& step, int64_t bound, int64_t live) const {
    return options_.dominance && step.footprint <= bound && step.live_after <= live;
  }
  void Offer(int32_t parent, int32_t op, ScheduleStateSpace::Step step, int32_t depth);
  void CompleteGreedily(int32_t state, int32_t depth);
  void SetIncumbent(std::vector<int32_t> order, int64_t peak);
  std::vector<int32_t> PathTo(int32_t state) const;
  bool OverMemory() const;
  SearchEnd CheckLimits();

  const ScheduleStateSpace& space_;
  const DpOptions& options_;
  const ScheduleLimits& limits_;
  const int64_t floor_;
  const int32_t n_;

  OpSetTable table_;
  std::vector<StateRecord> records_;
  std::vector<uint8_t> expanded_flags_;
  std::vector<OpenEntry> open_;

  // Scratch, reused by every expansion: no allocation on the hot path.
  std::vector<uint64_t> set_, child_;
  std::vector<int32_t> ready_;
  // The state whose ready ops ready_ holds (kNoId: none): its children's
  // lists follow from it (ReadyAfter).
  int32_t ready_of_ = kNoId;
  std::vector<ScheduleStateSpace::Step> steps_;

  std::vector<int32_t> best_order_;
  int64_t best_peak_;
  bool improved_ = false;
  int64_t proven_lower_bound_ = 0;
  int64_t expanded_ = 0;
  DoublingForecast doublings_;
};

SearchEnd BestFirstSearch::Run() {
  table_.FindOrInsert(set_.data(), 0);  // the empty set; hash 0 (no op keys)
  records_.push_back({space_.initial_footprint(), space_.initial_live(), kNoId, kNoId});
  expanded_flags_.push_back(0);
  Push(0, 0);
  SearchEnd end = SearchEnd::kProved;
  int64_t pops = 0;
  while (!open_.empty() && open_.front().key < best_peak_) {
    if (++pops % std::max(1, options_.check_every) == 0) end = CheckLimits();
    if (end == SearchEnd::kProved && pops % kMemoryCheckEvery == 0 && OverMemory()) {
      end = SearchEnd::kLimit;
    }
    if (end != SearchEnd::kProved) break;
    const OpenEntry top = open_.front();
    std::pop_heap(open_.begin(), open_.end(), LeavesLater());
    open_.pop_back();
    // Stale entries: the state was expanded from a cheaper entry already, or
    // a cheaper path lowered its key after this entry was pushed.
    if (expanded_flags_[top.state] || top.key != Key(records_[top.state], top.depth)) {
      continue;
    }
    expanded_flags_[top.state] = 1;
    ++expanded_;
    if (options_.complete_every > 0 && expanded_ % options_.complete_every == 0) {
      CompleteGreedily(top.state, top.depth);
    }
    Expand(top.state, top.key, top.depth);
  }
  // Every schedule below the least open key passes through an open state (or
  // one pruned for reaching the incumbent's peak), so that key is proved.
  proven_lower_bound_ = open_.empty() ? best_peak_ : std::min(best_peak_, open_.front().key);
  if (end == SearchEnd::kProved) proven_lower_bound_ = best_peak_;
  return end;
}

// The deadline, and a doubling of the state buffers that would end past it
// (DoublingForecast: the records and the open list grow with the table).
// One clock read per call, as before.
SearchEnd BestFirstSearch::CheckLimits() {
  if (limits_.StopRequested()) {
    return SearchEnd::kCancelled;
  }
  if (limits_.deadline == absl::InfiniteFuture()) return SearchEnd::kProved;
  const absl::Time now = limits_.Now();
  if (now >= limits_.deadline ||
      doublings_.WouldOverrun(now, table_.size(), limits_.deadline)) {
    return SearchEnd::kLimit;
  }
  return SearchEnd::kProved;
}

bool BestFirstSearch::OverMemory() const {
  const int64_t buffers[] = {
      table_.MemoryBytes(),
      static_cast<int64_t>(records_.capacity() * sizeof(StateRecord)),
      static_cast<int64_t>(expanded_flags_.capacity()),
      static_cast<int64_t>(open_.capacity() * sizeof(OpenEntry)),
  };
  int64_t total = 0;
  int64_t largest = 0;
  for (int64_t bytes : buffers) {
    total += bytes;
    largest = std::max(largest, bytes);
  }
  // A vector grows by reallocating to twice its capacity: count that next
  // step of the largest buffer, so the limit holds through it.
  return total + largest > limits_.max_state_bytes || table_.size() >= kMaxStates;
}

void BestFirstSearch::Expand(int32_t state, int64_t key, int32_t depth) {
  // Copy: inserting children may move the table's arena.
  std::copy_n(table_.set(state), space_.words(), set_.data());
  const StateRecord record = records_[state];
  if (record.parent != kNoId && record.parent == ready_of_) {
    space_.ReadyAfter(set_.data(), record.op, ready_);
  } else {
    space_.ReadyOps(set_.data(), ready_);
  }
  ready_of_ = state;
  steps_.resize(ready_.size());
  for (size_t i = 0; i < ready_.size(); ++i) {
    steps_[i] = space_.Run(set_.data(), record.live, ready_[i]);
    if (Dominant(steps_[i], key, record.live)) {
      Offer(state, ready_[i], steps_[i], depth);
      return;
    }
  }
  // Every schedule through S runs one of these steps next, so the least of
  // their footprints is a lower bound on its peak too, often above the key
  // (on RandWire most states' next steps are): dominance again with it.
  if (options_.dominance && !steps_.empty()) {
    int64_t next = steps_[0].footprint;
    for (const ScheduleStateSpace::Step& step : steps_) next = std::min(next, step.footprint);
    if (next > key) {
      for (size_t i = 0; i < ready_.size(); ++i) {
        if (Dominant(steps_[i], next, record.live)) {
          Offer(state, ready_[i], steps_[i], depth);
          return;
        }
      }
    }
  }
  for (size_t i = 0; i < ready_.size(); ++i) Offer(state, ready_[i], steps_[i], depth);
}

void BestFirstSearch::Offer(int32_t parent, int32_t op, ScheduleStateSpace::Step step,
                            int32_t depth) {
  const StateRecord& from = records_[parent];
  const StateRecord child{std::max(from.peak, step.footprint), step.live_after, parent, op};
  const int32_t child_depth = depth + 1;
  if (Key(child, child_depth) >= best_peak_) return;  // cannot beat the incumbent
  if (child_depth == n_) {
    std::vector<int32_t> order = PathTo(parent);
    order.push_back(op);
    SetIncumbent(std::move(order), child.peak);
    return;
  }
  std::copy(set_.begin(), set_.end(), child_.begin());
  ScheduleStateSpace::Add(child_.data(), op);
  auto [entry, inserted] =
      table_.FindOrInsert(child_.data(), table_.hash(parent) ^ space_.zobrist(op));
  if (inserted) {
    records_.push_back(child);
    expanded_flags_.push_back(0);
    Push(entry, child_depth);
    return;
  }
  // Same set by another path: keep the least peak. Once expanded a state
  // stays expanded (class comment, step 2).
  StateRecord& known = records_[entry];
  if (expanded_flags_[entry] || child.peak >= known.peak) return;
  const int64_t old_key = Key(known, child_depth);
  known = child;
  if (Key(known, child_depth) < old_key) Push(entry, child_depth);
}

void BestFirstSearch::SetIncumbent(std::vector<int32_t> order, int64_t peak) {
  best_order_ = std::move(order);
  best_peak_ = peak;
  improved_ = true;
}

std::vector<int32_t> BestFirstSearch::PathTo(int32_t state) const {
  std::vector<int32_t> order;
  for (int32_t s = state; records_[s].parent != kNoId; s = records_[s].parent) {
    order.push_back(records_[s].op);
  }
  std::reverse(order.begin(), order.end());
  return order;
}

// The greedy rule of GreedyOrder (least resulting peak, then least live
// memory after, then smaller step, then lower id), from a partial schedule.
void BestFirstSearch::CompleteGreedily(int32_t state, int32_t depth) {
  std::vector<uint64_t> set(table_.set(state), table_.set(state) + space_.words());
  int64_t live = records_[state].live;
  int64_t peak = records_[state].peak;
  std::vector<int32_t> suffix;
  std::vector<int32_t> ready;
  space_.ReadyOps(set.data(), ready);
  for (int32_t d = depth; d < n_ && peak < best_peak_; ++d) {
    if (!suffix.empty()) space_.ReadyAfter(set.data(), suffix.back(), ready);
    std::tuple<int64_t, int64_t, int64_t, int32_t> best{INT64_MAX, 0, 0, 0};
    ScheduleStateSpace::Step best_step{};
    for (int32_t op : ready) {
      const ScheduleStateSpace::Step step = space_.Run(set.data(), live, op);
      const std::tuple key{std::max(peak, step.footprint), step.live_after, step.footprint, op};
      if (key < best) {
        best = key;
        best_step = step;
      }
    }
    const int32_t op = std::get<3>(best);
    ScheduleStateSpace::Add(set.data(), op);
    suffix.push_back(op);
    live = best_step.live_after;
    peak = std::get<0>(best);
  }
  if (peak >= best_peak_) return;
  std::vector<int32_t> order = PathTo(state);
  order.insert(order.end(), suffix.begin(), suffix.end());
  SetIncumbent(std::move(order), peak);
}

// The better of two cheap orders: greedy (usually) or Kahn.
std::pair<std::vector<int32_t>, std::string> HeuristicIncumbent(const MemoryModel& model) {
  OpDag dag(model);
  std::vector<int32_t> greedy = GreedyOrder(model, dag);
  std::vector<int32_t> kahn = KahnOrder(dag);
  absl::StatusOr<int64_t> greedy_peak = SimulatePeak(model, greedy);
  absl::StatusOr<int64_t> kahn_peak = SimulatePeak(model, kahn);
  if (greedy_peak.ok() && (!kahn_peak.ok() || *greedy_peak <= *kahn_peak)) {
    return {std::move(greedy), "greedy"};
  }
  return {std::move(kahn), "kahn"};
}

}  // namespace

absl::StatusOr<ScheduleResult> DpScheduler::Schedule(const MemoryModel& model,
                                                     const ScheduleLimits& limits) const {
  auto [order, algorithm] = HeuristicIncumbent(model);
  return Improve(model, limits, std::move(order), std::move(algorithm));
}

absl::StatusOr<ScheduleResult> DpScheduler::Improve(const MemoryModel& model,
                                                    const ScheduleLimits& limits,
                                                    std::vector<int32_t> incumbent,
                                                    std::string incumbent_algorithm) const {
  const absl::Time start = limits.Now();
  const int64_t floor = MemoryLowerBound(model);
  absl::StatusOr<int64_t> incumbent_peak = SimulatePeak(model, incumbent);
  if (!incumbent_peak.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("dp: invalid incumbent: ", incumbent_peak.status().message()));
  }
  if (*incumbent_peak <= floor) {
    return FinishSchedule(model, std::move(incumbent), std::move(incumbent_algorithm), start,
                          limits, floor);
  }
  const ScheduleStateSpace space(model, options_.break_symmetry);
  BestFirstSearch search(space, options_, limits, floor, std::move(incumbent), *incumbent_peak);
  search.Run();
  ORDO_ASSIGN_OR_RETURN(
      ScheduleResult result,
      FinishSchedule(model, search.best_order(),
                     search.improved() ? std::string("dp") : std::move(incumbent_algorithm), start,
                     limits, floor));
  // The search counts memory itself; the simulator has the last word, and a
  // disagreement is a bug in the incremental count.
  if (result.peak_bytes != search.best_peak()) {
    return absl::InternalError(
        absl::StrCat("dp: counted peak ", search.best_peak(), ", simulated ", result.peak_bytes));
  }
  ApplyLowerBound(search.proven_lower_bound(), floor, result);
  result.stats.states_expanded = search.expanded();
  result.stats.states_stored = search.stored();
  return result;
}

}  // namespace ordo
