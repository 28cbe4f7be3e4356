#include "core/memory/sub_model.h"

#include <algorithm>

#include "core/util/check.h"

namespace ordo {

SubModelBuilder::SubModelBuilder(const MemoryModel& model)
    : model_(model), local_op_(model.num_ops(), kNoId), local_tensor_(model.num_tensors(), kNoId) {}

MemoryModel SubModelBuilder::Build(absl::Span<const int32_t> ops,
                                   absl::Span<const SubModelTensor> tensors,
                                   int64_t constant_bytes) {
  for (int32_t i = 0; i < static_cast<int32_t>(ops.size()); ++i) local_op_[ops[i]] = i;
  for (int32_t j = 0; j < static_cast<int32_t>(tensors.size()); ++j) {
    local_tensor_[tensors[j].tensor] = j;
  }
  auto local_tensor = [&](int32_t t) {
    ORDO_CHECK(local_tensor_[t] != kNoId);
    return local_tensor_[t];
  };

  MemoryModel sub;
  sub.options = model_.options;
  sub.constant_bytes = constant_bytes;
  sub.tensors.reserve(tensors.size());
  for (const SubModelTensor& entry : tensors) {
    const MemoryModel::TensorInfo& info = model_.tensors[entry.tensor];
    MemoryModel::TensorInfo& local = sub.tensors.emplace_back();
    local.bytes = info.bytes;
    local.live_at_end = entry.live_at_end;
    if (info.producer != kNoId) local.producer = local_op_[info.producer];
    for (int32_t consumer : info.consumers) {
      if (local_op_[consumer] != kNoId) local.consumers.push_back(local_op_[consumer]);
    }
    std::sort(local.consumers.begin(), local.consumers.end());
  }
  sub.ops.resize(ops.size());
  for (size_t i = 0; i < ops.size(); ++i) {
    const MemoryModel::OpInfo& info = model_.ops[ops[i]];
    MemoryModel::OpInfo& local = sub.ops[i];
    for (int32_t t : info.inputs) local.inputs.push_back(local_tensor(t));
    std::sort(local.inputs.begin(), local.inputs.end());
    for (int32_t t : info.outputs) local.outputs.push_back(local_tensor(t));
    if (info.inplace_input != kNoId) local.inplace_input = local_tensor(info.inplace_input);
  }

  for (int32_t op : ops) local_op_[op] = kNoId;
  for (const SubModelTensor& entry : tensors) local_tensor_[entry.tensor] = kNoId;
  return sub;
}

}  // namespace ordo
