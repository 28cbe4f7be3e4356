#include "core/onnx/sparse_initializers.h"

#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <utility>

#include "absl/algorithm/container.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/onnx/raw_data.h"
#include "core/util/status_macros.h"

namespace ordo::onnx_import {
namespace {

int64_t ReadInt64(const std::string& bytes, int64_t i) {
  uint64_t bits = 0;
  for (int b = 7; b >= 0; --b) bits = (bits << 8) | static_cast<uint8_t>(bytes[i * 8 + b]);
  return static_cast<int64_t>(bits);
}

// What the dense tensors may take in all: a few bytes of sparse_initializer
// must not make a server allocate gigabytes.
constexpr int64_t kMaxDenseBytes = int64_t{256} << 20;

// Densifies `sparse` into `dense`, counting its bytes into `dense_bytes`.
absl::Status Densify(const onnx::SparseTensorProto& sparse, onnx::TensorProto& dense,
                     int64_t& dense_bytes) {
  const onnx::TensorProto& values = sparse.values();
  const onnx::TensorProto& indices = sparse.indices();
  const auto refuse = [&](auto&&... why) {
    return absl::InvalidArgumentError(absl::StrCat("sparse_initializer \"", values.name(), "\": ",
                                                   why..., "; store it as a dense initializer"));
  };
  const int64_t width = RawElementBytes(values.data_type());
  if (width == 0) return refuse("element type ", values.data_type(), " has no fixed size");
  int64_t count = 1;
  bool too_large = false;
  for (int64_t d : sparse.dims()) {
    if (d < 0) return refuse("dims must be non-negative");
    if (d > 0 && count > (kMaxDenseBytes / width) / d) too_large = true;
    if (!too_large) count *= d;
  }
  if (absl::c_linear_search(sparse.dims(), 0)) {  // no elements, however large the rest
    count = 0;
    too_large = false;
  }
  if (too_large || dense_bytes + count * width > kMaxDenseBytes) {
    return refuse("dense, the sparse initializers would take over ordo's ", kMaxDenseBytes >> 20,
                  " MiB");
  }
  dense_bytes += count * width;
  const int rank = sparse.dims_size();
  if (values.dims_size() != 1) return refuse("values must be a 1-D tensor of the NNZ values");
  const int64_t nnz = values.dims(0);
  const bool linearized = indices.dims_size() == 1;
  if (indices.data_type() != onnx::TensorProto::INT64 || nnz < 0 || nnz > count ||
      indices.dims_size() < 1 || indices.dims(0) != nnz ||
      (!linearized && (indices.dims_size() != 2 || indices.dims(1) != rank))) {
    return refuse("indices must be int64 of shape [NNZ] or [NNZ, rank] with NNZ = ", nnz);
  }
  const std::optional<std::string> value_bytes = RawDataOf(values, nnz);
  const std::optional<std::string> index_bytes = RawDataOf(indices, linearized ? nnz : nnz * rank);
  if (!value_bytes || !index_bytes) {
    return refuse("its values or indices are external data or do not hold NNZ = ", nnz,
                  " elements");
  }
  std::string data(static_cast<size_t>(count * width), '\0');
  for (int64_t i = 0; i < nnz; ++i) {
    int64_t at = 0;
    if (linearized) {
      at = ReadInt64(*index_bytes, i);
    } else {
      for (int j = 0; j < rank; ++j) {
        const int64_t index = ReadInt64(*index_bytes, i * rank + j);
        if (index < 0 || index >= sparse.dims(j)) at = -1;
        if (at >= 0) at = at * sparse.dims(j) + index;
      }
    }
    if (at < 0 || at >= count) return refuse("index ", i, " is outside dims");
    std::memcpy(&data[static_cast<size_t>(at * width)], &(*value_bytes)[static_cast<size_t>(i * width)],
                static_cast<size_t>(width));
  }
  dense.set_name(values.name());
  dense.set_data_type(values.data_type());
  for (int64_t d : sparse.dims()) dense.add_dims(d);
  dense.set_raw_data(std::move(data));
  return absl::OkStatus();
}

}  // namespace

absl::Status DensifySparseInitializers(onnx::GraphProto& graph) {
  absl::flat_hash_set<std::string> names;
  int64_t dense_bytes = 0;
  for (const onnx::TensorProto& t : graph.initializer()) names.insert(t.name());
  for (const onnx::SparseTensorProto& sparse : graph.sparse_initializer()) {
    const std::string& name = sparse.values().name();
    if (name.empty()) {
      return absl::InvalidArgumentError(
          "a sparse_initializer's values have no name (ONNX names the initializer by it)");
    }
    if (!names.insert(name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("initializer \"", name, "\" is defined twice (sparse_initializer)"));
    }
    onnx::TensorProto dense;
    ORDO_RETURN_IF_ERROR(Densify(sparse, dense, dense_bytes));
    *graph.add_initializer() = std::move(dense);
  }
  graph.clear_sparse_initializer();
  return absl::OkStatus();
}

}  // namespace ordo::onnx_import
