#include "core/rewrite/cost_model.h"

#include <algorithm>
#include <limits>
#include <vector>

#include "core/graph/onnx_domain.h"
#include "core/rewrite/op_semantics.h"
#include "core/rewrite/patch_fusion.h"
#include "core/rewrite/rewrite.h"

namespace ordo {
namespace {

constexpr int64_t kMax = std::numeric_limits<int64_t>::max();

int64_t SatMul(int64_t a, int64_t b) {
  if (a <= 0 || b <= 0) return 0;
  if (a > kMax / b) return kMax;
  return a * b;
}

int64_t SatAdd(int64_t a, int64_t b) { return a > kMax - b ? kMax : a + b; }

int64_t Product(const std::vector<int64_t>& dims, size_t from = 0) {
  int64_t p = 1;
  for (size_t i = from; i < dims.size(); ++i) p = SatMul(p, dims[i]);
  return p;
}

const std::vector<int64_t>* Dims(const Graph& graph, const std::vector<TensorId>& ids,
                                 size_t index) {
  if (index >= ids.size()) return nullptr;
  return &graph.tensor(ids[index]).dims;
}

bool IsElementwiseType(const std::string& type) {
  return IsUnaryElementwiseType(type) || type == "Add" || type == "Sub" || type == "Mul" ||
         type == "Div" || type == "Sum" || type == "Clip" || type == "Max" || type == "Min" ||
         type == "Pow" || type == "Sqrt" || type == "Exp" || type == "Neg" || type == "Abs" ||
         type == "PRelu" || type == "Erf" || type == "Gelu" || type == "Mean";
}

}  // namespace

int64_t OpMacs(const Graph& graph, const Op& op) {
  const std::vector<int64_t>* out = Dims(graph, op.outputs, 0);
  const std::vector<int64_t>* in = Dims(graph, op.inputs, 0);
  if (out == nullptr) return 0;
  const int64_t out_elements = Product(*out);
  const std::string& t = op.type;
  // A fused stage states its own MACs (patch_fusion.h: recomputed rows).
  if (op.domain == kFusionDomain) return IntAttribute(op, "macs").value_or(out_elements);
  if (!IsStandardOnnxDomain(op.domain)) return out_elements;
  if (t == "Conv") {
    const std::vector<int64_t>* w = Dims(graph, op.inputs, 1);
    return w == nullptr ? 0 : SatMul(out_elements, Product(*w, 1));
  }
  if (t == "ConvTranspose") {
    const std::vector<int64_t>* w = Dims(graph, op.inputs, 1);
    return w == nullptr || in == nullptr ? 0 : SatMul(Product(*in), Product(*w, 1));
  }
  if (t == "Gemm") {
    if (in == nullptr || in->size() != 2) return 0;
    const bool trans_a = IntAttribute(op, "transA").value_or(0) != 0;
    return SatMul(out_elements, trans_a ? (*in)[0] : (*in)[1]);
  }
  if (t == "MatMul") {
    if (in == nullptr || in->empty()) return 0;
    return SatMul(out_elements, in->back());
  }
  if (t == "MaxPool" || t == "AveragePool" || t == "LpPool") {
    std::optional<std::vector<int64_t>> kernel = IntsAttribute(op, "kernel_shape");
    return SatMul(out_elements, kernel ? Product(*kernel) : 1);
  }
  if (t == "GlobalAveragePool" || t == "GlobalMaxPool" || t == "ReduceMean" || t == "ReduceSum" ||
      t == "ReduceMax") {
    return in == nullptr ? 0 : Product(*in);
  }
  if (t == "BatchNormalization" || t == "InstanceNormalization" || t == "LayerNormalization") {
    return SatMul(2, out_elements);
  }
  if (t == "Softmax" || t == "LogSoftmax") return SatMul(3, out_elements);
  if (IsElementwiseType(t)) {
    // Sum of n inputs: n - 1 additions per element.
    if (t == "Sum" && op.inputs.size() > 2) {
      return SatMul(out_elements, static_cast<int64_t>(op.inputs.size()) - 1);
    }
    return out_elements;
  }
  return 0;  // data movement: Concat, Slice, Split, Pad, Reshape, Flatten, ...
}

GraphCost CostOf(const Graph& graph) {
  GraphCost cost;
  for (const Op& op : graph.ops()) {
    cost.macs = SatAdd(cost.macs, OpMacs(graph, op));
    // A fused stage still runs each of its layers (row by row): their
    // launches are not saved.
    const int64_t layers =
        op.domain == kFusionDomain ? std::max<int64_t>(1, IntAttribute(op, "layers").value_or(1)) : 1;
    cost.ops += static_cast<int32_t>(layers);
  }
  return cost;
}

double LatencySeconds(const GraphCost& cost, const LatencyModel& latency) {
  const double compute =
      latency.macs_per_second > 0 ? static_cast<double>(cost.macs) / latency.macs_per_second : 0;
  return compute + cost.ops * latency.op_overhead_seconds;
}

double LatencyOverhead(const GraphCost& before, const GraphCost& after,
                       const LatencyModel& latency) {
  const double base = LatencySeconds(before, latency);
  if (base <= 0) return 0;
  return (LatencySeconds(after, latency) - base) / base;
}

}  // namespace ordo
