#ifndef ORDO_CORE_COMPILE_IMPORT_MODEL_H_
#define ORDO_CORE_COMPILE_IMPORT_MODEL_H_

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/graph/graph.h"

namespace ordo {

// The formats a model arrives in.
enum class ModelFormat {
  kOnnx,        // onnx.ModelProto, binary
  kGraphProto,  // ordo.v1.Graph, binary
  kGraphJson,   // ordo.v1.Graph, protobuf JSON mapping
};

// By file name: ".json" -> kGraphJson, ".pb"/".ordo" -> kGraphProto, anything
// else -> kOnnx.
ModelFormat ModelFormatFromPath(absl::string_view path);

// Parses and validates a model of any format into a Graph.
absl::StatusOr<Graph> ImportModel(absl::string_view bytes, ModelFormat format,
                                  const GraphLimits& limits = {});

}  // namespace ordo

#endif  // ORDO_CORE_COMPILE_IMPORT_MODEL_H_
