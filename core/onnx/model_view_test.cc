#include "core/onnx/model_view.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <initializer_list>
#include <iostream>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/strings/escaping.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/string_view.h"
#include "core/onnx/model_view_reference.h"
#include "core/onnx/tensor_type.h"
#include "core/testing/status_matchers.h"
#include "core/testing/test_paths.h"
#include "core/testing/trials.h"
#include "core/util/wire_reader.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"

// ScanModel's contract is "the same answer as protobuf's own parse" for every
// field it reads. Every test here states that contract directly: it parses
// the same bytes with onnx::ModelProto and compares field for field.

namespace ordo::onnx_import {
namespace {

using ::ordo::testing::StatusIs;
using ::testing::StartsWith;

constexpr auto kInvalid = absl::StatusCode::kInvalidArgument;

// ---------------------------------------------------------------------------
// The comparison itself is model_view_reference.h's, shared with the fuzzer.

uint32_t FloatBits(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  return bits;
}

std::string Hex(absl::string_view bytes) {
  constexpr size_t kShown = 512;
  if (bytes.size() <= kShown) return absl::BytesToHexString(bytes);
  return absl::StrCat(absl::BytesToHexString(bytes.substr(0, kShown)), "... (", bytes.size(),
                      " bytes)");
}

bool ProtobufParses(absl::string_view bytes, onnx::ModelProto& model) {
  return model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()));
}

// The bytes are a model with a graph: both parses succeed and agree.
void ExpectSameAsProtobuf(absl::string_view bytes) {
  SCOPED_TRACE("bytes " + Hex(bytes));
  onnx::ModelProto model;
  ASSERT_TRUE(ProtobufParses(bytes, model)) << "test bug: protobuf refuses the bytes";
  ASSERT_TRUE(model.has_graph()) << "test bug: the bytes have no graph";
  const std::string violation = ScanContractViolation(bytes);
  EXPECT_TRUE(violation.empty()) << violation;
}

// The bytes are not a protobuf message: both refuse them.
void ExpectBothRefuse(absl::string_view bytes) {
  SCOPED_TRACE("bytes " + Hex(bytes));
  onnx::ModelProto model;
  EXPECT_FALSE(ProtobufParses(bytes, model)) << "test bug: protobuf parses the bytes";
  EXPECT_THAT(ScanModel(bytes), StatusIs(kInvalid, StartsWith("not a valid ONNX model")));
}

// How a pair of parses of the same bytes turned out.
enum class Outcome { kBothAgree, kNoGraph, kBothRefuse, kOnlyScanAccepts, kDisagree };

// The scan may accept what protobuf refuses (it does not look inside fields
// it skips); anything else must match. Beyond the contract, a refusal must
// be the scan's INVALID_ARGUMENT and not some other failure.
Outcome CheckConsistent(absl::string_view bytes) {
  SCOPED_TRACE("bytes " + Hex(bytes));
  const std::string violation = ScanContractViolation(bytes);
  EXPECT_TRUE(violation.empty()) << violation;
  onnx::ModelProto model;
  const bool parsed = ProtobufParses(bytes, model);
  const absl::StatusOr<ModelView> view = ScanModel(bytes);
  if (!parsed) {
    if (view.ok()) return Outcome::kOnlyScanAccepts;
    EXPECT_THAT(view, StatusIs(kInvalid, StartsWith("not a valid ONNX model")));
    return Outcome::kBothRefuse;
  }
  if (!violation.empty()) return Outcome::kDisagree;
  return model.has_graph() ? Outcome::kBothAgree : Outcome::kNoGraph;
}

// ---------------------------------------------------------------------------
// Wire bytes written field by field: what generated code never emits
// (repeated singular fields, interleaving, wrong wire types, groups, damage).

using wire::kEndGroup;
using wire::kFixed32;
using wire::kFixed64;
using wire::kLengthDelimited;
using wire::kStartGroup;
using wire::kVarint;

class Wire {
 public:
  Wire& Varint(uint64_t value) {
    for (; value >= 0x80; value >>= 7) bytes_ += static_cast<char>(value | 0x80);
    bytes_ += static_cast<char>(value);
    return *this;
  }
  Wire& Tag(uint64_t field, uint32_t wire_type) { return Varint(field << 3 | wire_type); }
  Wire& Int(uint64_t field, int64_t value) {
    return Tag(field, kVarint).Varint(static_cast<uint64_t>(value));
  }
  Wire& Bytes(uint64_t field, absl::string_view payload) {
    Tag(field, kLengthDelimited).Varint(payload.size());
    bytes_.append(payload.data(), payload.size());
    return *this;
  }
  Wire& Message(uint64_t field, const Wire& message) { return Bytes(field, message.str()); }
  Wire& Fixed32(uint64_t field, uint32_t value) {
    Tag(field, kFixed32);
    return LittleEndian(value, 4);
  }
  Wire& Fixed64(uint64_t field, uint64_t value) {
    Tag(field, kFixed64);
    return LittleEndian(value, 8);
  }
  Wire& Float(uint64_t field, float value) { return Fixed32(field, FloatBits(value)); }
  Wire& PackedInts(uint64_t field, std::initializer_list<int64_t> values) {
    Wire packed;
    for (int64_t v : values) packed.Varint(static_cast<uint64_t>(v));
    return Message(field, packed);
  }
  Wire& PackedFloats(uint64_t field, std::initializer_list<float> values) {
    Wire packed;
    for (float v : values) packed.LittleEndian(FloatBits(v), 4);
    return Message(field, packed);
  }
  Wire& Raw(absl::string_view bytes) {
    bytes_.append(bytes.data(), bytes.size());
    return *this;
  }
  Wire& Append(const Wire& other) { return Raw(other.str()); }
  const std::string& str() const { return bytes_; }

 private:
  Wire& LittleEndian(uint64_t value, int size) {
    for (int i = 0; i < size; ++i) bytes_ += static_cast<char>(value >> (8 * i));
    return *this;
  }

  std::string bytes_;
};

// Field numbers of onnx-ml.proto (the build defines ONNX_ML).
constexpr uint64_t kModelIrVersion = 1, kModelGraph = 7;
constexpr uint64_t kGraphNode = 1, kGraphName = 2, kGraphInitializer = 5, kGraphInput = 11,
                   kGraphOutput = 12, kGraphValueInfo = 13;
constexpr uint64_t kNodeInput = 1, kNodeOutput = 2, kNodeName = 3, kNodeOpType = 4,
                   kNodeAttribute = 5, kNodeDocString = 6, kNodeDomain = 7;
constexpr uint64_t kAttributeName = 1, kAttributeF = 2, kAttributeI = 3, kAttributeS = 4,
                   kAttributeT = 5, kAttributeG = 6, kAttributeFloats = 7, kAttributeInts = 8,
                   kAttributeGraphs = 11, kAttributeType = 20;
constexpr uint64_t kValueInfoName = 1, kValueInfoType = 2;
constexpr uint64_t kTypeTensor = 1, kTypeSequence = 4, kTypeMap = 5, kTypeDenotation = 6,
                   kTypeOpaque = 7, kTypeSparseTensor = 8, kTypeOptional = 9;
constexpr uint64_t kTensorElemType = 1, kTensorShape = 2;
constexpr uint64_t kShapeDim = 1;
constexpr uint64_t kDimValue = 1, kDimParam = 2, kDimDenotation = 3;
constexpr uint64_t kInitializerDims = 1, kInitializerDataType = 2, kInitializerName = 8,
                   kInitializerRawData = 9;

std::string Model(const Wire& graph) {
  return Wire().Int(kModelIrVersion, 8).Message(kModelGraph, graph).str();
}

Wire Node(absl::string_view name, absl::string_view op_type,
          std::initializer_list<absl::string_view> inputs,
          std::initializer_list<absl::string_view> outputs) {
  Wire node;
  for (absl::string_view input : inputs) node.Bytes(kNodeInput, input);
  for (absl::string_view output : outputs) node.Bytes(kNodeOutput, output);
  return node.Bytes(kNodeName, name).Bytes(kNodeOpType, op_type);
}

Wire Dims(std::initializer_list<int64_t> dims) {
  Wire shape;
  for (int64_t d : dims) shape.Message(kShapeDim, Wire().Int(kDimValue, d));
  return shape;
}

Wire TensorTypeOf(int32_t elem_type, const Wire& shape) {
  return Wire().Message(kTypeTensor,
                        Wire().Int(kTensorElemType, elem_type).Message(kTensorShape, shape));
}

Wire ValueInfo(absl::string_view name, const Wire& type) {
  return Wire().Bytes(kValueInfoName, name).Message(kValueInfoType, type);
}

// A graph whose one input has `type`, so that type edge cases read short.
std::string ModelWithInputType(const Wire& type) {
  return Model(Wire().Message(kGraphInput, ValueInfo("x", type)));
}

std::string ModelWithAttribute(const Wire& attribute) {
  return Model(
      Wire().Message(kGraphNode, Node("n", "Op", {"x"}, {"y"}).Message(kNodeAttribute, attribute)));
}

// ---------------------------------------------------------------------------
// Real models.

std::string ReadFile(const std::filesystem::path& path) {
  std::ifstream file(path, std::ios::binary);
  std::stringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

std::vector<std::filesystem::path> OnnxFilesUnder(const std::filesystem::path& dir) {
  std::vector<std::filesystem::path> files;
  std::error_code error;
  if (!std::filesystem::is_directory(dir, error)) return files;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(dir, error)) {
    if (entry.is_regular_file() && entry.path().extension() == ".onnx") {
      files.push_back(entry.path());
    }
  }
  std::sort(files.begin(), files.end());
  return files;
}

void ExpectFilesSameAsProtobuf(const std::vector<std::filesystem::path>& files) {
  for (const std::filesystem::path& file : files) {
    SCOPED_TRACE(file.string());
    ExpectSameAsProtobuf(ReadFile(file));
  }
}

TEST(ModelViewTest, SharedModelsSameAsProtobuf) {
  const std::vector<std::filesystem::path> files = OnnxFilesUnder(ordo::testing::SharedModelsDir());
  if (files.empty()) {
    GTEST_SKIP() << "no *.onnx under " << ordo::testing::SharedModelsDir()
                 << " (../shared/models); skipping";
  }
  ExpectFilesSameAsProtobuf(files);
}

TEST(ModelViewTest, ExampleModelsSameAsProtobuf) {
  const std::vector<std::filesystem::path> files =
      OnnxFilesUnder(ordo::testing::ExampleModelsDir());
  if (files.empty())
    GTEST_SKIP() << "no *.onnx under " << ordo::testing::ExampleModelsDir() << "; skipping";
  ExpectFilesSameAsProtobuf(files);
}

// ---------------------------------------------------------------------------
// Merging and last-one-wins.

TEST(ModelViewTest, GraphOccurrencesMerge) {
  const Wire first = Wire()
                         .Message(kGraphNode, Node("a", "Relu", {"x"}, {"y"}))
                         .Bytes(kGraphName, "first")
                         .Message(kGraphInput, ValueInfo("x", TensorTypeOf(1, Dims({2, 3}))));
  const Wire second = Wire()
                          .Message(kGraphNode, Node("b", "Neg", {"y"}, {"z"}))
                          .Bytes(kGraphName, "second")
                          .Message(kGraphOutput, ValueInfo("z", TensorTypeOf(1, Dims({2, 3}))));
  const std::string bytes =
      Wire().Message(kModelGraph, first).Int(kModelIrVersion, 8).Message(kModelGraph, second).str();
  ExpectSameAsProtobuf(bytes);
  ORDO_ASSERT_OK_AND_ASSIGN(const ModelView view, ScanModel(bytes));
  EXPECT_EQ(view.num_nodes(), 2);
  EXPECT_EQ(view.graph_name, "second");
}

// What a model file that is two files concatenated means to protobuf.
TEST(ModelViewTest, ConcatenatedModelsMerge) {
  onnx::ModelProto first, second;
  onnx::NodeProto& relu = *first.mutable_graph()->add_node();
  relu.set_op_type("Relu");
  relu.add_input("x");
  relu.add_output("y");
  first.mutable_graph()->set_name("first");
  onnx::NodeProto& neg = *second.mutable_graph()->add_node();
  neg.set_op_type("Neg");
  neg.add_input("y");
  neg.add_output("z");
  second.mutable_graph()->add_initializer()->add_dims(4);
  ExpectSameAsProtobuf(first.SerializeAsString() + second.SerializeAsString());
  ExpectSameAsProtobuf(second.SerializeAsString() + first.SerializeAsString());
}

TEST(ModelViewTest, EmptyGraphField) {
  const Wire graph =
      Wire().Message(kGraphNode, Node("a", "Relu", {"x"}, {"y"})).Bytes(kGraphName, "g");
  ExpectSameAsProtobuf(Wire().Bytes(kModelGraph, "").str());
  ExpectSameAsProtobuf(Wire().Bytes(kModelGraph, "").Message(kModelGraph, graph).str());
  ExpectSameAsProtobuf(Wire().Message(kModelGraph, graph).Bytes(kModelGraph, "").str());
  ExpectSameAsProtobuf(Model(Wire().Bytes(kGraphNode, "").Bytes(kGraphInput, "")));
}

TEST(ModelViewTest, LastSingularScalarWins) {
  const Wire node = Wire()
                        .Bytes(kNodeName, "n1")
                        .Bytes(kNodeOpType, "Relu")
                        .Bytes(kNodeDomain, "d1")
                        .Bytes(kNodeName, "n2")
                        .Bytes(kNodeOpType, "Neg")
                        .Bytes(kNodeDomain, "")
                        .Message(kNodeAttribute, Wire()
                                                     .Bytes(kAttributeName, "a1")
                                                     .Int(kAttributeI, 1)
                                                     .Float(kAttributeF, 1.5f)
                                                     .Bytes(kAttributeS, "s1")
                                                     .Int(kAttributeType, 2)
                                                     .Bytes(kAttributeName, "a2")
                                                     .Int(kAttributeI, -7)
                                                     .Float(kAttributeF, -0.0f)
                                                     .Bytes(kAttributeS, "")
                                                     .Int(kAttributeType, 1));
  const Wire initializer = Wire()
                               .Bytes(kInitializerName, "w1")
                               .Int(kInitializerDataType, 1)
                               .Bytes(kInitializerName, "w2")
                               .Int(kInitializerDataType, 7);
  const Wire info = Wire()
                        .Bytes(kValueInfoName, "v1")
                        .Message(kValueInfoType, TensorTypeOf(1, Dims({})))
                        .Bytes(kValueInfoName, "v2");
  ExpectSameAsProtobuf(Model(Wire()
                                 .Bytes(kGraphName, "g1")
                                 .Message(kGraphNode, node)
                                 .Message(kGraphInitializer, initializer)
                                 .Message(kGraphValueInfo, info)
                                 .Bytes(kGraphName, "g2")));
}

// The scan reads a node's inputs, outputs and attributes in three passes;
// interleaving on the wire must not mix them up.
TEST(ModelViewTest, NodeFieldsInterleaved) {
  const Wire attribute =
      Wire().Bytes(kAttributeName, "axis").Int(kAttributeI, 1).Int(kAttributeType, 2);
  const Wire node =
      Wire()
          .Bytes(kNodeInput, "a")
          .Bytes(kNodeOutput, "y")
          .Bytes(kNodeInput, "b")
          .Message(kNodeAttribute, attribute)
          .Bytes(kNodeOutput, "z")
          .Bytes(kNodeName, "concat")
          .Message(kNodeAttribute,
                   Wire().Bytes(kAttributeName, "k").PackedInts(kAttributeInts, {1, 2}))
          .Bytes(kNodeOpType, "Concat")
          .Bytes(kNodeInput, "")
          .Bytes(kNodeInput, "c");
  const Wire second =
      Wire()
          .Message(kNodeAttribute, Wire().Bytes(kAttributeName, "f").Float(kAttributeFloats, 2.5f))
          .Bytes(kNodeOutput, "w")
          .Bytes(kNodeInput, "y");
  ExpectSameAsProtobuf(Model(Wire().Message(kGraphNode, node).Message(kGraphNode, second)));
}

TEST(ModelViewTest, PackedAndUnpackedRepeatedScalars) {
  const Wire attribute = Wire()
                             .Bytes(kAttributeName, "mixed")
                             .Int(kAttributeInts, 1)
                             .PackedInts(kAttributeInts, {2, -3, INT64_MAX})
                             .Bytes(kAttributeInts, "")
                             .Int(kAttributeInts, INT64_MIN)
                             .Float(kAttributeFloats, 1.5f)
                             .PackedFloats(kAttributeFloats, {2.5f, -0.0f})
                             .Bytes(kAttributeFloats, "")
                             .Float(kAttributeFloats, std::numeric_limits<float>::quiet_NaN())
                             .Float(kAttributeFloats, std::numeric_limits<float>::infinity());
  const Wire initializer = Wire()
                               .Bytes(kInitializerName, "w")
                               .Int(kInitializerDims, 2)
                               .PackedInts(kInitializerDims, {3, 4})
                               .Int(kInitializerDims, -1)
                               .PackedInts(kInitializerDims, {0})
                               .Int(kInitializerDataType, 1);
  ExpectSameAsProtobuf(Model(
      Wire()
          .Message(kGraphNode, Node("n", "Op", {"x"}, {"y"}).Message(kNodeAttribute, attribute))
          .Message(kGraphInitializer, initializer)));
}

TEST(ModelViewTest, TensorTypeOccurrencesMerge) {
  const Wire first =
      Wire()
          .Int(kTensorElemType, 1)
          .Message(kTensorShape, Wire()
                                     .Message(kShapeDim, Wire().Int(kDimValue, 2))
                                     .Message(kShapeDim, Wire().Bytes(kDimParam, "N")));
  const Wire second = Wire().Message(kTensorShape, Dims({3})).Message(kTensorShape, Dims({4}));
  const Wire type = Wire().Message(kTypeTensor, first).Message(kTypeTensor, second);
  const std::string bytes = ModelWithInputType(type);
  ExpectSameAsProtobuf(bytes);
  ORDO_ASSERT_OK_AND_ASSIGN(const ModelView view, ScanModel(bytes));
  ASSERT_EQ(view.inputs.size(), 1u);
  EXPECT_EQ(view.inputs[0].type.dims, (std::vector<int64_t>{2, kUnknownDim, 3, 4}));
  // Two TypeProto occurrences in one ValueInfoProto merge the same way.
  ExpectSameAsProtobuf(Model(Wire().Message(
      kGraphInput, ValueInfo("x", TensorTypeOf(1, Dims({5}))).Message(kValueInfoType, type))));
  // An empty shape is a known rank 0, not an unknown shape.
  ExpectSameAsProtobuf(ModelWithInputType(TensorTypeOf(7, Dims({}))));
  ExpectSameAsProtobuf(ModelWithInputType(Wire().Message(kTypeTensor, Wire())));
}

// sequence_type, map_type, sparse_tensor_type and optional_type are members
// of TypeProto's oneof: each clears tensor_type, and tensor_type after them
// starts afresh.
TEST(ModelViewTest, TypeOneofMembersClearEachOther) {
  const Wire tensor = TensorTypeOf(1, Dims({2, 3}));
  const Wire nested = TensorTypeOf(7, Dims({9}));
  for (uint64_t member : {kTypeSequence, kTypeMap, kTypeSparseTensor, kTypeOptional}) {
    SCOPED_TRACE(absl::StrCat("oneof member ", member));
    const Wire other = Wire().Message(member, Wire().Message(1, nested));
    ExpectSameAsProtobuf(ModelWithInputType(Wire().Append(tensor).Append(other)));
    ExpectSameAsProtobuf(ModelWithInputType(Wire().Append(other).Append(tensor)));
    ExpectSameAsProtobuf(
        ModelWithInputType(Wire().Append(tensor).Append(other).Append(TensorTypeOf(6, Dims({4})))));
    // With the wrong wire type it is an unknown field and clears nothing.
    ExpectSameAsProtobuf(ModelWithInputType(Wire().Append(tensor).Int(member, 3)));
  }
  ExpectSameAsProtobuf(ModelWithInputType(
      Wire().Append(tensor).Bytes(kTypeDenotation, "TENSOR").Append(TensorTypeOf(0, Dims({5})))));
}

// onnx-ml.proto (this build) has a sixth member, opaque_type = 7.
TEST(ModelViewTest, OpaqueTypeClearsTensorType) {
  const Wire tensor = TensorTypeOf(1, Dims({2, 3}));
  const Wire opaque = Wire().Message(kTypeOpaque, Wire().Bytes(1, "domain").Bytes(2, "name"));
  ExpectSameAsProtobuf(ModelWithInputType(Wire().Append(tensor).Append(opaque)));
  ExpectSameAsProtobuf(ModelWithInputType(Wire().Append(opaque).Append(tensor)));
}

TEST(ModelViewTest, DimensionOneof) {
  const Wire shape = Wire()
                         .Message(kShapeDim, Wire().Int(kDimValue, 3).Bytes(kDimParam, "N"))
                         .Message(kShapeDim, Wire().Bytes(kDimParam, "M").Int(kDimValue, 4))
                         .Message(kShapeDim, Wire().Bytes(kDimDenotation, "DATA_BATCH"))
                         .Message(kShapeDim, Wire().Bytes(kDimParam, ""))
                         .Message(kShapeDim, Wire().Int(kDimValue, 5).Int(kDimValue, -6))
                         .Message(kShapeDim, Wire().Bytes(kDimParam, "A").Bytes(kDimParam, "B"))
                         .Message(kShapeDim, Wire());
  ExpectSameAsProtobuf(ModelWithInputType(TensorTypeOf(1, shape)));
  // Only an empty dim_param: symbols are still sized to the dims.
  ExpectSameAsProtobuf(ModelWithInputType(
      TensorTypeOf(1, Dims({1}).Message(kShapeDim, Wire().Bytes(kDimParam, "")))));
  // A dim_param that a later dim_value replaces leaves no symbols.
  ExpectSameAsProtobuf(ModelWithInputType(TensorTypeOf(
      1, Dims({1}).Message(kShapeDim, Wire().Bytes(kDimParam, "N").Int(kDimValue, 2)))));
}

// proto2: a value outside AttributeType is an unknown field, so the earlier
// valid value stays.
TEST(ModelViewTest, AttributeTypeOutsideEnum) {
  const std::vector<std::vector<int64_t>> sequences = {
      {2, 99}, {99}, {-1}, {1, -1}, {3, 0}, {(int64_t{1} << 32) + 1}, {14, 15}, {5, 1000000}};
  for (const std::vector<int64_t>& types : sequences) {
    Wire attribute = Wire().Bytes(kAttributeName, "a");
    for (int64_t type : types) attribute.Int(kAttributeType, type);
    SCOPED_TRACE(absl::StrCat("types ", absl::StrJoin(types, ",")));
    ExpectSameAsProtobuf(ModelWithAttribute(attribute));
  }
}

TEST(ModelViewTest, AttributeGraphs) {
  const Wire subgraph = Wire().Message(kGraphNode, Node("inner", "Relu", {"a"}, {"b"}));
  ExpectSameAsProtobuf(
      ModelWithAttribute(Wire().Bytes(kAttributeName, "g").Message(kAttributeG, subgraph)));
  ExpectSameAsProtobuf(
      ModelWithAttribute(Wire().Bytes(kAttributeName, "gs").Message(kAttributeGraphs, subgraph)));
  ExpectSameAsProtobuf(
      ModelWithAttribute(Wire().Bytes(kAttributeName, "empty").Bytes(kAttributeG, "")));
  // The wrong wire type is no subgraph.
  ExpectSameAsProtobuf(ModelWithAttribute(Wire().Bytes(kAttributeName, "v").Int(kAttributeG, 1)));
  ExpectSameAsProtobuf(
      ModelWithAttribute(Wire().Bytes(kAttributeName, "t").Bytes(kAttributeT, "")));
}

// A known field with another wire type is an unknown field to protobuf.
TEST(ModelViewTest, KnownFieldWithWrongWireType) {
  ExpectSameAsProtobuf(
      Wire().Int(kModelGraph, 5).Message(kModelGraph, Wire().Bytes(kGraphName, "g")).str());
  ExpectSameAsProtobuf(Wire().Message(kModelGraph, Wire()).Fixed32(kModelGraph, 5).str());
  ExpectSameAsProtobuf(Model(Wire()
                                 .Int(kGraphName, 1)
                                 .Fixed64(kGraphNode, 2)
                                 .Fixed32(kGraphInput, 3)
                                 .Int(kGraphInitializer, 4)
                                 .Message(kGraphNode, Node("n", "Op", {"x"}, {"y"})
                                                          .Int(kNodeInput, 1)
                                                          .Fixed32(kNodeOutput, 2)
                                                          .Fixed64(kNodeName, 3)
                                                          .Int(kNodeOpType, 4)
                                                          .Int(kNodeAttribute, 5)
                                                          .Fixed32(kNodeDomain, 6))));
  ExpectSameAsProtobuf(ModelWithAttribute(Wire()
                                              .Bytes(kAttributeName, "a")
                                              .Int(kAttributeF, 1)
                                              .Fixed32(kAttributeI, 2)
                                              .Int(kAttributeS, 3)
                                              .Fixed64(kAttributeInts, 4)
                                              .Int(kAttributeFloats, 5)
                                              .Fixed64(kAttributeFloats, 6)
                                              .Fixed32(kAttributeType, 2)
                                              .Bytes(kAttributeType, "x")
                                              .Int(kAttributeName, 7)));
  ExpectSameAsProtobuf(ModelWithInputType(Wire().Message(
      kTypeTensor,
      Wire()
          .Bytes(kTensorElemType, "1")
          .Int(kTensorShape, 2)
          .Message(kTensorShape,
                   Wire()
                       .Int(kShapeDim, 3)
                       .Message(kShapeDim, Wire().Bytes(kDimValue, "4").Int(kDimParam, 5))))));
  ExpectSameAsProtobuf(
      Model(Wire()
                .Message(kGraphInitializer, Wire()
                                                .Fixed32(kInitializerDims, 1)
                                                .Bytes(kInitializerDataType, "x")
                                                .Int(kInitializerName, 2))
                .Message(kGraphValueInfo, Wire().Int(kValueInfoName, 1).Int(kValueInfoType, 2))));
}

// Unknown fields of every wire type, including nested groups and a group
// whose number is a field the message does read.
Wire UnknownFields(uint64_t read_field) {
  return Wire()
      .Int(900, 1)
      .Fixed64(901, 2)
      .Bytes(902, "\x08\x01 not parsed")
      .Fixed32(903, 3)
      .Tag(904, kStartGroup)
      .Int(1, 5)
      .Bytes(2, "inside")
      .Tag(905, kStartGroup)
      .Fixed32(3, 7)
      .Tag(905, kEndGroup)
      .Fixed64(4, 8)
      .Tag(904, kEndGroup)
      .Tag(read_field, kStartGroup)
      .Bytes(read_field, "not read")
      .Tag(read_field, kEndGroup)
      .Tag(906, kStartGroup)
      .Tag(906, kEndGroup);
}

// One model using every field the scan reads, with `extra` (given the
// number of a field the message reads) first and last in every message.
std::string RichModel(const std::function<Wire(uint64_t)>& extra) {
  auto wrap = [&](uint64_t read_field, const Wire& body) {
    return Wire().Append(extra(read_field)).Append(body).Append(extra(read_field));
  };
  const Wire dim_value = wrap(kDimValue, Wire().Int(kDimValue, 3));
  const Wire dim_param = wrap(kDimParam, Wire().Bytes(kDimParam, "N"));
  const Wire shape =
      wrap(kShapeDim, Wire().Message(kShapeDim, dim_param).Message(kShapeDim, dim_value));
  const Wire tensor =
      wrap(kTensorElemType, Wire().Int(kTensorElemType, 1).Message(kTensorShape, shape));
  const Wire type = wrap(kTypeTensor, Wire().Message(kTypeTensor, tensor));
  const Wire info =
      wrap(kValueInfoName, Wire().Bytes(kValueInfoName, "x").Message(kValueInfoType, type));
  const Wire attribute = wrap(kAttributeInts, Wire()
                                                  .Bytes(kAttributeName, "k")
                                                  .Int(kAttributeType, 7)
                                                  .PackedInts(kAttributeInts, {3, 3})
                                                  .Float(kAttributeFloats, 0.5f)
                                                  .Int(kAttributeI, 4)
                                                  .Float(kAttributeF, 2)
                                                  .Bytes(kAttributeS, "s"));
  const Wire node = wrap(kNodeInput, Node("n", "Conv", {"x", "w"}, {"y"})
                                         .Message(kNodeAttribute, attribute)
                                         .Bytes(kNodeDomain, "ai.onnx")
                                         .Bytes(kNodeDocString, "doc"));
  const Wire initializer = wrap(kInitializerDims, Wire()
                                                      .Bytes(kInitializerName, "w")
                                                      .Int(kInitializerDataType, 1)
                                                      .PackedInts(kInitializerDims, {1, 2})
                                                      .Bytes(kInitializerRawData, "12345678"));
  const Wire graph = wrap(kGraphNode, Wire()
                                          .Bytes(kGraphName, "g")
                                          .Message(kGraphNode, node)
                                          .Message(kGraphInitializer, initializer)
                                          .Message(kGraphInput, info)
                                          .Message(kGraphOutput, info)
                                          .Message(kGraphValueInfo, info));
  return wrap(kModelGraph, Wire().Int(kModelIrVersion, 8).Message(kModelGraph, graph)).str();
}

TEST(ModelViewTest, UnknownFieldsOfEveryWireType) {
  ExpectSameAsProtobuf(RichModel([](uint64_t) { return Wire(); }));
  ExpectSameAsProtobuf(RichModel(UnknownFields));
  // A model that is only a group around a graph field has no graph.
  const std::string grouped = Wire()
                                  .Tag(kModelGraph, kStartGroup)
                                  .Message(kModelGraph, Wire().Bytes(kGraphName, "g"))
                                  .Tag(kModelGraph, kEndGroup)
                                  .str();
  EXPECT_EQ(CheckConsistent(grouped), Outcome::kNoGraph);
}

TEST(ModelViewTest, NamesThatAreNotUtf8) {
  const std::string nul("a\0b", 3);
  const Wire node = Node("\xff\xfe", "\xc3\x28", {"\x80", nul}, {"\xed\xa0\x80"})
                        .Bytes(kNodeDomain, "\xf8\x88\x80\x80\x80")
                        .Message(kNodeAttribute,
                                 Wire().Bytes(kAttributeName, nul).Bytes(kAttributeS, "\xc0\xaf"));
  const Wire shape = Wire().Message(kShapeDim, Wire().Bytes(kDimParam, "\xfe"));
  ExpectSameAsProtobuf(
      Model(Wire()
                .Bytes(kGraphName, "\xff")
                .Message(kGraphNode, node)
                .Message(kGraphInput, ValueInfo(nul, TensorTypeOf(1, shape)))
                .Message(kGraphInitializer, Wire().Bytes(kInitializerName, "\x80\x80"))));
}

// ---------------------------------------------------------------------------
// Encodings at protobuf's limits: the scan may accept what protobuf refuses,
// never the reverse.

std::string Nested(int depth, const Wire& inside) {
  Wire groups;
  for (int d = 0; d < depth; ++d) groups.Tag(800 + d, kStartGroup);
  groups.Append(inside);
  for (int d = depth - 1; d >= 0; --d) groups.Tag(800 + d, kEndGroup);
  return groups.str();
}

// protobuf's recursion limit (100) counts messages and groups together; the
// scan counts groups from the message it is in, so inside the graph it
// accepts groups nested a little deeper than protobuf does.
TEST(ModelViewTest, DeeplyNestedGroups) {
  const Wire graph = Wire().Message(kGraphNode, Node("n", "Op", {"x"}, {"y"}));
  for (int depth : {1, 2, 50, 95, 96, 97, 98, 99, 100, 101, 102, 150}) {
    SCOPED_TRACE(absl::StrCat("depth ", depth));
    const Wire inner = Wire().Int(1, 1);
    EXPECT_EQ(CheckConsistent(Wire().Raw(Nested(depth, inner)).Message(kModelGraph, graph).str()),
              depth <= 100 ? Outcome::kBothAgree : Outcome::kBothRefuse);
    CheckConsistent(Model(Wire().Raw(Nested(depth, inner)).Append(graph)));
    CheckConsistent(
        Model(Wire().Message(kGraphNode, Node("n", "Op", {}, {}).Raw(Nested(depth, inner)))));
  }
}

TEST(ModelViewTest, OverlongVarints) {
  const Wire graph = Wire().Message(kGraphNode, Node("n", "Op", {"x"}, {"y"}));
  auto with_prefix = [&](absl::string_view prefix) {
    return Wire().Raw(prefix).Message(kModelGraph, graph).str();
  };
  // An unknown varint field (900) whose value has 10 bytes, high bits set in
  // the last one.
  EXPECT_EQ(CheckConsistent(with_prefix("\xa0\x38\xff\xff\xff\xff\xff\xff\xff\xff\xff\x7f")),
            Outcome::kBothAgree);
  // An 11-byte varint.
  EXPECT_EQ(CheckConsistent(with_prefix("\xa0\x38\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01")),
            Outcome::kBothRefuse);
  // protobuf reads at most 5 bytes of a tag, and so does the scan. Tag 0x0a
  // (field 1, length-delimited) padded to 6 bytes:
  EXPECT_EQ(CheckConsistent(with_prefix(std::string("\x8a\x80\x80\x80\x80\x00\x00", 7))),
            Outcome::kBothRefuse);
  // protobuf reads at most 5 bytes of a length; the scan reads up to 10.
  // A length padded to 6 bytes.
  EXPECT_EQ(CheckConsistent(with_prefix(std::string("\xa2\x38\x80\x80\x80\x80\x80\x00", 8))),
            Outcome::kOnlyScanAccepts);
  // A dim_value of 10 bytes.
  const std::string dim = Model(Wire().Message(
      kGraphInput,
      ValueInfo(
          "x",
          Wire().Message(
              kTypeTensor,
              Wire().Message(
                  kTensorShape, Wire().Message(
                                    kShapeDim,
                                    Wire()
                                        .Tag(kDimValue, kVarint)
                                        .Raw("\x81\x80\x80\x80\x80\x80\x80\x80\x80\x7f")))))));
  EXPECT_EQ(CheckConsistent(dim), Outcome::kBothAgree);
}

// A 5-byte tag whose value is 2^32 or more: protobuf's ReadTag keeps the low
// 32 bits (so these bytes parse), where the scan refuses a tag above
// UINT32_MAX.
TEST(ModelViewTest, FiveByteTagAboveUint32) {
  const Wire graph = Wire().Message(kGraphNode, Node("n", "Op", {"x"}, {"y"}));
  // 0x1f40 | 2^32 = unknown varint field 1000 (tag 8000) plus 2^32.
  const std::string unknown =
      Wire().Raw("\xc0\xbe\x80\x80\x10").Varint(1).Message(kModelGraph, graph).str();
  CheckConsistent(unknown);
  // Tag 58 (graph, length-delimited) plus 2^32.
  const std::string graph_tag =
      Wire().Raw("\xba\x80\x80\x80\x10").Varint(graph.str().size()).Raw(graph.str()).str();
  CheckConsistent(graph_tag);
}

// ---------------------------------------------------------------------------
// Bytes that are not a protobuf message.

TEST(ModelViewTest, MalformedBytes) {
  const Wire graph = Wire().Message(kGraphNode, Node("n", "Op", {"x"}, {"y"}));
  const Wire node = Node("n", "Op", {"x"}, {"y"});
  // Each damage is tried at the end of the model and inside the graph, a
  // node, an attribute, a dimension and an initializer, so that every nested
  // scan reports it; damage that does not depend on what follows it also
  // before the graph.
  struct Damage {
    const char* what;
    std::string bytes;
    bool needs_end = true;
  };
  const std::vector<Damage> damages = {
      {"truncated varint", "\x08\x80"},
      {"truncated tag", "\x80"},
      {"length past the end",
       "\xa2\x38\x05"
       "abc"},
      {"truncated fixed32", "\xa5\x38\x01\x02"},
      {"truncated fixed64", "\xa1\x38\x01\x02\x03\x04\x05\x06\x07"},
      {"group without end", Wire().Tag(900, kStartGroup).Int(1, 1).str()},
      {"end group without start", Wire().Tag(900, kEndGroup).str(), false},
      {"group closed by another number", Wire().Tag(900, kStartGroup).Tag(901, kEndGroup).str(),
       false},
      {"wire type 6", Wire().Tag(900, 6).Varint(1).str(), false},
      {"wire type 7", Wire().Tag(900, 7).Varint(1).str(), false},
      {"field number 0, varint", std::string("\x00\x01", 2), false},
      {"field number 0, length-delimited", std::string("\x02\x00", 2), false},
      {"field number 0, fixed32", std::string("\x05\x00\x00\x00\x00", 5), false},
      {"field number 0, start group", std::string("\x03\x04", 2), false},
  };
  for (const Damage& damage : damages) {
    SCOPED_TRACE(damage.what);
    const std::string& bytes = damage.bytes;
    if (!damage.needs_end) ExpectBothRefuse(Wire().Raw(bytes).Message(kModelGraph, graph).str());
    ExpectBothRefuse(Wire().Message(kModelGraph, graph).Raw(bytes).str());
    ExpectBothRefuse(Model(Wire().Append(graph).Raw(bytes)));
    ExpectBothRefuse(Model(Wire().Message(kGraphNode, Wire().Append(node).Raw(bytes))));
    ExpectBothRefuse(ModelWithAttribute(Wire().Bytes(kAttributeName, "a").Raw(bytes)));
    ExpectBothRefuse(ModelWithInputType(
        TensorTypeOf(1, Wire().Message(kShapeDim, Wire().Int(kDimValue, 1).Raw(bytes)))));
    ExpectBothRefuse(
        Model(Wire().Message(kGraphInitializer, Wire().Bytes(kInitializerName, "w").Raw(bytes))));
  }
}

TEST(ModelViewTest, MalformedPackedScalars) {
  ExpectBothRefuse(ModelWithAttribute(Wire().Bytes(kAttributeFloats, "\x01\x02\x03")));
  ExpectBothRefuse(ModelWithAttribute(Wire().Bytes(kAttributeInts, "\x01\x80")));
  ExpectBothRefuse(
      Model(Wire().Message(kGraphInitializer, Wire().Bytes(kInitializerDims, "\xff"))));
}

// opset_import is read since the import checks declarations at the file's
// opsets: a malformed entry is refused like protobuf refuses it.
TEST(ModelViewTest, OpsetImportsAndAMalformedOne) {
  onnx::ModelProto model;
  model.mutable_graph()->set_name("g");
  onnx::OperatorSetIdProto& standard = *model.add_opset_import();
  standard.set_version(11);
  onnx::OperatorSetIdProto& custom = *model.add_opset_import();
  custom.set_domain("com.example");
  custom.set_version(2);
  const std::string bytes = model.SerializeAsString();  // the view points into it
  ORDO_ASSERT_OK_AND_ASSIGN(ModelView view, ScanModel(bytes));
  ASSERT_EQ(view.opsets.size(), 2u);
  EXPECT_EQ(view.opsets[0].domain, "");
  EXPECT_EQ(view.opsets[0].version, 11);
  EXPECT_EQ(view.opsets[1].domain, "com.example");
  EXPECT_EQ(view.opsets[1].version, 2);
  // opset_import (8), 12 bytes: OperatorSetIdProto.version as an 11-byte varint.
  const std::string broken =
      bytes +
      std::string("\x42\x0c\x10\xff\xff\xff\xff\xff\xff\xff\xff\xff\xff\x01", 14);
  onnx::ModelProto reference;
  EXPECT_FALSE(reference.ParseFromString(broken));
  EXPECT_THAT(ScanModel(broken), StatusIs(absl::StatusCode::kInvalidArgument,
                                          ::testing::HasSubstr("not a valid ONNX model")));
}

TEST(ModelViewTest, NoGraph) {
  for (const std::string& bytes :
       {std::string(), Wire().Int(kModelIrVersion, 8).str(), Wire().Int(kModelGraph, 1).str(),
        Wire().Bytes(900, "x").Fixed32(kModelGraph, 0).str()}) {
    SCOPED_TRACE("bytes " + Hex(bytes));
    onnx::ModelProto model;
    EXPECT_TRUE(ProtobufParses(bytes, model));
    EXPECT_FALSE(model.has_graph());
    EXPECT_THAT(ScanModel(bytes), StatusIs(kInvalid, "not a valid ONNX model: it has no graph"));
  }
}

// The shared comparison names the place and the field, protobuf's value
// first, names escaped.
TEST(ModelViewTest, FirstDifferenceNamesPlaceAndField) {
  const std::string bytes = ModelWithAttribute(
      Wire().Bytes(kAttributeName, "strides").PackedInts(kAttributeInts, {1, 1}));
  onnx::ModelProto model;
  ASSERT_TRUE(ProtobufParses(bytes, model));
  ORDO_ASSERT_OK_AND_ASSIGN(ModelView view, ScanModel(bytes));
  EXPECT_EQ(FirstDifference(model, view), "");
  --view.attributes[0].ints_end;
  EXPECT_EQ(FirstDifference(model, view),
            "node 0 \"n\": attribute \"strides\": ints: [1, 1] vs [1]");
  view.graph_name = "\xff";
  EXPECT_EQ(FirstDifference(model, view), "graph name: \"\" vs \"\\xff\"");
}

// ---------------------------------------------------------------------------
// Random damage to a small valid model.

void AddTensorInfo(onnx::ValueInfoProto& info, const std::string& name,
                   std::initializer_list<int64_t> dims) {
  info.set_name(name);
  onnx::TypeProto::Tensor& tensor = *info.mutable_type()->mutable_tensor_type();
  tensor.set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) {
    if (d < 0) {
      tensor.mutable_shape()->add_dim()->set_dim_param("N");
    } else {
      tensor.mutable_shape()->add_dim()->set_dim_value(d);
    }
  }
}

onnx::NodeProto& AddNode(onnx::GraphProto& graph, const std::string& op_type,
                         std::initializer_list<const char*> inputs, const std::string& output) {
  onnx::NodeProto& node = *graph.add_node();
  node.set_name(output);
  node.set_op_type(op_type);
  for (const char* input : inputs) node.add_input(input);
  node.add_output(output);
  return node;
}

onnx::AttributeProto& AddAttribute(onnx::NodeProto& node, const std::string& name,
                                   onnx::AttributeProto::AttributeType type) {
  onnx::AttributeProto& attribute = *node.add_attribute();
  attribute.set_name(name);
  attribute.set_type(type);
  return attribute;
}

// x [N,3,8,8] -> Conv(w, b) -> Relu -> LeakyRelu -> If(then: Identity) -> y,
// with every kind of attribute the scan reads, value_info with a symbolic
// dim, a sequence-typed value and initializers with data.
std::string SmallModelBytes() {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(17);
  onnx::GraphProto& graph = *model.mutable_graph();
  graph.set_name("small");
  AddTensorInfo(*graph.add_input(), "x", {-1, 3, 8, 8});
  AddTensorInfo(*graph.add_output(), "y", {-1, 4, 8, 8});
  AddTensorInfo(*graph.add_value_info(), "c", {-1, 4, 8, 8});
  onnx::ValueInfoProto& sequence = *graph.add_value_info();
  sequence.set_name("seq");
  sequence.mutable_type()
      ->mutable_sequence_type()
      ->mutable_elem_type()
      ->mutable_tensor_type()
      ->set_elem_type(1);
  onnx::TensorProto& w = *graph.add_initializer();
  w.set_name("w");
  w.set_data_type(onnx::TensorProto::FLOAT);
  for (int64_t d : {4, 3, 1, 1}) w.add_dims(d);
  w.set_raw_data(std::string(48, '\x3f'));
  onnx::TensorProto& b = *graph.add_initializer();
  b.set_name("b");
  b.set_data_type(onnx::TensorProto::FLOAT);
  b.add_dims(4);
  for (float v : {0.5f, -1.0f, 2.0f, 0.0f}) b.add_float_data(v);

  onnx::NodeProto& conv = AddNode(graph, "Conv", {"x", "w", "b"}, "c");
  onnx::AttributeProto& kernel = AddAttribute(conv, "kernel_shape", onnx::AttributeProto::INTS);
  kernel.add_ints(1);
  kernel.add_ints(1);
  AddAttribute(conv, "pads", onnx::AttributeProto::INTS).add_ints(0);
  AddNode(graph, "Relu", {"c"}, "r").set_domain("ai.onnx");
  onnx::NodeProto& leaky = AddNode(graph, "LeakyRelu", {"r"}, "l");
  AddAttribute(leaky, "alpha", onnx::AttributeProto::FLOAT).set_f(0.1f);
  onnx::AttributeProto& scales = AddAttribute(leaky, "scales", onnx::AttributeProto::FLOATS);
  scales.add_floats(1.0f);
  scales.add_floats(2.0f);
  AddAttribute(leaky, "mode", onnx::AttributeProto::STRING).set_s("nearest");
  AddAttribute(leaky, "axis", onnx::AttributeProto::INT).set_i(-1);
  onnx::NodeProto& branch = AddNode(graph, "If", {"cond"}, "y");
  onnx::GraphProto& then_branch =
      *AddAttribute(branch, "then_branch", onnx::AttributeProto::GRAPH).mutable_g();
  AddNode(then_branch, "Identity", {"l"}, "t");
  AddTensorInfo(*then_branch.add_output(), "t", {-1, 4, 8, 8});
  return model.SerializeAsString();
}

// Bytes that wire-format damage tends to produce: tags, continuation bits,
// group tags.
char InterestingByte(std::mt19937& rng) {
  static constexpr unsigned char kBytes[] = {0x00, 0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07,
                                             0x08, 0x0a, 0x0b, 0x0c, 0x3a, 0x7f, 0x80, 0xff};
  if (rng() % 2 == 0) return static_cast<char>(rng());
  return static_cast<char>(kBytes[rng() % sizeof(kBytes)]);
}

// One to three random edits: flip a bit, overwrite, insert, delete, truncate.
std::string Mutate(std::string bytes, std::mt19937& rng) {
  const int edits = 1 + static_cast<int>(rng() % 3);
  for (int e = 0; e < edits && !bytes.empty(); ++e) {
    const size_t pos = rng() % bytes.size();
    switch (rng() % 8) {
      case 0:
      case 1:
        bytes[pos] = static_cast<char>(bytes[pos] ^ (1 << (rng() % 8)));
        break;
      case 2:
      case 3:
        bytes[pos] = InterestingByte(rng);
        break;
      case 4:
      case 5:
        for (int n = 1 + static_cast<int>(rng() % 4); n > 0; --n)
          bytes.insert(pos, 1, InterestingByte(rng));
        break;
      case 6:
        bytes.erase(pos, 1 + rng() % 8);
        break;
      default:
        bytes.resize(pos);
        break;
    }
  }
  return bytes;
}

TEST(ModelViewTest, RandomMutationsAgreeWithProtobuf) {
  const std::string base = SmallModelBytes();
  ExpectSameAsProtobuf(base);
  std::mt19937 rng(20240611);
  int counts[5] = {};
  const int trials = testing::Trials(2000);
  for (int t = 0; t < trials && !::testing::Test::HasFailure(); ++t) {
    const std::string bytes = Mutate(base, rng);
    SCOPED_TRACE(absl::StrCat("trial ", t));
    ++counts[static_cast<int>(CheckConsistent(bytes))];
  }
  std::cout << "[ trials   ] " << trials << ": both agree " << counts[0] << ", both see no graph "
            << counts[1] << ", both refuse " << counts[2] << ", only the scan accepts " << counts[3]
            << ", disagree " << counts[4] << "\n";
  EXPECT_GT(counts[0], 0) << "no mutation parsed; the property was never checked";
  EXPECT_GT(counts[2], 0) << "no mutation broke the bytes; the error path was never checked";
}

}  // namespace
}  // namespace ordo::onnx_import
