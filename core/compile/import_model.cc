#include "core/compile/import_model.h"

#include "absl/strings/match.h"
#include "core/graph/graph_proto.h"
#include "core/onnx/onnx_import.h"
#include "core/tflite/tflite_import.h"
#include "core/tflite/tflite_model.h"
#include "core/util/printable_text.h"

namespace ordo {

ModelFormat ModelFormatFromPath(absl::string_view path) {
  if (absl::EndsWithIgnoreCase(path, ".json")) return ModelFormat::kGraphJson;
  if (absl::EndsWithIgnoreCase(path, ".pb") || absl::EndsWithIgnoreCase(path, ".ordo")) {
    return ModelFormat::kGraphProto;
  }
  if (absl::EndsWithIgnoreCase(path, ".tflite")) return ModelFormat::kTflite;
  return ModelFormat::kOnnx;
}

ModelFormat ModelFormatOf(absl::string_view path, absl::string_view bytes) {
  const ModelFormat by_name = ModelFormatFromPath(path);
  if (by_name == ModelFormat::kOnnx && HasTfliteIdentifier(bytes)) return ModelFormat::kTflite;
  return by_name;
}

namespace {

absl::StatusOr<Graph> ImportAnyFormat(absl::string_view bytes, ModelFormat format,
                                      const GraphLimits& limits) {
  switch (format) {
    case ModelFormat::kOnnx:
      return ImportOnnx(bytes, limits);
    case ModelFormat::kGraphProto:
      return ParseGraphBinary(bytes, limits);
    case ModelFormat::kGraphJson:
      return ParseGraphJson(bytes, limits);
    case ModelFormat::kTflite:
      return ImportTflite(bytes, limits);
  }
  return absl::InvalidArgumentError("unknown model format");
}

}  // namespace

absl::StatusOr<Graph> ImportModel(absl::string_view bytes, ModelFormat format,
                                  const GraphLimits& limits) {
  absl::StatusOr<Graph> graph = ImportAnyFormat(bytes, format, limits);
  // Messages quote names from the model and, for JSON, protobuf's parser
  // quotes the input itself: NUL, newlines and invalid UTF-8 are escaped
  // here, once, for every caller (CLI, server).
  if (!graph.ok()) return WithPrintableMessage(graph.status());
  return graph;
}

}  // namespace ordo
