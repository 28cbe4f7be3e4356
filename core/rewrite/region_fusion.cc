#include "core/rewrite/region_fusion.h"

#include <algorithm>
#include <queue>
#include <string>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/graph/onnx_domain.h"
#include "core/rewrite/cost_model.h"
#include "core/rewrite/model_edit.h"
#include "core/rewrite/op_semantics.h"
#include "core/rewrite/patch_fusion.h"
#include "core/util/status_macros.h"

namespace ordo {
namespace {

Window Identity() {
  return Window{{1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, false};
}

// `window` with spatial axis `axis` (0 = H, 1 = W) reading `kernel`
// positions starting `pad_begin` before output position x x `stride`.
void SetAxis(Window& window, int32_t axis, int64_t kernel, int64_t stride, int64_t pad_begin,
             int64_t pad_end) {
  window.kernel[axis] = kernel;
  window.strides[axis] = stride;
  window.pads_begin[axis] = pad_begin;
  window.pads_end[axis] = pad_end;
}

std::vector<TensorId> ActivationInputs(const Graph& graph, const Op& op) {
  std::vector<TensorId> acts;
  for (TensorId t : op.inputs) {
    if (graph.tensor(t).kind != TensorKind::kWeight) acts.push_back(t);
  }
  return acts;
}

// Output row (column) y of a Pad reads input row y - (rows padded above);
// of a Slice input row start + step x y. The offsets and steps are operand
// values (or Pad's attribute before opset 11), read from `constants`;
// without them a Pad's window covers every shift of its size change, and a
// Slice cannot stream.
std::optional<Window> ShiftWindow(const Graph& graph, const Op& op,
                                  const ConstantIndex* constants) {
  const std::vector<int64_t>& in = graph.tensor(op.inputs[0]).dims;
  const std::vector<int64_t>& out = graph.tensor(op.outputs[0]).dims;
  if (in.size() != 4 || in[0] != out[0]) return std::nullopt;
  auto ints = [&](size_t input) -> std::optional<std::vector<int64_t>> {
    if (constants == nullptr || op.inputs.size() <= input) return std::nullopt;
    return constants->Ints(graph.tensor(op.inputs[input]).name);
  };
  Window window = Identity();
  if (op.type == "Pad") {
    const std::optional<std::string> mode = StringAttribute(op, "mode");
    if (mode && *mode != "constant") return std::nullopt;
    std::optional<std::vector<int64_t>> pads = IntsAttribute(op, "pads");
    if (!pads && op.inputs.size() <= 3) pads = ints(1);  // opset 11+, no axes operand
    for (int32_t axis = 0; axis < 2; ++axis) {
      if (pads && pads->size() == 8) {
        SetAxis(window, axis, 1, 1, (*pads)[2 + axis], 0);
        continue;
      }
      if (out[2 + axis] < in[2 + axis]) return std::nullopt;
      const int64_t grow = out[2 + axis] - in[2 + axis];
      SetAxis(window, axis, grow + 1, 1, grow, grow);
    }
    return window;
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
  for (size_t i = 0; i < axes.size(); ++i) {
    if (steps[i] <= 0) return std::nullopt;
    const int64_t axis = axes[i] < 0 ? axes[i] + 4 : axes[i];
    if (axis < 2 || axis > 3) continue;
    const int64_t start = std::clamp<int64_t>(
        (*starts)[i] < 0 ? (*starts)[i] + in[axis] : (*starts)[i], 0, in[axis]);
    SetAxis(window, static_cast<int32_t>(axis - 2), 1, steps[i], -start, 0);
  }
  return window;
}

// How one output row of `id` reads its activation inputs (one window for
// all of them), or nullopt when the op cannot stream.
std::optional<Window> StreamWindow(const Graph& graph, OpId id, const ConstantIndex* constants) {
  const Op& op = graph.op(id);
  if (!IsStandardOnnxDomain(op.domain) || op.outputs.size() != 1 || op.inputs.empty()) return std::nullopt;
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
              const StreamWindows& windows, const std::vector<bool>& internal)
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

  // Produces every row of the region, each time the next row of the op
  // latest in `order` (producers before readers) that has the input rows
  // it reads: readers run as soon as they can, so rows are dropped as
  // early as they can be, and producers run only when nothing after them
  // can.
  void RunReadersFirst(absl::Span<const OpId> order) {
    // Ready ops by position in `order`; an op becomes ready only when it or
    // a producer of its inputs produces a row.
    std::vector<int32_t> position(graph_.num_ops(), -1);
    for (size_t i = 0; i < order.size(); ++i) position[order[i]] = static_cast<int32_t>(i);
    std::vector<bool> queued(graph_.num_ops(), false);
    std::priority_queue<int32_t> ready;
    auto offer = [&](OpId op) {
      if (!queued[op] && Ready(op)) {
        queued[op] = true;
        ready.push(position[op]);
      }
    };
    for (OpId op : order) offer(op);
    while (!ready.empty()) {
      const OpId op = order[ready.top()];
      ready.pop();
      queued[op] = false;
      Consume(op);
      offer(op);
      for (OpId r : graph_.tensor(graph_.op(op).outputs[0]).consumers) {
        if (in_region_[r]) offer(r);
      }
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
    Consume(op);
  }

  // Whether `op` has rows left and its inputs hold the rows its next reads.
  bool Ready(OpId op) const {
    const Op& o = graph_.op(op);
    const int64_t y = produced_[o.outputs[0]];
    if (y >= Rows(o.outputs[0])) return false;
    for (TensorId t : o.inputs) {
      if (FromRegion(t) && produced_[t] < windows_[op]->InputRange(0, y, y + 1, Rows(t)).second) {
        return false;
      }
    }
    return true;
  }

  // Produces the next row of `op`, whose input rows are there.
  void Consume(OpId op) {
    const Op& o = graph_.op(op);
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
  const StreamWindows& windows_;
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

// The region's ops, producers before readers (Kahn's order over the edges
// inside the region).
std::vector<OpId> RegionOrder(const Graph& graph, const std::vector<bool>& in_region,
                              absl::Span<const OpId> ops) {
  // Counted along the same consumer lists the loop below walks, so that an
  // op reading one tensor twice (Mul(x, x)) is released.
  std::vector<int32_t> waiting(graph.num_ops(), 0);
  for (OpId op : ops) {
    for (TensorId t : graph.op(op).outputs) {
      for (OpId r : graph.tensor(t).consumers) {
        if (in_region[r]) ++waiting[r];
      }
    }
  }
  std::vector<OpId> order;
  for (OpId op : ops) {
    if (waiting[op] == 0) order.push_back(op);
  }
  for (size_t i = 0; i < order.size(); ++i) {
    for (TensorId t : graph.op(order[i]).outputs) {
      for (OpId r : graph.tensor(t).consumers) {
        if (in_region[r] && --waiting[r] == 0) order.push_back(r);
      }
    }
  }
  return order;
}

using Columns = std::pair<int64_t, int64_t>;  // [begin, end); empty when begin >= end

Columns Hull(const Columns& a, const Columns& b) {
  if (a.first >= a.second) return b;
  if (b.first >= b.second) return a;
  return {std::min(a.first, b.first), std::max(a.second, b.second)};
}

// What running the region in `strips` column strips costs on top of its
// rows: each strip s produces columns [s W / S, (s + 1) W / S) of every
// region output (of width W), and of every other tensor the region
// computes the columns those read (their halos), recomputed by every strip
// that reads them. Per internal tensor the widest strip's columns; the
// MACs of the recomputed columns.
struct StripCost {
  std::vector<int64_t> columns;  // per tensor, the widest strip's
  int64_t extra_macs = 0;
};

StripCost CostOfStrips(const Graph& graph, const StreamWindows& windows,
                       const std::vector<bool>& in_region, absl::Span<const OpId> order,
                       const std::vector<bool>& is_output, int32_t strips) {
  StripCost cost;
  cost.columns.assign(graph.num_tensors(), 0);
  std::vector<int64_t> computed(graph.num_ops(), 0);  // columns over all strips
  std::vector<Columns> need(graph.num_tensors());
  auto width = [&](TensorId t) { return graph.tensor(t).dims[3]; };
  for (int32_t s = 0; s < strips; ++s) {
    for (OpId op : order) {
      const TensorId out = graph.op(op).outputs[0];
      need[out] = is_output[out] ? Columns{s * width(out) / strips, (s + 1) * width(out) / strips}
                                 : Columns{0, 0};
    }
    for (auto it = order.rbegin(); it != order.rend(); ++it) {
      const Op& op = graph.op(*it);
      const Columns& mine = need[op.outputs[0]];
      computed[*it] += std::max<int64_t>(0, mine.second - mine.first);
      cost.columns[op.outputs[0]] =
          std::max(cost.columns[op.outputs[0]], std::max<int64_t>(0, mine.second - mine.first));
      for (TensorId t : op.inputs) {
        const OpId p = graph.tensor(t).producer;
        if (p == kNoId || !in_region[p]) continue;
        need[t] = Hull(need[t], windows[*it]->InputRange(1, mine.first, mine.second, width(t)));
      }
    }
  }
  // Columns no strip reads (a stride-2 window's last one) are not computed
  // at all; like a chain stage, a region claims no MACs below its layers'.
  for (OpId op : order) {
    const int64_t w = width(graph.op(op).outputs[0]);
    if (w <= 0 || computed[op] <= w) continue;
    const int64_t macs = OpMacs(graph, graph.op(op));
    cost.extra_macs += static_cast<int64_t>(static_cast<double>(macs) *
                                            static_cast<double>(computed[op] - w) /
                                            static_cast<double>(w));
  }
  return cost;
}

}  // namespace

StreamWindows StreamableOps(const Graph& graph, const onnx::GraphProto* constants) {
  std::optional<ConstantIndex> index;
  if (constants != nullptr) index.emplace(*constants);
  StreamWindows windows(graph.num_ops());
  for (OpId id = 0; id < graph.num_ops(); ++id) {
    windows[id] = StreamWindow(graph, id, index ? &*index : nullptr);
  }
  return windows;
}

absl::StatusOr<RegionCost> CostOfRegion(const Graph& graph, const MemoryModel& memory,
                                        const StreamWindows& windows, absl::Span<const OpId> ops,
                                        int32_t strips) {
  ORDO_ASSIGN_OR_RETURN(std::vector<RegionCost> costs,
                        CostOfRegionInStrips(graph, memory, windows, ops, {strips}));
  return std::move(costs.front());
}

absl::StatusOr<std::vector<RegionCost>> CostOfRegionInStrips(const Graph& graph,
                                                             const MemoryModel& memory,
                                                             const StreamWindows& windows,
                                                             absl::Span<const OpId> ops,
                                                             absl::Span<const int32_t> strip_counts) {
  for (int32_t strips : strip_counts) {
    if (strips < 1) return absl::InvalidArgumentError("a region runs in at least one strip");
  }
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
  const std::vector<OpId> order = RegionOrder(graph, in_region, ops);
  RowStreamer in_proportion(graph, in_region, windows, internal);
  in_proportion.Run(cost.outputs);
  RowStreamer readers_first(graph, in_region, windows, internal);
  readers_first.RunReadersFirst(order);
  std::vector<bool> is_output(graph.num_tensors(), false);
  for (TensorId t : cost.outputs) is_output[t] = true;
  cost.step_bytes = memory.constant_bytes;
  for (TensorId t : cost.inputs) cost.step_bytes += memory.tensors[t].bytes;
  for (TensorId t : cost.outputs) cost.step_bytes += memory.tensors[t].bytes;
  std::vector<RegionCost> costs;
  for (int32_t strips : strip_counts) {
    RegionCost in_strips = cost;
    in_strips.strips = strips;
    std::vector<int64_t> columns;  // per tensor; whole rows in one strip
    if (strips > 1) {
      StripCost strip = CostOfStrips(graph, windows, in_region, order, is_output, strips);
      columns = std::move(strip.columns);
      in_strips.extra_macs = strip.extra_macs;
      in_strips.macs += strip.extra_macs;
    }
    // The rings of one row order; the cheaper order is the region's.
    auto rings = [&](const RowStreamer& streamer, RegionCost& into) {
      for (TensorId t : into.internal) {
        const std::vector<int64_t>& d = graph.tensor(t).dims;
        const int64_t rows = std::max<int64_t>(1, streamer.ring_rows(t));
        const int64_t cols = columns.empty() ? d[3] : std::max<int64_t>(1, columns[t]);
        into.ring_rows.push_back(rows);
        into.ring_columns.push_back(cols);
        into.workspace_elements += d[0] * d[1] * rows * cols;
        into.workspace_bytes +=
            d[2] * d[3] == 0 ? 0 : memory.tensors[t].bytes * rows * cols / (d[2] * d[3]);
      }
      into.step_bytes += into.workspace_bytes;
    };
    RegionCost other = in_strips;
    rings(in_proportion, in_strips);
    rings(readers_first, other);
    if (other.workspace_bytes < in_strips.workspace_bytes) {
      in_strips = std::move(other);
      in_strips.row_order = RowOrder::kReadersFirst;
    }
    costs.push_back(std::move(in_strips));
  }
  return costs;
}

std::optional<std::vector<std::vector<OpId>>> InternalizeTensor(
    const Graph& graph, const StreamWindows& windows,
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
                                                   const std::vector<std::vector<OpId>>& regions,
                                                   absl::Span<const int32_t> strips) {
  if (!strips.empty() && strips.size() != regions.size()) {
    return absl::InvalidArgumentError("one strip count per region, or none");
  }
  const onnx::GraphProto& g = model.graph();
  const StreamWindows windows = StreamableOps(graph, &g);
  std::vector<FusedNodeSpec> specs;
  for (size_t r = 0; r < regions.size(); ++r) {
    const std::vector<OpId>& ops = regions[r];
    ORDO_ASSIGN_OR_RETURN(RegionCost cost, CostOfRegion(graph, memory, windows, ops,
                                                        strips.empty() ? 1 : strips[r]));
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
    spec.description = cost.strips == 1 ? "line-buffered fused region"
                                        : absl::StrCat("line-buffered fused region in ",
                                                       cost.strips, " column strips");
    onnx::AttributeProto layers;
    layers.set_name("layers");
    layers.set_type(onnx::AttributeProto::INT);
    layers.set_i(static_cast<int64_t>(ops.size()));
    onnx::AttributeProto caching;
    caching.set_name("caching");
    caching.set_type(onnx::AttributeProto::STRING);
    caching.set_s("line_buffer_region");
    onnx::AttributeProto row_order;
    row_order.set_name("row_order");
    row_order.set_type(onnx::AttributeProto::STRING);
    row_order.set_s(cost.row_order == RowOrder::kReadersFirst ? "readers_first"
                                                              : "outputs_in_proportion");
    onnx::AttributeProto column_strips;
    column_strips.set_name("column_strips");
    column_strips.set_type(onnx::AttributeProto::INT);
    column_strips.set_i(cost.strips);
    spec.attributes = {layers, caching, row_order, column_strips};
    specs.push_back(std::move(spec));
  }
  return ApplyFusedNodes(model, specs);
}

}  // namespace ordo
