#include "core/rewrite/region_fusion.h"

#include <algorithm>
#include <string>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/rewrite/cost_model.h"
#include "core/rewrite/model_edit.h"
#include "core/rewrite/op_semantics.h"
#include "core/rewrite/patch_fusion.h"
#include "core/util/status_macros.h"

namespace ordo {
namespace {

// A window along H only (W is whole in every row): `kernel` rows starting
// `pad` rows above output row y (x stride).
Window RowWindow(int64_t kernel, int64_t stride, int64_t pad_begin, int64_t pad_end) {
  return Window{{kernel, 1}, {stride, 1}, {1, 1}, {pad_begin, 0}, {pad_end, 0}, false};
}

Window Identity() { return RowWindow(1, 1, 0, 0); }

bool IsDefaultDomain(const Op& op) { return op.domain.empty() || op.domain == "ai.onnx"; }

std::vector<TensorId> ActivationInputs(const Graph& graph, const Op& op) {
  std::vector<TensorId> acts;
  for (TensorId t : op.inputs) {
    if (graph.tensor(t).kind != TensorKind::kWeight) acts.push_back(t);
  }
  return acts;
}

// Output row y of a Pad reads input row y - (rows padded above); of a Slice
// input row start + step x y. The offsets and steps are operand values (or
// Pad's attribute before opset 11), read from `constants`; without them a
// Pad's window covers every shift of its size change, and a Slice cannot
// stream.
std::optional<Window> ShiftWindow(const Graph& graph, const Op& op,
                                  const ConstantIndex* constants) {
  const std::vector<int64_t>& in = graph.tensor(op.inputs[0]).dims;
  const std::vector<int64_t>& out = graph.tensor(op.outputs[0]).dims;
  if (in.size() != 4 || in[0] != out[0]) return std::nullopt;
  auto ints = [&](size_t input) -> std::optional<std::vector<int64_t>> {
    if (constants == nullptr || op.inputs.size() <= input) return std::nullopt;
    return constants->Ints(graph.tensor(op.inputs[input]).name);
  };
  if (op.type == "Pad") {
    const std::optional<std::string> mode = StringAttribute(op, "mode");
    if (mode && *mode != "constant") return std::nullopt;
    std::optional<std::vector<int64_t>> pads = IntsAttribute(op, "pads");
    if (!pads && op.inputs.size() <= 3) pads = ints(1);  // opset 11+, no axes operand
    if (pads && pads->size() == 8) return RowWindow(1, 1, (*pads)[2], 0);
    if (out[2] < in[2]) return std::nullopt;
    const int64_t grow = out[2] - in[2];
    return RowWindow(grow + 1, 1, grow, grow);
  }
  if (op.type != "Slice") return std::nullopt;
  const std::optional<std::vector<int64_t>> starts = ints(1);
  if (!starts) return std::nullopt;
  std::vector<int64_t> axes;
  if (op.inputs.size() > 3) {
    std::optional<std::vector<int64_t>> a = ints(3);
    if (!a) return std::nullopt;
    axes = *a;
  } else {
    for (size_t i = 0; i < starts->size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  std::vector<int64_t> steps(starts->size(), 1);
  if (op.inputs.size() > 4) {
    std::optional<std::vector<int64_t>> k = ints(4);
    if (!k) return std::nullopt;
    steps = *k;
  }
  if (axes.size() != starts->size() || steps.size() != starts->size()) return std::nullopt;
  Window window = RowWindow(1, 1, 0, 0);
  for (size_t i = 0; i < axes.size(); ++i) {
    if (steps[i] <= 0) return std::nullopt;
    const int64_t axis = axes[i] < 0 ? axes[i] + 4 : axes[i];
    if (axis != 2) continue;
    const int64_t start = std::clamp<int64_t>((*starts)[i] < 0 ? (*starts)[i] + in[2] : (*starts)[i],
                                              0, in[2]);
    window = RowWindow(1, steps[i], -start, 0);
  }
  return window;
}

// How one output row of `id` reads its activation inputs (one window for
// all of them), or nullopt when the op cannot stream.
std::optional<Window> StreamWindow(const Graph& graph, OpId id, const ConstantIndex* constants) {
  const Op& op = graph.op(id);
  if (!IsDefaultDomain(op) || op.outputs.size() != 1 || op.inputs.empty()) return std::nullopt;
  const Tensor& out = graph.tensor(op.outputs[0]);
  const std::vector<TensorId> acts = ActivationInputs(graph, op);
  if (out.dims.size() != 4 || acts.empty()) return std::nullopt;
  for (TensorId t : acts) {
    const Tensor& in = graph.tensor(t);
    if (in.dims.size() != 4 || in.dtype != out.dtype || in.dims[0] != out.dims[0]) {
      return std::nullopt;
    }
  }
  if (std::optional<Window> window = ChainLayerWindow(graph, id)) return window;
  if (acts.size() == 1 && acts[0] == op.inputs[0] && (op.type == "Pad" || op.type == "Slice")) {
    return ShiftWindow(graph, op, constants);
  }
  const OpKind kind = ClassifyOp(op);
  const bool same_rows = std::all_of(acts.begin(), acts.end(), [&](TensorId t) {
    const std::vector<int64_t>& d = graph.tensor(t).dims;
    return d[2] == out.dims[2] && d[3] == out.dims[3];
  });
  if (!same_rows) return std::nullopt;
  if (kind == OpKind::kBinaryElementwise || kind == OpKind::kSum) {
    for (TensorId t : acts) {
      if (graph.tensor(t).dims != out.dims) return std::nullopt;
    }
    return Identity();
  }
  if (kind == OpKind::kConcat) {
    const int64_t axis = IntAttribute(op, "axis").value_or(1);
    if (axis == 1 || axis == -3) return Identity();
  }
  return std::nullopt;
}

// The demand-driven row schedule of the header ("How it runs").
class RowStreamer {
 public:
  RowStreamer(const Graph& graph, const std::vector<bool>& in_region,
              const RowWindows& windows, const std::vector<bool>& internal)
      : graph_(graph),
        in_region_(in_region),
        windows_(windows),
        internal_(internal),
        produced_(graph.num_tensors(), 0),
        low_(graph.num_tensors(), 0),
        ring_(graph.num_tensors(), 0) {}

  // Produces every row of `outputs`, the least advanced first.
  void Run(const std::vector<TensorId>& outputs) {
    while (true) {
      TensorId next = kNoId;
      for (TensorId o : outputs) {
        if (produced_[o] >= Rows(o)) continue;
        if (next == kNoId || produced_[o] * Rows(next) < produced_[next] * Rows(o)) next = o;
      }
      if (next == kNoId) return;
      ProduceRow(graph_.tensor(next).producer);
    }
  }

  int64_t ring_rows(TensorId t) const { return ring_[t]; }

 private:
  int64_t Rows(TensorId t) const { return graph_.tensor(t).dims[2]; }

  bool FromRegion(TensorId t) const {
    const OpId p = graph_.tensor(t).producer;
    return p != kNoId && in_region_[p];
  }

  void ProduceRow(OpId op) {
    const Op& o = graph_.op(op);
    const int64_t y = produced_[o.outputs[0]];
    for (TensorId t : o.inputs) {
      if (!FromRegion(t)) continue;
      const int64_t end = windows_[op]->InputRange(0, y, y + 1, Rows(t)).second;
      while (produced_[t] < end) ProduceRow(graph_.tensor(t).producer);
    }
    for (TensorId t : o.inputs) {
      if (internal_[t]) ring_[t] = std::max(ring_[t], produced_[t] - low_[t]);
    }
    ++produced_[o.outputs[0]];
    for (TensorId t : o.inputs) {
      if (internal_[t]) low_[t] = NextNeeded(t);
    }
  }

  // The first row of `t` some reader's next output row reads.
  int64_t NextNeeded(TensorId t) const {
    int64_t first = Rows(t);
    for (OpId r : graph_.tensor(t).consumers) {
      const TensorId out = graph_.op(r).outputs[0];
      if (produced_[out] >= Rows(out)) continue;
      first = std::min(first, windows_[r]->InputRange(0, produced_[out], produced_[out] + 1,
                                                     Rows(t)).first);
    }
    return first;
  }

  const Graph& graph_;
  const std::vector<bool>& in_region_;
  const RowWindows& windows_;
  const std::vector<bool>& internal_;
  std::vector<int64_t> produced_;
  std::vector<int64_t> low_;
  std::vector<int64_t> ring_;
};

// True when some path leaves `in_region` and comes back. O(graph).
bool LeavesAndReturns(const Graph& graph, const std::vector<bool>& in_region) {
  std::vector<bool> seen(graph.num_ops(), false);
  std::vector<OpId> stack;
  for (OpId op = 0; op < graph.num_ops(); ++op) {
    if (!in_region[op]) continue;
    for (TensorId t : graph.op(op).outputs) {
      for (OpId r : graph.tensor(t).consumers) {
        if (!in_region[r] && !seen[r]) {
          seen[r] = true;
          stack.push_back(r);
        }
      }
    }
  }
  while (!stack.empty()) {
    const OpId op = stack.back();
    stack.pop_back();
    for (TensorId t : graph.op(op).outputs) {
      for (OpId r : graph.tensor(t).consumers) {
        if (in_region[r]) return true;
        if (!seen[r]) {
          seen[r] = true;
          stack.push_back(r);
        }
      }
    }
  }
  return false;
}

// Ops reachable from `from` forward (along consumers) or backward (along
// producers), `from` excluded.
std::vector<bool> Reach(const Graph& graph, const std::vector<bool>& from, bool forward) {
  std::vector<bool> seen(graph.num_ops(), false);
  std::vector<OpId> stack;
  for (OpId op = 0; op < graph.num_ops(); ++op) {
    if (from[op]) stack.push_back(op);
  }
  while (!stack.empty()) {
    const OpId op = stack.back();
    stack.pop_back();
    auto visit = [&](OpId next) {
      if (next != kNoId && !from[next] && !seen[next]) {
        seen[next] = true;
        stack.push_back(next);
      }
    };
    if (forward) {
      for (TensorId t : graph.op(op).outputs) {
        for (OpId r : graph.tensor(t).consumers) visit(r);
      }
    } else {
      for (TensorId t : graph.op(op).inputs) visit(graph.tensor(t).producer);
    }
  }
  return seen;
}

}  // namespace

RowWindows StreamableOps(const Graph& graph, const onnx::GraphProto* constants) {
  std::optional<ConstantIndex> index;
  if (constants != nullptr) index.emplace(*constants);
  RowWindows windows(graph.num_ops());
  for (OpId id = 0; id < graph.num_ops(); ++id) {
    windows[id] = StreamWindow(graph, id, index ? &*index : nullptr);
  }
  return windows;
}

absl::StatusOr<RegionCost> CostOfRegion(const Graph& graph, const MemoryModel& memory,
                                        const RowWindows& windows,
                                        absl::Span<const OpId> ops) {
  std::vector<bool> in_region(graph.num_ops(), false);
  for (OpId op : ops) {
    if (op < 0 || op >= graph.num_ops() || !windows[op] || in_region[op]) {
      return absl::InvalidArgumentError(absl::StrCat(
          "op ", op < 0 || op >= graph.num_ops() ? std::to_string(op) : graph.op(op).name,
          " cannot stream in a region (or is listed twice)"));
    }
    in_region[op] = true;
  }
  if (LeavesAndReturns(graph, in_region)) {
    return absl::InvalidArgumentError("the region is not convex: a path leaves it and comes back");
  }
  RegionCost cost;
  std::vector<bool> internal(graph.num_tensors(), false);
  absl::flat_hash_set<TensorId> inputs;
  for (OpId op : ops) {
    cost.macs += OpMacs(graph, graph.op(op));
    for (TensorId t : graph.op(op).inputs) {
      const Tensor& tensor = graph.tensor(t);
      if (tensor.kind != TensorKind::kWeight &&
          (tensor.producer == kNoId || !in_region[tensor.producer]) && inputs.insert(t).second) {
        cost.inputs.push_back(t);
      }
    }
    const TensorId out = graph.op(op).outputs[0];
    const Tensor& tensor = graph.tensor(out);
    const bool read_outside = std::any_of(tensor.consumers.begin(), tensor.consumers.end(),
                                          [&](OpId r) { return !in_region[r]; });
    if (tensor.is_graph_output || read_outside || tensor.consumers.empty()) {
      cost.outputs.push_back(out);
    } else {
      internal[out] = true;
      cost.internal.push_back(out);
    }
  }
  if (cost.internal.empty()) {
    return absl::InvalidArgumentError("the region has no internal tensor: nothing to stream");
  }
  RowStreamer streamer(graph, in_region, windows, internal);
  streamer.Run(cost.outputs);
  for (TensorId t : cost.internal) {
    const std::vector<int64_t>& d = graph.tensor(t).dims;
    const int64_t rows = std::max<int64_t>(1, streamer.ring_rows(t));
    cost.ring_rows.push_back(rows);
    cost.workspace_elements += d[0] * d[1] * rows * d[3];
    cost.workspace_bytes += d[2] == 0 ? 0 : memory.tensors[t].bytes / d[2] * rows;
  }
  cost.step_bytes = memory.constant_bytes + cost.workspace_bytes;
  for (TensorId t : cost.inputs) cost.step_bytes += memory.tensors[t].bytes;
  for (TensorId t : cost.outputs) cost.step_bytes += memory.tensors[t].bytes;
  return cost;
}

std::optional<std::vector<std::vector<OpId>>> InternalizeTensor(
    const Graph& graph, const RowWindows& windows,
    const std::vector<std::vector<OpId>>& regions, TensorId t) {
  const Tensor& tensor = graph.tensor(t);
  if (tensor.kind == TensorKind::kWeight || tensor.producer == kNoId || tensor.is_graph_output ||
      tensor.consumers.empty()) {
    return std::nullopt;
  }
  std::vector<int32_t> region_of(graph.num_ops(), -1);
  for (size_t r = 0; r < regions.size(); ++r) {
    for (OpId op : regions[r]) region_of[op] = static_cast<int32_t>(r);
  }
  std::vector<bool> joined(graph.num_ops(), false);
  std::vector<bool> merged(regions.size(), false);
  // Adds `op` and the region it is in; false when it cannot stream.
  auto join = [&](OpId op) {
    if (!windows[op]) return false;
    joined[op] = true;
    const int32_t r = region_of[op];
    if (r >= 0 && !merged[r]) {
      merged[r] = true;
      for (OpId other : regions[r]) joined[other] = true;
    }
    return true;
  };
  if (!join(tensor.producer)) return std::nullopt;
  for (OpId r : tensor.consumers) {
    if (!join(r)) return std::nullopt;
  }
  while (true) {
    const std::vector<bool> after = Reach(graph, joined, /*forward=*/true);
    const std::vector<bool> before = Reach(graph, joined, /*forward=*/false);
    bool grew = false;
    for (OpId op = 0; op < graph.num_ops(); ++op) {
      if (!after[op] || !before[op]) continue;
      if (!join(op)) return std::nullopt;
      grew = true;
    }
    if (!grew) break;
  }
  std::vector<std::vector<OpId>> result;
  for (size_t r = 0; r < regions.size(); ++r) {
    if (!merged[r]) result.push_back(regions[r]);
  }
  std::vector<OpId> region;
  for (OpId op = 0; op < graph.num_ops(); ++op) {
    if (joined[op]) region.push_back(op);
  }
  result.push_back(std::move(region));
  return result;
}

absl::StatusOr<onnx::ModelProto> ApplyRegionFusion(const onnx::ModelProto& model,
                                                   const Graph& graph, const MemoryModel& memory,
                                                   const std::vector<std::vector<OpId>>& regions) {
  const onnx::GraphProto& g = model.graph();
  const RowWindows windows = StreamableOps(graph, &g);
  std::vector<FusedNodeSpec> specs;
  for (const std::vector<OpId>& ops : regions) {
    ORDO_ASSIGN_OR_RETURN(RegionCost cost, CostOfRegion(graph, memory, windows, ops));
    FusedNodeSpec spec;
    for (OpId op : ops) {
      ORDO_ASSIGN_OR_RETURN(int32_t index, NodeOf(g, graph.op(op)));
      spec.nodes.push_back(index);
    }
    std::sort(spec.nodes.begin(), spec.nodes.end());
    for (TensorId t : cost.inputs) spec.inputs.push_back(graph.tensor(t).name);
    for (TensorId t : cost.outputs) spec.outputs.push_back(graph.tensor(t).name);
    spec.workspace_dtype = graph.tensor(cost.internal.front()).dtype;
    spec.workspace_elements = cost.workspace_elements;
    spec.macs = cost.macs;
    spec.description = "line-buffered fused region";
    onnx::AttributeProto layers;
    layers.set_name("layers");
    layers.set_type(onnx::AttributeProto::INT);
    layers.set_i(static_cast<int64_t>(ops.size()));
    onnx::AttributeProto caching;
    caching.set_name("caching");
    caching.set_type(onnx::AttributeProto::STRING);
    caching.set_s("line_buffer_region");
    spec.attributes = {layers, caching};
    specs.push_back(std::move(spec));
  }
  return ApplyFusedNodes(model, specs);
}

}  // namespace ordo
