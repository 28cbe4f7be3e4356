#include "core/rewrite/sum_reassociation.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "core/rewrite/model_edit.h"
#include "core/util/status_macros.h"

namespace ordo {
namespace {

// A two-input Add of the default domain over tensors of its output's dims
// and type: the only kind of node a sum tree is made of.
bool IsPlainAdd(const Graph& graph, const Op& op) {
  if (op.type != "Add" || !op.domain.empty() || op.inputs.size() != 2 || op.outputs.size() != 1) {
    return false;
  }
  const Tensor& out = graph.tensor(op.outputs[0]);
  for (TensorId in : op.inputs) {
    const Tensor& t = graph.tensor(in);
    if (t.dims != out.dims || t.dtype != out.dtype) return false;
  }
  return true;
}

// Whether `t` is an inner sum: the output of a plain Add, read by one op
// only, that op a plain Add (so of the same dims), and not a graph output.
bool IsInnerSum(const Graph& graph, TensorId t) {
  const Tensor& tensor = graph.tensor(t);
  if (tensor.producer == kNoId || tensor.is_graph_output || tensor.consumers.size() != 1) {
    return false;
  }
  const Op& reader = graph.op(tensor.consumers[0]);
  if (!IsPlainAdd(graph, reader) || !IsPlainAdd(graph, graph.op(tensor.producer))) return false;
  // Read twice by one Add (x + x): a term, not a subtree.
  return !(reader.inputs[0] == t && reader.inputs[1] == t);
}

// Collects the Adds (post-order, so the root comes last) and terms (left to
// right) of the tree under `add`.
void Collect(const Graph& graph, OpId add, SumTree& tree) {
  const Op& op = graph.op(add);
  for (size_t i = 0; i < op.inputs.size(); ++i) {
    const TensorId in = op.inputs[i];
    if (IsInnerSum(graph, in)) {
      if (i == 1) tree.left_deep = false;
      Collect(graph, graph.tensor(in).producer, tree);
    } else {
      tree.terms.push_back(in);
    }
  }
  tree.adds.push_back(add);
}

}  // namespace

std::vector<SumTree> FindSumTrees(const Graph& graph) {
  std::vector<SumTree> trees;
  for (OpId id = 0; id < graph.num_ops(); ++id) {
    const Op& op = graph.op(id);
    if (!IsPlainAdd(graph, op) || IsInnerSum(graph, op.outputs[0])) continue;
    SumTree tree;
    tree.root = id;
    Collect(graph, id, tree);
    if (tree.terms.size() >= 3) trees.push_back(std::move(tree));
  }
  return trees;
}

std::vector<TensorId> TermsInScheduleOrder(const Graph& graph, const SumTree& tree,
                                           const std::vector<int32_t>& order, SumOrder how) {
  std::vector<int32_t> step(graph.num_ops(), -1);
  for (int32_t s = 0; s < static_cast<int32_t>(order.size()); ++s) step[order[s]] = s;
  auto key = [&](TensorId t) {
    const Tensor& tensor = graph.tensor(t);
    int32_t k = tensor.producer == kNoId ? -1 : step[tensor.producer];
    if (how == SumOrder::kReleased) {
      for (OpId reader : tensor.consumers) {
        if (std::find(tree.adds.begin(), tree.adds.end(), reader) == tree.adds.end()) {
          k = std::max(k, step[reader]);
        }
      }
    }
    return k;
  };
  std::vector<std::pair<int32_t, TensorId>> keyed;
  keyed.reserve(tree.terms.size());
  for (TensorId t : tree.terms) keyed.emplace_back(key(t), t);
  std::stable_sort(keyed.begin(), keyed.end(),
                   [](const auto& a, const auto& b) { return a.first < b.first; });
  std::vector<TensorId> terms;
  terms.reserve(keyed.size());
  for (const auto& [k, t] : keyed) terms.push_back(t);
  return terms;
}

absl::StatusOr<onnx::ModelProto> ReassociateSums(const onnx::ModelProto& model, const Graph& graph,
                                                 const std::vector<SumTree>& trees,
                                                 const std::vector<int32_t>& order,
                                                 SumOrder how, int32_t* rebuilt) {
  onnx::ModelProto out = model;
  onnx::GraphProto& g = *out.mutable_graph();
  NameScope names(g);
  // Node index -> what replaces it (the root's index gets the chain, the
  // other Adds of a tree nothing).
  absl::flat_hash_map<int32_t, std::vector<onnx::NodeProto>> replaced;
  absl::flat_hash_set<std::string> dropped_tensors;
  int32_t count = 0;
  for (const SumTree& tree : trees) {
    const std::vector<TensorId> terms = TermsInScheduleOrder(graph, tree, order, how);
    if (tree.left_deep && terms == tree.terms) continue;
    ++count;
    const Op& root = graph.op(tree.root);
    const Tensor& sum = graph.tensor(root.outputs[0]);
    for (OpId add : tree.adds) {
      ORDO_ASSIGN_OR_RETURN(int32_t index, NodeOf(g, graph.op(add)));
      replaced[index];  // every Add of the tree goes
      if (add != tree.root) dropped_tensors.insert(graph.tensor(graph.op(add).outputs[0]).name);
    }
    ORDO_ASSIGN_OR_RETURN(int32_t root_index, NodeOf(g, root));
    std::vector<onnx::NodeProto>& chain = replaced[root_index];
    std::string partial = graph.tensor(terms[0]).name;
    for (size_t k = 1; k < terms.size(); ++k) {
      const bool last = k + 1 == terms.size();
      onnx::NodeProto add;
      add.set_op_type("Add");
      add.set_name(last ? root.name : names.Fresh(absl::StrCat(root.name, "/sum", k)));
      add.add_input(partial);
      add.add_input(graph.tensor(terms[k]).name);
      partial = last ? sum.name : names.Fresh(absl::StrCat(sum.name, "/sum", k));
      add.add_output(partial);
      if (!last) *g.add_value_info() = DenseValueInfo(partial, OnnxElemType(sum.dtype), sum.dims);
      chain.push_back(std::move(add));
    }
  }
  if (rebuilt != nullptr) *rebuilt = count;
  if (count == 0) return out;

  google::protobuf::RepeatedPtrField<onnx::NodeProto> nodes;
  for (int32_t i = 0; i < g.node_size(); ++i) {
    const auto it = replaced.find(i);
    if (it == replaced.end()) {
      *nodes.Add() = std::move(*g.mutable_node(i));
      continue;
    }
    for (onnx::NodeProto& node : it->second) *nodes.Add() = std::move(node);
  }
  g.mutable_node()->Swap(&nodes);
  google::protobuf::RepeatedPtrField<onnx::ValueInfoProto> infos;
  for (onnx::ValueInfoProto& info : *g.mutable_value_info()) {
    if (!dropped_tensors.contains(info.name())) *infos.Add() = std::move(info);
  }
  g.mutable_value_info()->Swap(&infos);
  return out;
}

}  // namespace ordo
