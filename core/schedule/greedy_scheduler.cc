#include "core/schedule/greedy_scheduler.h"

#include <algorithm>
#include <tuple>

namespace ordo {
namespace {

// Live-memory bookkeeping of a partial schedule, per the simulator's rules.
class LiveMemory {
 public:
  explicit LiveMemory(const MemoryModel& model) : model_(model) {
    remaining_.resize(model.num_tensors());
    current_ = model.constant_bytes;
    for (int32_t t = 0; t < model.num_tensors(); ++t) {
      const auto& info = model.tensors[t];
      remaining_[t] = static_cast<int32_t>(info.consumers.size());
      if (info.producer == kNoId && (info.live_at_end || remaining_[t] > 0)) {
        current_ += info.bytes;
      }
    }
  }

  int64_t current() const { return current_; }

  // Footprint at the step that runs `op`, and live bytes after it.
  std::pair<int64_t, int64_t> Preview(int32_t op) const {
    const auto& info = model_.ops[op];
    int64_t footprint = current_;
    int64_t after = current_;
    for (int32_t t : info.outputs) {
      const auto& out = model_.tensors[t];
      footprint += out.bytes;
      if (out.live_at_end || !out.consumers.empty()) after += out.bytes;
    }
    if (info.inplace_input != kNoId && remaining_[info.inplace_input] == 1 &&
        !model_.tensors[info.inplace_input].live_at_end) {
      footprint -= model_.tensors[info.inplace_input].bytes;
    }
    for (int32_t t : info.inputs) {
      if (remaining_[t] == 1 && !model_.tensors[t].live_at_end) {
        after -= model_.tensors[t].bytes;
      }
    }
    return {footprint, after};
  }

  void Run(int32_t op) {
    current_ = Preview(op).second;
    for (int32_t t : model_.ops[op].inputs) --remaining_[t];
  }

 private:
  const MemoryModel& model_;
  std::vector<int32_t> remaining_;
  int64_t current_ = 0;
};

}  // namespace

std::vector<int32_t> GreedyOrder(const MemoryModel& model, const OpDag& dag) {
  const int32_t n = dag.num_ops();
  LiveMemory memory(model);
  std::vector<int32_t> missing(n);
  std::vector<int32_t> ready;
  for (int32_t op = 0; op < n; ++op) {
    missing[op] = dag.in_degree(op);
    if (missing[op] == 0) ready.push_back(op);
  }
  int64_t peak = memory.current();
  std::vector<int32_t> order;
  order.reserve(n);
  while (!ready.empty()) {
    size_t best = 0;
    std::tuple<int64_t, int64_t, int64_t, int32_t> best_key;
    for (size_t i = 0; i < ready.size(); ++i) {
      auto [footprint, after] = memory.Preview(ready[i]);
      std::tuple key{std::max(peak, footprint), after, footprint, ready[i]};
      if (i == 0 || key < best_key) {
        best = i;
        best_key = key;
      }
    }
    const int32_t op = ready[best];
    ready[best] = ready.back();
    ready.pop_back();
    peak = std::get<0>(best_key);
    memory.Run(op);
    order.push_back(op);
    for (int32_t next : dag.successors(op)) {
      if (--missing[next] == 0) ready.push_back(next);
    }
  }
  return order;
}

}  // namespace ordo
