#include "core/partition/hourglass_partitioner.h"

#include <algorithm>
#include <deque>

#include "core/memory/sub_model.h"
#include "core/util/check.h"

namespace ordo {
namespace {

// Kahn's order over the model's dependencies (producer -> consumer).
std::vector<int32_t> TopologicalOrder(const MemoryModel& model) {
  const int32_t n = model.num_ops();
  std::vector<int32_t> missing(n, 0);
  for (int32_t op = 0; op < n; ++op) {
    for (int32_t t : model.ops[op].inputs) {
      if (model.tensors[t].producer != kNoId) ++missing[op];
    }
  }
  std::deque<int32_t> ready;
  for (int32_t op = 0; op < n; ++op) {
    if (missing[op] == 0) ready.push_back(op);
  }
  std::vector<int32_t> order;
  order.reserve(n);
  while (!ready.empty()) {
    const int32_t op = ready.front();
    ready.pop_front();
    order.push_back(op);
    for (int32_t t : model.ops[op].outputs) {
      for (int32_t consumer : model.tensors[t].consumers) {
        if (--missing[consumer] == 0) ready.push_back(consumer);
      }
    }
  }
  ORDO_CHECK(static_cast<int32_t>(order.size()) == n);  // acyclic by contract
  return order;
}

// Positions in a topological order where a part ends: after each cut
// position, merging consecutive parts while the merge has at most
// `merge_up_to_ops` ops. Always at least one part.
std::vector<int32_t> PartEnds(const std::vector<int32_t>& cut_positions, int32_t n,
                              int32_t merge_up_to_ops) {
  std::vector<int32_t> ends;
  int32_t group_begin = 0, group_end = 0;
  auto extend = [&](int32_t end) {
    if (group_end > group_begin && end - group_begin > merge_up_to_ops) {
      ends.push_back(group_end);
      group_begin = group_end;
    }
    group_end = end;
  };
  for (int32_t k : cut_positions) extend(k + 1);
  extend(n);
  if (group_end > group_begin || ends.empty()) ends.push_back(group_end);
  return ends;
}

// Positions k of `order` whose op is a cut (class comment).
std::vector<int32_t> CutPositions(const MemoryModel& model, const std::vector<int32_t>& order) {
  const int32_t n = model.num_ops();
  std::vector<int32_t> position(n);
  for (int32_t k = 0; k < n; ++k) position[order[k]] = k;
  // Per position: latest producer position (-1: none); earliest consumer
  // position (n: none).
  std::vector<int32_t> latest_producer(n, -1), earliest_consumer(n, n);
  for (int32_t op = 0; op < n; ++op) {
    for (int32_t t : model.ops[op].inputs) {
      const int32_t producer = model.tensors[t].producer;
      if (producer == kNoId) continue;
      latest_producer[position[op]] = std::max(latest_producer[position[op]], position[producer]);
      earliest_consumer[position[producer]] =
          std::min(earliest_consumer[position[producer]], position[op]);
    }
  }
  // suffix_min[k] = min latest_producer over positions >= k.
  std::vector<int32_t> suffix_min(n + 1, n);
  for (int32_t k = n - 1; k >= 0; --k) {
    suffix_min[k] = std::min(suffix_min[k + 1], latest_producer[k]);
  }
  std::vector<int32_t> cuts;
  int32_t prefix_max = -1;  // max earliest_consumer over positions < k
  for (int32_t k = 0; k < n; ++k) {
    if (suffix_min[k + 1] >= k && prefix_max <= k) cuts.push_back(k);
    prefix_max = std::max(prefix_max, earliest_consumer[k]);
  }
  return cuts;
}

// Assembles each part's model from the op blocks; see the class comment for
// the accounting.
class PartBuilder {
 public:
  PartBuilder(const MemoryModel& model, const std::vector<int32_t>& order,
              const std::vector<int32_t>& ends)
      : model_(model), num_parts_(static_cast<int32_t>(ends.size())) {
    part_of_op_.resize(model.num_ops());
    partition_.parts.resize(num_parts_);
    int32_t begin = 0;
    for (int32_t p = 0; p < num_parts_; ++p) {
      std::vector<int32_t>& ops = partition_.parts[p].ops;
      ops.assign(order.begin() + begin, order.begin() + ends[p]);
      std::sort(ops.begin(), ops.end());
      for (int32_t op : ops) part_of_op_[op] = p;
      begin = ends[p];
    }
  }

  Partition Build() && {
    part_tensors_.resize(num_parts_);
    constant_delta_.assign(num_parts_ + 1, 0);
    for (int32_t t = 0; t < model_.num_tensors(); ++t) PlaceTensor(t);
    SubModelBuilder sub_models(model_);
    int64_t constant = model_.constant_bytes;
    for (int32_t p = 0; p < num_parts_; ++p) {
      constant += constant_delta_[p];
      Part& part = partition_.parts[p];
      part.model = sub_models.Build(part.ops, part_tensors_[p], constant);
    }
    return std::move(partition_);
  }

 private:
  // Decides where tensor t is a tensor of a part's model and where it is
  // constant bytes.
  void PlaceTensor(int32_t t) {
    const MemoryModel::TensorInfo& info = model_.tensors[t];
    const bool produced = info.producer != kNoId;
    if (!produced && info.consumers.empty() && !info.live_at_end) {
      // Read by nobody: counts before step 0 only, so in the first part.
      if (info.bytes > 0 && num_parts_ > 0) part_tensors_[0].push_back({t, false});
      return;
    }
    touched_.clear();
    if (produced) touched_.push_back(part_of_op_[info.producer]);
    for (int32_t consumer : info.consumers) touched_.push_back(part_of_op_[consumer]);
    std::sort(touched_.begin(), touched_.end());
    touched_.erase(std::unique(touched_.begin(), touched_.end()), touched_.end());
    const int32_t birth = produced ? part_of_op_[info.producer] : 0;
    const int32_t last =
        info.live_at_end ? num_parts_ - 1 : std::max(birth, touched_.empty() ? 0 : touched_.back());
    constant_delta_[birth] += info.bytes;
    constant_delta_[last + 1] -= info.bytes;
    for (int32_t p : touched_) {
      constant_delta_[p] -= info.bytes;
      constant_delta_[p + 1] += info.bytes;
      part_tensors_[p].push_back({t, info.live_at_end || p < last});
    }
  }

  const MemoryModel& model_;
  const int32_t num_parts_;
  Partition partition_;
  std::vector<int32_t> part_of_op_;
  std::vector<std::vector<SubModelTensor>> part_tensors_;
  // constant bytes of part p = model constant + sum of constant_delta_[0..p].
  std::vector<int64_t> constant_delta_;
  std::vector<int32_t> touched_;
};

}  // namespace

std::vector<int32_t> HourglassPartitioner::CutOps(const MemoryModel& model) const {
  const std::vector<int32_t> order = TopologicalOrder(model);
  std::vector<int32_t> cuts;
  for (int32_t k : CutPositions(model, order)) cuts.push_back(order[k]);
  return cuts;
}

Partition HourglassPartitioner::Split(const MemoryModel& model) const {
  const std::vector<int32_t> order = TopologicalOrder(model);
  const std::vector<int32_t> ends =
      PartEnds(CutPositions(model, order), model.num_ops(), options_.merge_up_to_ops);
  return PartBuilder(model, order, ends).Build();
}

std::vector<int32_t> ConcatenatePartOrders(const Partition& partition,
                                           absl::Span<const std::vector<int32_t>> part_orders) {
  ORDO_CHECK(part_orders.size() == partition.parts.size());
  std::vector<int32_t> order;
  for (size_t p = 0; p < partition.parts.size(); ++p) {
    for (int32_t local : part_orders[p]) order.push_back(partition.parts[p].ops[local]);
  }
  return order;
}

}  // namespace ordo
