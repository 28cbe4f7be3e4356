#ifndef ORDO_CORE_MEMORY_SUB_MODEL_H_
#define ORDO_CORE_MEMORY_SUB_MODEL_H_

#include <cstdint>
#include <vector>

#include "absl/types/span.h"
#include "core/memory/memory_model.h"

namespace ordo {

// A tensor of a sub-model: its id in the whole model, and whether it is still
// needed when the sub-model's ops have run.
struct SubModelTensor {
  int32_t tensor = kNoId;
  bool live_at_end = false;
};

// Cuts sub-models out of one model: the one place that renumbers ops and
// tensors for a part of a model (hourglass parts, scheduling windows). Which
// tensors a sub-model has and what counts as its constant bytes is the
// caller's rule; this keeps the MemoryModel invariants (inputs and consumers
// ascending) and drops producers and consumers outside the sub-model, so a
// tensor made before it is live from its start. The maps are sized once, so
// cutting many sub-models costs O(their ops' edges + their tensors'
// consumers) each.
class SubModelBuilder {
 public:
  explicit SubModelBuilder(const MemoryModel& model);

  // Op i of the result is ops[i], tensor j is tensors[j].tensor; options are
  // the whole model's. Every tensor the ops read or write must be among
  // `tensors` (checked).
  MemoryModel Build(absl::Span<const int32_t> ops, absl::Span<const SubModelTensor> tensors,
                    int64_t constant_bytes);

 private:
  const MemoryModel& model_;
  std::vector<int32_t> local_op_;
  std::vector<int32_t> local_tensor_;
};

}  // namespace ordo

#endif  // ORDO_CORE_MEMORY_SUB_MODEL_H_
