#include "core/rewrite/spatial_tiling.h"

#include <algorithm>
#include <array>
#include <functional>
#include <map>
#include <optional>
#include <queue>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/graph/onnx_domain.h"
#include "core/rewrite/cost_model.h"
#include "core/rewrite/model_edit.h"
#include "core/rewrite/op_semantics.h"
#include "core/util/status_macros.h"

namespace ordo {
namespace {

// Spatial axes of a region tensor (NCHW): 0 is H (tensor axis 2), 1 is W.
constexpr int kAxes = 2;

struct Range {
  int64_t begin = 0;
  int64_t end = 0;
  bool empty() const { return end <= begin; }
  int64_t size() const { return end - begin; }
  bool operator==(const Range& o) const { return begin == o.begin && end == o.end; }
  bool operator!=(const Range& o) const { return !(*this == o); }
};
using Box = std::array<Range, kAxes>;

Range Hull(const Range& a, const Range& b) {
  return {std::min(a.begin, b.begin), std::max(a.end, b.end)};
}

// How one operand position of an op relates to the op's output along one
// spatial axis.
enum class AxisMap : int8_t {
  kAbsent,  // the operand has no such axis (rank too small): read whole
  kWhole,   // broadcast (dim 1) or not spatial (weights): read whole
  kSame,    // element-wise: the output's range
  kWindow,  // sliding window: the receptive field of the output's range
};

struct OperandRole {
  std::array<AxisMap, kAxes> map = {AxisMap::kWhole, AxisMap::kWhole};
  // Index of the H / W axis in the operand's dims, or -1.
  std::array<int32_t, kAxes> dim_index = {-1, -1};
};

struct RegionOp {
  OpId id = kNoId;
  std::vector<OperandRole> operands;  // by input position
  std::optional<Window> window;       // Conv / pooling
};

struct Plan {
  std::vector<RegionOp> ops;      // ascending OpId: a topological order
  std::vector<TensorId> outputs;  // region outputs, ascending
  int32_t parts_h = 1;
  int32_t parts_w = 1;
  std::vector<int64_t> row_starts;  // SpatialTiling::row_starts
  HaloMode halo = HaloMode::kRecompute;
  int32_t tiles() const { return parts_h * parts_w; }
  // Per tile: the box each region-produced tensor is computed over (kCache:
  // only its new rows; absent when the tile computes none, and then the op
  // is not emitted in that tile).
  std::vector<absl::flat_hash_map<TensorId, Box>> computed;
  // Per tile, per region op, per input position: the box the op reads
  // (kCache: empty when the op is not emitted in that tile).
  std::vector<std::vector<std::vector<Box>>> reads;
  // Per tile, per region output (as `outputs`): the tile's part.
  std::vector<std::vector<Box>> parts;
};

std::string OpLabel(const Op& op) { return absl::StrCat(op.type, " \"", op.name, "\""); }

absl::Status Unimplemented(const Op& op, absl::string_view why) {
  return absl::UnimplementedError(absl::StrCat(OpLabel(op), ": cannot be tiled over H/W: ", why));
}

bool IsExtraUnaryType(absl::string_view t) {
  return t == "Abs" || t == "Neg" || t == "Exp" || t == "Log" || t == "Sqrt" || t == "Erf" ||
         t == "Reciprocal" || t == "Floor" || t == "Ceil";
}

bool IsPointwiseNaryType(absl::string_view t) {
  return t == "Add" || t == "Sub" || t == "Mul" || t == "Div" || t == "Sum" || t == "Max" ||
         t == "Min" || t == "Mean" || t == "PRelu" || t == "Pow";
}

// The full extent of `dims` along spatial axis `axis` given the role.
Range FullRange(const std::vector<int64_t>& dims, int32_t dim_index) {
  if (dim_index < 0) return {0, 1};
  return {0, dims[dim_index]};
}

// Roles of `op`'s operands, or why the op cannot be tiled.
absl::StatusOr<RegionOp> AnalyzeRegionOp(const Graph& graph, OpId id) {
  const Op& op = graph.op(id);
  RegionOp region_op;
  region_op.id = id;
  if (!IsStandardOnnxDomain(op.domain)) {
    return Unimplemented(op, absl::StrCat("domain \"", op.domain, "\" is not understood"));
  }
  if (op.outputs.size() != 1) return Unimplemented(op, "ops with several outputs are not tiled");
  if (op.inputs.empty()) return Unimplemented(op, "has no inputs");
  if (HasLegacySemantics(op)) return Unimplemented(op, "attributes of an opset before 7-9");
  const std::vector<int64_t>& out = graph.tensor(op.outputs[0]).dims;
  if (out.size() != 4) {
    return Unimplemented(op, absl::StrCat("output has rank ", out.size(), "; tiling needs NCHW"));
  }
  const std::vector<std::vector<int64_t>> in_dims = InputDims(graph, op);
  region_op.operands.resize(op.inputs.size());
  // Operand 0 as a 4-D tensor mapped by `map` along both axes.
  auto spatial_first = [&](AxisMap map) -> absl::Status {
    if (in_dims[0].size() != 4) {
      return Unimplemented(
          op, absl::StrCat("input has rank ", in_dims[0].size(), "; tiling needs NCHW"));
    }
    region_op.operands[0].map = {map, map};
    region_op.operands[0].dim_index = {2, 3};
    return absl::OkStatus();
  };
  const OpKind kind = ClassifyOp(op);
  const std::string& type = op.type;
  if (kind == OpKind::kConv || kind == OpKind::kMaxPool || kind == OpKind::kAveragePool) {
    ORDO_RETURN_IF_ERROR(spatial_first(AxisMap::kWindow));
    if (kind == OpKind::kConv) {
      ORDO_ASSIGN_OR_RETURN(ConvInfo info, AnalyzeConv(op, in_dims));
      region_op.window = std::move(info.window);
    } else {
      ORDO_ASSIGN_OR_RETURN(Window window, AnalyzePool(op, in_dims[0]));
      region_op.window = std::move(window);
    }
    if (region_op.window->rank() != kAxes) return Unimplemented(op, "only 2-D windows");
    // Other operands (W, B) keep their default: read whole.
    return region_op;
  }
  if (kind == OpKind::kUnaryElementwise || kind == OpKind::kBatchNormalization ||
      (IsExtraUnaryType(type) && op.inputs.size() == 1)) {
    ORDO_RETURN_IF_ERROR(spatial_first(AxisMap::kSame));
    return region_op;
  }
  if (type == "Clip") {
    // min / max must be compile-time values: the importer folds them into
    // weights.
    for (size_t i = 1; i < op.inputs.size(); ++i) {
      if (graph.tensor(op.inputs[i]).kind != TensorKind::kWeight) {
        return Unimplemented(op, "min / max are not constants");
      }
    }
    ORDO_RETURN_IF_ERROR(spatial_first(AxisMap::kSame));
    return region_op;
  }
  if (kind == OpKind::kConcat) {
    ORDO_ASSIGN_OR_RETURN(int64_t axis, ConcatAxis(op, 4));
    if (axis != 1) return Unimplemented(op, absl::StrCat("Concat on axis ", axis, ", not 1"));
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      if (in_dims[i].size() != 4 || in_dims[i][2] != out[2] || in_dims[i][3] != out[3]) {
        return Unimplemented(op, absl::StrCat("input ", i, " is not NCHW of the output's H, W"));
      }
      region_op.operands[i].map = {AxisMap::kSame, AxisMap::kSame};
      region_op.operands[i].dim_index = {2, 3};
    }
    return region_op;
  }
  if (IsPointwiseNaryType(type)) {
    // Numpy broadcasting aligns trailing axes: H and W are the operand's last
    // two. An operand either spans the output's extent or broadcasts (1).
    for (size_t i = 0; i < op.inputs.size(); ++i) {
      const std::vector<int64_t>& d = in_dims[i];
      const int32_t rank = static_cast<int32_t>(d.size());
      if (rank > 4) return Unimplemented(op, absl::StrCat("input ", i, " has rank > 4"));
      OperandRole& role = region_op.operands[i];
      for (int a = 0; a < kAxes; ++a) {
        const int32_t index = rank - kAxes + a;
        if (index < 0) {
          role.map[a] = AxisMap::kAbsent;
          continue;
        }
        role.dim_index[a] = index;
        if (d[index] == out[2 + a]) {
          role.map[a] = AxisMap::kSame;
        } else if (d[index] == 1) {
          role.map[a] = AxisMap::kWhole;
        } else {
          return Unimplemented(op, absl::StrCat("input ", i, " does not broadcast to the output"));
        }
      }
    }
    return region_op;
  }
  if (type == "GlobalAveragePool" || type == "GlobalMaxPool" || type == "Flatten" ||
      type == "Gemm" || type == "MatMul" || type == "Reshape" || type == "ReduceMean") {
    return Unimplemented(op, "it reduces or reshapes H/W");
  }
  if (kind == OpKind::kPad || kind == OpKind::kSlice || type == "Resize" || type == "Upsample" ||
      kind == OpKind::kSplit) {
    return Unimplemented(op, "it may move rows and columns (Pad/Slice/Split/Resize)");
  }
  return Unimplemented(op, "op type is not understood");
}

// Balanced parts of [0, size): part i of n.
Range PartOf(int64_t size, int32_t n, int32_t i) { return {size * i / n, size * (i + 1) / n}; }

// Slice `row` over H of a region output of `size` rows.
Range RowPartOf(const Plan& plan, int64_t size, int32_t row) {
  if (plan.row_starts.empty()) return PartOf(size, plan.parts_h, row);
  const size_t next = static_cast<size_t>(row) + 1;
  return {plan.row_starts[row], next < plan.row_starts.size() ? plan.row_starts[next] : size};
}

// The region's op ids, ascending, or INVALID_ARGUMENT.
absl::StatusOr<std::vector<OpId>> RegionOps(const Graph& graph, const SpatialTiling& tiling) {
  if (tiling.ops.empty()) return absl::InvalidArgumentError("spatial tiling: the region is empty");
  if (tiling.parts_h < 1 || tiling.parts_w < 1) {
    return absl::InvalidArgumentError(absl::StrCat("spatial tiling: parts ", tiling.parts_h, "x",
                                                   tiling.parts_w, " must be >= 1"));
  }
  if (!tiling.row_starts.empty()) {
    bool ascending = tiling.row_starts.front() == 0 &&
                     tiling.row_starts.size() == static_cast<size_t>(tiling.parts_h);
    for (size_t i = 1; i < tiling.row_starts.size(); ++i) {
      ascending = ascending && tiling.row_starts[i - 1] < tiling.row_starts[i];
    }
    if (!ascending) {
      return absl::InvalidArgumentError(absl::StrCat(
          "spatial tiling: row_starts [", absl::StrJoin(tiling.row_starts, ","),
          "] must rise strictly from 0 and hold parts_h = ", tiling.parts_h, " starts"));
    }
  }
  if (tiling.halo == HaloMode::kCache && tiling.parts_w != 1) {
    // Caching over W too would need halos of the tile to the left and of the
    // row of tiles above (corners included) live at once: not built.
    return absl::InvalidArgumentError(
        absl::StrCat("spatial tiling: halo caching tiles over H only; parts ", tiling.parts_h, "x",
                     tiling.parts_w, " has parts_w > 1 (use parts_w = 1 or HaloMode::kRecompute)"));
  }
  std::vector<OpId> ids;
  for (const std::string& name : tiling.ops) {
    std::optional<OpId> id = graph.FindOp(name);
    if (!id) {
      return absl::InvalidArgumentError(
          absl::StrCat("spatial tiling: no op named \"", name, "\" in the graph"));
    }
    ids.push_back(*id);
  }
  std::sort(ids.begin(), ids.end());
  ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
  return ids;
}

// INVALID_ARGUMENT when some path leaves the region and comes back: the
// tiles could then not run as one block. Forward search from the region's
// outside successors through outside ops only; O(ops + edges).
absl::Status CheckConvex(const Graph& graph, const std::vector<bool>& in_region,
                         absl::Span<const OpId> ops) {
  std::vector<bool> seen(graph.num_ops(), false);
  std::vector<OpId> stack;
  for (OpId id : ops) {
    for (OpId next : graph.Successors(id)) {
      if (!in_region[next] && !seen[next]) {
        seen[next] = true;
        stack.push_back(next);
      }
    }
  }
  while (!stack.empty()) {
    const OpId id = stack.back();
    stack.pop_back();
    for (OpId next : graph.Successors(id)) {
      if (in_region[next]) {
        return absl::InvalidArgumentError(absl::StrCat(
            "spatial tiling: the region is not convex: a path leaves it and re-enters at ",
            OpLabel(graph.op(next)), " through ", OpLabel(graph.op(id))));
      }
      if (!seen[next]) {
        seen[next] = true;
        stack.push_back(next);
      }
    }
  }
  return absl::OkStatus();
}

absl::Status NoInputRow(const Op& op, int32_t k, int32_t tiles, int32_t position) {
  return Unimplemented(op, absl::StrCat("tile ", k, " of ", tiles,
                                        " reads no row or "
                                        "column of input ",
                                        position, " (its window lies in the padding)"));
}

// The box operand `position` of `op` reads for output box `out`.
Box OperandBox(const Graph& graph, const RegionOp& op, int32_t position, const Box& out) {
  const Op& g_op = graph.op(op.id);
  const std::vector<int64_t>& dims = graph.tensor(g_op.inputs[position]).dims;
  const OperandRole& role = op.operands[position];
  Box box;
  for (int a = 0; a < kAxes; ++a) {
    switch (role.map[a]) {
      case AxisMap::kAbsent:
      case AxisMap::kWhole:
        box[a] = FullRange(dims, role.dim_index[a]);
        break;
      case AxisMap::kSame:
        box[a] = out[a];
        break;
      case AxisMap::kWindow: {
        auto [b, e] = op.window->InputRange(a, out[a].begin, out[a].end, dims[role.dim_index[a]]);
        box[a] = {b, e};
        break;
      }
    }
  }
  return box;
}

// HaloMode::kCache: fills plan.computed / reads / parts (plan.ops and
// outputs set). Columns do not depend on the tile (one tile spans the width):
// each tensor is computed over the hull of its readers' columns, found once.
// Rows: tiles in order, each backwards through the region like the
// recomputing plan, but an op computes only the rows from its output's
// frontier (the end of what earlier tiles computed) to the end of what this
// tile's readers need; the frontiers only move down because receptive fields
// grow with their output rows. O(tiles x (region ops + edges)).
absl::Status PlanCachedHalos(const Graph& graph, const std::vector<bool>& in_region, Plan& plan) {
  const int32_t n = static_cast<int32_t>(plan.ops.size());
  auto produced_inside = [&](TensorId t) {
    const OpId producer = graph.tensor(t).producer;
    return producer != kNoId && in_region[producer];
  };
  absl::flat_hash_map<TensorId, Range> columns;
  for (TensorId out : plan.outputs) columns[out] = {0, graph.tensor(out).dims[3]};
  for (int32_t i = n - 1; i >= 0; --i) {
    const Op& g_op = graph.op(plan.ops[i].id);
    const TensorId out = g_op.outputs[0];
    auto it = columns.find(out);
    if (it == columns.end()) {
      return absl::InternalError(absl::StrCat(OpLabel(g_op), ": output needed by no tile"));
    }
    const Box whole = {Range{0, graph.tensor(out).dims[2]}, it->second};
    for (int32_t p = 0; p < static_cast<int32_t>(g_op.inputs.size()); ++p) {
      if (!produced_inside(g_op.inputs[p])) continue;
      const Range read = OperandBox(graph, plan.ops[i], p, whole)[1];
      auto [c, inserted] = columns.try_emplace(g_op.inputs[p], read);
      if (!inserted) c->second = Hull(c->second, read);
    }
  }
  const int32_t tiles = plan.tiles();
  plan.computed.resize(tiles);
  plan.reads.resize(tiles);
  plan.parts.resize(tiles);
  absl::flat_hash_map<TensorId, int64_t> frontier;
  for (int32_t k = 0; k < tiles; ++k) {
    // Rows this tile's readers need of each region-produced tensor.
    absl::flat_hash_map<TensorId, Range> need;
    for (TensorId out : plan.outputs) {
      const std::vector<int64_t>& d = graph.tensor(out).dims;
      const Range part = RowPartOf(plan, d[2], k);
      plan.parts[k].push_back({part, Range{0, d[3]}});
      need[out] = part;
    }
    plan.reads[k].resize(n);
    for (int32_t i = n - 1; i >= 0; --i) {
      const RegionOp& op = plan.ops[i];
      const Op& g_op = graph.op(op.id);
      const TensorId out = g_op.outputs[0];
      auto wanted = need.find(out);
      if (wanted == need.end()) continue;  // no reader in this tile
      auto f = frontier.find(out);
      const int64_t begin = f == frontier.end() ? wanted->second.begin : f->second;
      const int64_t end = std::max(begin, wanted->second.end);
      frontier[out] = end;
      if (end == begin) continue;  // earlier tiles computed every row needed
      const Box box = {Range{begin, end}, columns.at(out)};
      plan.computed[k][out] = box;
      std::vector<Box>& reads = plan.reads[k][i];
      for (int32_t p = 0; p < static_cast<int32_t>(g_op.inputs.size()); ++p) {
        const Box read = OperandBox(graph, op, p, box);
        if (read[0].empty() || read[1].empty()) return NoInputRow(g_op, k, tiles, p);
        reads.push_back(read);
        if (!produced_inside(g_op.inputs[p])) continue;
        auto [it, inserted] = need.try_emplace(g_op.inputs[p], read[0]);
        if (!inserted) it->second = Hull(it->second, read[0]);
      }
    }
  }
  return absl::OkStatus();
}

// Roles, region outputs (tensors read outside, graph outputs, unread ones,
// and `extra_outputs`) and every tile's boxes.
absl::StatusOr<Plan> MakePlan(const Graph& graph, const SpatialTiling& tiling,
                              const absl::flat_hash_set<TensorId>& extra_outputs) {
  ORDO_ASSIGN_OR_RETURN(std::vector<OpId> ids, RegionOps(graph, tiling));
  std::vector<bool> in_region(graph.num_ops(), false);
  for (OpId id : ids) in_region[id] = true;
  ORDO_RETURN_IF_ERROR(CheckConvex(graph, in_region, ids));

  Plan plan;
  plan.parts_h = tiling.parts_h;
  plan.parts_w = tiling.parts_w;
  plan.row_starts = tiling.row_starts;
  plan.halo = tiling.halo;
  absl::flat_hash_map<OpId, int32_t> index_of;
  for (OpId id : ids) {
    ORDO_ASSIGN_OR_RETURN(RegionOp op, AnalyzeRegionOp(graph, id));
    index_of[id] = static_cast<int32_t>(plan.ops.size());
    plan.ops.push_back(std::move(op));
    const TensorId out = graph.op(id).outputs[0];
    const Tensor& t = graph.tensor(out);
    bool read_outside = t.is_graph_output || t.consumers.empty() || extra_outputs.contains(out);
    for (OpId c : t.consumers) read_outside = read_outside || !in_region[c];
    if (!read_outside) continue;
    if (t.dims[2] < tiling.parts_h || t.dims[3] < tiling.parts_w ||
        (!tiling.row_starts.empty() && t.dims[2] <= tiling.row_starts.back())) {
      return absl::InvalidArgumentError(absl::StrCat(
          "spatial tiling: region output \"", t.name, "\" [", absl::StrJoin(t.dims, ","),
          "] has fewer rows / columns than ", tiling.parts_h, "x", tiling.parts_w, " parts"));
    }
    plan.outputs.push_back(out);
  }
  if (plan.halo == HaloMode::kCache) {
    ORDO_RETURN_IF_ERROR(PlanCachedHalos(graph, in_region, plan));
    return plan;
  }

  // Backwards through the region, per tile: ops in descending id see every
  // reader of their output first.
  const int32_t tiles = plan.tiles();
  plan.computed.resize(tiles);
  plan.reads.resize(tiles);
  plan.parts.resize(tiles);
  for (int32_t k = 0; k < tiles; ++k) {
    const int32_t row = k / plan.parts_w;
    const int32_t col = k % plan.parts_w;
    absl::flat_hash_map<TensorId, Box>& computed = plan.computed[k];
    for (TensorId out : plan.outputs) {
      const std::vector<int64_t>& d = graph.tensor(out).dims;
      const Box part = {RowPartOf(plan, d[2], row), PartOf(d[3], plan.parts_w, col)};
      plan.parts[k].push_back(part);
      computed[out] = part;
    }
    plan.reads[k].resize(plan.ops.size());
    for (int32_t i = static_cast<int32_t>(plan.ops.size()) - 1; i >= 0; --i) {
      const RegionOp& op = plan.ops[i];
      const Op& g_op = graph.op(op.id);
      auto computed_out = computed.find(g_op.outputs[0]);
      if (computed_out == computed.end()) {
        return absl::InternalError(absl::StrCat(OpLabel(g_op), ": output needed by no tile"));
      }
      const Box out = computed_out->second;
      std::vector<Box>& reads = plan.reads[k][i];
      for (int32_t p = 0; p < static_cast<int32_t>(g_op.inputs.size()); ++p) {
        const Box box = OperandBox(graph, op, p, out);
        if (box[0].empty() || box[1].empty()) return NoInputRow(g_op, k, tiles, p);
        reads.push_back(box);
        const TensorId input = g_op.inputs[p];
        const OpId producer = graph.tensor(input).producer;
        if (producer == kNoId || !in_region[producer]) continue;
        auto [it, inserted] = computed.try_emplace(input, box);
        if (!inserted) it->second = {Hull(it->second[0], box[0]), Hull(it->second[1], box[1])};
      }
    }
  }
  return plan;
}

// ---------------------------------------------------------------------------
// Emitting the model.

// Sets each input of `copy` (a clone of `op`'s node) to read(p), where p is
// the input's position in the Graph op: ONNX positions may include omitted
// optional inputs (""), which the Graph drops, so p skips them.
absl::Status ReplaceInputs(
    const Op& op, onnx::NodeProto& copy,
    const std::function<absl::StatusOr<std::string>(int32_t position)>& read) {
  int32_t position = 0;
  for (int j = 0; j < copy.input_size(); ++j) {
    if (copy.input(j).empty()) continue;
    if (position >= static_cast<int32_t>(op.inputs.size())) {
      return absl::InvalidArgumentError(
          absl::StrCat(OpLabel(op), " has more inputs in the model than in the graph"));
    }
    ORDO_ASSIGN_OR_RETURN(std::string name, read(position));
    copy.set_input(j, name);
    ++position;
  }
  return absl::OkStatus();
}

class TilingEmitter {
 public:
  TilingEmitter(const onnx::ModelProto& model, const Graph& graph, const Plan& plan)
      : model_(model), graph_(graph), plan_(plan), names_(model.graph()), opset_(StandardOpset(model)) {
    const onnx::GraphProto& g = model.graph();
    auto note = [&](const onnx::ValueInfoProto& v) {
      if (v.type().has_tensor_type() && v.type().tensor_type().elem_type() != 0) {
        elem_types_[v.name()] = v.type().tensor_type().elem_type();
      }
    };
    for (const auto& v : g.input()) note(v);
    for (const auto& v : g.output()) note(v);
    for (const auto& v : g.value_info()) note(v);
    for (const RegionOp& op : plan_.ops) produced_.insert(graph_.op(op.id).outputs[0]);
  }

  // The block replacing the region: nodes, initializers, value_infos.
  absl::StatusOr<ModelEdit> Emit(absl::Span<const int32_t> node_of_op) {
    if (plan_.halo == HaloMode::kCache && plan_.tiles() > 1) return EmitCached(node_of_op);
    ModelEdit edit;
    const int32_t tiles = plan_.tiles();
    // Per region output: the pieces of the current row, and the rows.
    std::vector<std::vector<std::string>> row_pieces(plan_.outputs.size());
    std::vector<std::vector<std::string>> rows(plan_.outputs.size());
    for (int32_t k = 0; k < tiles; ++k) {
      // Name and box of each tensor in this tile; region inputs are read
      // from the original, whole.
      absl::flat_hash_map<TensorId, std::pair<std::string, Box>> local;
      std::map<std::pair<std::string, std::array<int64_t, 4>>, std::string> slices;
      for (size_t i = 0; i < plan_.ops.size(); ++i) {
        const RegionOp& op = plan_.ops[i];
        const Op& g_op = graph_.op(op.id);
        const onnx::NodeProto& node = model_.graph().node(node_of_op[i]);
        onnx::NodeProto copy = node;
        copy.set_name(tiles == 1 ? node.name()
                                 : names_.Fresh(absl::StrCat(node.name(), "_tile", k)));
        ORDO_RETURN_IF_ERROR(
            ReplaceInputs(g_op, copy, [&](int32_t position) -> absl::StatusOr<std::string> {
              return Read(g_op.inputs[position], plan_.reads[k][i][position], op.operands[position],
                          k, local, slices, edit);
            }));
        const TensorId out = g_op.outputs[0];
        auto computed_out = plan_.computed[k].find(out);
        if (computed_out == plan_.computed[k].end()) {
          return absl::InternalError(absl::StrCat(OpLabel(g_op), ": output needed by no tile"));
        }
        const Box& box = computed_out->second;
        if (op.window) {
          ORDO_RETURN_IF_ERROR(SetWindowPads(g_op, *op.window, k, i, box, copy));
        }
        const std::string out_name =
            tiles == 1 ? node.output(0) : names_.Fresh(absl::StrCat(node.output(0), "_tile", k));
        copy.set_output(0, out_name);
        local[out] = {out_name, box};
        if (tiles > 1) edit.value_infos.push_back(TileInfo(out, out_name, box));
        edit.nodes.push_back(std::move(copy));
      }
      if (tiles == 1) break;
      // This tile's part of every region output.
      for (size_t o = 0; o < plan_.outputs.size(); ++o) {
        const TensorId out = plan_.outputs[o];
        auto produced = local.find(out);
        if (produced == local.end()) {
          return absl::InternalError(
              absl::StrCat("region output \"", graph_.tensor(out).name, "\" was not produced"));
        }
        const auto& [name, box] = produced->second;
        const Box& part = plan_.parts[k][o];
        std::string piece = name;
        if (box != part) {
          piece = names_.Fresh(absl::StrCat(graph_.tensor(out).name, "_tile", k, "_part"));
          EmitSlice(name, box, part, {2, 3}, piece, edit);
          edit.value_infos.push_back(TileInfo(out, piece, part));
        }
        row_pieces[o].push_back(piece);
      }
      if (k % plan_.parts_w != plan_.parts_w - 1) continue;
      // A row of tiles is complete: concatenate it over W.
      const int32_t row = k / plan_.parts_w;
      for (size_t o = 0; o < plan_.outputs.size(); ++o) {
        const TensorId out = plan_.outputs[o];
        const std::string& full = graph_.tensor(out).name;
        if (plan_.parts_w == 1) {
          rows[o].push_back(row_pieces[o][0]);
        } else {
          const std::string name =
              plan_.parts_h == 1 ? full : names_.Fresh(absl::StrCat(full, "_row", row));
          EmitConcat(row_pieces[o], 3, name, full, edit);
          if (plan_.parts_h > 1) {
            const std::vector<int64_t>& d = graph_.tensor(out).dims;
            edit.value_infos.push_back(
                TileInfo(out, name, {RowPartOf(plan_, d[2], row), Range{0, d[3]}}));
          }
          rows[o].push_back(name);
        }
        row_pieces[o].clear();
      }
    }
    if (tiles > 1 && plan_.parts_h > 1) {
      for (size_t o = 0; o < plan_.outputs.size(); ++o) {
        const std::string& full = graph_.tensor(plan_.outputs[o]).name;
        EmitConcat(rows[o], 2, full, full, edit);
      }
    }
    return edit;
  }

 private:
  // Rows of a region-produced tensor one tile computed (kCache).
  struct Piece {
    std::string name;
    Box box;
    int32_t tile = 0;
  };

  // HaloMode::kCache: per tile, the ops with new rows, each reading region
  // inputs through Slices of the original and region-produced tensors
  // through Assemble; per region output a Concat over H of its pieces.
  absl::StatusOr<ModelEdit> EmitCached(absl::Span<const int32_t> node_of_op) {
    ModelEdit edit;
    const absl::flat_hash_map<TensorId, std::pair<std::string, Box>> no_local;
    absl::flat_hash_map<TensorId, std::vector<Piece>> pieces;  // top to bottom
    for (int32_t k = 0; k < plan_.tiles(); ++k) {
      std::map<std::pair<std::string, std::array<int64_t, 4>>, std::string> slices;
      std::map<std::pair<TensorId, std::array<int64_t, 4>>, std::string> assembled;
      for (size_t i = 0; i < plan_.ops.size(); ++i) {
        const RegionOp& op = plan_.ops[i];
        const Op& g_op = graph_.op(op.id);
        const TensorId out = g_op.outputs[0];
        auto computed_out = plan_.computed[k].find(out);
        if (computed_out == plan_.computed[k].end()) continue;  // no new rows here
        const Box& box = computed_out->second;
        const onnx::NodeProto& node = model_.graph().node(node_of_op[i]);
        onnx::NodeProto copy = node;
        copy.set_name(names_.Fresh(absl::StrCat(node.name(), "_tile", k)));
        ORDO_RETURN_IF_ERROR(
            ReplaceInputs(g_op, copy, [&](int32_t position) -> absl::StatusOr<std::string> {
              const TensorId input = g_op.inputs[position];
              const Box& want = plan_.reads[k][i][position];
              return produced_.contains(input)
                         ? Assemble(input, want, k, pieces[input], assembled, edit)
                         : Read(input, want, op.operands[position], k, no_local, slices, edit);
            }));
        if (op.window) {
          ORDO_RETURN_IF_ERROR(SetWindowPads(g_op, *op.window, k, i, box, copy));
        }
        const std::string out_name = names_.Fresh(absl::StrCat(node.output(0), "_tile", k));
        copy.set_output(0, out_name);
        pieces[out].push_back({out_name, box, k});
        edit.value_infos.push_back(TileInfo(out, out_name, box));
        edit.nodes.push_back(std::move(copy));
      }
    }
    for (TensorId out : plan_.outputs) {
      const std::string& full = graph_.tensor(out).name;
      std::vector<std::string> names;
      for (const Piece& piece : pieces[out]) names.push_back(piece.name);
      EmitConcat(names, 2, full, full, edit);
    }
    return edit;
  }

  static absl::Status NotComputed(const Tensor& t, const Box& want, int32_t k) {
    return absl::InternalError(absl::StrCat("tile ", k, " reads rows [", want[0].begin, ", ",
                                            want[0].end, ") x columns [", want[1].begin, ", ",
                                            want[1].end, ") of \"", t.name,
                                            "\", which it and earlier tiles did not compute"));
  }

  // Region-produced `input` over `want` in tile `k` (kCache): the rows of the
  // pieces computed so far (`have`, top to bottom; the last may be this
  // tile's) that `want` covers, each Sliced to them (and to want's columns)
  // when it holds more, Concatenated over H when there are several. Earlier
  // tiles' rows are the cached halo. Equal reads within a tile share nodes.
  absl::StatusOr<std::string> Assemble(
      TensorId input, const Box& want, int32_t k, const std::vector<Piece>& have,
      std::map<std::pair<TensorId, std::array<int64_t, 4>>, std::string>& assembled,
      ModelEdit& edit) {
    const Tensor& t = graph_.tensor(input);
    const std::array<int64_t, 4> key = {want[0].begin, want[0].end, want[1].begin, want[1].end};
    auto [it, inserted] = assembled.try_emplace({input, key}, "");
    if (!inserted) return it->second;
    std::vector<std::string> parts;
    int64_t row = want[0].begin;
    for (const Piece& piece : have) {
      const Range rows = {std::max(piece.box[0].begin, want[0].begin),
                          std::min(piece.box[0].end, want[0].end)};
      if (rows.empty()) continue;
      if (rows.begin != row || want[1].begin < piece.box[1].begin ||
          want[1].end > piece.box[1].end) {
        return NotComputed(t, want, k);
      }
      const Box sub = {rows, want[1]};
      std::string name = piece.name;
      if (sub != piece.box) {
        name = names_.Fresh(absl::StrCat(t.name, "_tile", k, piece.tile == k ? "_rows" : "_halo"));
        EmitSlice(piece.name, piece.box, sub, {2, 3}, name, edit);
        edit.value_infos.push_back(TileInfo(input, name, sub));
      }
      parts.push_back(std::move(name));
      row = rows.end;
    }
    if (row != want[0].end) return NotComputed(t, want, k);
    if (parts.size() == 1) {
      it->second = parts[0];
      return it->second;
    }
    it->second = names_.Fresh(absl::StrCat(t.name, "_tile", k, "_in"));
    EmitConcat(parts, 2, it->second, t.name, edit);
    edit.value_infos.push_back(TileInfo(input, it->second, want));
    return it->second;
  }

  // The name of `input` over `want` in tile `k`: the tile's own version (or
  // the original, for region inputs), through a Slice when that covers more.
  absl::StatusOr<std::string> Read(
      TensorId input, const Box& want, const OperandRole& role, int32_t k,
      const absl::flat_hash_map<TensorId, std::pair<std::string, Box>>& local,
      std::map<std::pair<std::string, std::array<int64_t, 4>>, std::string>& slices,
      ModelEdit& edit) {
    const Tensor& t = graph_.tensor(input);
    std::string source = t.name;
    Box have = {FullRange(t.dims, role.dim_index[0]), FullRange(t.dims, role.dim_index[1])};
    if (auto it = local.find(input); it != local.end()) {
      source = it->second.first;
      have = it->second.second;
    } else if (plan_.computed[k].contains(input)) {
      return absl::InternalError(absl::StrCat("tensor \"", t.name, "\" read before computed"));
    }
    if (have == want) return source;
    const std::array<int64_t, 4> key = {want[0].begin, want[0].end, want[1].begin, want[1].end};
    auto [it, inserted] = slices.try_emplace({source, key}, "");
    if (!inserted) return it->second;
    it->second = names_.Fresh(absl::StrCat(t.name, "_tile", k));
    EmitSlice(source, have, want, role.dim_index, it->second, edit);
    std::vector<int64_t> dims = t.dims;
    for (int a = 0; a < kAxes; ++a) {
      if (role.dim_index[a] >= 0) dims[role.dim_index[a]] = want[a].size();
    }
    edit.value_infos.push_back(DenseValueInfo(it->second, ElemType(input), dims));
    return it->second;
  }

  // Explicit pads for a window op computing `out` from the slice its input
  // was cut to: the original pad where the tile reaches the tensor's border
  // (exact also for ceil_mode and count_include_pad), else what the window
  // hangs over the border when the tile starts / ends in the padding.
  absl::Status SetWindowPads(const Op& op, const Window& window, int32_t k, size_t index,
                             const Box& out, onnx::NodeProto& node) {
    const Tensor& x = graph_.tensor(op.inputs[0]);
    const Tensor& y = graph_.tensor(op.outputs[0]);
    const Box& in = plan_.reads[k][index][0];
    std::vector<int64_t> pads(2 * kAxes);
    Window tile = window;
    for (int a = 0; a < kAxes; ++a) {
      const int64_t extent = (window.kernel[a] - 1) * window.dilations[a] + 1;
      const int64_t first = out[a].begin * window.strides[a] - window.pads_begin[a];
      const int64_t last_end = (out[a].end - 1) * window.strides[a] - window.pads_begin[a] + extent;
      tile.pads_begin[a] = out[a].begin == 0 ? window.pads_begin[a] : in[a].begin - first;
      tile.pads_end[a] = out[a].end == y.dims[2 + a] ? window.pads_end[a]
                                                     : std::max<int64_t>(0, last_end - in[a].end);
      if (tile.pads_begin[a] < 0 || tile.OutputSize(a, in[a].size()) != out[a].size()) {
        return Unimplemented(op, absl::StrCat("tile ", k, " cannot reproduce the window along ",
                                              a == 0 ? "H" : "W", " (input ", x.name, ")"));
      }
      pads[a] = tile.pads_begin[a];
      pads[a + kAxes] = tile.pads_end[a];
    }
    auto* attributes = node.mutable_attribute();
    for (int i = attributes->size() - 1; i >= 0; --i) {
      if (attributes->Get(i).name() == "pads" || attributes->Get(i).name() == "auto_pad") {
        attributes->DeleteSubrange(i, 1);
      }
    }
    onnx::AttributeProto* attribute = node.add_attribute();
    attribute->set_name("pads");
    attribute->set_type(onnx::AttributeProto::INTS);
    for (int64_t p : pads) attribute->add_ints(p);
    return absl::OkStatus();
  }

  void EmitSlice(const std::string& source, const Box& have, const Box& want,
                 const std::array<int32_t, kAxes>& dim_index, const std::string& name,
                 ModelEdit& edit) {
    std::vector<int64_t> starts, ends, axes;
    for (int a = 0; a < kAxes; ++a) {
      if (have[a] == want[a] || dim_index[a] < 0) continue;
      starts.push_back(want[a].begin - have[a].begin);
      ends.push_back(want[a].end - have[a].begin);
      axes.push_back(dim_index[a]);
    }
    onnx::NodeProto node;
    node.set_op_type("Slice");
    node.set_name(names_.Fresh(absl::StrCat(name, "_slice")));
    node.add_input(source);
    if (opset_ >= 10) {
      node.add_input(IntConstant(starts, edit));
      node.add_input(IntConstant(ends, edit));
      node.add_input(IntConstant(axes, edit));
    } else {
      for (auto [attr, values] :
           {std::pair{"starts", &starts}, std::pair{"ends", &ends}, std::pair{"axes", &axes}}) {
        onnx::AttributeProto* a = node.add_attribute();
        a->set_name(attr);
        a->set_type(onnx::AttributeProto::INTS);
        for (int64_t v : *values) a->add_ints(v);
      }
    }
    node.add_output(name);
    edit.nodes.push_back(std::move(node));
  }

  void EmitConcat(const std::vector<std::string>& pieces, int64_t axis, const std::string& name,
                  const std::string& base, ModelEdit& edit) {
    onnx::NodeProto node;
    node.set_op_type("Concat");
    node.set_name(names_.Fresh(absl::StrCat(base, axis == 3 ? "_concat_w" : "_concat_h")));
    for (const std::string& piece : pieces) node.add_input(piece);
    node.add_output(name);
    onnx::AttributeProto* a = node.add_attribute();
    a->set_name("axis");
    a->set_type(onnx::AttributeProto::INT);
    a->set_i(axis);
    edit.nodes.push_back(std::move(node));
  }

  // A 1-D int64 initializer with `values`, shared by equal Slices.
  std::string IntConstant(const std::vector<int64_t>& values, ModelEdit& edit) {
    auto [it, inserted] = int_constants_.try_emplace(values, "");
    if (!inserted) return it->second;
    it->second = names_.Fresh(absl::StrCat("tile_i64_", absl::StrJoin(values, "_")));
    onnx::TensorProto t;
    t.set_name(it->second);
    t.set_data_type(onnx::TensorProto::INT64);
    t.add_dims(static_cast<int64_t>(values.size()));
    for (int64_t v : values) t.add_int64_data(v);
    edit.initializers.push_back(std::move(t));
    return it->second;
  }

  int32_t ElemType(TensorId id) const {
    const Tensor& t = graph_.tensor(id);
    if (auto it = elem_types_.find(t.name); it != elem_types_.end()) return it->second;
    return OnnxElemType(t.dtype);
  }

  onnx::ValueInfoProto TileInfo(TensorId id, const std::string& name, const Box& box) const {
    std::vector<int64_t> dims = graph_.tensor(id).dims;
    dims[2] = box[0].size();
    dims[3] = box[1].size();
    return DenseValueInfo(name, ElemType(id), dims);
  }

  const onnx::ModelProto& model_;
  const Graph& graph_;
  const Plan& plan_;
  NameScope names_;
  const int64_t opset_;
  absl::flat_hash_map<std::string, int32_t> elem_types_;
  std::map<std::vector<int64_t>, std::string> int_constants_;
  absl::flat_hash_set<TensorId> produced_;  // outputs of region ops
};

// The model's nodes with the region's replaced by `block` at the place of
// the region's first node, then stably sorted (smallest file position first
// among the ready ones) so that nodes between region nodes that read the
// region's outputs move after the block, and constants the block reads that
// were defined after its first node move before it. O(nodes log nodes).
absl::StatusOr<std::vector<onnx::NodeProto>> SpliceBlock(const onnx::GraphProto& g,
                                                         const absl::flat_hash_set<int32_t>& region,
                                                         std::vector<onnx::NodeProto> block) {
  const int32_t n = g.node_size();
  int32_t first = n;
  for (int32_t i : region) first = std::min(first, i);
  // Units: file nodes outside the region keep their index; the block is
  // unit `first`.
  absl::flat_hash_map<std::string, int32_t> producer;
  for (int32_t i = 0; i < n; ++i) {
    const int32_t unit = region.contains(i) ? first : i;
    for (const std::string& out : g.node(i).output()) {
      if (!out.empty()) producer[out] = unit;
    }
  }
  std::vector<std::vector<int32_t>> successors(n);
  std::vector<int32_t> indegree(n, 0);
  std::vector<bool> is_unit(n, false);
  for (int32_t i = 0; i < n; ++i) is_unit[region.contains(i) ? first : i] = true;
  for (int32_t i = 0; i < n; ++i) {
    const int32_t unit = region.contains(i) ? first : i;
    absl::flat_hash_set<int32_t> deps;
    for (const std::string& in : g.node(i).input()) {
      auto it = producer.find(in);
      if (it != producer.end() && it->second != unit) deps.insert(it->second);
    }
    for (int32_t d : deps) {
      successors[d].push_back(unit);
      ++indegree[unit];
    }
  }
  std::priority_queue<int32_t, std::vector<int32_t>, std::greater<int32_t>> ready;
  for (int32_t u = 0; u < n; ++u) {
    if (is_unit[u] && indegree[u] == 0) ready.push(u);
  }
  std::vector<onnx::NodeProto> out;
  int32_t emitted = 0, units = 0;
  for (int32_t u = 0; u < n; ++u) units += is_unit[u] ? 1 : 0;
  while (!ready.empty()) {
    const int32_t u = ready.top();
    ready.pop();
    ++emitted;
    if (u == first) {
      for (onnx::NodeProto& node : block) out.push_back(std::move(node));
    } else {
      out.push_back(g.node(u));
    }
    for (int32_t s : successors[u]) {
      if (--indegree[s] == 0) ready.push(s);
    }
  }
  if (emitted != units) {
    return absl::InvalidArgumentError(
        "spatial tiling: the region is not convex in the model's node graph (a path through "
        "folded or constant nodes leaves and re-enters it)");
  }
  return out;
}

}  // namespace

absl::string_view HaloModeName(HaloMode mode) {
  return mode == HaloMode::kCache ? "cache" : "recompute";
}

absl::Status CheckSpatialTiling(const Graph& graph, const SpatialTiling& tiling) {
  return MakePlan(graph, tiling, {}).status();
}

absl::StatusOr<int64_t> SpatialTilingExtraMacs(const Graph& graph, const SpatialTiling& tiling) {
  ORDO_ASSIGN_OR_RETURN(Plan plan, MakePlan(graph, tiling, {}));
  if (plan.tiles() == 1) return 0;  // Apply keeps the region as it is
  int64_t extra = 0;
  for (const RegionOp& op : plan.ops) {
    const Op& g_op = graph.op(op.id);
    const TensorId out = g_op.outputs[0];
    const std::vector<int64_t>& d = graph.tensor(out).dims;
    const int64_t area = d[2] * d[3];
    if (area == 0) continue;
    // Every op a region holds costs a fixed number of MACs per output row
    // and column (cost_model.h), so the division is exact.
    const int64_t per_point = OpMacs(graph, g_op) / area;
    int64_t computed = 0;
    for (const auto& boxes : plan.computed) {
      if (auto it = boxes.find(out); it != boxes.end()) {
        computed += it->second[0].size() * it->second[1].size();
      }
    }
    extra += per_point * (computed - area);
  }
  return extra;
}

absl::StatusOr<onnx::ModelProto> ApplySpatialTiling(const onnx::ModelProto& model,
                                                    const Graph& graph,
                                                    const SpatialTiling& tiling) {
  const onnx::GraphProto& g = model.graph();
  ORDO_ASSIGN_OR_RETURN(std::vector<OpId> ids, RegionOps(graph, tiling));
  // Nodes of the file the Graph does not show (folded Shape of a region
  // tensor) keep the tensors they read alive as region outputs.
  std::vector<int32_t> node_of_op;
  absl::flat_hash_set<int32_t> region_nodes;
  for (OpId id : ids) {
    ORDO_ASSIGN_OR_RETURN(int32_t index, NodeOf(g, graph.op(id)));
    const onnx::NodeProto& node = g.node(index);
    if (node.output_size() != 1 || node.output(0) != graph.tensor(graph.op(id).outputs[0]).name) {
      return absl::InvalidArgumentError(
          absl::StrCat(OpLabel(graph.op(id)), ": outputs differ between graph and model"));
    }
    if (!region_nodes.insert(index).second) {
      return absl::InvalidArgumentError(
          absl::StrCat(OpLabel(graph.op(id)), ": two ops match the same node of the model"));
    }
    node_of_op.push_back(index);
  }
  absl::flat_hash_set<TensorId> extra_outputs;
  for (int32_t i = 0; i < g.node_size(); ++i) {
    if (region_nodes.contains(i)) continue;
    for (const std::string& in : g.node(i).input()) {
      std::optional<TensorId> t = graph.FindTensor(in);
      if (t) extra_outputs.insert(*t);
    }
  }
  for (const auto& v : g.output()) {
    if (std::optional<TensorId> t = graph.FindTensor(v.name())) extra_outputs.insert(*t);
  }
  ORDO_ASSIGN_OR_RETURN(Plan plan, MakePlan(graph, tiling, extra_outputs));

  TilingEmitter emitter(model, graph, plan);
  ORDO_ASSIGN_OR_RETURN(ModelEdit edit, emitter.Emit(node_of_op));
  ORDO_ASSIGN_OR_RETURN(std::vector<onnx::NodeProto> nodes,
                        SpliceBlock(g, region_nodes, std::move(edit.nodes)));

  onnx::ModelProto out = model;
  onnx::GraphProto* graph_out = out.mutable_graph();
  graph_out->clear_node();
  for (onnx::NodeProto& node : nodes) *graph_out->add_node() = std::move(node);
  for (onnx::TensorProto& t : edit.initializers) *graph_out->add_initializer() = std::move(t);
  // Tensors internal to the region are gone (unless a single tile kept
  // every name).
  absl::flat_hash_set<std::string> gone;
  if (plan.tiles() > 1) {
    absl::flat_hash_set<TensorId> kept(plan.outputs.begin(), plan.outputs.end());
    for (const RegionOp& op : plan.ops) {
      const TensorId t = graph.op(op.id).outputs[0];
      if (!kept.contains(t)) gone.insert(graph.tensor(t).name);
    }
  }
  auto* infos = graph_out->mutable_value_info();
  for (int i = infos->size() - 1; i >= 0; --i) {
    if (gone.contains(infos->Get(i).name())) infos->DeleteSubrange(i, 1);
  }
  for (onnx::ValueInfoProto& v : edit.value_infos) *graph_out->add_value_info() = std::move(v);
  return out;
}

}  // namespace ordo
