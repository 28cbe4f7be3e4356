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
  const StepTable table(model);
  // Per tensor, the position in its sequence of the op reading it last
  // there; only the reads of one sequence matter at a time.
  std::vector<int32_t> last_reader(model.num_tensors(), kNoId);
  op_begin_.push_back(0);
  for (int32_t s = 0; s < num_sequences_; ++s) {
    zobrist_.push_back(SplitMix64(static_cast<uint64_t>(s) + 0x6869657261726368ull));
    for (int32_t op : graph.sequence(s)) {
      for (int32_t t : model.ops[op].inputs) last_reader[t] = op;
    }
    for (int32_t op : graph.sequence(s)) AddOp(model, table, graph, s, op, last_reader);
    op_begin_.push_back(static_cast<int32_t>(ops_.size()));
  }
}

void SequenceStateSpace::AddOp(const MemoryModel& model, const StepTable& table,
                               const HierarchicalGraph& graph, int32_t s, int32_t op,
                               const std::vector<int32_t>& last_reader) {
  OpStep step{table.added(op), static_cast<int32_t>(deaths_.size()), 0};
  for (const StepTable::Release& release : table.releases(op)) {
    if (last_reader[release.tensor] != op) continue;
    Death death{release, static_cast<int32_t>(others_.size()), 0};
    for (int32_t consumer : model.tensors[release.tensor].consumers) {
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
    StepBytes bytes = StepTable::Start(step.added, run.live_after);
    for (int32_t d = step.deaths_begin; d < step.deaths_end; ++d) {
      const Death& death = deaths_[d];
      bool last = true;
      for (int32_t o = death.others_begin; o < death.others_end && last; ++o) {
        last = Contains(set, others_[o]);
      }
      if (last) StepTable::Free(death.release, bytes);
    }
    run.peak = std::max(run.peak, bytes.footprint);
    run.live_after = bytes.live_after;
  }
  return run;
}

}  // namespace ordo
