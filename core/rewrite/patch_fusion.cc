#include "core/rewrite/patch_fusion.h"

#include <algorithm>
#include <functional>
#include <optional>
#include <queue>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/graph/onnx_domain.h"
#include "core/memory/simulator.h"
#include "core/rewrite/cost_model.h"
#include "core/rewrite/model_edit.h"
#include "core/rewrite/op_semantics.h"
#include "core/util/status_macros.h"

namespace ordo {
namespace {

// One layer of a chain: a fusible op, or a per-element composite (see
// AnalyzeComposite), with its data input and output, and how its output
// rows and columns read its input's (an identity window for per-element
// layers).
struct Layer {
  std::vector<OpId> ops;  // in model order; the last writes `out` and names the layer
  TensorId in = kNoId;
  TensorId out = kNoId;
  Window window;
  int64_t macs = 0;           // of every op
  bool pointwise = false;     // a 1x1 window: output pixel (y, x) reads input pixel (y, x) only
  bool channel_wise = false;  // each output channel reads one input channel
  // A composite's own intermediates (the outputs of every op but the last),
  // each of `out`'s dims and read by the composite only.
  std::vector<TensorId> internals;
  // Activations broadcast along H and W that every pixel reads whole (an
  // SE block's scale in Mul(h, scale)): held whole during the stage's step.
  std::vector<TensorId> sides;

  OpId writer() const { return ops.back(); }
};

bool IsPointwise(const Window& w) {
  for (int32_t axis = 0; axis < w.rank(); ++axis) {
    if (w.kernel[axis] != 1 || w.strides[axis] != 1 || w.pads_begin[axis] != 0 ||
        w.pads_end[axis] != 0) {
      return false;
    }
  }
  return true;
}

Window IdentityWindow() {
  return Window{{1, 1}, {1, 1}, {1, 1}, {0, 0}, {0, 0}, false};
}

bool IsPerElement(const Op& op) {
  switch (ClassifyOp(op)) {
    case OpKind::kUnaryElementwise:
    case OpKind::kBinaryElementwise:
    case OpKind::kBatchNormalization:
      return true;
    default:
      // Clip reads min / max as operands (opset 11+), which ClassifyOp's
      // unary kind does not allow; here they are weights like any other.
      return op.type == "Clip" && IsStandardOnnxDomain(op.domain);
  }
}

// For a per-element op of two activations, one of its output's dims (the
// chain's) and one broadcast along H and W (N x C x 1 x 1, N or C possibly
// 1: an SE block's Mul(h, scale), either order): the two, else nullopt.
std::optional<std::pair<TensorId, TensorId>> BroadcastSplit(const Graph& graph, const Op& op) {
  if (ClassifyOp(op) != OpKind::kBinaryElementwise || op.inputs.size() != 2 ||
      op.outputs.size() != 1) {
    return std::nullopt;
  }
  const std::vector<int64_t>& out = graph.tensor(op.outputs[0]).dims;
  if (out.size() != 4 || out[2] * out[3] == 1) return std::nullopt;
  for (int32_t data : {0, 1}) {
    const Tensor& chain = graph.tensor(op.inputs[data]);
    const Tensor& side = graph.tensor(op.inputs[1 - data]);
    const std::vector<int64_t>& d = side.dims;
    if (chain.dims == out && side.kind != TensorKind::kWeight && d.size() == 4 &&
        (d[0] == out[0] || d[0] == 1) && (d[1] == out[1] || d[1] == 1) && d[2] == 1 && d[3] == 1) {
      return std::make_pair(op.inputs[data], op.inputs[1 - data]);
    }
  }
  return std::nullopt;
}

// The op as a one-op layer of a chain (one activation input, the other
// operands weights or broadcast sides, see BroadcastSplit), or nullopt when
// it cannot be one.
std::optional<Layer> AnalyzeOneOpLayer(const Graph& graph, OpId id) {
  const Op& op = graph.op(id);
  if (op.outputs.size() != 1 || op.inputs.empty()) return std::nullopt;
  TensorId data = op.inputs[0];
  std::vector<TensorId> sides;
  if (std::optional<std::pair<TensorId, TensorId>> split = BroadcastSplit(graph, op)) {
    data = split->first;
    sides = {split->second};
  } else {
    for (size_t p = 1; p < op.inputs.size(); ++p) {
      if (graph.tensor(op.inputs[p]).kind != TensorKind::kWeight) return std::nullopt;
    }
  }
  const Tensor& in = graph.tensor(data);
  const Tensor& out = graph.tensor(op.outputs[0]);
  if (in.kind == TensorKind::kWeight || in.dims.size() != 4 || out.dims.size() != 4 ||
      in.dtype != out.dtype || in.dims[0] != out.dims[0]) {
    return std::nullopt;
  }
  Layer layer{{id}, data, op.outputs[0], IdentityWindow(), OpMacs(graph, op)};
  layer.sides = std::move(sides);
  layer.channel_wise = true;
  const OpKind kind = ClassifyOp(op);
  if (kind == OpKind::kConv) {
    absl::StatusOr<ConvInfo> conv = AnalyzeConv(op, InputDims(graph, op));
    if (!conv.ok() || conv->window.rank() != 2) return std::nullopt;
    layer.window = conv->window;
    layer.channel_wise = conv->group == conv->in_channels;
  } else if (kind == OpKind::kMaxPool || kind == OpKind::kAveragePool) {
    absl::StatusOr<Window> pool = AnalyzePool(op, in.dims);
    if (!pool.ok() || pool->rank() != 2) return std::nullopt;
    layer.window = *pool;
  } else if (!IsPerElement(op) || in.dims != out.dims) {
    return std::nullopt;
  }
  for (int32_t axis = 0; axis < 2; ++axis) {
    if (layer.window.OutputSize(axis, in.dims[2 + axis]) != out.dims[2 + axis]) return std::nullopt;
  }
  layer.pointwise = IsPointwise(layer.window);
  return layer;
}

// The most ops of a composite: AnalyzeLayer stays O(1) per op.
constexpr size_t kMaxCompositeOps = 8;

// Why the paths of a composite (`partial`: its ops so far, and the x one
// path found) do not meet at `root`, another path's end: when one end leads
// back to the other through one-op per-element ops, the first tensor on the
// way that a path had to stop at (a reader outside the composite, or a graph
// output); else the two ends.
std::string DifferentRootsReason(const Graph& graph, const Layer& partial, TensorId root) {
  for (auto [from, to] : {std::pair{root, partial.in}, std::pair{partial.in, root}}) {
    std::vector<TensorId> way;
    for (TensorId t = from; t != to && way.size() < kMaxCompositeOps;) {
      const OpId producer = graph.tensor(t).producer;
      if (producer == kNoId || !IsPerElement(graph.op(producer))) break;
      std::optional<Layer> side = AnalyzeOneOpLayer(graph, producer);
      if (!side || !side->sides.empty()) break;
      way.push_back(t);
      t = side->in;
      if (t == to) {
        way.push_back(to);
        break;
      }
    }
    if (way.empty() || way.back() != to) continue;
    for (TensorId on : way) {
      const Tensor& t = graph.tensor(on);
      if (on == to) break;
      if (t.is_graph_output) {
        return absl::StrCat("tensor \"", t.name, "\" of its composite is a graph output");
      }
      for (OpId reader : t.consumers) {
        if (std::find(partial.ops.begin(), partial.ops.end(), reader) == partial.ops.end()) {
          return absl::StrCat("tensor \"", t.name, "\" of its composite is read outside it, by \"",
                              graph.op(reader).name, "\"");
        }
      }
    }
  }
  return absl::StrCat("its operands come from different tensors \"", graph.tensor(partial.in).name,
                      "\" and \"", graph.tensor(root).name, "\"");
}

// The per-element composite written by op `id` (SiLU's x * Sigmoid(x),
// x * HardSigmoid(x), Mish's x * Tanh(Softplus(x))), or why `id` writes
// none: `id` is per-element with two or more distinct activation operands
// of its output's dims, and each operand is x or the end of a path of one-op
// per-element layers from x whose every tensor is read by the next op of the
// path only (and is not a graph output). x is where the paths meet, so it is
// read by two or more ops of the composite; whether only by them is for the
// chain to check (StageLayers, FindFusibleChains). The paths are disjoint
// (each tensor on them has one reader), so an op is in one composite at
// most. One distinct operand (x * x) is a composite of one op.
absl::StatusOr<Layer> AnalyzeComposite(const Graph& graph, OpId id) {
  const Op& op = graph.op(id);
  if (op.outputs.size() != 1 || !IsPerElement(op) || graph.tensor(op.outputs[0]).dims.size() != 4) {
    return absl::InvalidArgumentError(
        "it is neither a window layer, a per-element op of one activation, nor a per-element "
        "composite");
  }
  std::vector<TensorId> operands;
  for (TensorId t : op.inputs) {
    if (graph.tensor(t).kind == TensorKind::kWeight) continue;
    if (std::find(operands.begin(), operands.end(), t) == operands.end()) operands.push_back(t);
  }
  if (operands.empty()) return absl::InvalidArgumentError("it reads no activation");
  const Tensor& out = graph.tensor(op.outputs[0]);
  Layer layer{{}, kNoId, op.outputs[0], IdentityWindow(), 0, true, true};
  for (TensorId t : operands) {
    // Back from the operand while its tensor has one reader and a one-op
    // per-element producer; with one operand, the operand is x.
    while (operands.size() > 1) {
      const Tensor& tensor = graph.tensor(t);
      if (tensor.is_graph_output || tensor.consumers.size() != 1 || tensor.producer == kNoId) {
        break;
      }
      std::optional<Layer> side = AnalyzeOneOpLayer(graph, tensor.producer);
      if (!side || !side->sides.empty() || !IsPerElement(graph.op(tensor.producer))) break;
      if (layer.ops.size() + 1 >= kMaxCompositeOps) {
        return absl::InvalidArgumentError(
            absl::StrCat("a per-element composite has at most ", kMaxCompositeOps, " ops"));
      }
      layer.ops.push_back(tensor.producer);
      layer.internals.push_back(t);
      t = side->in;
    }
    const Tensor& x = graph.tensor(t);
    if (x.kind == TensorKind::kWeight || x.dims != out.dims || x.dtype != out.dtype) {
      return absl::InvalidArgumentError(absl::StrCat(
          "its operand \"", x.name, "\" is not an activation of its output's dims and type"));
    }
    if (layer.in != kNoId && layer.in != t) {
      layer.ops.push_back(id);
      return absl::InvalidArgumentError(DifferentRootsReason(graph, layer, t));
    }
    layer.in = t;
  }
  layer.ops.push_back(id);
  // OpId order is model order (graph.h), which runs every path before `id`.
  std::sort(layer.ops.begin(), layer.ops.end());
  for (OpId member : layer.ops) layer.macs += OpMacs(graph, graph.op(member));
  return layer;
}

// The op as a layer of a chain (a one-op layer, else the composite it
// writes), or why it cannot be one.
absl::StatusOr<Layer> AnalyzeLayer(const Graph& graph, OpId id) {
  if (std::optional<Layer> layer = AnalyzeOneOpLayer(graph, id)) return *std::move(layer);
  return AnalyzeComposite(graph, id);
}

// Whether every reader of `t` is one of `ops` (and it is not a graph
// output): the tensor can stay inside a stage whose next layer is `ops`.
bool ReadOnlyBy(const Tensor& t, absl::Span<const OpId> ops) {
  if (t.is_graph_output) return false;
  return std::all_of(t.consumers.begin(), t.consumers.end(), [&](OpId reader) {
    return std::find(ops.begin(), ops.end(), reader) != ops.end();
  });
}

// The layers of `ops` (each layer named by the op writing its output), checked
// to be one piece of a chain.
absl::StatusOr<std::vector<Layer>> StageLayers(const Graph& graph, absl::Span<const OpId> ops) {
  if (ops.size() < 2) return absl::InvalidArgumentError("a fused stage needs at least two ops");
  std::vector<Layer> layers;
  layers.reserve(ops.size());
  for (OpId id : ops) {
    if (id < 0 || id >= graph.num_ops()) {
      return absl::InvalidArgumentError(absl::StrCat("op id ", id, " is not in the graph"));
    }
    absl::StatusOr<Layer> layer = AnalyzeLayer(graph, id);
    if (!layer.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("op \"", graph.op(id).name,
                       "\" cannot be part of a fused stage: ", layer.status().message()));
    }
    if (!layers.empty()) {
      const Tensor& between = graph.tensor(layers.back().out);
      if (layer->in != layers.back().out || !ReadOnlyBy(between, layer->ops)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "op \"", graph.op(id).name, "\" does not follow \"",
            graph.op(layers.back().writer()).name, "\" alone: tensor \"", between.name,
            "\" must be read by it only", layer->ops.size() > 1 ? " (and its composite)" : ""));
      }
    }
    layers.push_back(*std::move(layer));
  }
  return layers;
}

// Whether layer u (not the last) may be recomputed per tap of its reader:
// pointwise, and neither it nor its reader a composite. A recomputed layer's
// output is counted as one value per tap (WalkPixelRun), which holds when
// each is computed and consumed at once; a composite run op by op would
// produce a whole pixel of u, or read u's value twice (Sigmoid, then Mul).
bool Recomputable(const std::vector<Layer>& layers, int32_t u) {
  return layers[u].pointwise && layers[u].internals.empty() && layers[u + 1].internals.empty();
}

// OK when `run` can run a stage of `layers`.
absl::Status CheckRun(const StageRun& run, const std::vector<Layer>& layers) {
  const int32_t n = static_cast<int32_t>(layers.size());
  if (run.band_rows < 1) {
    return absl::InvalidArgumentError(absl::StrCat("band_rows ", run.band_rows, " is below 1"));
  }
  if (run.cached_layer != -1 &&
      (run.caching != StageCaching::kPixel || run.cached_layer < 0 || run.cached_layer >= n - 1)) {
    return absl::InvalidArgumentError(absl::StrCat("cached_layer ", run.cached_layer,
                                                   " is not a layer before the last of a ", n,
                                                   "-layer pixel stage"));
  }
  if (run.recomputed_layer == -1) return absl::OkStatus();
  if (run.caching != StageCaching::kPixel || run.cached_layer != -1 || run.recomputed_layer < 0 ||
      run.recomputed_layer >= n - 1 || !Recomputable(layers, run.recomputed_layer)) {
    return absl::InvalidArgumentError(
        absl::StrCat("recomputed_layer ", run.recomputed_layer,
                     " is not a pointwise one-op layer before the last of a ", n,
                     "-layer pixel stage without a cached layer, read by a one-op layer"));
  }
  return absl::OkStatus();
}

int64_t Extent(std::pair<int64_t, int64_t> range) { return range.second - range.first; }

// Per layer, the columns of its output that some output of the stage
// reads (a strided window may skip the last ones).
std::vector<std::pair<int64_t, int64_t>> NeededColumns(const Graph& graph,
                                                       const std::vector<Layer>& layers) {
  const int32_t n = static_cast<int32_t>(layers.size());
  std::vector<std::pair<int64_t, int64_t>> needed(n);
  std::pair<int64_t, int64_t> range{0, graph.tensor(layers.back().out).dims[3]};
  for (int32_t l = n - 1; l >= 0; --l) {
    needed[l] = range;
    range = layers[l].window.InputRange(1, range.first, range.second,
                                        graph.tensor(layers[l].in).dims[3]);
  }
  return needed;
}

// The taps of `window` along `axis` that fall inside an input of `in_size`,
// summed over outputs [range.first, range.second): how many input values
// those outputs read (padding is not computed). O(outputs x kernel).
int64_t InBoundsTaps(const Window& window, int32_t axis, std::pair<int64_t, int64_t> range,
                     int64_t in_size) {
  int64_t taps = 0;
  for (int64_t o = range.first; o < range.second; ++o) {
    for (int64_t k = 0; k < window.kernel[axis]; ++k) {
      const int64_t i =
          o * window.strides[axis] - window.pads_begin[axis] + k * window.dilations[axis];
      taps += i >= 0 && i < in_size ? 1 : 0;
    }
  }
  return taps;
}

// The rows (axis 0) or columns (axis 1) of `layer`'s input that one row or
// column of its output reads: the ring a streamed input needs.
int64_t RingExtent(const Graph& graph, const Layer& layer, int32_t axis) {
  const int64_t in_size = graph.tensor(layer.in).dims[2 + axis];
  const int64_t out_size = graph.tensor(layer.out).dims[2 + axis];
  int64_t most = 0;
  for (int64_t i = 0; i < out_size; ++i) {
    most = std::max(most, Extent(layer.window.InputRange(axis, i, i + 1, in_size)));
  }
  return most;
}

// The workspace elements of a composite layer's own intermediates (its
// Sigmoid's output in SiLU) when the layer computes `rows` x `columns`
// pixels of its output at a time: a row with line buffers, one column of the
// rows a band computes with pixels (a composite is never recomputed, nor
// read by a recomputed layer: Recomputable). Each
// composite op reads the same element of x, so x needs no ring beyond a
// one-op per-element layer's; a runtime may run the ops element by element
// and hold a scalar, but one that runs its body op by op over that unit
// holds every intermediate over the unit. We count the latter, and every
// intermediate at once, though an op-by-op runtime holds at most two: never
// below what either runtime needs. 0 for a one-op layer.
int64_t InternalElements(const Graph& graph, const Layer& layer, int64_t rows, int64_t columns) {
  const std::vector<int64_t>& dims = graph.tensor(layer.out).dims;
  return static_cast<int64_t>(layer.internals.size()) * dims[0] * dims[1] * rows * columns;
}

// What a kPixel run holds and computes, from one walk over its bands.
struct PixelWalk {
  int64_t workspace_elements = 0;
  int64_t macs = 0;
};

// Rows [first, second) of a and b that both hold.
int64_t Overlap(std::pair<int64_t, int64_t> a, std::pair<int64_t, int64_t> b) {
  return std::max<int64_t>(0, std::min(a.second, b.second) - std::max(a.first, b.first));
}

// Walks the bands of `run` top to bottom. Per band, from the last layer back:
// a layer computes the rows of its output the band reads (its receptive
// field, over the columns any output reads), except the cached layer, which
// computes only the rows no earlier band computed; what a layer computes
// decides what its input's rows the band reads. The ring of an intermediate
// holds, at the worst band, the rows the band reads over the columns one
// column of its reader reads; the cached intermediate holds instead the rows
// that a neighbouring band also reads at full width (they live from the
// band that computes them to the last band that reads them) and only the
// rest in a column ring. Bands read monotone row ranges, so rows another
// band reads are exactly the ones the previous or the next band reads.
// A recomputed layer u computes, per band, one pixel for every in-bounds
// tap of every output pixel of u+1 the band computes; its input's ring is
// u+1's, and of u only the value being read is held.
// O(bands x layers x kernel x columns).
PixelWalk WalkPixelRun(const Graph& graph, const std::vector<Layer>& layers, const StageRun& run) {
  const int32_t n = static_cast<int32_t>(layers.size());
  const int64_t size = graph.tensor(layers.back().out).dims[2];
  const int64_t band = std::max(1, run.band_rows);
  const std::vector<std::pair<int64_t, int64_t>> columns = NeededColumns(graph, layers);
  const int32_t recomputed = run.recomputed_layer;
  // Every band computes the same columns, so the taps a recomputed layer
  // serves along W are one sum.
  const int64_t column_taps =
      recomputed < 0 ? 0
                     : InBoundsTaps(layers[recomputed + 1].window, 1, columns[recomputed + 1],
                                    graph.tensor(layers[recomputed].out).dims[3]);
  PixelWalk walk;
  // reads[b][l]: the rows of intermediate l (the output of layer l < n - 1)
  // that band b reads.
  std::vector<std::vector<std::pair<int64_t, int64_t>>> reads;
  int64_t cached_done = 0;  // rows of the cached intermediate computed so far
  std::vector<int64_t> most_rows(n, 0);  // per layer, the most rows a band computes
  for (int64_t position = 0; position < size; position += band) {
    std::vector<std::pair<int64_t, int64_t>> read(n - 1);
    std::pair<int64_t, int64_t> range{position, std::min(size, position + band)};
    std::pair<int64_t, int64_t> reader_rows;  // what layer l + 1 computes
    for (int32_t l = n - 1; l >= 0; --l) {
      if (l < n - 1) {
        read[l] = range;
        if (l == run.cached_layer) {
          range.first = std::min(range.second, std::max(range.first, cached_done));
          cached_done = std::max(cached_done, range.second);
        }
      }
      const std::vector<int64_t>& dims = graph.tensor(layers[l].out).dims;
      // MACs are proportional to output elements (cost_model.h).
      const int64_t pixel_macs = layers[l].macs / (dims[2] * dims[3]);
      if (l == recomputed) {
        const int64_t row_taps = InBoundsTaps(layers[l + 1].window, 0, reader_rows, dims[2]);
        walk.macs += pixel_macs * row_taps * column_taps;
      } else {
        walk.macs += pixel_macs * Extent(range) * Extent(columns[l]);
        most_rows[l] = std::max(most_rows[l], Extent(range));
      }
      reader_rows = range;
      range = layers[l].window.InputRange(0, range.first, range.second,
                                          graph.tensor(layers[l].in).dims[2]);
    }
    reads.push_back(std::move(read));
  }
  const size_t bands = reads.size();
  for (int32_t l = 0; l < n; ++l) {
    walk.workspace_elements +=
        InternalElements(graph, layers[l], l == recomputed ? 1 : most_rows[l], 1);
  }
  for (int32_t l = 0; l + 1 < n; ++l) {
    const std::vector<int64_t>& dims = graph.tensor(layers[l].out).dims;
    if (l == recomputed) {
      walk.workspace_elements += dims[0] * (layers[l + 1].channel_wise ? 1 : dims[1]);
      continue;
    }
    // The input of a recomputed layer serves its reader's window.
    const int64_t ring = RingExtent(graph, layers[l + 1 == recomputed ? l + 2 : l + 1], 1);
    int64_t most = 0;
    for (size_t b = 0; b < bands; ++b) {
      const int64_t rows = Extent(reads[b][l]);
      int64_t cells = rows * ring;
      if (l == run.cached_layer) {
        int64_t kept = 0;
        if (b > 0) kept += Overlap(reads[b][l], reads[b - 1][l]);
        if (b + 1 < bands) kept += Overlap(reads[b][l], reads[b + 1][l]);
        kept = std::min(rows, kept);
        cells = kept * Extent(columns[l]) + (rows - kept) * ring;
      }
      most = std::max(most, cells);
    }
    walk.workspace_elements += dims[0] * dims[1] * most;
  }
  return walk;
}

int64_t Elements(const Tensor& t) {
  int64_t n = 1;
  for (int64_t d : t.dims) n *= d;
  return n;
}

// Bytes per element of the stage's activations under the memory model's
// rules (the intermediates are never graph inputs or outputs).
int64_t ElementBytes(const Graph& graph, const MemoryModel& memory, TensorId intermediate) {
  const int64_t elements = Elements(graph.tensor(intermediate));
  return elements == 0 ? 0 : memory.tensors[intermediate].bytes / elements;
}

StageCost Cost(const Graph& graph, const MemoryModel& memory, const std::vector<Layer>& layers,
               const StageRun& run) {
  const int32_t n = static_cast<int32_t>(layers.size());
  StageCost cost;
  int64_t own_macs = 0;
  for (const Layer& layer : layers) own_macs += layer.macs;
  if (run.caching == StageCaching::kLineBuffer) {
    for (int32_t l = 0; l < n; ++l) {
      const std::vector<int64_t>& dims = graph.tensor(layers[l].out).dims;
      cost.workspace_elements += InternalElements(graph, layers[l], 1, dims[3]);
      if (l + 1 < n) {
        cost.workspace_elements +=
            dims[0] * dims[1] * RingExtent(graph, layers[l + 1], 0) * dims[3];
      }
    }
    cost.macs = own_macs;
  } else {
    const PixelWalk walk = WalkPixelRun(graph, layers, run);
    cost.workspace_elements = walk.workspace_elements;
    cost.macs = walk.macs;
  }
  cost.workspace_bytes = cost.workspace_elements * ElementBytes(graph, memory, layers[0].out);
  cost.extra_macs = cost.macs - own_macs;
  return cost;
}

// Bounds that keep FusionFront's work within O(L x kMaxStageLayers x runs)
// pieces per chain and kMaxFrontPeaks dynamic programs, whatever the model
// (a chain of a few hundred layers would otherwise cost minutes).
constexpr int32_t kMaxStageLayers = 64;
constexpr size_t kMaxFrontPeaks = 4096;

// One way to run ops [first, last] of a chain: a single layer unfused, or a
// fused stage.
struct Piece {
  int32_t first = 0;
  int32_t last = 0;
  bool fused = false;
  StageRun run;
  int64_t bytes = 0;  // its step's footprint: input + output (+ workspace)
  int64_t extra_macs = 0;
};

// The largest step of `layer` unfused: its ops run one by one (in place
// where the spec allows), so each step holds that op's operands and output.
int64_t LayerStepBytes(const MemoryModel& memory, const Layer& layer) {
  int64_t most = 0;
  for (OpId op : layer.ops) most = std::max(most, OpStepBytes(memory, op));
  return most;
}

// StageRuns(layers.size()) and, for stages of at most kMaxMixedStageLayers,
// pixel runs in bands of 1-4 rows recomputing each Recomputable layer but the
// last (what its reader's taps cost is decided by WalkPixelRun).
std::vector<StageRun> RunsOf(const std::vector<Layer>& layers) {
  const int32_t n = static_cast<int32_t>(layers.size());
  std::vector<StageRun> runs = StageRuns(n);
  if (n > kMaxMixedStageLayers) return runs;
  for (int32_t band : {1, 2, 3, 4}) {
    for (int32_t u = 0; u + 1 < n; ++u) {
      if (Recomputable(layers, u)) runs.push_back({StageCaching::kPixel, band, -1, u});
    }
  }
  return runs;
}

std::vector<Piece> PiecesOf(const Graph& graph, const MemoryModel& memory,
                            const std::vector<Layer>& chain) {
  const int32_t n = static_cast<int32_t>(chain.size());
  std::vector<Piece> pieces;
  for (int32_t first = 0; first < n; ++first) {
    // Unfused, a layer costs its step (in place where the spec allows).
    pieces.push_back({first, first, false, StageRun{}, LayerStepBytes(memory, chain[first]), 0});
    const int64_t in_bytes = memory.constant_bytes + memory.tensors[chain[first].in].bytes;
    // The stage's node reads every side operand of its layers whole.
    std::vector<TensorId> sides = chain[first].sides;
    int64_t side_bytes = 0;
    for (TensorId t : sides) side_bytes += memory.tensors[t].bytes;
    for (int32_t last = first + 1; last < std::min(n, first + kMaxStageLayers); ++last) {
      for (TensorId t : chain[last].sides) {
        if (std::find(sides.begin(), sides.end(), t) != sides.end()) continue;
        sides.push_back(t);
        side_bytes += memory.tensors[t].bytes;
      }
      const std::vector<Layer> stage(chain.begin() + first, chain.begin() + last + 1);
      const int64_t rows = graph.tensor(chain[last].out).dims[2];
      for (const StageRun& run : RunsOf(stage)) {
        if (run.band_rows > 1 && run.band_rows >= rows) continue;  // one band: no rows to share
        const StageCost cost = Cost(graph, memory, stage, run);
        pieces.push_back(
            {first, last, true, run,
             in_bytes + side_bytes + memory.tensors[chain[last].out].bytes + cost.workspace_bytes,
             cost.extra_macs});
      }
    }
  }
  return pieces;
}

// The lowest largest piece of any cover of a chain of `n` ops: no plan's
// chain peak is below it. O(pieces).
int64_t LowestCoverPeak(int32_t n, const std::vector<Piece>& pieces) {
  std::vector<int64_t> lowest(n + 1, INT64_MAX);
  lowest[0] = 0;
  for (const Piece& piece : pieces) {
    if (lowest[piece.first] == INT64_MAX) continue;
    lowest[piece.last + 1] =
        std::min(lowest[piece.last + 1], std::max(lowest[piece.first], piece.bytes));
  }
  return lowest[n];
}

// The candidate peaks FusionFront tries: every distinct piece cost from the
// lowest any plan reaches up, or kMaxFrontPeaks of them spread evenly over
// that range (the lowest and the highest kept) when there are more.
std::vector<int64_t> CandidatePeaks(std::vector<int64_t> costs, int64_t lowest) {
  std::sort(costs.begin(), costs.end());
  costs.erase(std::unique(costs.begin(), costs.end()), costs.end());
  costs.erase(costs.begin(), std::lower_bound(costs.begin(), costs.end(), lowest));
  const size_t count = costs.size();
  if (count <= kMaxFrontPeaks) return costs;
  std::vector<int64_t> sampled;
  sampled.reserve(kMaxFrontPeaks);
  for (size_t i = 0; i < kMaxFrontPeaks; ++i) {
    sampled.push_back(costs[i * (count - 1) / (kMaxFrontPeaks - 1)]);
  }
  return sampled;
}

// The fewest extra MACs that cover `chain` with pieces of at most `limit`
// bytes, and those pieces; nullopt when some op cannot run within it.
std::optional<std::pair<int64_t, std::vector<const Piece*>>> CheapestCover(
    int32_t n, const std::vector<Piece>& pieces, int64_t limit) {
  constexpr int64_t kInfinity = INT64_MAX;
  std::vector<int64_t> best(n + 1, kInfinity);
  std::vector<const Piece*> choice(n + 1, nullptr);
  best[0] = 0;
  // Pieces are ordered by first op, so every prefix is final before a piece
  // starting after it is read.
  for (const Piece& piece : pieces) {
    if (piece.bytes > limit || best[piece.first] == kInfinity) continue;
    const int64_t total = best[piece.first] + piece.extra_macs;
    if (total < best[piece.last + 1]) {
      best[piece.last + 1] = total;
      choice[piece.last + 1] = &piece;
    }
  }
  if (best[n] == kInfinity) return std::nullopt;
  std::vector<const Piece*> cover;
  for (int32_t end = n; end > 0; end = choice[end]->first) cover.push_back(choice[end]);
  std::reverse(cover.begin(), cover.end());
  return std::make_pair(best[n], std::move(cover));
}

}  // namespace

std::string StageRunName(const StageRun& run) {
  if (run.caching == StageCaching::kLineBuffer) return "line_buffer";
  std::string name = "pixel";
  if (run.band_rows > 1) absl::StrAppend(&name, ", ", run.band_rows, "-row bands");
  if (run.cached_layer >= 0) absl::StrAppend(&name, ", rows of layer ", run.cached_layer, " cached");
  if (run.recomputed_layer >= 0) {
    absl::StrAppend(&name, ", layer ", run.recomputed_layer, " recomputed per tap");
  }
  return name;
}

std::vector<StageRun> StageRuns(int32_t layers) {
  std::vector<StageRun> runs = {{StageCaching::kLineBuffer, 1}};
  for (int32_t band : {1, 2, 3, 4, 6, 8, 12, 16}) runs.push_back({StageCaching::kPixel, band});
  if (layers > kMaxMixedStageLayers) return runs;
  for (int32_t band : {1, 2, 3, 4}) {
    for (int32_t cached = 0; cached + 1 < layers; ++cached) {
      runs.push_back({StageCaching::kPixel, band, cached});
    }
  }
  return runs;
}

std::vector<StageRun> StageRuns(const Graph& graph, absl::Span<const OpId> ops) {
  absl::StatusOr<std::vector<Layer>> layers = StageLayers(graph, ops);
  if (!layers.ok()) return {};
  return RunsOf(*layers);
}

std::vector<std::vector<OpId>> FindFusibleChains(const Graph& graph) {
  const int32_t n = graph.num_ops();
  std::vector<std::optional<Layer>> layers(n);
  for (OpId id = 0; id < n; ++id) {
    if (absl::StatusOr<Layer> layer = AnalyzeLayer(graph, id); layer.ok()) {
      layers[id] = *std::move(layer);
    }
  }
  // An op inside a composite (SiLU's Sigmoid) is a layer of its own too; it
  // is left to its composite, so that no op is in two chains.
  for (OpId id = 0; id < n; ++id) {
    if (!layers[id]) continue;
    for (OpId member : layers[id]->ops) {
      if (member != id) layers[member].reset();
    }
  }
  // A layer follows the layer writing its input when only its ops read that
  // input. At most one layer does: x's readers are all in it, and a
  // composite's x has two or more readers, all in that composite.
  std::vector<OpId> next(n, kNoId);
  std::vector<bool> has_previous(n, false);
  for (OpId id = 0; id < n; ++id) {
    if (!layers[id]) continue;
    const Tensor& in = graph.tensor(layers[id]->in);
    const OpId previous = in.producer;
    if (previous == kNoId || !layers[previous] || !ReadOnlyBy(in, layers[id]->ops)) continue;
    next[previous] = id;
    has_previous[id] = true;
  }
  std::vector<std::vector<OpId>> chains;
  for (OpId id = 0; id < n; ++id) {
    if (!layers[id] || has_previous[id] || next[id] == kNoId) continue;
    std::vector<OpId> chain;
    for (OpId op = id; op != kNoId; op = next[op]) chain.push_back(op);
    chains.push_back(std::move(chain));
  }
  return chains;
}

absl::StatusOr<StageCost> CostOfStage(const Graph& graph, const MemoryModel& memory,
                                      absl::Span<const OpId> ops, const StageRun& run) {
  ORDO_ASSIGN_OR_RETURN(std::vector<Layer> layers, StageLayers(graph, ops));
  ORDO_RETURN_IF_ERROR(CheckRun(run, layers));
  return Cost(graph, memory, layers, run);
}

absl::StatusOr<std::vector<FusionPlan>> FusionFront(const Graph& graph, const MemoryModel& memory) {
  std::vector<std::vector<Layer>> chains;
  std::vector<std::vector<Piece>> pieces;
  std::vector<int64_t> costs;
  int64_t lowest = 0;
  for (const std::vector<OpId>& ops : FindFusibleChains(graph)) {
    ORDO_ASSIGN_OR_RETURN(std::vector<Layer> chain, StageLayers(graph, ops));
    pieces.push_back(PiecesOf(graph, memory, chain));
    for (const Piece& piece : pieces.back()) costs.push_back(piece.bytes);
    lowest = std::max(lowest, LowestCoverPeak(static_cast<int32_t>(chain.size()), pieces.back()));
    chains.push_back(std::move(chain));
  }
  std::vector<FusionPlan> front;
  for (int64_t limit : CandidatePeaks(std::move(costs), lowest)) {
    FusionPlan plan;
    bool feasible = true;
    for (size_t c = 0; c < chains.size() && feasible; ++c) {
      auto cover = CheapestCover(static_cast<int32_t>(chains[c].size()), pieces[c], limit);
      if (!cover) {
        feasible = false;
        break;
      }
      plan.extra_macs += cover->first;
      for (const Piece* piece : cover->second) {
        plan.chain_peak_bytes = std::max(plan.chain_peak_bytes, piece->bytes);
        if (!piece->fused) continue;
        FusedStage stage{{}, piece->run};
        for (int32_t l = piece->first; l <= piece->last; ++l)
          stage.ops.push_back(chains[c][l].writer());
        plan.stages.push_back(std::move(stage));
      }
    }
    if (!feasible) continue;
    // Limits rise, so a plan is dominated exactly when it costs no fewer
    // extra MACs than the last one kept.
    if (!front.empty() && plan.extra_macs >= front.back().extra_macs) continue;
    front.push_back(std::move(plan));
  }
  return front;
}

std::optional<Window> ChainLayerWindow(const Graph& graph, OpId id) {
  std::optional<Layer> layer = AnalyzeOneOpLayer(graph, id);
  // A side operand is not read through the window.
  if (!layer || !layer->sides.empty()) return std::nullopt;
  return layer->window;
}

std::string DescribeStage(const Graph& graph, const FusedStage& stage) {
  if (stage.ops.empty()) return "empty stage";
  // Composites count every op (a SiLU is two).
  size_t ops = stage.ops.size();
  if (absl::StatusOr<std::vector<Layer>> layers = StageLayers(graph, stage.ops); layers.ok()) {
    ops = 0;
    for (const Layer& layer : *layers) ops += layer.ops.size();
  }
  const std::string layers =
      ops == stage.ops.size() ? "" : absl::StrCat(stage.ops.size(), " layers, ");
  return absl::StrCat(graph.op(stage.ops.front()).name, "..", graph.op(stage.ops.back()).name, " (",
                      layers, ops, " ops) fused, ", StageRunName(stage.run));
}

namespace {

onnx::AttributeProto IntAttributeProto(const std::string& name, int64_t value) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::INT);
  a.set_i(value);
  return a;
}

onnx::AttributeProto StringAttributeProto(const std::string& name, absl::string_view value) {
  onnx::AttributeProto a;
  a.set_name(name);
  a.set_type(onnx::AttributeProto::STRING);
  a.set_s(std::string(value));
  return a;
}

// The fused node, its function and its workspace's shape for one spec.
struct EmittedStage {
  onnx::NodeProto node;
  onnx::FunctionProto function;
  onnx::ValueInfoProto workspace;
};

EmittedStage EmitStage(const onnx::ModelProto& model, const FusedNodeSpec& spec, NameScope& names,
                       const std::string& function_name) {
  const onnx::GraphProto& g = model.graph();
  const std::string workspace = names.Fresh(absl::StrCat(spec.outputs.front(), "_workspace"));
  EmittedStage emitted;
  onnx::FunctionProto& f = emitted.function;
  f.set_name(function_name);
  f.set_domain(std::string(kFusionDomain));
  f.set_doc_string(absl::StrCat("ordo ", spec.description,
                                "; the body computes what the stage's layers compute"));
  for (const onnx::OperatorSetIdProto& opset : model.opset_import()) {
    if (IsStandardOnnxDomain(opset.domain())) *f.add_opset_import() = opset;
  }
  // Formal inputs keep the actual names (a function has its own scope): the
  // activations first, then every other operand a body node reads from
  // outside the body.
  absl::flat_hash_set<std::string> produced;
  for (int32_t index : spec.nodes) {
    for (const std::string& out : g.node(index).output()) produced.insert(out);
  }
  absl::flat_hash_set<std::string> inputs;
  auto add_input = [&](const std::string& name) {
    if (!name.empty() && !produced.contains(name) && inputs.insert(name).second) f.add_input(name);
  };
  for (const std::string& name : spec.inputs) add_input(name);
  for (int32_t index : spec.nodes) {
    for (const std::string& name : g.node(index).input()) add_input(name);
    *f.add_node() = g.node(index);
  }
  for (const std::string& name : spec.outputs) f.add_output(name);
  f.add_output(workspace);
  const int32_t elem_type = OnnxElemType(spec.workspace_dtype);
  onnx::NodeProto* shape = f.add_node();
  shape->set_op_type("Constant");
  shape->add_output("workspace_shape");
  onnx::AttributeProto* value = shape->add_attribute();
  value->set_name("value");
  value->set_type(onnx::AttributeProto::TENSOR);
  value->mutable_t()->set_data_type(onnx::TensorProto::INT64);
  value->mutable_t()->add_dims(1);
  value->mutable_t()->add_int64_data(spec.workspace_elements);
  onnx::NodeProto* fill = f.add_node();
  fill->set_op_type("ConstantOfShape");
  fill->add_input("workspace_shape");
  fill->add_output(workspace);
  onnx::AttributeProto* zero = fill->add_attribute();
  zero->set_name("value");
  zero->set_type(onnx::AttributeProto::TENSOR);
  zero->mutable_t()->set_data_type(elem_type);
  zero->mutable_t()->add_dims(1);
  zero->mutable_t()->set_raw_data(std::string(ElementSize(spec.workspace_dtype), '\0'));

  onnx::NodeProto& node = emitted.node;
  node.set_name(names.Fresh(absl::StrCat(g.node(spec.nodes.front()).name(), "_fused")));
  node.set_op_type(function_name);
  node.set_domain(std::string(kFusionDomain));
  for (const std::string& name : f.input()) node.add_input(name);
  for (const std::string& name : spec.outputs) node.add_output(name);
  node.add_output(workspace);
  *node.add_attribute() = IntAttributeProto("macs", spec.macs);
  for (const onnx::AttributeProto& a : spec.attributes) *node.add_attribute() = a;
  emitted.workspace = DenseValueInfo(workspace, elem_type, {spec.workspace_elements});
  return emitted;
}

// `nodes` reordered so that every node comes after the producers of its
// inputs, otherwise in the given order (Kahn's algorithm, lowest position
// first). A fused node takes the place where all it reads exists.
std::vector<onnx::NodeProto> SortTopologically(std::vector<onnx::NodeProto> nodes) {
  const int32_t n = static_cast<int32_t>(nodes.size());
  absl::flat_hash_map<std::string, int32_t> producer;
  for (int32_t i = 0; i < n; ++i) {
    for (const std::string& out : nodes[i].output()) {
      if (!out.empty()) producer[out] = i;
    }
  }
  std::vector<int32_t> missing(n, 0);
  std::vector<std::vector<int32_t>> readers(n);
  for (int32_t i = 0; i < n; ++i) {
    absl::flat_hash_set<int32_t> from;
    for (const std::string& in : nodes[i].input()) {
      auto it = producer.find(in);
      if (it != producer.end() && it->second != i && from.insert(it->second).second) {
        readers[it->second].push_back(i);
        ++missing[i];
      }
    }
  }
  std::priority_queue<int32_t, std::vector<int32_t>, std::greater<>> ready;
  for (int32_t i = 0; i < n; ++i) {
    if (missing[i] == 0) ready.push(i);
  }
  std::vector<onnx::NodeProto> sorted;
  sorted.reserve(n);
  while (!ready.empty()) {
    const int32_t i = ready.top();
    ready.pop();
    for (int32_t r : readers[i]) {
      if (--missing[r] == 0) ready.push(r);
    }
    sorted.push_back(std::move(nodes[i]));
  }
  return sorted;  // a cycle (never from a convex stage) would drop nodes: checked by the caller
}

}  // namespace

absl::StatusOr<onnx::ModelProto> ApplyFusedNodes(const onnx::ModelProto& model,
                                                 absl::Span<const FusedNodeSpec> specs) {
  const onnx::GraphProto& g = model.graph();
  NameScope names(g);
  absl::flat_hash_set<std::string> function_names;
  for (const onnx::FunctionProto& f : model.functions()) function_names.insert(f.name());
  absl::flat_hash_set<int32_t> dropped;
  absl::flat_hash_set<std::string> stage_outputs;
  std::vector<EmittedStage> emitted;
  for (const FusedNodeSpec& spec : specs) {
    if (spec.nodes.empty() || spec.outputs.empty()) {
      return absl::InvalidArgumentError("a fused stage needs nodes and outputs");
    }
    for (int32_t index : spec.nodes) {
      if (index < 0 || index >= g.node_size() || !dropped.insert(index).second) {
        return absl::InvalidArgumentError(
            absl::StrCat("node ", index, " is not in the model or is fused twice"));
      }
    }
    for (const std::string& name : spec.outputs) stage_outputs.insert(name);
    std::string function_name;
    for (int32_t k = static_cast<int32_t>(function_names.size());; ++k) {
      function_name = absl::StrCat("FusedStage_", k);
      if (function_names.insert(function_name).second) break;
    }
    emitted.push_back(EmitStage(model, spec, names, function_name));
  }
  // Every fused node goes where its first body node was; the sort then moves
  // it after whatever it reads.
  absl::flat_hash_map<int32_t, size_t> first_node;
  for (size_t s = 0; s < specs.size(); ++s) {
    first_node[*std::min_element(specs[s].nodes.begin(), specs[s].nodes.end())] = s;
  }
  std::vector<onnx::NodeProto> nodes;
  absl::flat_hash_set<std::string> gone;
  for (int32_t i = 0; i < g.node_size(); ++i) {
    auto it = first_node.find(i);
    if (it != first_node.end()) nodes.push_back(emitted[it->second].node);
    if (!dropped.contains(i)) {
      nodes.push_back(g.node(i));
      continue;
    }
    // The intermediates of the stages are gone.
    for (const std::string& out : g.node(i).output()) {
      if (!stage_outputs.contains(out)) gone.insert(out);
    }
  }
  // A node the Graph does not show (a folded Shape) may read a stage's
  // intermediate by name; the fused node no longer writes it.
  for (const onnx::NodeProto& node : nodes) {
    for (const std::string& in : node.input()) {
      if (gone.contains(in)) {
        return absl::InvalidArgumentError(
            absl::StrCat("node \"", node.name(), "\" reads \"", in,
                         "\", which a fused stage keeps inside itself"));
      }
    }
  }
  for (const onnx::ValueInfoProto& output : g.output()) {
    if (gone.contains(output.name())) {
      return absl::InvalidArgumentError(
          absl::StrCat("graph output \"", output.name(), "\" is kept inside a fused stage"));
    }
  }
  const size_t count = nodes.size();
  nodes = SortTopologically(std::move(nodes));
  if (nodes.size() != count) {
    return absl::InvalidArgumentError("a fused stage would read its own output (not convex)");
  }
  onnx::ModelProto out = model;
  onnx::GraphProto* graph_out = out.mutable_graph();
  graph_out->clear_node();
  for (onnx::NodeProto& node : nodes) *graph_out->add_node() = std::move(node);
  auto* infos = graph_out->mutable_value_info();
  for (int i = infos->size() - 1; i >= 0; --i) {
    if (gone.contains(infos->Get(i).name())) infos->DeleteSubrange(i, 1);
  }
  for (EmittedStage& stage : emitted) {
    *out.add_functions() = std::move(stage.function);
    *graph_out->add_value_info() = std::move(stage.workspace);
  }
  if (!specs.empty()) {
    if (out.ir_version() < 8) out.set_ir_version(8);
    bool has_domain = false;
    for (const onnx::OperatorSetIdProto& opset : out.opset_import()) {
      has_domain = has_domain || opset.domain() == kFusionDomain;
    }
    if (!has_domain) {
      onnx::OperatorSetIdProto* opset = out.add_opset_import();
      opset->set_domain(std::string(kFusionDomain));
      opset->set_version(1);
    }
  }
  return out;
}

absl::StatusOr<FusionPlan> WithoutStagesFoldedNodesRead(const onnx::ModelProto& model,
                                                        const Graph& graph, FusionPlan plan) {
  const onnx::GraphProto& g = model.graph();
  std::vector<bool> shown(g.node_size(), false);
  for (const Op& op : graph.ops()) {
    // An op that matches no node leaves its node's reads counted: a stage
    // is dropped rather than a model emitted that reads a missing tensor.
    if (absl::StatusOr<int32_t> index = NodeOf(g, op); index.ok()) shown[*index] = true;
  }
  absl::flat_hash_set<std::string> read;
  for (int32_t i = 0; i < g.node_size(); ++i) {
    if (!shown[i]) read.insert(g.node(i).input().begin(), g.node(i).input().end());
  }
  if (read.empty()) return plan;
  std::vector<FusedStage> kept;
  for (FusedStage& stage : plan.stages) {
    ORDO_ASSIGN_OR_RETURN(std::vector<Layer> layers, StageLayers(graph, stage.ops));
    bool hides = false;
    for (const Layer& layer : layers) {
      for (OpId op : layer.ops) {
        for (TensorId t : graph.op(op).outputs) {
          hides = hides || (t != layers.back().out && read.contains(graph.tensor(t).name));
        }
      }
    }
    if (!hides) kept.push_back(std::move(stage));
  }
  plan.stages = std::move(kept);
  return plan;
}

absl::StatusOr<onnx::ModelProto> ApplyPatchFusion(const onnx::ModelProto& model,
                                                  const Graph& graph, const MemoryModel& memory,
                                                  const FusionPlan& plan) {
  const onnx::GraphProto& g = model.graph();
  std::vector<FusedNodeSpec> specs;
  for (const FusedStage& stage : plan.stages) {
    ORDO_ASSIGN_OR_RETURN(std::vector<Layer> layers, StageLayers(graph, stage.ops));
    ORDO_RETURN_IF_ERROR(CheckRun(stage.run, layers));
    FusedNodeSpec spec;
    for (const Layer& layer : layers) {
      for (OpId op : layer.ops) {
        ORDO_ASSIGN_OR_RETURN(int32_t index, NodeOf(g, graph.op(op)));
        if (g.node(index).output_size() != 1) {
          return absl::InvalidArgumentError(
              absl::StrCat("op \"", graph.op(op).name, "\": its node has other outputs"));
        }
        spec.nodes.push_back(index);
      }
    }
    // The body layer by layer, each composite's ops in op-id order: an order
    // that runs. (Not the file's order: the importer accepts files whose
    // nodes are not in run order and orders the ops itself.)
    const StageCost cost = Cost(graph, memory, layers, stage.run);
    spec.inputs = {graph.tensor(layers.front().in).name};
    spec.outputs = {graph.tensor(layers.back().out).name};
    spec.workspace_dtype = graph.tensor(layers.front().out).dtype;
    spec.workspace_elements = cost.workspace_elements;
    spec.macs = cost.macs;
    spec.description = absl::StrCat("patch-wise fused stage (", StageRunName(stage.run), ")");
    spec.attributes = {
        IntAttributeProto("layers", static_cast<int64_t>(layers.size())),
        StringAttributeProto(
            "caching", stage.run.caching == StageCaching::kLineBuffer ? "line_buffer" : "pixel"),
        IntAttributeProto("band_rows", stage.run.band_rows),
        IntAttributeProto("cached_layer", stage.run.cached_layer),
        IntAttributeProto("recomputed_layer", stage.run.recomputed_layer)};
    specs.push_back(std::move(spec));
  }
  return ApplyFusedNodes(model, specs);
}

}  // namespace ordo
