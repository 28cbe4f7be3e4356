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
  kTflite,      // TensorFlow Lite flatbuffer ("TFL3")
};

// By file name: ".json" -> kGraphJson, ".pb"/".ordo" -> kGraphProto,
// ".tflite" -> kTflite, anything else -> kOnnx.
ModelFormat ModelFormatFromPath(absl::string_view path);

// By file name, and by content for names that say nothing else: a file
// carrying TFLite's identifier "TFL3" is kTflite whatever its extension
// (an ONNX ModelProto cannot start that way: its byte 4 would be a field).
ModelFormat ModelFormatOf(absl::string_view path, absl::string_view bytes);

// Parses and validates a model of any format into a Graph.
absl::StatusOr<Graph> ImportModel(absl::string_view bytes, ModelFormat format,
                                  const GraphLimits& limits = {});

}  // namespace ordo

#endif  // ORDO_CORE_COMPILE_IMPORT_MODEL_H_
