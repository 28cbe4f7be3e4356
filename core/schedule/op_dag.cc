#include "core/schedule/op_dag.h"

#include <algorithm>

namespace ordo {
namespace {

void Compress(std::vector<std::vector<int32_t>>& lists, std::vector<int32_t>& begin,
              std::vector<int32_t>& flat) {
  begin.assign(1, 0);
  for (std::vector<int32_t>& list : lists) {
    std::sort(list.begin(), list.end());
    list.erase(std::unique(list.begin(), list.end()), list.end());
    flat.insert(flat.end(), list.begin(), list.end());
    begin.push_back(static_cast<int32_t>(flat.size()));
  }
}

}  // namespace

OpDag::OpDag(const MemoryModel& model) {
  const int32_t n = model.num_ops();
  std::vector<std::vector<int32_t>> succ(n), pred(n);
  for (int32_t op = 0; op < n; ++op) {
    for (int32_t t : model.ops[op].inputs) {
      const int32_t producer = model.tensors[t].producer;
      if (producer == kNoId) continue;
      pred[op].push_back(producer);
      succ[producer].push_back(op);
    }
  }
  Compress(succ, succ_begin_, succ_);
  Compress(pred, pred_begin_, pred_);
}

}  // namespace ordo
