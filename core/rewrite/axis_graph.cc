#include "core/rewrite/axis_graph.h"

#include <algorithm>

#include "absl/container/flat_hash_set.h"
#include "core/rewrite/op_semantics.h"

namespace ordo {
namespace {

bool IsActivation(const Tensor& t) {
  return t.kind == TensorKind::kActivation || t.kind == TensorKind::kInput;
}

}  // namespace

int32_t AxisGraph::Node(TensorId tensor, int32_t axis) {
  const int64_t key = static_cast<int64_t>(tensor) * 8 + axis;
  auto [it, inserted] = node_of_.emplace(key, static_cast<int32_t>(parent_.size()));
  if (inserted) parent_.push_back(it->second);
  return it->second;
}

int32_t AxisGraph::Find(int32_t node) const {
  while (parent_[node] != node) {
    parent_[node] = parent_[parent_[node]];
    node = parent_[node];
  }
  return node;
}

void AxisGraph::Union(int32_t a, int32_t b) {
  a = Find(a);
  b = Find(b);
  if (a != b) parent_[std::max(a, b)] = std::min(a, b);
}

// Joins axis i of `a` to axis i of `b` wherever neither broadcasts it.
void AxisGraph::ConnectAll(TensorId a, TensorId b, const Graph& graph, int32_t skip_axis) {
  const std::vector<int64_t>& da = graph.tensor(a).dims;
  const std::vector<int64_t>& db = graph.tensor(b).dims;
  if (da.size() != db.size()) return;
  for (int32_t i = 0; i < static_cast<int32_t>(da.size()) && i < 8; ++i) {
    if (i == skip_axis || da[i] != db[i]) continue;
    Union(Node(a, i), Node(b, i));
  }
}

void AxisGraph::KeepBatchAndChannelsEndSpatial(TensorId in, TensorId out, OpId op) {
  Union(Node(in, 0), Node(out, 0));
  Union(Node(in, 1), Node(out, 1));
  breakers_[2].push_back(op);
  breakers_[3].push_back(op);
}

AxisGraph AxisGraph::Build(const Graph& graph, absl::Span<const OpId> ops) {
  AxisGraph g;
  absl::flat_hash_set<TensorId> seen;
  for (OpId id : ops) {
    const Op& op = graph.op(id);
    std::vector<TensorId> ins;
    for (TensorId t : op.inputs) {
      if (IsActivation(graph.tensor(t))) ins.push_back(t);
    }
    for (TensorId t : ins) seen.insert(t);
    for (TensorId t : op.outputs) seen.insert(t);
    // Every axis of every region tensor is a node, connected or not.
    for (TensorId t : seen) {
      for (int32_t i = 0; i < static_cast<int32_t>(graph.tensor(t).dims.size()) && i < 8; ++i) {
        g.Node(t, i);
      }
    }
    if (op.outputs.empty() || ins.empty()) continue;
    const TensorId out = op.outputs[0];
    const OpKind kind = ClassifyOp(op);
    switch (kind) {
      case OpKind::kUnaryElementwise:
      case OpKind::kBinaryElementwise:
      case OpKind::kSum:
      case OpKind::kBatchNormalization:
        for (TensorId in : ins) g.ConnectAll(in, out, graph);
        break;
      case OpKind::kConv:
      case OpKind::kMaxPool:
      case OpKind::kAveragePool: {
        const TensorId in = ins[0];
        const std::vector<int64_t>& di = graph.tensor(in).dims;
        const std::vector<int64_t>& dout = graph.tensor(out).dims;
        if (di.size() != dout.size() || di.size() < 3) break;
        g.Union(g.Node(in, 0), g.Node(out, 0));
        bool per_channel = kind != OpKind::kConv;
        std::optional<std::vector<int64_t>> kernel = IntsAttribute(op, "kernel_shape");
        std::optional<std::vector<int64_t>> strides = IntsAttribute(op, "strides");
        if (kind == OpKind::kConv) {
          absl::StatusOr<ConvInfo> info = AnalyzeConv(op, InputDims(graph, op));
          if (info.ok()) {
            per_channel = info->depthwise();
            kernel = info->window.kernel;
            strides = info->window.strides;
          }
        }
        if (per_channel) g.Union(g.Node(in, 1), g.Node(out, 1));
        bool halo = false;
        for (size_t i = 2; i < di.size() && i < 8; ++i) {
          g.Union(g.Node(in, static_cast<int32_t>(i)), g.Node(out, static_cast<int32_t>(i)));
          if (kernel && i - 2 < kernel->size() && (*kernel)[i - 2] > 1) halo = true;
          if (strides && i - 2 < strides->size() && (*strides)[i - 2] > 1) halo = true;
        }
        if (halo) ++g.halo_edges_;
        break;
      }
      case OpKind::kResize: {
        // Resampled rows and columns do not map one to one (no halo bound
        // either), so H and W end here; N and C carry through when the
        // Resize treats channels independently (op_semantics.h).
        if (ChannelDependenceOf(graph, op) == ChannelDependence::kPerChannel) {
          g.KeepBatchAndChannelsEndSpatial(ins[0], out, id);
        } else {
          for (std::vector<OpId>& b : g.breakers_) b.push_back(id);
        }
        break;
      }
      case OpKind::kConcat: {
        absl::StatusOr<int64_t> axis =
            ConcatAxis(op, static_cast<int64_t>(graph.tensor(out).dims.size()));
        if (!axis.ok()) break;
        for (TensorId in : ins) g.ConnectAll(in, out, graph, static_cast<int32_t>(*axis));
        for (size_t i = 0; i < g.breakers_.size(); ++i) {
          if (static_cast<int64_t>(i) == *axis) g.breakers_[i].push_back(id);
        }
        break;
      }
      default:
        if (op.type == "Clip") {
          g.ConnectAll(ins[0], out, graph);
        } else if (op.type == "GlobalAveragePool" || op.type == "GlobalMaxPool") {
          g.KeepBatchAndChannelsEndSpatial(ins[0], out, id);
        } else {
          for (std::vector<OpId>& b : g.breakers_) b.push_back(id);
        }
    }
  }
  for (TensorId t : seen) {
    if (graph.tensor(t).dims.size() == 4) g.tensors_.push_back(t);
  }
  std::sort(g.tensors_.begin(), g.tensors_.end());
  return g;
}

int32_t AxisGraph::Component(TensorId tensor, int32_t axis) const {
  auto it = node_of_.find(static_cast<int64_t>(tensor) * 8 + axis);
  return it == node_of_.end() ? -1 : Find(it->second);
}

bool AxisGraph::Connected(TensorId a, int32_t axis_a, TensorId b, int32_t axis_b) const {
  const int32_t ca = Component(a, axis_a);
  return ca >= 0 && ca == Component(b, axis_b);
}

const std::vector<OpId>& AxisGraph::Breakers(int32_t axis) const {
  static const std::vector<OpId>* const kNone = new std::vector<OpId>();
  return axis >= 0 && axis < 4 ? breakers_[axis] : *kNone;
}

bool AxisGraph::SpatiallyTileable() const {
  if (tensors_.empty() || !breakers_[2].empty() || !breakers_[3].empty()) return false;
  for (int32_t axis : {2, 3}) {
    const int32_t c = Component(tensors_[0], axis);
    for (TensorId t : tensors_) {
      if (Component(t, axis) != c) return false;
    }
  }
  return true;
}

bool AxisGraph::ChannelConnected() const {
  if (tensors_.empty()) return false;
  const int32_t c = Component(tensors_[0], 1);
  for (TensorId t : tensors_) {
    if (Component(t, 1) != c) return false;
  }
  return true;
}

}  // namespace ordo
