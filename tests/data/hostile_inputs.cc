#include "tests/data/hostile_inputs.h"

#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/testing/test_paths.h"
#include "onnx/onnx_pb.h"

namespace ordo::hostile_inputs {
namespace {

onnx::ValueInfoProto FloatInfo(const std::string& name, const std::vector<int64_t>& dims) {
  onnx::ValueInfoProto info;
  info.set_name(name);
  auto* tensor = info.mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) tensor->mutable_shape()->add_dim()->set_dim_value(d);
  return info;
}

onnx::ModelProto EmptyModel() {
  onnx::ModelProto model;
  model.set_ir_version(7);
  model.add_opset_import()->set_version(13);
  model.mutable_graph()->set_name("generated");
  *model.mutable_graph()->add_input() = FloatInfo("x", {1, 8});
  return model;
}

onnx::NodeProto* AddNode(onnx::GraphProto& graph, const std::string& type,
                         std::vector<std::string> inputs, const std::string& output) {
  onnx::NodeProto* node = graph.add_node();
  node->set_op_type(type);
  node->set_name(output);
  for (std::string& input : inputs) node->add_input(std::move(input));
  node->add_output(output);
  return node;
}

}  // namespace

std::string BadDir() { return absl::StrCat(ordo::testing::SourceDir(), "/tests/data/bad"); }

std::vector<ManifestEntry> ReadManifest() {
  std::ifstream in(BadDir() + "/MANIFEST.txt");
  std::vector<ManifestEntry> entries;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields = absl::StrSplit(line, absl::MaxSplits('\t', 1));
    if (fields.size() == 2) entries.push_back({fields[0], fields[1]});
  }
  return entries;
}

std::string TypedReluChainWithBrokenMetadata() {
  onnx::ModelProto model = EmptyModel();
  onnx::GraphProto& graph = *model.mutable_graph();
  AddNode(graph, "Relu", {"x"}, "t");
  AddNode(graph, "Relu", {"t"}, "y");
  // Every shape given: nothing for shape inference, so nothing parses the
  // message in full.
  *graph.add_value_info() = FloatInfo("t", {1, 8});
  *graph.add_output() = FloatInfo("y", {1, 8});
  // ModelProto.metadata_props (14), 12 bytes: StringStringEntryProto field
  // 2 as an 11-byte varint.
  return model.SerializeAsString() +
         std::string("\x72\x0c\x10\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 14);
}

std::string ReluChainOnnx(int32_t n) {
  onnx::ModelProto model = EmptyModel();
  onnx::GraphProto& graph = *model.mutable_graph();
  std::string previous = "x";
  for (int32_t i = 0; i < n; ++i) {
    const std::string output = i + 1 == n ? "y" : absl::StrCat("t", i);
    AddNode(graph, "Relu", {previous}, output);
    previous = output;
  }
  *graph.add_output() = FloatInfo("y", {1, 8});
  return model.SerializeAsString();
}

std::string FanOutOnnx(int32_t width) {
  onnx::ModelProto model = EmptyModel();
  onnx::GraphProto& graph = *model.mutable_graph();
  std::vector<std::string> branches;
  for (int32_t i = 0; i < width; ++i) {
    branches.push_back(absl::StrCat("b", i));
    AddNode(graph, "Relu", {"x"}, branches.back());
  }
  onnx::NodeProto* concat = AddNode(graph, "Concat", branches, "y");
  onnx::AttributeProto* axis = concat->add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(1);
  *graph.add_output() = FloatInfo("y", {1, 8 * width});
  return model.SerializeAsString();
}

std::string HugeAttributeOnnx() {
  onnx::ModelProto model = EmptyModel();
  onnx::NodeProto* node = AddNode(*model.mutable_graph(), "Relu", {"x"}, "y");
  onnx::AttributeProto* note = node->add_attribute();
  note->set_name("note");
  note->set_type(onnx::AttributeProto::STRING);
  note->set_s(std::string(64 << 20, 'A'));
  *model.mutable_graph()->add_output() = FloatInfo("y", {1, 8});
  return model.SerializeAsString();
}

std::string UndefinedInputOnnx(const std::string& name) {
  onnx::ModelProto model = EmptyModel();
  AddNode(*model.mutable_graph(), "Add", {"x", name}, "y");
  *model.mutable_graph()->add_output() = FloatInfo("y", {1, 8});
  return model.SerializeAsString();
}

v1::Graph ReluChainGraph(int32_t n) {
  v1::Graph graph;
  graph.add_tensors()->set_name("x");
  graph.mutable_tensors(0)->set_size_bytes(4);
  std::string previous = "x";
  for (int32_t i = 0; i < n; ++i) {
    v1::Op* op = graph.add_ops();
    op->set_name(absl::StrCat("o", i));
    op->set_type("Relu");
    op->add_inputs(previous);
    previous = absl::StrCat("t", i);
    op->add_outputs(previous);
  }
  return graph;
}

std::string WriteTempFile(const std::string& name, const std::string& contents) {
  const std::filesystem::path path = std::filesystem::temp_directory_path() /
                                     absl::StrCat("ordo_hostile_", getpid(), "_", name);
  std::ofstream(path, std::ios::binary) << contents;
  return path.string();
}

}  // namespace ordo::hostile_inputs
