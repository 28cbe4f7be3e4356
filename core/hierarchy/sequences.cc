#include "core/hierarchy/sequences.h"

#include <algorithm>
#include <utility>

#include "core/memory/live_memory.h"
#include "core/util/check.h"

namespace ordo {
namespace {

// Whether `v` may follow `u` in a sequence (structure only).
bool Linked(const MemoryModel& model, const Digraph& ops, int32_t u, int32_t v) {
  if (ops.successors(u).size() != 1 || ops.successors(u)[0] != v) return false;
  if (ops.predecessors(v).size() != 1) return false;
  for (int32_t t : model.ops[v].inputs) {
    if (model.tensors[t].producer != u) return false;
  }
  return true;
}

// The stable and transient footprints of a growing sequence relative to
// the live bytes before it (FormSequences' comment). An input of the first
// op that another op also reads is taken as surviving it (and not written
// over in place): allowing for it dying can only lower later footprints
// relative to the first op's, by at least as much as it lowers the first.
// Later ops read only their predecessor's outputs, so every input of theirs
// dies at them unless it is a graph output.
class SequenceFootprints {
 public:
  SequenceFootprints(const MemoryModel& model, const StepTable& steps, int32_t first)
      : model_(&model), steps_(&steps) {
    const auto [stable, transient] = Step(first, 0);
    first_stable_ = stable;
    transient_ = transient;
  }

  // Appends `op` (whose inputs are all outputs of the previous op) when both
  // conditions still hold.
  bool TryAppend(int32_t op) {
    const auto [stable, transient] = Step(op, transient_);
    if (stable > first_stable_ || transient > transient_) return false;
    transient_ = transient;
    return true;
  }

 private:
  // {stable, transient} of running `op` after transient footprint `before`:
  // `op` reads an input last whatever the order of the other ops when it
  // is its only reader.
  std::pair<int64_t, int64_t> Step(int32_t op, int64_t before) const {
    StepBytes bytes = steps_->Start(op, before);
    for (const StepTable::Release& release : steps_->releases(op)) {
      if (model_->tensors[release.tensor].consumers.size() == 1) StepTable::Free(release, bytes);
    }
    return {bytes.footprint, bytes.live_after};
  }

  const MemoryModel* model_;  // must outlive this
  const StepTable* steps_;    // must outlive this
  int64_t first_stable_ = 0;
  int64_t transient_ = 0;
};

std::vector<std::vector<int32_t>> NumberTopologically(std::vector<std::vector<int32_t>> sequences,
                                                      const Digraph& ops) {
  std::vector<int32_t> position(ops.num_nodes());
  const std::vector<int32_t> order = ops.TopologicalOrder();
  ORDO_CHECK(static_cast<int32_t>(order.size()) == ops.num_nodes());
  for (int32_t i = 0; i < static_cast<int32_t>(order.size()); ++i) position[order[i]] = i;
  std::sort(sequences.begin(), sequences.end(),
            [&](const std::vector<int32_t>& a, const std::vector<int32_t>& b) {
              return position[a.front()] < position[b.front()];
            });
  return sequences;
}

}  // namespace

std::vector<std::vector<int32_t>> FormSequences(const MemoryModel& model, const Digraph& ops) {
  const int32_t n = ops.num_nodes();
  const StepTable steps(model);
  // A chain starts at every op that does not continue its predecessor's.
  std::vector<bool> continues(n, false);
  for (int32_t u = 0; u < n; ++u) {
    if (ops.successors(u).size() == 1 && Linked(model, ops, u, ops.successors(u)[0])) {
      continues[ops.successors(u)[0]] = true;
    }
  }
  std::vector<std::vector<int32_t>> sequences;
  for (int32_t head = 0; head < n; ++head) {
    if (continues[head]) continue;
    sequences.push_back({head});
    SequenceFootprints footprints(model, steps, head);
    for (int32_t u = head; ops.successors(u).size() == 1;) {
      const int32_t v = ops.successors(u)[0];
      if (!Linked(model, ops, u, v)) break;
      if (!footprints.TryAppend(v)) {
        sequences.push_back({});
        footprints = SequenceFootprints(model, steps, v);
      }
      sequences.back().push_back(v);
      u = v;
    }
  }
  return NumberTopologically(std::move(sequences), ops);
}

std::vector<std::vector<int32_t>> SingletonSequences(const Digraph& ops) {
  std::vector<std::vector<int32_t>> sequences;
  sequences.reserve(ops.num_nodes());
  for (int32_t op = 0; op < ops.num_nodes(); ++op) sequences.push_back({op});
  return NumberTopologically(std::move(sequences), ops);
}

}  // namespace ordo
