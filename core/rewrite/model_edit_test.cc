#include "core/rewrite/model_edit.h"

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::testing::ElementsAre;

onnx::TensorProto Initializer(const std::string& name) {
  onnx::TensorProto t;
  t.set_name(name);
  t.set_data_type(onnx::TensorProto::FLOAT);
  t.add_dims(1);
  return t;
}

std::vector<std::string> InitializerNames(const onnx::GraphProto& graph) {
  std::vector<std::string> names;
  for (const onnx::TensorProto& t : graph.initializer()) names.push_back(t.name());
  return names;
}

std::vector<std::string> InputNames(const onnx::GraphProto& graph) {
  std::vector<std::string> names;
  for (const onnx::ValueInfoProto& v : graph.input()) names.push_back(v.name());
  return names;
}

// An old-IR graph: initializers w1 (read by conv1), w2 (read by conv2 and
// add), w3 (a graph output) listed as inputs too.
onnx::GraphProto OriginalGraph() {
  onnx::GraphProto graph;
  for (const char* name : {"x", "w1", "w2", "w3"}) graph.add_input()->set_name(name);
  for (const char* name : {"w1", "w2", "w3"}) *graph.add_initializer() = Initializer(name);
  graph.add_output()->set_name("w3");
  return graph;
}

TEST(ReplaceUnreadWeightsTest, DropsOnlyReplacedWeightsNothingReads) {
  const onnx::GraphProto original = OriginalGraph();
  onnx::GraphProto rewritten = original;
  // conv1 and conv2 were replaced by parts reading w1_part0 / w2_part0; the
  // untouched add still reads w2.
  onnx::NodeProto* part = rewritten.add_node();
  part->add_input("x");
  part->add_input("w1_part0");
  rewritten.add_node()->add_input("w2");
  ReplaceUnreadWeights(original, {"w1", "w2", "w3"}, {Initializer("w1_part0")}, rewritten);
  // w1 goes (unread); w2 stays (shared); w3 stays (a graph output).
  EXPECT_THAT(InitializerNames(rewritten), ElementsAre("w2", "w3", "w1_part0"));
  EXPECT_THAT(InputNames(rewritten), ElementsAre("x", "w2", "w3"));
}

TEST(ReplaceUnreadWeightsTest, KeepsUnreadWeightsItWasNotToldAbout) {
  const onnx::GraphProto original = OriginalGraph();
  onnx::GraphProto rewritten = original;
  ReplaceUnreadWeights(original, {}, {}, rewritten);
  EXPECT_THAT(InitializerNames(rewritten), ElementsAre("w1", "w2", "w3"));
  EXPECT_THAT(InputNames(rewritten), ElementsAre("x", "w1", "w2", "w3"));
}

TEST(StandardOpsetTest, TheStandardDomainsVersionOrTheDefault) {
  onnx::ModelProto model;
  EXPECT_EQ(StandardOpset(model), 1);  // none imported: ONNX's default
  onnx::OperatorSetIdProto* custom = model.add_opset_import();
  custom->set_domain("com.example");
  custom->set_version(3);
  EXPECT_EQ(StandardOpset(model), 1);
  onnx::OperatorSetIdProto* standard = model.add_opset_import();
  standard->set_domain("ai.onnx");  // the same domain as ""
  standard->set_version(17);
  EXPECT_EQ(StandardOpset(model), 17);
}

TEST(NameScopeTest, FreshNamesAvoidEveryNameInTheGraph) {
  const onnx::GraphProto graph = OriginalGraph();
  NameScope names(graph);
  EXPECT_EQ(names.Fresh("w1"), "w1_1");
  EXPECT_EQ(names.Fresh("w1"), "w1_2");
  EXPECT_EQ(names.Fresh("part"), "part");
  EXPECT_EQ(names.Fresh("part"), "part_1");
}

}  // namespace
}  // namespace ordo
