#include "core/schedule/sequence_state_space.h"

#include <algorithm>

#include "core/memory/live_memory.h"
#include "core/memory/simulator.h"

namespace ordo {
namespace {

// SplitMix64, as ScheduleStateSpace: reproducible keys.
uint64_t SplitMix64(uint64_t x) {
  x += 0x9E3779B97F4A7C15ull;
  x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
  x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
  return x ^ (x >> 31);
}

}  // namespace

SequenceStateSpace::SequenceStateSpace(const MemoryModel& model, const HierarchicalGraph& graph)
    : num_sequences_(graph.num_sequences()),
      words_(std::max(1, (graph.num_sequences() + 63) / 64)) {
  initial_live_ = InitialLiveBytes(model);
  initial_footprint_ = InitialBytes(model);
  // Per tensor, the position in its sequence of the op reading it last
  // there; only the reads of one sequence matter at a time.
  std::vector<int32_t> last_reader(model.num_tensors(), kNoId);
  op_begin_.push_back(0);
  for (int32_t s = 0; s < num_sequences_; ++s) {
    zobrist_.push_back(SplitMix64(static_cast<uint64_t>(s) + 0x6869657261726368ull));
    for (int32_t op : graph.sequence(s)) {
      for (int32_t t : model.ops[op].inputs) last_reader[t] = op;
    }
    for (int32_t op : graph.sequence(s)) AddOp(model, graph, s, op, last_reader);
    op_begin_.push_back(static_cast<int32_t>(ops_.size()));
  }
}

void SequenceStateSpace::AddOp(const MemoryModel& model, const HierarchicalGraph& graph, int32_t s,
                               int32_t op, const std::vector<int32_t>& last_reader) {
  const MemoryModel::OpInfo& info = model.ops[op];
  OpStep step{0, 0, static_cast<int32_t>(deaths_.size()), 0};
  for (int32_t t : info.outputs) {
    step.output_bytes += model.tensors[t].bytes;
    if (OutlivesProducer(model.tensors[t])) step.kept_output_bytes += model.tensors[t].bytes;
  }
  for (int32_t t : info.inputs) {
    const MemoryModel::TensorInfo& tensor = model.tensors[t];
    if (tensor.live_at_end || last_reader[t] != op) continue;
    Death death{tensor.bytes, static_cast<int32_t>(others_.size()), 0, MayOverwrite(model, info, t)};
    for (int32_t consumer : tensor.consumers) {
      const int32_t other = graph.sequence_of_op(consumer);
      if (other != s) others_.push_back(other);
    }
    std::sort(others_.begin() + death.others_begin, others_.end());
    others_.erase(std::unique(others_.begin() + death.others_begin, others_.end()), others_.end());
    death.others_end = static_cast<int32_t>(others_.size());
    deaths_.push_back(death);
  }
  step.deaths_end = static_cast<int32_t>(deaths_.size());
  ops_.push_back(op);
  steps_.push_back(step);
}

SequenceStateSpace::Run SequenceStateSpace::RunSequence(const uint64_t* set, int64_t live,
                                                        int32_t s) const {
  Run run{INT64_MIN, live};
  for (int32_t i = op_begin_[s]; i < op_begin_[s + 1]; ++i) {
    const OpStep& step = steps_[i];
    int64_t footprint = run.live_after + step.output_bytes;
    int64_t after = run.live_after + step.kept_output_bytes;
    for (int32_t d = step.deaths_begin; d < step.deaths_end; ++d) {
      const Death& death = deaths_[d];
      bool dies = true;
      for (int32_t o = death.others_begin; o < death.others_end && dies; ++o) {
        dies = Contains(set, others_[o]);
      }
      if (!dies) continue;
      after -= death.bytes;
      if (death.inplace) footprint -= death.bytes;
    }
    run.peak = std::max(run.peak, footprint);
    run.live_after = after;
  }
  return run;
}

}  // namespace ordo
