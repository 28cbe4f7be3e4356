#ifndef ORDO_CORE_REWRITE_CHANNEL_WISE_PARTITION_H_
#define ORDO_CORE_REWRITE_CHANNEL_WISE_PARTITION_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/rewrite/model_edit.h"
#include "onnx/onnx_pb.h"

namespace ordo {

// The operands of a Conv whose data input is the channel-wise Concat of
// `parts` (tensor names; `channels` each), ready to be partitioned.
struct PartitionedConv {
  const onnx::NodeProto* conv = nullptr;  // must outlive the call
  const onnx::TensorProto* weight = nullptr;
  const onnx::TensorProto* bias = nullptr;  // null when the Conv has none
  std::vector<std::string> parts;
  std::vector<int64_t> channels;
  std::vector<int64_t> output_dims;  // the Conv's output
  int32_t elem_type = onnx::TensorProto::FLOAT;
};

// SERENITY §3.3 channel-wise partitioning (Eq. 3-6) of a group-1 Conv:
//   Conv([x_1..x_n], W, B) = Conv(x_1, W_1, B) + Conv(x_2, W_2) + ... + Conv(x_n, W_n)
// with W_i the slice of W along its input channels (axis 1) that meets x_i.
// The partial Convs keep every attribute of the original; the bias goes on
// the first part only; the sum is a chain of Adds, in part order, whose last
// Add writes the Conv's output name, so readers of it are untouched. A chain
// rather than one Sum lets a schedule free each partial result as soon as it
// is added (a Sum would keep all n alive at once, the cost the rewrite is
// meant to remove). Floating-point results differ from the original only by
// summation order. O(weight bytes).
absl::StatusOr<ModelEdit> PartitionConvChannelWise(const PartitionedConv& conv, NameScope& names);

}  // namespace ordo

#endif  // ORDO_CORE_REWRITE_CHANNEL_WISE_PARTITION_H_
