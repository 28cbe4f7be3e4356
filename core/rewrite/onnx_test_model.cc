#include "core/rewrite/onnx_test_model.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "core/onnx/onnx_import.h"

namespace ordo {

OnnxTestModel::OnnxTestModel() {
  model_.set_ir_version(8);
  model_.set_producer_name("ordo-test");
  onnx::OperatorSetIdProto* opset = model_.add_opset_import();
  opset->set_domain("");
  opset->set_version(13);
  model_.mutable_graph()->set_name("test");
}

void OnnxTestModel::Input(const std::string& name, const std::vector<int64_t>& dims) {
  onnx::ValueInfoProto* input = model_.mutable_graph()->add_input();
  input->set_name(name);
  auto* tensor = input->mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) tensor->mutable_shape()->add_dim()->set_dim_value(d);
}

void OnnxTestModel::Weight(const std::string& name, const std::vector<int64_t>& dims,
                           std::mt19937* rng) {
  onnx::TensorProto* t = model_.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  int64_t count = 1;
  for (int64_t d : dims) {
    t->add_dims(d);
    count *= d;
  }
  if (rng == nullptr) {
    t->set_data_location(onnx::TensorProto::EXTERNAL);
    auto* entry = t->add_external_data();
    entry->set_key("location");
    entry->set_value("weights-not-shipped.bin");
    return;
  }
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  for (int64_t i = 0; i < count; ++i) t->add_float_data(uniform(*rng));
}

void OnnxTestModel::IntWeight(const std::string& name, const std::vector<int64_t>& values) {
  onnx::TensorProto* t = model_.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t->add_int64_data(v);
}

void OnnxTestModel::FloatWeight(const std::string& name, const std::vector<float>& values) {
  onnx::TensorProto* t = model_.mutable_graph()->add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::FLOAT);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (float v : values) t->add_float_data(v);
}

onnx::NodeProto& OnnxTestModel::Node(const std::string& type,
                                     const std::vector<std::string>& inputs,
                                     const std::vector<std::string>& outputs) {
  onnx::NodeProto* node = model_.mutable_graph()->add_node();
  node->set_op_type(type);
  node->set_name(outputs.empty() ? type : outputs[0] + "_op");
  for (const auto& i : inputs) node->add_input(i);
  for (const auto& o : outputs) node->add_output(o);
  return *node;
}

void OnnxTestModel::Output(const std::string& name) {
  onnx::ValueInfoProto* output = model_.mutable_graph()->add_output();
  output->set_name(name);
  output->mutable_type()->mutable_tensor_type()->set_elem_type(onnx::TensorProto::FLOAT);
}

std::string OnnxTestModel::Bytes() const {
  std::string bytes;
  model_.SerializeToString(&bytes);
  return bytes;
}

void SetIntAttribute(onnx::NodeProto& node, const std::string& name, int64_t value) {
  onnx::AttributeProto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INT);
  a->set_i(value);
}

void SetIntsAttribute(onnx::NodeProto& node, const std::string& name,
                      const std::vector<int64_t>& values) {
  onnx::AttributeProto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::INTS);
  for (int64_t v : values) a->add_ints(v);
}

void SetStringAttribute(onnx::NodeProto& node, const std::string& name, const std::string& value) {
  onnx::AttributeProto* a = node.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto::STRING);
  a->set_s(value);
}

absl::StatusOr<Graph> Import(const onnx::ModelProto& model) {
  std::string bytes;
  model.SerializeToString(&bytes);
  return ImportOnnx(bytes);
}

onnx::ModelProto WithZeroExternalData(onnx::ModelProto model) {
  for (onnx::TensorProto& t : *model.mutable_graph()->mutable_initializer()) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) continue;
    t.clear_external_data();
    t.clear_data_location();
    int64_t count = 1;
    for (int64_t d : t.dims()) count *= d;
    const int64_t element =
        t.data_type() == onnx::TensorProto::DOUBLE || t.data_type() == onnx::TensorProto::INT64 ? 8
                                                                                                : 4;
    t.set_raw_data(std::string(count * element, '\0'));
  }
  return model;
}

OnnxTestModel RandomWindowChain(uint32_t seed, int32_t layers, int64_t size, bool with_data) {
  std::mt19937 rng(seed);
  auto pick = [&](int32_t n) { return static_cast<int32_t>(rng() % n); };
  OnnxTestModel m;
  m.Input("x", {1, 3, size, size});
  std::string current = "x";
  int64_t channels = 3;
  int64_t extent = size;
  for (int32_t l = 0; l < layers; ++l) {
    const std::string name = "l" + std::to_string(l);
    const std::string out = l + 1 == layers ? "y" : name;
    const int32_t kind = pick(5);
    int64_t kernel = kind < 3 ? std::vector<int64_t>{1, 3, 5}[pick(3)] : 2 + pick(2);
    int64_t dilation = kind < 3 && kernel > 1 && pick(4) == 0 ? 2 : 1;
    int64_t stride = extent >= 4 && pick(3) == 0 ? 2 : 1;
    int64_t pad = pick(2) == 0 ? 0 : (kernel - 1) * dilation / 2;
    if (extent + 2 * pad < (kernel - 1) * dilation + 1) {  // the window must fit
      kernel = 1;
      dilation = 1;
    }
    if (kind < 3) {
      const bool depthwise = kind == 2;
      const int64_t out_channels = depthwise ? channels : 2 + pick(5);
      m.Weight(name + "_w", {out_channels, depthwise ? 1 : channels, kernel, kernel},
               with_data ? &rng : nullptr);
      onnx::NodeProto& conv = m.Node("Conv", {current, name + "_w"}, {out});
      if (depthwise) SetIntAttribute(conv, "group", channels);
      SetIntsAttribute(conv, "kernel_shape", {kernel, kernel});
      SetIntsAttribute(conv, "strides", {stride, stride});
      SetIntsAttribute(conv, "dilations", {dilation, dilation});
      SetIntsAttribute(conv, "pads", {pad, pad, pad, pad});
      conv.set_name(name);
      channels = out_channels;
    } else if (pick(3) == 0 || kernel < 2) {
      onnx::NodeProto& relu = m.Node("Relu", {current}, {out});
      relu.set_name(name);
      kernel = 1;
      stride = 1;
      pad = 0;
      dilation = 1;
    } else {
      onnx::NodeProto& pool = m.Node(kind == 3 ? "MaxPool" : "AveragePool", {current}, {out});
      pad = std::min(pad, kernel - 1);
      SetIntsAttribute(pool, "kernel_shape", {kernel, kernel});
      SetIntsAttribute(pool, "strides", {stride, stride});
      SetIntsAttribute(pool, "pads", {pad, pad, pad, pad});
      pool.set_name(name);
      dilation = 1;
    }
    extent = (extent + 2 * pad - (kernel - 1) * dilation - 1) / stride + 1;
    current = out;
  }
  m.Output("y");
  return m;
}

onnx::ModelProto WithSiluForRelu(const onnx::ModelProto& model, const std::string& gate,
                                 bool gate_first) {
  onnx::ModelProto out = model;
  onnx::GraphProto* g = out.mutable_graph();
  g->clear_node();
  bool swap = gate_first;
  for (const onnx::NodeProto& node : model.graph().node()) {
    if (node.op_type() != "Relu") {
      *g->add_node() = node;
      continue;
    }
    const std::string& in = node.input(0);
    const std::string s = node.output(0) + "_gate";
    onnx::NodeProto* sigmoid = g->add_node();
    sigmoid->set_op_type(gate);
    sigmoid->set_name(node.name() + "_gate");
    sigmoid->add_input(in);
    sigmoid->add_output(s);
    onnx::NodeProto* mul = g->add_node();
    mul->set_op_type("Mul");
    mul->set_name(node.name());
    mul->add_input(swap ? s : in);
    mul->add_input(swap ? in : s);
    mul->add_output(node.output(0));
    swap = !swap;
  }
  return out;
}

OnnxTestModel SiluStem(bool gate_first, bool with_data) {
  std::mt19937 rng(17);
  std::mt19937* data = with_data ? &rng : nullptr;
  auto silu = [&](OnnxTestModel& m, const std::string& x, const std::string& s,
                  const std::string& y) {
    m.Node("Sigmoid", {x}, {s});
    m.Node("Mul", gate_first ? std::vector<std::string>{s, x} : std::vector<std::string>{x, s},
           {y});
  };
  OnnxTestModel m;
  m.Input("x", {1, 3, 16, 16});
  m.Weight("wc", {8, 3, 3, 3}, data);
  SetIntsAttribute(m.Node("Conv", {"x", "wc"}, {"c"}), "pads", {1, 1, 1, 1});
  silu(m, "c", "cs", "ca");
  m.Weight("wd", {8, 1, 3, 3}, data);
  onnx::NodeProto& dw = m.Node("Conv", {"ca", "wd"}, {"d"});
  SetIntAttribute(dw, "group", 8);
  SetIntsAttribute(dw, "pads", {1, 1, 1, 1});
  silu(m, "d", "ds", "y");
  m.Output("y");
  return m;
}

OnnxTestModel SqueezeExcitationBlock(bool scale_first, bool with_data) {
  std::mt19937 rng(23);
  std::mt19937* data = with_data ? &rng : nullptr;
  OnnxTestModel m;
  m.Input("x", {1, 8, 8, 8});
  m.Weight("wd", {8, 1, 3, 3}, data);
  onnx::NodeProto& dw = m.Node("Conv", {"x", "wd"}, {"d"});
  SetIntAttribute(dw, "group", 8);
  SetIntsAttribute(dw, "pads", {1, 1, 1, 1});
  m.Node("Sigmoid", {"d"}, {"ds"});
  m.Node("Mul", {"d", "ds"}, {"h"});
  m.Node("GlobalAveragePool", {"h"}, {"g"});
  m.Weight("w1", {2, 8, 1, 1}, data);
  m.Node("Conv", {"g", "w1"}, {"f1"});
  m.Node("Relu", {"f1"}, {"f1r"});
  m.Weight("w2", {8, 2, 1, 1}, data);
  m.Node("Conv", {"f1r", "w2"}, {"f2"});
  m.Node("Sigmoid", {"f2"}, {"sc"});
  m.Node("Mul",
         scale_first ? std::vector<std::string>{"sc", "h"} : std::vector<std::string>{"h", "sc"},
         {"m"});
  m.Weight("wp", {4, 8, 1, 1}, data);
  m.Node("Conv", {"m", "wp"}, {"p"});
  m.Node("Relu", {"p"}, {"y"});
  m.Output("y");
  return m;
}

OnnxTestModel InvertedResidualBlock(const InvertedResidualSpec& spec) {
  const int64_t n = spec.expanded;
  OnnxTestModel m;
  m.Input("x", {1, 8, 16, 16});
  m.Weight("we", {n, 8, 1, 1}, nullptr);
  if (spec.bias) {
    m.Weight("be", {n}, nullptr);
    m.Node("Conv", {"x", "we", "be"}, {"e"});
  } else {
    m.Node("Conv", {"x", "we"}, {"e"});
  }
  m.Node("Relu", {"e"}, {"er"});
  m.Weight("wd", {n, 1, 3, 3}, nullptr);
  onnx::NodeProto& dw = m.Node("Conv", {"er", "wd"}, {"d"});
  SetIntAttribute(dw, "group", n);
  SetIntsAttribute(dw, "pads", {1, 1, 1, 1});
  m.Node("Relu", {"d"}, {"dr"});
  m.Weight("wp", {8, n, 1, 1}, nullptr);
  if (spec.skip) {
    m.Node("Conv", {"dr", "wp"}, {"p"});
    m.Node("Add", {"p", "x"}, {"y"});
  } else {
    m.Node("Conv", {"dr", "wp"}, {"y"});
  }
  m.Output("y");
  return m;
}

}  // namespace ordo
