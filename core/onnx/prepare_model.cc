#include "core/onnx/prepare_model.h"

#include <climits>

#include "core/onnx/function_inlining.h"
#include "core/onnx/sparse_initializers.h"
#include "core/util/status_macros.h"
#include "core/util/wire_field_count.h"

namespace ordo {
namespace {

// ModelProto.functions (25) at the top level: the payloads (the graph) are
// skipped, not read. False for bytes that do not scan: the import says why.
bool HasLocalFunctions(absl::string_view model_bytes) {
  return CountWireField(model_bytes, 25).value_or(0) > 0;
}

// ModelProto.graph (7) -> GraphProto.sparse_initializer (15), unread.
bool HasSparseInitializers(absl::string_view model_bytes) {
  return CountNestedWireField(model_bytes, 7, 15).value_or(0) > 0;
}

}  // namespace

absl::StatusOr<std::optional<std::string>> PrepareOnnxModel(absl::string_view model_bytes,
                                                            const InputShapes& shapes,
                                                            int64_t max_nodes) {
  if (shapes.empty() && !HasLocalFunctions(model_bytes) && !HasSparseInitializers(model_bytes)) {
    return std::nullopt;
  }
  onnx::ModelProto model;
  if (model_bytes.size() > static_cast<size_t>(INT_MAX) ||
      !model.ParseFromArray(model_bytes.data(), static_cast<int>(model_bytes.size()))) {
    return absl::InvalidArgumentError(
        "not a valid ONNX model: the bytes do not parse as onnx.ModelProto");
  }
  ORDO_RETURN_IF_ERROR(onnx_import::DensifySparseInitializers(*model.mutable_graph()));
  ORDO_RETURN_IF_ERROR(InlineLocalFunctions(model, max_nodes));
  ORDO_RETURN_IF_ERROR(ApplyInputShapes(shapes, *model.mutable_graph()));
  std::string bytes;
  if (!model.SerializeToString(&bytes)) {
    return absl::InvalidArgumentError("the prepared model does not serialize (over 2 GiB?)");
  }
  return bytes;
}

absl::StatusOr<std::string> PreparedOnnxBytes(absl::string_view model_bytes,
                                              const InputShapes& shapes, int64_t max_nodes) {
  ORDO_ASSIGN_OR_RETURN(std::optional<std::string> prepared,
                        PrepareOnnxModel(model_bytes, shapes, max_nodes));
  if (prepared) return *std::move(prepared);
  return std::string(model_bytes);
}

}  // namespace ordo
