// A model whose whole graph is one model-local function, as PyTorch's dynamo
// exporter (torch 2.1-2.4) wrote a module: the graph keeps its inputs,
// outputs and initializers and one node, "net" of domain "pkg.module",
// calls the function "Net" holding every original node (test-only).
#ifndef ORDO_TESTS_DATA_LOCAL_FUNCTIONS_H_
#define ORDO_TESTS_DATA_LOCAL_FUNCTIONS_H_

#include <string>

#include "onnx/onnx_pb.h"

namespace ordo::testing {

// The model in `bytes` wrapped so; "" when it does not parse.
inline std::string WrapInOneFunction(const std::string& bytes) {
  onnx::ModelProto model;
  if (!model.ParseFromString(bytes)) return "";
  onnx::GraphProto& graph = *model.mutable_graph();
  onnx::FunctionProto& net = *model.add_functions();
  net.set_domain("pkg.module");
  net.set_name("Net");
  *net.mutable_opset_import() = model.opset_import();
  onnx::NodeProto call;
  call.set_name("net");
  call.set_domain("pkg.module");
  call.set_op_type("Net");
  for (const onnx::ValueInfoProto& input : graph.input()) {
    bool weight = false;
    for (const onnx::TensorProto& t : graph.initializer())
      weight = weight || t.name() == input.name();
    if (weight) continue;  // listed below
    net.add_input(input.name());
    call.add_input(input.name());
  }
  for (const onnx::TensorProto& weight : graph.initializer()) {
    net.add_input(weight.name());
    call.add_input(weight.name());
  }
  for (const onnx::ValueInfoProto& output : graph.output()) {
    net.add_output(output.name());
    call.add_output(output.name());
  }
  net.mutable_node()->Swap(graph.mutable_node());
  *graph.add_node() = call;
  graph.clear_value_info();
  onnx::OperatorSetIdProto& domain = *model.add_opset_import();
  domain.set_domain("pkg.module");
  domain.set_version(1);
  if (model.ir_version() < 8) model.set_ir_version(8);
  return model.SerializeAsString();
}

}  // namespace ordo::testing

#endif  // ORDO_TESTS_DATA_LOCAL_FUNCTIONS_H_
