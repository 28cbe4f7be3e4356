#include "core/rewrite/initializer_split.h"

#include <optional>
#include <string>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/onnx/raw_data.h"

namespace ordo {

absl::StatusOr<std::vector<onnx::TensorProto>> SplitInitializer(
    const onnx::TensorProto& tensor, int64_t axis, absl::Span<const int64_t> sizes,
    absl::Span<const std::string> names) {
  const int64_t rank = tensor.dims_size();
  if (axis < 0 || axis >= rank || sizes.size() != names.size()) {
    return absl::InvalidArgumentError(
        absl::StrCat("initializer \"", tensor.name(), "\": cannot split axis ", axis));
  }
  int64_t total = 0;
  for (int64_t size : sizes) {
    if (size <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("initializer \"", tensor.name(), "\": empty part"));
    }
    total += size;
  }
  if (total != tensor.dims(axis)) {
    return absl::InvalidArgumentError(absl::StrCat("initializer \"", tensor.name(),
                                                   "\": parts add up to ", total, ", dim ", axis,
                                                   " is ", tensor.dims(axis)));
  }
  int64_t outer = 1;
  int64_t inner = 1;
  for (int64_t i = 0; i < axis; ++i) outer *= tensor.dims(i);
  for (int64_t i = axis + 1; i < rank; ++i) inner *= tensor.dims(i);

  const bool has_float = tensor.float_data_size() > 0 && !tensor.has_raw_data();
  const bool external = tensor.data_location() == onnx::TensorProto::EXTERNAL;
  const bool has_other_data = tensor.int32_data_size() > 0 || tensor.int64_data_size() > 0 ||
                              tensor.double_data_size() > 0 || tensor.uint64_data_size() > 0 ||
                              tensor.string_data_size() > 0;
  // float_data stays float_data; raw_data and the other typed fields are
  // split as raw_data.
  std::optional<std::string> raw;
  if (!external && !has_float && (tensor.has_raw_data() || has_other_data)) {
    raw = onnx_import::RawDataOf(tensor, outer * total * inner);
    if (!raw) {
      return absl::InvalidArgumentError(absl::StrCat(
          "initializer \"", tensor.name(), "\": its data does not match its dtype and dims"));
    }
  }
  const int64_t element_bytes = onnx_import::RawElementBytes(tensor.data_type());
  if (has_float && tensor.float_data_size() != outer * total * inner) {
    return absl::InvalidArgumentError(
        absl::StrCat("initializer \"", tensor.name(), "\": float_data does not match its dims"));
  }

  std::vector<onnx::TensorProto> parts;
  int64_t offset = 0;
  for (size_t p = 0; p < sizes.size(); ++p) {
    onnx::TensorProto part;
    part.set_name(names[p]);
    part.set_data_type(tensor.data_type());
    for (int64_t i = 0; i < rank; ++i) part.add_dims(i == axis ? sizes[p] : tensor.dims(i));
    if (external) {
      // Same file, no offset: the part has no data of its own, like its
      // source (whose data is not there to split).
      part.set_data_location(onnx::TensorProto::EXTERNAL);
      for (const onnx::StringStringEntryProto& entry : tensor.external_data()) {
        if (entry.key() == "location") *part.add_external_data() = entry;
      }
    }
    // Row-major: each of the `outer` blocks contributes a contiguous run of
    // sizes[p] * inner elements starting at offset * inner.
    for (int64_t o = 0; o < outer; ++o) {
      const int64_t begin = (o * total + offset) * inner;
      const int64_t count = sizes[p] * inner;
      if (raw) {
        part.mutable_raw_data()->append(*raw, begin * element_bytes, count * element_bytes);
      } else if (has_float) {
        for (int64_t i = 0; i < count; ++i) part.add_float_data(tensor.float_data(begin + i));
      }
    }
    offset += sizes[p];
    parts.push_back(std::move(part));
  }
  return parts;
}

}  // namespace ordo
