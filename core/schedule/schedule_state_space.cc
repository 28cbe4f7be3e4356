#include "core/schedule/schedule_state_space.h"

#include <algorithm>

#include "core/memory/live_memory.h"
#include "core/memory/simulator.h"
#include "core/schedule/chain_symmetry.h"

namespace ordo {
namespace {

// SplitMix64: a fixed, well-mixed key per op, so runs are reproducible.
uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

ScheduleStateSpace::ScheduleStateSpace(const MemoryModel& model, bool break_symmetry)
    : num_ops_(model.num_ops()),
      words_(std::max(1, (model.num_ops() + 63) / 64)),
      steps_(model),
      dag_(model, break_symmetry ? InterchangeableChainEdges(model) : std::vector<OrderEdge>{}) {
  initial_live_ = InitialLiveBytes(model);
  initial_footprint_ = InitialBytes(model);
  zobrist_.resize(num_ops_);
  pred_begin_.assign(1, 0);
  use_begin_.assign(1, 0);
  min_step_growth_ = num_ops_ > 0 ? INT64_MAX : 0;
  for (int32_t op = 0; op < num_ops_; ++op) {
    zobrist_[op] = SplitMix64(static_cast<uint64_t>(op) + 0x6F72646Full);
    // The least the step can add: every input it may overwrite read last.
    StepBytes growth = steps_.Start(op, 0);
    for (const StepTable::Release& release : steps_.releases(op)) {
      InputUse use{release, static_cast<int32_t>(other_consumers_.size()), 0};
      for (int32_t consumer : model.tensors[release.tensor].consumers) {
        if (consumer != op) other_consumers_.push_back(consumer);
      }
      use.others_end = static_cast<int32_t>(other_consumers_.size());
      uses_.push_back(use);
      if (release.overwritten) StepTable::Free(release, growth);
    }
    use_begin_.push_back(static_cast<int32_t>(uses_.size()));
    min_step_growth_ = std::min(min_step_growth_, growth.footprint);
    const absl::Span<const int32_t> preds = dag_.predecessors(op);  // ascending
    preds_.insert(preds_.end(), preds.rbegin(), preds.rend());
    pred_begin_.push_back(static_cast<int32_t>(preds_.size()));
  }
  word_min_last_pred_.assign(words_, INT32_MAX);
  latest_pred_.resize(num_ops_);
  for (int32_t op = 0; op < num_ops_; ++op) {
    const int32_t last = pred_begin_[op] == pred_begin_[op + 1] ? -1 : preds_[pred_begin_[op]];
    latest_pred_[op] = last;
    word_min_last_pred_[op >> 6] = std::min(word_min_last_pred_[op >> 6], last);
  }
}

bool ScheduleStateSpace::IsReady(const uint64_t* set, int32_t op) const {
  if (Contains(set, op)) return false;
  for (int32_t i = pred_begin_[op]; i < pred_begin_[op + 1]; ++i) {
    if (!Contains(set, preds_[i])) return false;
  }
  return true;
}

void ScheduleStateSpace::ReadyOps(const uint64_t* set, std::vector<int32_t>& ready) const {
  ready.clear();
  int32_t highest = -1;  // the set's highest op
  for (int32_t w = words_ - 1; w >= 0; --w) {
    if (set[w] != 0) {
      highest = w * 64 + 63 - __builtin_clzll(set[w]);
      break;
    }
  }
  for (int32_t w = 0; w < words_; ++w) {
    if (word_min_last_pred_[w] > highest) continue;
    uint64_t open = ~set[w];
    if (w == words_ - 1 && (num_ops_ & 63) != 0) open &= (uint64_t{1} << (num_ops_ & 63)) - 1;
    while (open != 0) {
      const int32_t op = w * 64 + __builtin_ctzll(open);
      open &= open - 1;
      // The latest producer first, from a flat array: it settles most ops.
      const int32_t latest = latest_pred_[op];
      if (latest >= 0 && !Contains(set, latest)) continue;
      bool ready_now = true;
      for (int32_t i = pred_begin_[op] + 1; i < pred_begin_[op + 1]; ++i) {
        if (!Contains(set, preds_[i])) {
          ready_now = false;
          break;
        }
      }
      if (ready_now) ready.push_back(op);
    }
  }
}

void ScheduleStateSpace::ReadyAfter(const uint64_t* set, int32_t op,
                                    std::vector<int32_t>& ready) const {
  ready.erase(std::lower_bound(ready.begin(), ready.end(), op));
  for (const int32_t consumer : dag_.successors(op)) {
    if (IsReady(set, consumer)) {
      ready.insert(std::lower_bound(ready.begin(), ready.end(), consumer), consumer);
    }
  }
}

bool ScheduleStateSpace::AllIn(const uint64_t* set, int32_t begin, int32_t end) const {
  for (int32_t i = begin; i < end; ++i) {
    if (!Contains(set, other_consumers_[i])) return false;
  }
  return true;
}

ScheduleStateSpace::Step ScheduleStateSpace::Run(const uint64_t* set, int64_t live,
                                                 int32_t op) const {
  Step step = steps_.Start(op, live);
  for (int32_t i = use_begin_[op]; i < use_begin_[op + 1]; ++i) {
    const InputUse& use = uses_[i];
    if (AllIn(set, use.others_begin, use.others_end)) StepTable::Free(use.release, step);
  }
  return step;
}

int64_t ScheduleStateSpace::LiveBytes(const MemoryModel& model, const uint64_t* set) {
  int64_t live = model.constant_bytes;
  for (const MemoryModel::TensorInfo& t : model.tensors) {
    if (t.producer != kNoId && !Contains(set, t.producer)) continue;
    bool needed = t.live_at_end;
    for (int32_t consumer : t.consumers) needed = needed || !Contains(set, consumer);
    if (needed) live += t.bytes;
  }
  return live;
}

}  // namespace ordo
