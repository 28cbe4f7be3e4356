#ifndef ORDO_CORE_MEMORY_MEMORY_MODEL_H_
#define ORDO_CORE_MEMORY_MEMORY_MODEL_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph/graph.h"

namespace ordo {

// The options of ../shared/spec/memory-model.md.
struct MemoryOptions {
  // Element-wise and reinterpreting ops may overwrite their first activation
  // input of the same size when it dies at that step.
  bool inplace = true;
  // Weights live for the whole run instead of costing nothing.
  bool count_weights = false;
  // Bytes per element of every activation (inputs, activations, outputs);
  // 0 keeps each tensor's own dtype. E.g. 1 for int8 deployment.
  int activation_element_bytes = 0;
  // Graph inputs and outputs live in buffers of their own (spec: Option:
  // model input and output outside the arena): they cost 0 bytes here, so
  // no footprint, peak, lower bound or arena counts or places them.
  bool io_outside_arena = false;
};

// True for op types that may run in place under the spec's rule.
bool IsInplaceOpType(absl::string_view op_type);

// The scheduling problem the memory model defines: ops, the tensors that cost
// memory, and who produces and reads them. Everything a scheduler or the
// simulator needs, in dense arrays, and nothing else: no names, no dims.
//
// It is a plain value so that a part of a graph (divide-and-conquer, a worker
// task) is described by the same type: tensors with `producer == kNoId` are
// live from the start (graph inputs, or tensors crossing into a part), tensors
// with `live_at_end` stay live to the end (graph outputs, or tensors leaving a
// part), and `constant_bytes` is live throughout (weights when counted,
// tensors passing through a part untouched).
struct MemoryModel {
  struct OpInfo {
    // Distinct activation tensors read (weights excluded), ascending.
    std::vector<int32_t> inputs;
    // Tensors written, in order.
    std::vector<int32_t> outputs;
    // The input this op may overwrite (spec: In-place), or kNoId.
    int32_t inplace_input = kNoId;
  };
  struct TensorInfo {
    int64_t bytes = 0;
    int32_t producer = kNoId;
    // Distinct consumers, ascending.
    std::vector<int32_t> consumers;
    bool live_at_end = false;
  };

  std::vector<OpInfo> ops;
  // Indexed like the source graph's tensors when built from a Graph; weights
  // are kept (bytes 0, never read) so ids stay the graph's.
  std::vector<TensorInfo> tensors;
  int64_t constant_bytes = 0;
  MemoryOptions options;

  int32_t num_ops() const { return static_cast<int32_t>(ops.size()); }
  int32_t num_tensors() const { return static_cast<int32_t>(tensors.size()); }
};

// Builds the model of `graph` under `options`. Fails (INVALID_ARGUMENT) only
// if an activation size overflows under the element-size override.
absl::StatusOr<MemoryModel> BuildMemoryModel(const Graph& graph,
                                             const MemoryOptions& options);

// Recomputes every OpInfo::inplace_input from op types and sizes. Used by
// BuildMemoryModel and by code that assembles models by hand.
void AssignInplaceInputs(const Graph& graph, MemoryModel& model);

}  // namespace ordo

#endif  // ORDO_CORE_MEMORY_MEMORY_MODEL_H_
