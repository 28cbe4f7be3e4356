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
// dtype, and the data when the tensor carries it (raw_data of any
// fixed-size type, or float_data); a tensor without data (the weightless
// benchmark models: external data that is not shipped) gives parts without
// data that point at the same external location, so a rewritten model
// carries weights exactly when its source did. UNIMPLEMENTED for data in
// other typed fields (int32_data, ...) or strings; INVALID_ARGUMENT when the
// sizes or axis do not fit the dims. O(bytes).
absl::StatusOr<std::vector<onnx::TensorProto>> SplitInitializer(
    const onnx::TensorProto& tensor, int64_t axis, absl::Span<const int64_t> sizes,
    absl::Span<const std::string> names);

}  // namespace ordo

#endif  // ORDO_CORE_REWRITE_INITIALIZER_SPLIT_H_
