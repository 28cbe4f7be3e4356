#ifndef ORDO_CORE_ONNX_MODEL_VIEW_REFERENCE_H_
#define ORDO_CORE_ONNX_MODEL_VIEW_REFERENCE_H_

#include <string>

#include "absl/strings/string_view.h"
#include "core/onnx/model_view.h"
#include "onnx/onnx_pb.h"

namespace ordo::onnx_import {

// ScanModel's contract (model_view.h) checked against protobuf's own parse,
// in one place for model_view_test.cc and tests/fuzz/onnx_import_fuzzer.cc.
// Test and fuzz code only: it builds the full onnx::ModelProto, which is what
// the scan exists to avoid. Both functions return "" when all is well and
// otherwise one line naming where and what differs; names are escaped with
// absl::CHexEscape because damaged models have names that are not UTF-8.

// The first field where `actual` does not read what protobuf parsed into
// `expected`: the graph name; the names and TensorTypes of inputs, outputs
// and value_info; the name, data_type and dims of initializers; each node's
// name, op_type, domain, inputs, outputs and attributes (name, type, i, s,
// ints, has_graph, and f and floats by their bits so that NaN equals
// itself). For example
//   node 3 "conv": attribute "strides": ints: [1, 1] vs [1]
// (protobuf's value first). O(size of the model).
std::string FirstDifference(const onnx::ModelProto& expected, const ModelView& actual);

// Whether ScanModel(bytes) keeps its contract against protobuf's parse of
// the same bytes: when protobuf refuses them, anything goes; when it parses
// them without a graph, the scan must say "not a valid ONNX model: it has no
// graph"; otherwise the scan must succeed and read what protobuf parsed.
std::string ScanContractViolation(absl::string_view bytes);

}  // namespace ordo::onnx_import

#endif  // ORDO_CORE_ONNX_MODEL_VIEW_REFERENCE_H_
