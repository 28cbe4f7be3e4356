#include "core/compile/canonical_result.h"

#include <algorithm>
#include <numeric>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/util/status_macros.h"

namespace ordo {
namespace {

// Arena placements with their tensor ids mapped by `to`, ascending again
// (ArenaPlan's order).
void RenumberArena(ArenaPlan& arena, const std::vector<TensorId>& to) {
  for (TensorPlacement& placement : arena.tensors) placement.tensor = to[placement.tensor];
  std::sort(arena.tensors.begin(), arena.tensors.end(),
            [](const TensorPlacement& a, const TensorPlacement& b) { return a.tensor < b.tensor; });
}

bool SameMemoryRules(const MemoryOptions& a, const MemoryOptions& b) {
  return a.inplace == b.inplace && a.count_weights == b.count_weights &&
         a.activation_element_bytes == b.activation_element_bytes &&
         a.io_outside_arena == b.io_outside_arena;
}

}  // namespace

bool CanBeCanonicalized(const CompileResult& result) { return !result.placement.has_value(); }

CompileResult CanonicalizeResult(CompileResult result, const CanonicalGraph& canonical) {
  RenumberArena(result.arena, canonical.canonical_of_tensor);
  result.simulation = {};
  result.model_order_simulation = {};
  return result;
}

absl::StatusOr<CompileResult> ResultForGraph(const CompileResult& stored, const Graph& graph,
                                             const CanonicalGraph& canonical,
                                             const CompileOptions& options) {
  if (!SameMemoryRules(stored.memory, options.memory) || stored.placement.has_value()) {
    return absl::InternalError("stored result: computed under other memory rules or with pools");
  }
  CompileResult result = stored;
  ORDO_ASSIGN_OR_RETURN(const MemoryModel model, BuildMemoryModel(graph, options.memory));
  absl::StatusOr<SimulationResult> simulation = Simulate(model, result.schedule);
  if (!simulation.ok()) {
    return absl::InternalError(absl::StrCat("stored result: its schedule is not valid here: ",
                                            simulation.status().message()));
  }
  if (simulation->peak_bytes != result.peak_bytes) {
    return absl::InternalError(absl::StrCat("stored result: peak ", result.peak_bytes,
                                            "; the simulator says ", simulation->peak_bytes));
  }
  result.simulation = *std::move(simulation);
  std::vector<OpId> model_order(graph.num_ops());
  std::iota(model_order.begin(), model_order.end(), 0);
  ORDO_ASSIGN_OR_RETURN(result.model_order_simulation, Simulate(model, model_order));
  if (!result.arena.planner.empty()) {
    RenumberArena(result.arena, canonical.tensor_of_canonical);
    const absl::Status arena = VerifyArena(model, result.simulation, result.arena);
    if (!arena.ok()) {
      return absl::InternalError(
          absl::StrCat("stored result: its arena is not valid here: ", arena.message()));
    }
  }
  return result;
}

}  // namespace ordo
