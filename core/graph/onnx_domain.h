#ifndef ORDO_CORE_GRAPH_ONNX_DOMAIN_H_
#define ORDO_CORE_GRAPH_ONNX_DOMAIN_H_

#include "absl/strings/string_view.h"

namespace ordo {

// ONNX names its standard operator set "" or "ai.onnx"; either means the
// same schemas and opset version.
inline bool IsStandardOnnxDomain(absl::string_view domain) {
  return domain.empty() || domain == "ai.onnx";
}

}  // namespace ordo

#endif  // ORDO_CORE_GRAPH_ONNX_DOMAIN_H_
