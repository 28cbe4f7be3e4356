// Dynamic-batch variants of static ONNX models, as PyTorch's
// `dynamic_axes={"input": {0: "batch"}}` writes them: dim 0 of every graph
// input, graph output and value_info becomes the symbol "batch" (test-only).
#ifndef ORDO_TESTS_DATA_DYNAMIC_BATCH_H_
#define ORDO_TESTS_DATA_DYNAMIC_BATCH_H_

#include <string>

#include "onnx/onnx_pb.h"

namespace ordo::testing {

// The model in `bytes` with a symbolic batch dim; "" when it does not parse.
inline std::string WithDynamicBatch(const std::string& bytes) {
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) return "";
  onnx::GraphProto& graph = *model.mutable_graph();
  for (auto* list : {graph.mutable_input(), graph.mutable_output(), graph.mutable_value_info()}) {
    for (onnx::ValueInfoProto& value : *list) {
      auto* shape = value.mutable_type()->mutable_tensor_type()->mutable_shape();
      if (shape->dim_size() > 0) shape->mutable_dim(0)->set_dim_param("batch");
    }
  }
  return model.SerializeAsString();
}

}  // namespace ordo::testing

#endif  // ORDO_TESTS_DATA_DYNAMIC_BATCH_H_
