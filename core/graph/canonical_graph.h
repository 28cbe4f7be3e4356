#ifndef ORDO_CORE_GRAPH_CANONICAL_GRAPH_H_
#define ORDO_CORE_GRAPH_CANONICAL_GRAPH_H_

#include <string>
#include <vector>

#include "absl/types/span.h"
#include "core/graph/graph.h"

namespace ordo {

// A graph's identity up to names: what the service keys whole compile
// results by, so that a re-export of the same network with other tensor,
// node or graph names (another exporter, another module path) finds the
// answer of the first one.
//
// `form` is a byte serialization holding everything of the graph except
// names and source indices, in canonical numbering:
//  - ops in op-id order (the model order, which the answer's schedule is
//    written in), each with its type, domain, attributes (names and values),
//    its inputs in positional order and its outputs, as canonical tensor ids;
//  - canonical tensor ids number the tensors by first touch (ops in id
//    order, an op's inputs then its outputs), then the graph inputs and
//    outputs no op touches, in graph order, then the remaining tensors
//    (weights no op reads) sorted by their serialized description;
//  - per canonical tensor: kind, dtype, dims, bytes, whether it is a graph
//    output; then the graph inputs and outputs in order, as canonical ids.
// Two graphs with equal forms are the same graph up to renaming (op ids
// equal; tensor t of one is tensor_of_canonical[canonical_of_tensor[t]] of
// the other), so any schedule, arena or figure of one holds for the other.
// Equal graphs whose ops are numbered differently (another file order) get
// different forms: a miss, never a wrong hit. The form is compared in full,
// so no hash collision can make two graphs equal.
//
// O(ops + tensors + edges + attributes); the form is about 20 bytes per
// edge. Pure; thread-safe.
struct CanonicalGraph {
  std::string form;
  // Per tensor id: its canonical id; and the inverse.
  std::vector<TensorId> canonical_of_tensor;
  std::vector<TensorId> tensor_of_canonical;
};

CanonicalGraph CanonicalizeGraph(const Graph& graph);

}  // namespace ordo

#endif  // ORDO_CORE_GRAPH_CANONICAL_GRAPH_H_
