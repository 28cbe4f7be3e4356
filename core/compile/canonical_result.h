#ifndef ORDO_CORE_COMPILE_CANONICAL_RESULT_H_
#define ORDO_CORE_COMPILE_CANONICAL_RESULT_H_

#include "absl/status/statusor.h"
#include "core/compile/compile.h"
#include "core/graph/canonical_graph.h"

namespace ordo {

// Compile results kept apart from the names of the graph that made them,
// so a graph equal up to names (CanonicalizeGraph: same form) reuses them.
// A CompileResult names ops and tensors by id only; op ids are equal across
// graphs of one form, tensor ids are mapped through the canonical
// numbering. Results with a placement in memory pools are not supported
// (CanonicalizeResult refuses them: pools name tensors in the pin list).

// True when `result` can be stored by CanonicalizeResult.
bool CanBeCanonicalized(const CompileResult& result);

// `result` (of the graph `canonical` describes) in canonical numbering:
// arena tensors renumbered and sorted, the simulations dropped (they are
// recomputed on use). Requires CanBeCanonicalized(result).
CompileResult CanonicalizeResult(CompileResult result, const CanonicalGraph& canonical);

// A stored canonical result as the result of `graph` (whose form is
// `canonical`'s), re-checked on `graph` before anything leaves: the
// schedule re-simulated with options.memory (its peak must equal the
// stored peak), the model order simulated, the arena renumbered to the
// graph's tensors and verified (VerifyArena). INTERNAL naming the check
// when one fails (the entry is then not used). O(ops + tensors log tensors).
absl::StatusOr<CompileResult> ResultForGraph(const CompileResult& stored, const Graph& graph,
                                             const CanonicalGraph& canonical,
                                             const CompileOptions& options);

}  // namespace ordo

#endif  // ORDO_CORE_COMPILE_CANONICAL_RESULT_H_
