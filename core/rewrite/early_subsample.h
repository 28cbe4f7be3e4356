#ifndef ORDO_CORE_REWRITE_EARLY_SUBSAMPLE_H_
#define ORDO_CORE_REWRITE_EARLY_SUBSAMPLE_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph/graph.h"
#include "onnx/onnx_pb.h"

namespace ordo {

// Subsampling moved before the shifts (an identity rewrite): a chain of
// Slice (step 1) and constant Pad ops over H/W feeding a 1x1 window with
// stride s (MaxPool / AveragePool with kernel 1, or a 1x1 Conv), as
// NAS cells' FactorizedReduce exports it (x[:, :, 1:, 1:], Pad, AvgPool(1,
// stride 2), Conv 1x1), only reads every s-th pixel of the chain's source.
// When none of the pixels read is a padded one, the chain is one strided
// Slice of the source (steps = s), a quarter of the size at s = 2, and the
// window op keeps stride 1 (a pool of kernel 1 disappears). The full-size
// intermediate tensors, each live beside the source at its step (Slice and
// Pad are not in place), are gone. No extra MACs.
struct SubsampleSite {
  std::vector<std::string> chain;  // Slice/Pad node names, source first
  std::string window;              // the pool or Conv
};

// Every site of `graph` whose chain is non-empty, each intermediate tensor
// read only by the next op of the chain and not a graph output, the shifts
// on axes 2 and 3 only, and no padded pixel read. Needs the ONNX model for
// the Slice/Pad constants (an initializer that is also a graph input is not
// one), window and chain ops of the default domain; opset >= 10 (Slice
// with steps). O(model + ops x chain).
std::vector<SubsampleSite> FindSubsampleSites(const onnx::ModelProto& model, const Graph& graph);

// The model with every site of `sites` rewritten (nodes in place of the
// window op, so a sorted file stays sorted; new int64 initializers for the
// Slice's starts/ends/axes/steps; value_info for new tensors). Same model /
// graph contract as ApplyConcatConvRewrite; a site listed twice is
// rewritten once. INVALID_ARGUMENT for a site that is not (any more) one
// FindSubsampleSites would return.
absl::StatusOr<onnx::ModelProto> ApplyEarlySubsample(const onnx::ModelProto& model,
                                                     const Graph& graph,
                                                     const std::vector<SubsampleSite>& sites);

}  // namespace ordo

#endif  // ORDO_CORE_REWRITE_EARLY_SUBSAMPLE_H_
