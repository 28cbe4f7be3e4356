#include "core/schedule/greedy_scheduler.h"

#include <algorithm>
#include <tuple>

#include "core/memory/live_memory.h"

namespace ordo {

std::vector<int32_t> GreedyOrder(const MemoryModel& model, const OpDag& dag) {
  const int32_t n = dag.num_ops();
  LiveMemory memory(model);
  std::vector<int32_t> missing(n);
  std::vector<int32_t> ready;
  for (int32_t op = 0; op < n; ++op) {
    missing[op] = dag.in_degree(op);
    if (missing[op] == 0) ready.push_back(op);
  }
  int64_t peak = memory.live_bytes();
  std::vector<int32_t> order;
  order.reserve(n);
  while (!ready.empty()) {
    size_t best = 0;
    std::tuple<int64_t, int64_t, int64_t, int32_t> best_key;
    for (size_t i = 0; i < ready.size(); ++i) {
      const LiveMemory::Step step = memory.Preview(ready[i]);
      std::tuple key{std::max(peak, step.footprint_bytes), step.live_after_bytes,
                     step.footprint_bytes, ready[i]};
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
