#ifndef ORDO_CORE_REWRITE_SUM_REASSOCIATION_H_
#define ORDO_CORE_REWRITE_SUM_REASSOCIATION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph/graph.h"
#include "onnx/onnx_pb.h"

namespace ordo {

// Sums added in the order their terms are produced (an identity rewrite:
// addition is associative and commutative; floating-point results differ
// by rounding only). RandWire's weighted-sum aggregations export as chains
// of Adds in edge order, so a term produced early waits whole until the
// chain reaches it, while the terms before it may come from ops the
// schedule runs much later. Added first, it is freed once its other readers
// have run. The sum keeps its number of Adds: no extra MACs, no extra ops.
//
// A sum tree: an Add (the root) whose output is not the one input of
// another such tree, and, below it, every Add whose output only that tree
// reads; all of them two-input, default-domain Adds over tensors of the
// root's dims and type (no broadcasting), with at least three terms.
struct SumTree {
  OpId root = kNoId;
  std::vector<OpId> adds;         // root last
  std::vector<TensorId> terms;    // left to right
  bool left_deep = true;          // ((t0 + t1) + t2) + ... already
};

// Every sum tree of `graph`, roots in op order. O(ops).
std::vector<SumTree> FindSumTrees(const Graph& graph);

// Which order a rebuilt sum adds its terms in, read from a schedule.
enum class SumOrder : int8_t {
  // As their producers run: every term joins the sum as early as it can.
  kProduced,
  // As they would be freed if the sum took them when produced: the step
  // of the last reader outside the tree, or the producer's when there is
  // none. A term other ops keep live anyway joins late, so the partial sum
  // does not sit beside it.
  kReleased,
};

// The terms of `tree` sorted by `how` under `order` (op ids by step; graph
// inputs and weights count as step -1), ties in the tree's order.
std::vector<TensorId> TermsInScheduleOrder(const Graph& graph, const SumTree& tree,
                                           const std::vector<int32_t>& order, SumOrder how);

// `model` (the one `graph` was imported from, nodes named as the Graph
// names them) with each tree of `trees` rebuilt as the left-deep chain
// that adds its terms in the order `how` reads from `order`; trees
// already in that form are
// left alone. The root keeps its name and output; the inner Adds get fresh
// names, their outputs value_info. `rebuilt` (may be null) receives the
// number of trees rewritten. INVALID_ARGUMENT when a tree's Adds are not
// in the model. O(model + terms).
absl::StatusOr<onnx::ModelProto> ReassociateSums(const onnx::ModelProto& model, const Graph& graph,
                                                 const std::vector<SumTree>& trees,
                                                 const std::vector<int32_t>& order,
                                                 SumOrder how, int32_t* rebuilt);

}  // namespace ordo

#endif  // ORDO_CORE_REWRITE_SUM_REASSOCIATION_H_
