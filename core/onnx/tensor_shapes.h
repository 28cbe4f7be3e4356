#ifndef ORDO_CORE_ONNX_TENSOR_SHAPES_H_
#define ORDO_CORE_ONNX_TENSOR_SHAPES_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/status.h"
#include "core/onnx/node_graph.h"
#include "onnx/onnx_pb.h"

namespace ordo::onnx_import {

// A dim without a value (symbolic or missing) in TensorType::dims.
inline constexpr int64_t kUnknownDim = -1;

// What an ONNX graph records about one tensor: its element type and its shape,
// which may be absent (unknown rank) or partial. A plain value.
struct TensorType {
  int32_t elem_type = 0;  // onnx::TensorProto::DataType; 0 when unknown
  bool has_shape = false;
  std::vector<int64_t> dims;  // kUnknownDim where a dim has no value
  // For messages: empty when no dim has a dim_param; otherwise the dim_param
  // of each dim without a value ("N"), "" for the others.
  std::vector<std::string> symbols;

  // Rank known and every dim has a value (>= 0).
  bool IsStatic() const;
};

// By NodeGraph value id; a value nothing describes has elem_type 0 and no
// shape.
using TensorTypes = std::vector<TensorType>;

// The types of every value of `nodes` that `graph` describes: graph inputs
// and outputs, value_info, and initializers (whose dims and type are
// authoritative). Where a value is described twice, the more complete
// description wins; descriptions of names that are not values of `nodes` are
// ignored. `graph` is the graph `nodes` was built from or a working copy of
// it. O(entries), one hash lookup per entry.
TensorTypes CollectTensorTypes(const onnx::GraphProto& graph, const NodeGraph& nodes);

// Runs ONNX's C++ shape inference on `model` in place, without data
// propagation and without strict mode, so an op it cannot infer (for example
// a Reshape whose shape is not known yet) is left unknown rather than fatal.
// ONNX reports the remaining errors by throwing; they are caught here and
// returned as INVALID_ARGUMENT with `model` left unchanged. Never reads
// external data. O(nodes) schema lookups.
absl::Status InferShapesInPlace(onnx::ModelProto& model);

}  // namespace ordo::onnx_import

#endif  // ORDO_CORE_ONNX_TENSOR_SHAPES_H_
