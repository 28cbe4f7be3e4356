#ifndef ORDO_CORE_ONNX_NEWER_STANDARD_OPS_H_
#define ORDO_CORE_ONNX_NEWER_STANDARD_OPS_H_

#include "absl/strings/string_view.h"
#include "onnx/defs/schema.h"

namespace ordo::onnx_import {

// The schema, with type and shape inference, of a standard ONNX operator
// that opsets 18-24 added and libonnx 1.12 (Debian 12's, standard operators
// up to opset 17) does not know, where its output is sized from its first
// input alone: Mish-18, BitwiseNot-18, BitwiseAnd/Or/Xor-18 (broadcasting),
// GroupNormalization-18 (and -21, which changed only the scale's and bias's
// shape), Gelu-20, RMSNormalization-23, RotaryEmbedding-23 and Swish-24.
// PyTorch exports nn.GELU as Gelu from opset 20 and nn.Mish as Mish from
// opset 18; without these a model using them needed value_info for every
// such output. Written from the ONNX operator documentation
// (onnx.ai/onnx/operators): inputs, attributes and output shapes as there.
// Null for any other op, another domain, or a model opset older than the
// op (the op did not exist there). The schemas live for the process;
// thread-safe.
const onnx::OpSchema* NewerStandardSchema(absl::string_view op_type, int max_inclusive_version,
                                          absl::string_view domain);

}  // namespace ordo::onnx_import

#endif  // ORDO_CORE_ONNX_NEWER_STANDARD_OPS_H_
