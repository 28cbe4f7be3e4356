#ifndef ORDO_CORE_REWRITE_INITIALIZER_SPLIT_H_
#define ORDO_CORE_REWRITE_INITIALIZER_SPLIT_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "onnx/onnx_pb.h"

namespace ordo {

// Splits an initializer along `axis` into consecutive parts of `sizes`
// (which must add up to dims[axis]), named `names`. The parts keep the
// dtype, and the data when the tensor carries it (float_data as
// float_data; raw_data and the other typed fields of fixed-size types as
// raw_data, onnx_import::RawDataOf); a tensor without data (the weightless
// benchmark models: external data that is not shipped) gives parts without
// data that point at the same external location, so a rewritten model
// carries weights exactly when its source did. INVALID_ARGUMENT when the
// sizes or axis do not fit the dims, or the data does not match its dtype
// and dims (strings included). O(bytes).
absl::StatusOr<std::vector<onnx::TensorProto>> SplitInitializer(
    const onnx::TensorProto& tensor, int64_t axis, absl::Span<const int64_t> sizes,
    absl::Span<const std::string> names);

}  // namespace ordo

#endif  // ORDO_CORE_REWRITE_INITIALIZER_SPLIT_H_
