#include "core/onnx/sparse_initializers.h"

#include <cstdint>
#include <cstring>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "core/graph/graph.h"
#include "core/onnx/onnx_import.h"
#include "core/onnx/prepare_model.h"
#include "core/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo::onnx_import {
namespace {

using ::ordo::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

template <typename T>
std::vector<T> Elements(const onnx::TensorProto& dense) {
  std::vector<T> out(dense.raw_data().size() / sizeof(T));
  std::memcpy(out.data(), dense.raw_data().data(), dense.raw_data().size());
  return out;
}

onnx::SparseTensorProto& AddSparse(onnx::GraphProto& graph, const std::string& name,
                                   int32_t type, std::initializer_list<int64_t> dims,
                                   int64_t nnz) {
  onnx::SparseTensorProto& sparse = *graph.add_sparse_initializer();
  sparse.mutable_values()->set_name(name);
  sparse.mutable_values()->set_data_type(type);
  sparse.mutable_values()->add_dims(nnz);
  sparse.mutable_indices()->set_data_type(onnx::TensorProto::INT64);
  sparse.mutable_indices()->add_dims(nnz);
  for (int64_t d : dims) sparse.add_dims(d);
  return sparse;
}

TEST(SparseInitializersTest, LinearizedIndicesScatterIntoZeros) {
  onnx::GraphProto graph;
  onnx::SparseTensorProto& s = AddSparse(graph, "w", onnx::TensorProto::FLOAT, {2, 3}, 2);
  s.mutable_values()->add_float_data(5);
  s.mutable_values()->add_float_data(7);
  s.mutable_indices()->add_int64_data(1);
  s.mutable_indices()->add_int64_data(4);
  ORDO_ASSERT_OK(DensifySparseInitializers(graph));
  EXPECT_EQ(graph.sparse_initializer_size(), 0);
  ASSERT_EQ(graph.initializer_size(), 1);
  const onnx::TensorProto& dense = graph.initializer(0);
  EXPECT_EQ(dense.name(), "w");
  EXPECT_THAT(dense.dims(), ElementsAre(2, 3));
  EXPECT_THAT(Elements<float>(dense), ElementsAre(0, 5, 0, 0, 7, 0));
}

// [NNZ, rank] indices in raw_data; int8 values one per int32_data entry.
TEST(SparseInitializersTest, CoordinateIndicesAndNarrowTypes) {
  onnx::GraphProto graph;
  onnx::SparseTensorProto& s = AddSparse(graph, "q", onnx::TensorProto::INT8, {2, 2}, 2);
  s.mutable_values()->add_int32_data(-3);
  s.mutable_values()->add_int32_data(9);
  s.mutable_indices()->add_dims(2);
  const std::vector<int64_t> coordinates = {0, 1, 1, 0};
  s.mutable_indices()->set_raw_data(std::string(
      reinterpret_cast<const char*>(coordinates.data()), coordinates.size() * sizeof(int64_t)));
  ORDO_ASSERT_OK(DensifySparseInitializers(graph));
  EXPECT_THAT(Elements<int8_t>(graph.initializer(0)), ElementsAre(0, -3, 9, 0));
}

TEST(SparseInitializersTest, RefusalsNameTheInitializer) {
  const auto refused = [](const std::function<void(onnx::SparseTensorProto&)>& spoil) {
    onnx::GraphProto graph;
    onnx::SparseTensorProto& s = AddSparse(graph, "w", onnx::TensorProto::FLOAT, {4}, 1);
    s.mutable_values()->add_float_data(1);
    s.mutable_indices()->add_int64_data(2);
    spoil(s);
    return DensifySparseInitializers(graph);
  };
  EXPECT_THAT(refused([](auto& s) { s.mutable_indices()->set_int64_data(0, 4); }),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("sparse_initializer \"w\": index 0 is outside dims")));
  EXPECT_THAT(refused([](auto& s) {
                s.mutable_values()->set_data_location(onnx::TensorProto::EXTERNAL);
              }),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("external data")));
  EXPECT_THAT(refused([](auto& s) { s.mutable_values()->set_data_type(onnx::TensorProto::STRING); }),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("has no fixed size")));
  EXPECT_THAT(refused([](auto& s) { s.mutable_indices()->set_data_type(onnx::TensorProto::INT32); }),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("indices must be int64")));
  EXPECT_THAT(refused([](auto& s) { s.set_dims(0, int64_t{1} << 40); }),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("over ordo's 256 MiB")));

  onnx::GraphProto twice;
  twice.add_initializer()->set_name("w");
  AddSparse(twice, "w", onnx::TensorProto::FLOAT, {1}, 0);
  EXPECT_THAT(DensifySparseInitializers(twice),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("initializer \"w\" is defined twice")));
}

// End to end: a Reshape whose target shape is a sparse initializer folds
// with its values (the dense tensor's), and a sparse weight keeps its dims.
TEST(SparseInitializersTest, APreparedModelImportsWithTheDenseValues) {
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.add_opset_import()->set_version(13);
  onnx::GraphProto& graph = *model.mutable_graph();
  graph.set_name("sparse");
  const auto declare = [](onnx::ValueInfoProto& info, const std::string& name,
                          std::initializer_list<int64_t> dims) {
    info.set_name(name);
    auto& tensor = *info.mutable_type()->mutable_tensor_type();
    tensor.set_elem_type(onnx::TensorProto::FLOAT);
    for (int64_t d : dims) tensor.mutable_shape()->add_dim()->set_dim_value(d);
  };
  declare(*graph.add_input(), "x", {1, 8});
  declare(*graph.add_output(), "y", {2, 4});
  onnx::SparseTensorProto& shape = AddSparse(graph, "shape", onnx::TensorProto::INT64, {2}, 2);
  shape.mutable_values()->add_int64_data(2);
  shape.mutable_values()->add_int64_data(4);
  shape.mutable_indices()->add_int64_data(0);
  shape.mutable_indices()->add_int64_data(1);
  onnx::SparseTensorProto& w = AddSparse(graph, "w", onnx::TensorProto::FLOAT, {4, 4}, 1);
  w.mutable_values()->add_float_data(1);
  w.mutable_indices()->add_int64_data(5);
  const auto node = [&](const std::string& op, std::initializer_list<std::string> in,
                        const std::string& out) {
    onnx::NodeProto& n = *graph.add_node();
    n.set_op_type(op);
    n.set_name(op);
    for (const std::string& i : in) n.add_input(i);
    n.add_output(out);
  };
  node("Reshape", {"x", "shape"}, "r");
  node("MatMul", {"r", "w"}, "m");
  node("Relu", {"m"}, "y");
  const std::string bytes = model.SerializeAsString();

  EXPECT_THAT(ImportOnnx(bytes), StatusIs(absl::StatusCode::kInvalidArgument,
                                          HasSubstr("made dense before import")));
  absl::StatusOr<std::string> prepared = PreparedOnnxBytes(bytes, {});
  ORDO_ASSERT_OK(prepared.status());
  absl::StatusOr<Graph> imported = ImportOnnx(*prepared);
  ORDO_ASSERT_OK(imported.status());
  EXPECT_EQ(imported->tensor(*imported->FindTensor("r")).bytes, 2 * 4 * 4);
  EXPECT_EQ(imported->tensor(*imported->FindTensor("m")).bytes, 2 * 4 * 4);
}

}  // namespace
}  // namespace ordo::onnx_import
