#ifndef ORDO_CORE_ONNX_ONNX_IMPORT_H_
#define ORDO_CORE_ONNX_ONNX_IMPORT_H_

#include <string>
#include <string_view>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/graph/graph.h"

namespace ordo {

// Reads an ONNX model (serialized onnx::ModelProto) into a Graph.
//
// 1. Parses the bytes; rejects control flow (If/Loop/Scan, graph attributes).
// 2. Runs ONNX shape inference when intermediate shapes are missing.
// 3. Folds compile-time values (spec: an op whose inputs are all weights, and
//    Shape/Size of statically shaped tensors), evaluating the small integer
//    shape computations PyTorch exports so that the shapes they determine
//    become static, then re-runs shape inference; repeats to a fixed point.
// 4. Builds the Graph: unnamed nodes are named "n<index in file>"; folded
//    outputs and initializers are weights; ops keep file order and
//    Op::source_index is the node's index in the file.
//
// Initializers may carry dims without data (the benchmark set strips them).
// Errors are INVALID_ARGUMENT naming the node or tensor; RESOURCE_EXHAUSTED
// when the node count is over limits.max_ops (checked before building).
absl::StatusOr<Graph> ImportOnnx(std::string_view model_bytes,
                                 const GraphLimits& limits = {});

// The original model with its nodes reordered: compile-time (folded) nodes
// first in file order, then the graph's ops in `schedule` order. Everything
// else is kept as it was, so the result is a valid model that runtimes
// executing nodes in file order run in the chosen order.
absl::StatusOr<std::string> ReorderOnnxNodes(std::string_view model_bytes,
                                             const Graph& graph,
                                             absl::Span<const OpId> schedule);

}  // namespace ordo

#endif  // ORDO_CORE_ONNX_ONNX_IMPORT_H_
