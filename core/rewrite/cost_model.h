#ifndef ORDO_CORE_REWRITE_COST_MODEL_H_
#define ORDO_CORE_REWRITE_COST_MODEL_H_

#include <cstdint>

#include "core/graph/graph.h"

namespace ordo {

struct LatencyModel;  // core/rewrite/rewrite.h

// What a graph costs to run, in the units of MOTES' latency constraint:
// multiply-accumulates and op launches.
struct GraphCost {
  int64_t macs = 0;
  int32_t ops = 0;
};

// Multiply-accumulates of one op, from the dims in `graph` (weights' values
// are never needed):
//   Conv:          output elements x (Cin / group) x prod(kernel)
//                  = prod(Y dims) x prod(W dims[1:])
//   ConvTranspose: input elements x prod(W dims[1:])
//   Gemm / MatMul: output elements x the reduced dim K
//   pools:         output elements x prod(kernel); global pools: input elements
//   BatchNormalization: 2 x output elements (scale and shift)
//   element-wise (unary, binary, Sum, Clip, ...): output elements
//   data movement (Concat, Slice, Reshape, Pad, ...): 0
// Saturates at INT64_MAX instead of overflowing. O(inputs + rank).
int64_t OpMacs(const Graph& graph, const Op& op);

// Sum of OpMacs over the graph, and the ops it runs: a fused stage
// (kFusionDomain) counts as the layers it runs (its "layers" attribute).
// O(ops).
GraphCost CostOf(const Graph& graph);

// latency = macs / macs_per_second + ops * op_overhead_seconds.
double LatencySeconds(const GraphCost& cost, const LatencyModel& latency);

// (latency(after) - latency(before)) / latency(before); 0 when before costs
// nothing.
double LatencyOverhead(const GraphCost& before, const GraphCost& after,
                       const LatencyModel& latency);

}  // namespace ordo

#endif  // ORDO_CORE_REWRITE_COST_MODEL_H_
