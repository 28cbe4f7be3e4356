#include "core/rewrite/early_subsample.h"

#include <algorithm>
#include <array>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/graph/onnx_domain.h"
#include "core/rewrite/model_edit.h"

namespace ordo {
namespace {

const onnx::AttributeProto* FindAttribute(const onnx::NodeProto& node, const std::string& name) {
  for (const onnx::AttributeProto& a : node.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

std::optional<std::vector<int64_t>> Ints(const onnx::NodeProto& node, const std::string& name) {
  const onnx::AttributeProto* a = FindAttribute(node, name);
  if (a == nullptr) return std::nullopt;
  return std::vector<int64_t>(a->ints().begin(), a->ints().end());
}

bool AllEqual(const std::optional<std::vector<int64_t>>& v, int64_t value) {
  return !v || std::all_of(v->begin(), v->end(), [value](int64_t x) { return x == value; });
}

bool NoAutoPad(const onnx::NodeProto& node) {
  const onnx::AttributeProto* a = FindAttribute(node, "auto_pad");
  return a == nullptr || a->s().empty() || a->s() == "NOTSET" || a->s() == "VALID";
}

// Where the pixels of a chain tensor come from on one spatial axis:
// index q holds source[q + offset] for lo <= q < hi, a padded value else.
struct AxisMap {
  int64_t offset = 0;
  int64_t lo = 0;
  int64_t hi = 0;
};

// Applies one Slice to the maps; false when it cannot be followed.
bool FollowSlice(const ConstantIndex& constants, const onnx::NodeProto& node,
                 const std::vector<int64_t>& in_dims, std::array<AxisMap, 2>& maps) {
  if (node.input_size() < 3) return false;
  std::optional<std::vector<int64_t>> starts = constants.Ints(node.input(1));
  std::optional<std::vector<int64_t>> ends = constants.Ints(node.input(2));
  if (!starts || !ends || starts->size() != ends->size()) return false;
  std::vector<int64_t> axes;
  if (node.input_size() > 3 && !node.input(3).empty()) {
    std::optional<std::vector<int64_t>> a = constants.Ints(node.input(3));
    if (!a) return false;
    axes = *a;
  } else {
    for (size_t i = 0; i < starts->size(); ++i) axes.push_back(static_cast<int64_t>(i));
  }
  if (node.input_size() > 4 && !node.input(4).empty()) {
    std::optional<std::vector<int64_t>> steps = constants.Ints(node.input(4));
    if (!steps || !AllEqual(steps, 1)) return false;
  }
  if (axes.size() != starts->size()) return false;
  const int64_t rank = static_cast<int64_t>(in_dims.size());
  for (size_t i = 0; i < axes.size(); ++i) {
    int64_t axis = axes[i] < 0 ? axes[i] + rank : axes[i];
    if (axis < 0 || axis >= rank) return false;
    const int64_t n = in_dims[axis];
    auto clamp = [n](int64_t v) { return std::clamp<int64_t>(v < 0 ? v + n : v, 0, n); };
    const int64_t s = clamp((*starts)[i]);
    const int64_t e = clamp((*ends)[i]);
    if (axis < 2) {
      if (s != 0 || e != n) return false;
      continue;
    }
    AxisMap& m = maps[axis - 2];
    m.offset += s;
    m.lo -= s;
    m.hi -= s;
  }
  return true;
}

bool FollowPad(const ConstantIndex& constants, const onnx::NodeProto& node, int64_t opset,
               std::array<AxisMap, 2>& maps) {
  const onnx::AttributeProto* mode = FindAttribute(node, "mode");
  if (mode != nullptr && mode->s() != "constant") return false;
  std::optional<std::vector<int64_t>> pads =
      opset >= 11 ? (node.input_size() > 1 ? constants.Ints(node.input(1)) : std::nullopt)
                  : Ints(node, "pads");
  if (opset >= 11 && node.input_size() > 3 && !node.input(3).empty()) return false;  // axes
  if (!pads || pads->size() != 8) return false;
  const std::vector<int64_t>& p = *pads;
  if (p[0] != 0 || p[1] != 0 || p[4] != 0 || p[5] != 0) return false;
  for (int a = 0; a < 2; ++a) {
    if (p[2 + a] < 0 || p[6 + a] < 0) return false;
    maps[a].offset -= p[2 + a];
    maps[a].lo += p[2 + a];
    maps[a].hi += p[2 + a];
  }
  return true;
}

// The window op's strides when it reads a 1x1 window with no padding.
std::optional<std::array<int64_t, 2>> UnitWindowStrides(const Graph& graph, const Op& op,
                                                        const onnx::NodeProto& node) {
  if (!NoAutoPad(node) || !AllEqual(Ints(node, "pads"), 0)) return std::nullopt;
  if (op.type == "MaxPool" || op.type == "AveragePool") {
    std::optional<std::vector<int64_t>> k = Ints(node, "kernel_shape");
    if (!k || k->size() != 2 || !AllEqual(k, 1) || op.outputs.size() != 1) return std::nullopt;
  } else if (op.type == "Conv") {
    if (op.inputs.size() < 2) return std::nullopt;
    const std::vector<int64_t>& w = graph.tensor(op.inputs[1]).dims;
    if (w.size() != 4 || w[2] != 1 || w[3] != 1) return std::nullopt;
  } else {
    return std::nullopt;
  }
  std::optional<std::vector<int64_t>> s = Ints(node, "strides");
  std::array<int64_t, 2> strides = {1, 1};
  if (s) {
    if (s->size() != 2) return std::nullopt;
    strides = {(*s)[0], (*s)[1]};
  }
  if (strides[0] < 1 || strides[1] < 1) return std::nullopt;
  return strides;
}

// The site ending at `op`, with the source tensor, the strided Slice's
// starts/ends and the window's strides; nullopt when `op` ends none.
struct SitePlan {
  SubsampleSite site;
  TensorId source = kNoId;
  std::array<int64_t, 2> starts{}, ends{}, strides{};
};

// `constants` indexes model.graph().
std::optional<SitePlan> PlanSite(const onnx::ModelProto& model, const ConstantIndex& constants,
                                 const Graph& graph, OpId id) {
  const onnx::GraphProto& g = model.graph();
  const Op& window = graph.op(id);
  if (!IsStandardOnnxDomain(window.domain)) return std::nullopt;
  if (window.source_index < 0 || window.source_index >= g.node_size()) return std::nullopt;
  std::optional<std::array<int64_t, 2>> strides =
      UnitWindowStrides(graph, window, g.node(window.source_index));
  if (!strides || window.inputs.empty()) return std::nullopt;
  // Back through single-use Slices and Pads to the source.
  std::vector<OpId> chain;
  TensorId t = window.inputs[0];
  while (true) {
    const Tensor& tensor = graph.tensor(t);
    if (tensor.producer == kNoId || tensor.is_graph_output || tensor.consumers.size() != 1) break;
    const Op& p = graph.op(tensor.producer);
    if ((p.type != "Slice" && p.type != "Pad") || p.inputs.empty() || p.outputs.size() != 1 ||
        !IsStandardOnnxDomain(p.domain)) {
      break;
    }
    chain.insert(chain.begin(), tensor.producer);
    t = p.inputs[0];
  }
  if (chain.empty()) return std::nullopt;
  const std::vector<int64_t>& src_dims = graph.tensor(t).dims;
  if (src_dims.size() != 4) return std::nullopt;
  std::array<AxisMap, 2> maps = {AxisMap{0, 0, src_dims[2]}, AxisMap{0, 0, src_dims[3]}};
  const int64_t opset = StandardOpset(model);
  for (OpId c : chain) {
    const Op& op = graph.op(c);
    if (op.source_index < 0 || op.source_index >= g.node_size()) return std::nullopt;
    const onnx::NodeProto& node = g.node(op.source_index);
    if (graph.tensor(op.inputs[0]).dims.size() != 4) return std::nullopt;
    const bool ok = op.type == "Slice"
                        ? FollowSlice(constants, node, graph.tensor(op.inputs[0]).dims, maps)
                        : FollowPad(constants, node, opset, maps);
    if (!ok) return std::nullopt;
  }
  const std::vector<int64_t>& out_dims = graph.tensor(window.outputs[0]).dims;
  if (out_dims.size() != 4) return std::nullopt;
  SitePlan plan;
  plan.source = t;
  plan.strides = *strides;
  for (int a = 0; a < 2; ++a) {
    const int64_t last = (*strides)[a] * (out_dims[2 + a] - 1);  // chain index read last
    if (out_dims[2 + a] < 1 || maps[a].lo > 0 || last >= maps[a].hi) return std::nullopt;
    plan.starts[a] = maps[a].offset;
    plan.ends[a] = maps[a].offset + last + 1;
    if (plan.starts[a] < 0 || plan.ends[a] > src_dims[2 + a]) return std::nullopt;
  }
  for (OpId c : chain) plan.site.chain.push_back(graph.op(c).name);
  plan.site.window = window.name;
  return plan;
}

// Element types the model declares (inputs, value_info, outputs; the
// first declaration of a name wins), built once per rewrite.
absl::flat_hash_map<std::string, int32_t> DeclaredElemTypes(const onnx::GraphProto& g) {
  absl::flat_hash_map<std::string, int32_t> types;
  for (const auto* list : {&g.input(), &g.value_info(), &g.output()}) {
    for (const onnx::ValueInfoProto& v : *list) {
      if (v.type().has_tensor_type() && v.type().tensor_type().elem_type() != 0) {
        types.try_emplace(v.name(), v.type().tensor_type().elem_type());
      }
    }
  }
  return types;
}

// The declared type of `t`, else the importer's; UNDEFINED (0) when
// neither knows it.
int32_t ElemType(const absl::flat_hash_map<std::string, int32_t>& declared, const Tensor& t) {
  if (auto it = declared.find(t.name); it != declared.end()) return it->second;
  return OnnxElemType(t.dtype);
}

std::string IntInitializer(const std::string& name, const std::vector<int64_t>& values,
                           onnx::GraphProto& g) {
  onnx::TensorProto* t = g.add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto::INT64);
  t->add_dims(static_cast<int64_t>(values.size()));
  for (int64_t v : values) t->add_int64_data(v);
  return name;
}

}  // namespace

std::vector<SubsampleSite> FindSubsampleSites(const onnx::ModelProto& model, const Graph& graph) {
  std::vector<SubsampleSite> sites;
  if (StandardOpset(model) < 10) return sites;
  const ConstantIndex constants(model.graph());
  for (OpId id = 0; id < graph.num_ops(); ++id) {
    if (std::optional<SitePlan> plan = PlanSite(model, constants, graph, id)) {
      sites.push_back(std::move(plan->site));
    }
  }
  return sites;
}

absl::StatusOr<onnx::ModelProto> ApplyEarlySubsample(const onnx::ModelProto& model,
                                                     const Graph& graph,
                                                     const std::vector<SubsampleSite>& sites) {
  if (StandardOpset(model) < 10) {
    return absl::InvalidArgumentError("early subsampling needs opset >= 10 (Slice steps)");
  }
  absl::flat_hash_map<std::string, OpId> by_name;
  for (OpId id = 0; id < graph.num_ops(); ++id) by_name[graph.op(id).name] = id;
  const ConstantIndex constants(model.graph());
  const absl::flat_hash_map<std::string, int32_t> declared = DeclaredElemTypes(model.graph());
  absl::flat_hash_set<std::string> windows_done;
  onnx::ModelProto out = model;
  onnx::GraphProto* g = out.mutable_graph();
  NameScope names(*g);
  absl::flat_hash_set<int32_t> removed;                           // node indices
  absl::flat_hash_map<int32_t, std::vector<onnx::NodeProto>> at;  // replacements by index
  absl::flat_hash_set<std::string> dropped_tensors;
  for (const SubsampleSite& site : sites) {
    auto it = by_name.find(site.window);
    std::optional<SitePlan> plan;
    if (it != by_name.end()) plan = PlanSite(model, constants, graph, it->second);
    if (!plan || plan->site.chain != site.chain) {
      return absl::InvalidArgumentError(
          absl::StrCat("\"", site.window, "\" does not end an early-subsampling site"));
    }
    // A site listed twice is rewritten once.
    if (!windows_done.insert(site.window).second) continue;
    const Op& window = graph.op(it->second);
    const onnx::NodeProto& window_node = model.graph().node(window.source_index);
    for (const std::string& c : site.chain) {
      const Op& op = graph.op(by_name[c]);
      removed.insert(op.source_index);
      dropped_tensors.insert(graph.tensor(op.outputs[0]).name);
    }
    removed.insert(window.source_index);
    const std::string& source = graph.tensor(plan->source).name;
    const std::string& output = graph.tensor(window.outputs[0]).name;
    const bool keep_window = window.type == "Conv";
    const std::string sliced =
        keep_window ? names.Fresh(absl::StrCat(source, "_subsampled")) : output;
    onnx::NodeProto slice;
    slice.set_op_type("Slice");
    slice.set_name(names.Fresh(absl::StrCat(window.name, "_subsample")));
    slice.add_input(source);
    const std::string base = slice.name();
    slice.add_input(
        IntInitializer(names.Fresh(base + "_starts"), {plan->starts[0], plan->starts[1]}, *g));
    slice.add_input(
        IntInitializer(names.Fresh(base + "_ends"), {plan->ends[0], plan->ends[1]}, *g));
    slice.add_input(IntInitializer(names.Fresh(base + "_axes"), {2, 3}, *g));
    slice.add_input(
        IntInitializer(names.Fresh(base + "_steps"), {plan->strides[0], plan->strides[1]}, *g));
    slice.add_output(sliced);
    std::vector<onnx::NodeProto>& emitted = at[window.source_index];
    emitted.push_back(std::move(slice));
    if (keep_window) {
      std::vector<int64_t> dims = graph.tensor(plan->source).dims;
      dims[2] = (plan->ends[0] - plan->starts[0] + plan->strides[0] - 1) / plan->strides[0];
      dims[3] = (plan->ends[1] - plan->starts[1] + plan->strides[1] - 1) / plan->strides[1];
      // No value_info rather than a guessed element type.
      if (const int32_t elem_type = ElemType(declared, graph.tensor(plan->source));
          elem_type != onnx::TensorProto::UNDEFINED) {
        *g->add_value_info() = DenseValueInfo(sliced, elem_type, dims);
      }
      onnx::NodeProto conv = window_node;
      conv.set_input(0, sliced);
      for (onnx::AttributeProto& a : *conv.mutable_attribute()) {
        if (a.name() == "strides") {
          a.clear_ints();
          a.add_ints(1);
          a.add_ints(1);
        }
      }
      emitted.push_back(std::move(conv));
    }
  }
  std::vector<onnx::NodeProto> nodes;
  for (int32_t i = 0; i < model.graph().node_size(); ++i) {
    if (auto it = at.find(i); it != at.end()) {
      for (onnx::NodeProto& n : it->second) nodes.push_back(std::move(n));
    }
    if (!removed.contains(i)) nodes.push_back(model.graph().node(i));
  }
  g->clear_node();
  for (onnx::NodeProto& n : nodes) *g->add_node() = std::move(n);
  auto* infos = g->mutable_value_info();
  infos->erase(std::remove_if(infos->begin(), infos->end(),
                              [&](const onnx::ValueInfoProto& v) {
                                return dropped_tensors.contains(v.name());
                              }),
               infos->end());
  return out;
}

}  // namespace ordo
