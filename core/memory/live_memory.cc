#include "core/memory/live_memory.h"

namespace ordo {

int64_t InitialLiveBytes(const MemoryModel& model) {
  int64_t bytes = model.constant_bytes;
  for (const MemoryModel::TensorInfo& t : model.tensors) {
    if (t.producer == kNoId && OutlivesProducer(t)) bytes += t.bytes;
  }
  return bytes;
}

StepTable::StepTable(const MemoryModel& model) : added_(model.num_ops()) {
  release_begin_.reserve(model.num_ops() + 1);
  release_begin_.push_back(0);
  for (int32_t op = 0; op < model.num_ops(); ++op) {
    added_[op] = OpRule(model, op, [&](const Release& release) { releases_.push_back(release); });
    release_begin_.push_back(static_cast<int32_t>(releases_.size()));
  }
}

LiveMemory::LiveMemory(const MemoryModel& model)
    : model_(&model), steps_(model), live_bytes_(InitialLiveBytes(model)) {
  readers_left_.resize(model.num_tensors());
  for (int32_t t = 0; t < model.num_tensors(); ++t) {
    readers_left_[t] = static_cast<int32_t>(model.tensors[t].consumers.size());
  }
}

}  // namespace ordo
