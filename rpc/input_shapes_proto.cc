#include "rpc/input_shapes_proto.h"

namespace ordo::rpc {

InputShapes InputShapesFromProto(const v1::CompileOptions& options) {
  InputShapes shapes;
  for (const auto& [name, input] : options.input_shapes()) {
    shapes.shapes[name].assign(input.dims().begin(), input.dims().end());
  }
  shapes.batch = options.batch();
  shapes.dim_params.insert(options.dim_params().begin(), options.dim_params().end());
  return shapes;
}

void InputShapesToProto(const InputShapes& shapes, v1::CompileOptions& options) {
  for (const auto& [name, dims] : shapes.shapes) {
    v1::InputShapeOverride& input = (*options.mutable_input_shapes())[name];
    input.mutable_dims()->Assign(dims.begin(), dims.end());
  }
  options.set_batch(shapes.batch);
  options.mutable_dim_params()->insert(shapes.dim_params.begin(), shapes.dim_params.end());
}

}  // namespace ordo::rpc
