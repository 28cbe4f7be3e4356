#include "core/graph/graph.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/util/checked_math.h"
#include "core/util/status_macros.h"

namespace ordo {

absl::string_view TensorKindName(TensorKind kind) {
  switch (kind) {
    case TensorKind::kInput:
      return "input";
    case TensorKind::kActivation:
      return "activation";
    case TensorKind::kWeight:
      return "weight";
    case TensorKind::kOutput:
      return "output";
  }
  return "unknown";
}

Graph::Graph(const Graph& other)
    : name_(other.name_),
      ops_(other.ops_),
      tensors_(other.tensors_),
      inputs_(other.inputs_),
      outputs_(other.outputs_),
      notes_(other.notes_) {
  IndexNames();
}

Graph& Graph::operator=(const Graph& other) {
  if (this != &other) *this = Graph(other);
  return *this;
}

// Names are unique in a built Graph, so every insert succeeds.
void Graph::IndexNames() {
  op_index_.clear();
  tensor_index_.clear();
  op_index_.reserve(ops_.size());
  tensor_index_.reserve(tensors_.size());
  for (OpId id = 0; id < num_ops(); ++id) op_index_.emplace(ops_[id].name, id);
  for (TensorId id = 0; id < num_tensors(); ++id) tensor_index_.emplace(tensors_[id].name, id);
}

std::optional<OpId> Graph::FindOp(absl::string_view name) const {
  auto it = op_index_.find(name);
  if (it == op_index_.end()) return std::nullopt;
  return it->second;
}

std::optional<TensorId> Graph::FindTensor(absl::string_view name) const {
  auto it = tensor_index_.find(name);
  if (it == tensor_index_.end()) return std::nullopt;
  return it->second;
}

std::vector<OpId> Graph::Successors(OpId op) const {
  std::vector<OpId> result;
  for (TensorId t : ops_[op].outputs) {
    const auto& consumers = tensors_[t].consumers;
    result.insert(result.end(), consumers.begin(), consumers.end());
  }
  std::sort(result.begin(), result.end());
  result.erase(std::unique(result.begin(), result.end()), result.end());
  return result;
}

std::vector<OpId> Graph::Predecessors(OpId op) const {
  std::vector<OpId> result;
  for (TensorId t : ops_[op].inputs) {
    if (tensors_[t].producer != kNoId) result.push_back(tensors_[t].producer);
  }
  std::sort(result.begin(), result.end());
  result.erase(std::unique(result.begin(), result.end()), result.end());
  return result;
}

GraphBuilder::GraphBuilder(std::string name, GraphLimits limits)
    : name_(std::move(name)), limits_(limits) {}

void GraphBuilder::Reserve(int64_t ops, int64_t tensors) {
  pending_ops_.reserve(static_cast<size_t>(std::clamp<int64_t>(ops, 0, limits_.max_ops)));
  pending_tensors_.reserve(
      static_cast<size_t>(std::clamp<int64_t>(tensors, 0, limits_.max_tensors)));
}

TensorId GraphBuilder::AddTensor(std::string name, DataType dtype, std::vector<int64_t> dims,
                                 TensorKind kind) {
  pending_tensors_.push_back({std::move(name), dtype, std::move(dims), -1, kind});
  return static_cast<TensorId>(pending_tensors_.size() - 1);
}

TensorId GraphBuilder::AddTensorBytes(std::string name, int64_t bytes, TensorKind kind) {
  pending_tensors_.push_back({std::move(name), DataType::kUnknown, {}, bytes, kind});
  return static_cast<TensorId>(pending_tensors_.size() - 1);
}

void GraphBuilder::AddOp(std::string name, std::string type,
                         std::vector<std::string> inputs,
                         std::vector<std::string> outputs,
                         std::vector<Attribute> attributes, int32_t source_index,
                         std::string domain) {
  std::erase(inputs, std::string());
  pending_ops_.push_back({std::move(name), std::move(type), std::move(domain),
                          std::move(inputs), std::move(outputs),
                          std::move(attributes), source_index});
}

void GraphBuilder::AddOpWithTensorIds(std::string name, std::string type,
                                      std::vector<TensorId> inputs, std::vector<TensorId> outputs,
                                      std::vector<Attribute> attributes, int32_t source_index,
                                      std::string domain) {
  PendingOp& op = pending_ops_.emplace_back();
  op.name = std::move(name);
  op.type = std::move(type);
  op.domain = std::move(domain);
  op.attributes = std::move(attributes);
  op.source_index = source_index;
  op.by_id = true;
  op.input_ids = std::move(inputs);
  op.output_ids = std::move(outputs);
}

void GraphBuilder::AddGraphInput(std::string tensor_name) {
  graph_inputs_.push_back(std::move(tensor_name));
}

void GraphBuilder::AddGraphOutput(std::string tensor_name) {
  graph_outputs_.push_back(std::move(tensor_name));
}

void GraphBuilder::AddRuntimeBuffer(std::string tensor_name, bool lives_to_end) {
  graph_inputs_.push_back(tensor_name);
  if (lives_to_end) graph_outputs_.push_back(tensor_name);
  runtime_buffers_.push_back(std::move(tensor_name));
}

namespace {

absl::StatusOr<int64_t> TensorBytes(absl::string_view name, DataType dtype,
                                    const std::vector<int64_t>& dims) {
  if (dtype == DataType::kUnknown) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor \"", name, "\": unknown dtype"));
  }
  int64_t bytes = ElementSize(dtype);
  for (size_t i = 0; i < dims.size(); ++i) {
    if (dims[i] <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor \"", name, "\": dim ", i, " is ", dims[i],
          dims[i] == 0 ? " (zero-size tensor)" : " (unknown or dynamic dim)",
          "; dims must be static and positive"));
    }
    std::optional<int64_t> product = CheckedMul(bytes, dims[i]);
    if (!product) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor \"", name, "\": dims overflow int64"));
    }
    bytes = *product;
  }
  return bytes;
}

// OpId order is the model-order baseline and the order every consumer of a
// Graph may rely on, so it must run: each op after the producers of its
// inputs. (The ONNX importer sorts nodes before building; the native format
// is taken as written.) Called after CheckAcyclic, so a violation is an
// order problem, not a cycle.
absl::Status CheckTopologicalOrder(const Graph& graph) {
  for (OpId op = 0; op < graph.num_ops(); ++op) {
    for (TensorId t : graph.op(op).inputs) {
      const OpId producer = graph.tensor(t).producer;
      if (producer == kNoId || producer < op) continue;
      return absl::InvalidArgumentError(absl::StrCat(
          "op \"", graph.op(op).name, "\" reads tensor \"", graph.tensor(t).name, "\" before op \"",
          graph.op(producer).name,
          "\" writes it; ops must be listed in an order that runs (topological order)"));
    }
  }
  return absl::OkStatus();
}

// Graph outputs that are weights (initializers, or folded from weights
// alone), for Graph::notes(). At most four named: a detection head may list
// dozens of constant anchors.
std::string ConstantOutputsNote(const std::vector<std::string>& names) {
  constexpr size_t kNamed = 4;
  std::vector<std::string> quoted;
  for (size_t i = 0; i < names.size() && i < kNamed; ++i) {
    quoted.push_back(absl::StrCat("\"", names[i], "\""));
  }
  const std::string more =
      names.size() > kNamed ? absl::StrCat(" and ", names.size() - kNamed, " more") : "";
  const bool one = names.size() == 1;
  const char* it = one ? "it" : "them";
  return absl::StrCat(one ? "graph output " : "graph outputs ", absl::StrJoin(quoted, ", "), more,
                      one ? " is a constant" : " are constants",
                      " (initializers, or computed at compile time from weights and static "
                      "shapes): no op computes ",
                      it, " at run time, so the schedule and the arena leave ", it,
                      " out; the runtime reads ", it, " from the model's weights");
}

}  // namespace

absl::StatusOr<Graph> GraphBuilder::Build() && {
  if (pending_ops_.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("graph \"", name_, "\" has no ops to schedule"));
  }
  if (static_cast<int64_t>(pending_ops_.size()) > limits_.max_ops) {
    return absl::ResourceExhaustedError(
        absl::StrCat("graph has ", pending_ops_.size(), " ops; the limit is ",
                     limits_.max_ops));
  }
  if (static_cast<int64_t>(pending_tensors_.size()) > limits_.max_tensors) {
    return absl::ResourceExhaustedError(
        absl::StrCat("graph has ", pending_tensors_.size(),
                     " tensors; the limit is ", limits_.max_tensors));
  }
  Graph graph;
  graph.name_ = name_;
  graph.notes_ = std::move(notes_);
  ORDO_RETURN_IF_ERROR(ResolveTensors(graph));
  ORDO_RETURN_IF_ERROR(ResolveOps(graph));
  ORDO_RETURN_IF_ERROR(ResolveGraphIo(graph));
  // An order that runs has no cycle, so the cycle search (which allocates
  // per op) only runs to name the cycle when the order check fails.
  if (absl::Status order = CheckTopologicalOrder(graph); !order.ok()) {
    ORDO_RETURN_IF_ERROR(CheckAcyclic(graph));
    return order;
  }
  return graph;
}

// Build() consumes the builder, so names, dims and attributes move into the
// Graph instead of being copied (a third of a large import's graph build).
absl::Status GraphBuilder::ResolveTensors(Graph& graph) {
  graph.tensors_.reserve(pending_tensors_.size());
  graph.tensor_index_.reserve(pending_tensors_.size());
  for (PendingTensor& pending : pending_tensors_) {
    if (pending.name.empty()) {
      return absl::InvalidArgumentError("a tensor has an empty name");
    }
    Tensor tensor;
    if (pending.bytes >= 0) {
      if (pending.bytes == 0) {
        return absl::InvalidArgumentError(
            absl::StrCat("tensor \"", pending.name, "\": size is zero bytes"));
      }
      tensor.bytes = pending.bytes;
    } else {
      ORDO_ASSIGN_OR_RETURN(tensor.bytes,
                            TensorBytes(pending.name, pending.dtype, pending.dims));
    }
    tensor.name = std::move(pending.name);
    tensor.dtype = pending.dtype;
    tensor.dims = std::move(pending.dims);
    tensor.kind = pending.kind;
    TensorId id = static_cast<TensorId>(graph.tensors_.size());
    // Reserved above: the name the key views stays where it is.
    const std::string& name = graph.tensors_.emplace_back(std::move(tensor)).name;
    if (!graph.tensor_index_.emplace(name, id).second) {
      return absl::InvalidArgumentError(absl::StrCat("tensor \"", name, "\" is declared twice"));
    }
  }
  return absl::OkStatus();
}

absl::Status GraphBuilder::ResolveOps(Graph& graph) {
  graph.ops_.reserve(pending_ops_.size());
  graph.op_index_.reserve(pending_ops_.size());
  for (PendingOp& pending : pending_ops_) {
    OpId id = static_cast<OpId>(graph.ops_.size());
    if (pending.name.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("op ", id, " (", pending.type, ") has an empty name"));
    }
    if (graph.op_index_.contains(pending.name)) {
      return absl::InvalidArgumentError(
          absl::StrCat("op \"", pending.name, "\": name is used twice"));
    }
    if (pending.by_id ? pending.output_ids.empty() : pending.outputs.empty()) {
      return absl::InvalidArgumentError(
          absl::StrCat("op \"", pending.name, "\" has no outputs"));
    }
    if (!pending.by_id) ORDO_RETURN_IF_ERROR(ResolveNames(graph, pending));
    // The pending id lists become the op's own (checked as they are linked).
    Op op{std::move(pending.name),       std::move(pending.type),
          std::move(pending.domain),     std::move(pending.input_ids),
          std::move(pending.output_ids), std::move(pending.attributes),
          pending.source_index};
    ORDO_RETURN_IF_ERROR(ConnectOp(graph, std::move(op)));
    // Reserved above: the name the key views stays where it is.
    graph.op_index_.emplace(graph.ops_.back().name, id);
  }
  return absl::OkStatus();
}

absl::Status GraphBuilder::ResolveNames(const Graph& graph, PendingOp& pending) {
  for (const std::string& name : pending.inputs) {
    std::optional<TensorId> t = graph.FindTensor(name);
    if (!t) {
      return absl::InvalidArgumentError(absl::StrCat("op \"", pending.name, "\" reads tensor \"",
                                                     name, "\", which is not defined"));
    }
    pending.input_ids.push_back(*t);
  }
  for (const std::string& name : pending.outputs) {
    std::optional<TensorId> t = name.empty() ? std::nullopt : graph.FindTensor(name);
    if (!t) {
      return absl::InvalidArgumentError(absl::StrCat("op \"", pending.name, "\" writes tensor \"",
                                                     name, "\", which is not declared"));
    }
    pending.output_ids.push_back(*t);
  }
  return absl::OkStatus();
}

// Links `op` (the next op id) to the tensors it names and appends it.
absl::Status GraphBuilder::ConnectOp(Graph& graph, Op op) {
  const OpId id = graph.num_ops();
  for (TensorId t : op.inputs) {
    if (t < 0 || t >= graph.num_tensors()) {
      return absl::InvalidArgumentError(
          absl::StrCat("op \"", op.name, "\" reads tensor id ", t, ", which is not declared"));
    }
    std::vector<OpId>& consumers = graph.tensors_[t].consumers;
    if (consumers.empty() || consumers.back() != id) consumers.push_back(id);
  }
  for (TensorId t : op.outputs) {
    if (t < 0 || t >= graph.num_tensors()) {
      return absl::InvalidArgumentError(
          absl::StrCat("op \"", op.name, "\" writes tensor id ", t, ", which is not declared"));
    }
    Tensor& tensor = graph.tensors_[t];
    const std::string& name = tensor.name;
    // Checked first: this op is not in graph.ops_ yet, so naming "both
    // producers" would read past its end (found by graph_proto_fuzzer).
    if (tensor.producer == id) {
      return absl::InvalidArgumentError(
          absl::StrCat("op \"", op.name, "\" writes tensor \"", name, "\" twice"));
    }
    if (tensor.producer != kNoId) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor \"", name, "\" has two producers: op \"",
          graph.ops_[tensor.producer].name, "\" and op \"", op.name, "\""));
    }
    if (tensor.kind == TensorKind::kWeight || tensor.kind == TensorKind::kInput) {
      return absl::InvalidArgumentError(
          absl::StrCat("op \"", op.name, "\" writes tensor \"", name,
                       "\", which is a ", TensorKindName(tensor.kind)));
    }
    tensor.producer = id;
  }
  graph.ops_.push_back(std::move(op));
  return absl::OkStatus();
}

absl::Status GraphBuilder::ResolveGraphIo(Graph& graph) const {
  absl::flat_hash_set<TensorId> listed_inputs;
  for (const std::string& name : graph_inputs_) {
    std::optional<TensorId> t = graph.FindTensor(name);
    if (!t) {
      return absl::InvalidArgumentError(
          absl::StrCat("graph input \"", name, "\" is not declared"));
    }
    Tensor& tensor = graph.tensors_[*t];
    if (tensor.producer != kNoId) {
      return absl::InvalidArgumentError(
          absl::StrCat("graph input \"", name, "\" is also written by op \"",
                       graph.ops_[tensor.producer].name, "\""));
    }
    if (!listed_inputs.insert(*t).second) continue;  // listed twice
    if (tensor.kind == TensorKind::kWeight) {
      return absl::InvalidArgumentError(
          absl::StrCat("graph input \"", name, "\" is declared as a weight"));
    }
    tensor.kind = TensorKind::kInput;
    graph.inputs_.push_back(*t);
  }
  std::vector<std::string> constant_outputs;
  absl::flat_hash_set<TensorId> listed_constants;  // a detection head lists thousands
  for (const std::string& name : graph_outputs_) {
    std::optional<TensorId> t = graph.FindTensor(name);
    if (!t) {
      return absl::InvalidArgumentError(
          absl::StrCat("graph output \"", name, "\" is not declared"));
    }
    Tensor& tensor = graph.tensors_[*t];
    if (tensor.is_graph_output) continue;
    if (tensor.kind == TensorKind::kWeight) {
      // A constant the application reads from the weights: no op computes
      // it at run time, so it is no part of the schedule or the arena.
      if (listed_constants.insert(*t).second) constant_outputs.push_back(name);
      continue;
    }
    tensor.is_graph_output = true;
    if (tensor.kind == TensorKind::kActivation) tensor.kind = TensorKind::kOutput;
    graph.outputs_.push_back(*t);
  }
  if (!constant_outputs.empty()) graph.notes_.push_back(ConstantOutputsNote(constant_outputs));
  for (const std::string& name : runtime_buffers_) {
    graph.tensors_[*graph.FindTensor(name)].is_runtime_buffer = true;  // an input: found above
  }
  for (const Tensor& tensor : graph.tensors_) {
    if (tensor.producer == kNoId && (tensor.kind == TensorKind::kActivation ||
                                     tensor.kind == TensorKind::kOutput)) {
      if (tensor.consumers.empty() && !tensor.is_graph_output) continue;
      std::string user = tensor.consumers.empty()
                             ? std::string("the graph outputs")
                             : absl::StrCat("op \"", graph.ops_[tensor.consumers[0]].name, "\"");
      return absl::InvalidArgumentError(
          absl::StrCat("tensor \"", tensor.name, "\" is read by ", user,
                       " but never produced (not a graph input or weight)"));
    }
  }
  return absl::OkStatus();
}

// Kahn's algorithm; on a cycle names an op on it (found by walking
// predecessors among the ops that never became ready).
absl::Status GraphBuilder::CheckAcyclic(const Graph& graph) {
  const int32_t n = graph.num_ops();
  std::vector<int32_t> indegree(n, 0);
  for (OpId op = 0; op < n; ++op) {
    indegree[op] = static_cast<int32_t>(graph.Predecessors(op).size());
  }
  std::vector<OpId> ready;
  for (OpId op = 0; op < n; ++op) {
    if (indegree[op] == 0) ready.push_back(op);
  }
  int32_t visited = 0;
  while (!ready.empty()) {
    OpId op = ready.back();
    ready.pop_back();
    ++visited;
    for (OpId next : graph.Successors(op)) {
      if (--indegree[next] == 0) ready.push_back(next);
    }
  }
  if (visited == n) return absl::OkStatus();
  // Every op left has a predecessor that is left: walking back n steps lands
  // on a cycle.
  OpId op = 0;
  while (indegree[op] == 0) ++op;
  for (int32_t i = 0; i < n; ++i) {
    for (OpId pred : graph.Predecessors(op)) {
      if (indegree[pred] > 0) {
        op = pred;
        break;
      }
    }
  }
  return absl::InvalidArgumentError(absl::StrCat(
      "graph has a cycle through op \"", graph.op(op).name, "\""));
}

}  // namespace ordo
