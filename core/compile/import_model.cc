#include "core/compile/import_model.h"

#include "absl/strings/match.h"
#include "core/graph/graph_proto.h"
#include "core/onnx/onnx_import.h"

namespace ordo {

ModelFormat ModelFormatFromPath(absl::string_view path) {
  if (absl::EndsWithIgnoreCase(path, ".json")) return ModelFormat::kGraphJson;
  if (absl::EndsWithIgnoreCase(path, ".pb") || absl::EndsWithIgnoreCase(path, ".ordo")) {
    return ModelFormat::kGraphProto;
  }
  return ModelFormat::kOnnx;
}

absl::StatusOr<Graph> ImportModel(absl::string_view bytes, ModelFormat format,
                                  const GraphLimits& limits) {
  switch (format) {
    case ModelFormat::kOnnx:
      return ImportOnnx(bytes, limits);
    case ModelFormat::kGraphProto:
      return ParseGraphBinary(bytes, limits);
    case ModelFormat::kGraphJson:
      return ParseGraphJson(bytes, limits);
  }
  return absl::InvalidArgumentError("unknown model format");
}

}  // namespace ordo
