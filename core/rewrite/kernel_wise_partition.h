#ifndef ORDO_CORE_REWRITE_KERNEL_WISE_PARTITION_H_
#define ORDO_CORE_REWRITE_KERNEL_WISE_PARTITION_H_

#include "absl/status/statusor.h"
#include "core/rewrite/channel_wise_partition.h"
#include "core/rewrite/model_edit.h"

namespace ordo {

// SERENITY §3.3 kernel-wise partitioning (Eq. 7-8) of a depthwise Conv
// (group == input channels, channel multiplier m = M / C):
//   DwConv([x_1..x_n], W, B) = Concat(DwConv(x_1, W_1, B_1), ..., DwConv(x_n, W_n, B_n))
// Output channel o reads input channel o / m only, so part i owns output
// channels [m * c_i, m * (c_i + C_i)) with c_i its first input channel: W
// and B are split along axis 0 in chunks of m * C_i, and each part is a
// depthwise Conv with group = C_i, every other attribute kept. The Concat
// (axis 1) writes the original output name. Bit-identical to the original.
// O(weight bytes).
absl::StatusOr<ModelEdit> PartitionConvKernelWise(const PartitionedConv& conv, NameScope& names);

}  // namespace ordo

#endif  // ORDO_CORE_REWRITE_KERNEL_WISE_PARTITION_H_
