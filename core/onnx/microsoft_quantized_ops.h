#ifndef ORDO_CORE_ONNX_MICROSOFT_QUANTIZED_OPS_H_
#define ORDO_CORE_ONNX_MICROSOFT_QUANTIZED_OPS_H_

#include "absl/strings/string_view.h"
#include "onnx/defs/schema.h"

namespace ordo::onnx_import {

// The domain of onnxruntime's contrib operators.
inline constexpr absl::string_view kMicrosoftDomain = "com.microsoft";

// The schema, with type and shape inference, of one of the quantized
// operators onnxruntime's quantizer writes in the domain com.microsoft when
// it quantizes to the QOperator format (ONNX Model Zoo's int8 models are
// such files): QLinearAdd, QLinearMul, QLinearConcat,
// QLinearGlobalAveragePool, QLinearAveragePool, QLinearLeakyRelu,
// QLinearSigmoid and QLinearSoftmax. libonnx knows none of them, so a file
// without value_info for their outputs could not be sized, and a resized
// file's stale declarations for them stood. Written from onnxruntime's
// contrib-op documentation (docs/ContribOperators.md): the same inputs,
// attributes and output shapes; nullptr for any other op or domain. The
// schemas live for the process; thread-safe.
const onnx::OpSchema* MicrosoftQuantizedSchema(absl::string_view op_type,
                                               absl::string_view domain);

}  // namespace ordo::onnx_import

#endif  // ORDO_CORE_ONNX_MICROSOFT_QUANTIZED_OPS_H_
