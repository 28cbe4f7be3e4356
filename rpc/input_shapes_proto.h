#ifndef ORDO_RPC_INPUT_SHAPES_PROTO_H_
#define ORDO_RPC_INPUT_SHAPES_PROTO_H_

#include "core/onnx/input_shapes.h"
#include "ordo/v1/compiler_service.pb.h"

namespace ordo::rpc {

// CompileOptions.input_shapes, .dim_params and .batch as core InputShapes; checked where
// they are applied (ApplyInputShapes), against the model.
InputShapes InputShapesFromProto(const v1::CompileOptions& options);

// The inverse, for clients.
void InputShapesToProto(const InputShapes& shapes, v1::CompileOptions& options);

}  // namespace ordo::rpc

#endif  // ORDO_RPC_INPUT_SHAPES_PROTO_H_
