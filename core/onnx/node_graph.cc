#include "core/onnx/node_graph.h"

#include <functional>
#include <queue>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/util/status_macros.h"

namespace ordo::onnx_import {
namespace {

using onnx::GraphProto;
using onnx::NodeProto;

absl::Status RecordProducers(const GraphProto& graph, NodeGraph& nodes) {
  for (int32_t i = 0; i < graph.node_size(); ++i) {
    for (const std::string& output : graph.node(i).output()) {
      if (output.empty()) continue;
      const std::string& op = nodes.names[i];
      if (nodes.initializers.contains(output)) {
        return absl::InvalidArgumentError(
            absl::StrCat("op \"", op, "\" writes tensor \"", output, "\", which is a weight"));
      }
      if (nodes.graph_inputs.contains(output)) {
        return absl::InvalidArgumentError(
            absl::StrCat("op \"", op, "\" writes tensor \"", output, "\", which is a graph input"));
      }
      auto [it, inserted] = nodes.producer.try_emplace(output, i);
      if (!inserted) {
        return absl::InvalidArgumentError(
            absl::StrCat("tensor \"", output, "\" has two producers: op \"",
                         nodes.names[it->second], "\" and op \"", op, "\""));
      }
    }
  }
  return absl::OkStatus();
}

absl::Status CheckInputsDefined(const GraphProto& graph, const NodeGraph& nodes) {
  for (int32_t i = 0; i < graph.node_size(); ++i) {
    for (const std::string& input : graph.node(i).input()) {
      if (input.empty() || nodes.producer.contains(input) || nodes.initializers.contains(input) ||
          nodes.graph_inputs.contains(input)) {
        continue;
      }
      return absl::InvalidArgumentError(absl::StrCat("op \"", nodes.names[i], "\" reads tensor \"",
                                                     input, "\", which is not defined"));
    }
  }
  return absl::OkStatus();
}

// Producers of the inputs of each node, one entry per input edge.
std::vector<std::vector<int32_t>> PredecessorLists(const GraphProto& graph,
                                                   const NodeGraph& nodes) {
  std::vector<std::vector<int32_t>> predecessors(graph.node_size());
  for (int32_t i = 0; i < graph.node_size(); ++i) {
    for (const std::string& input : graph.node(i).input()) {
      auto it = nodes.producer.find(input);
      if (it != nodes.producer.end()) predecessors[i].push_back(it->second);
    }
  }
  return predecessors;
}

// Names a node on a cycle: every node left out of the order has a
// predecessor that is also left out, so walking back node_size() steps from
// any of them must end on a cycle.
std::string NodeOnCycle(const std::vector<std::vector<int32_t>>& predecessors,
                        const std::vector<bool>& ordered, const NodeGraph& nodes) {
  int32_t node = 0;
  while (ordered[node]) ++node;
  for (size_t step = 0; step < predecessors.size(); ++step) {
    for (int32_t pred : predecessors[node]) {
      if (!ordered[pred]) {
        node = pred;
        break;
      }
    }
  }
  return nodes.names[node];
}

absl::Status TopologicalOrder(const GraphProto& graph, NodeGraph& nodes) {
  const int32_t n = graph.node_size();
  const std::vector<std::vector<int32_t>> predecessors = PredecessorLists(graph, nodes);
  std::vector<std::vector<int32_t>> successors(n);
  std::vector<int32_t> waiting(n, 0);
  for (int32_t i = 0; i < n; ++i) {
    waiting[i] = static_cast<int32_t>(predecessors[i].size());
    for (int32_t pred : predecessors[i]) successors[pred].push_back(i);
  }
  std::priority_queue<int32_t, std::vector<int32_t>, std::greater<int32_t>> ready;
  for (int32_t i = 0; i < n; ++i) {
    if (waiting[i] == 0) ready.push(i);
  }
  std::vector<bool> ordered(n, false);
  while (!ready.empty()) {
    const int32_t node = ready.top();
    ready.pop();
    ordered[node] = true;
    nodes.order.push_back(node);
    for (int32_t next : successors[node]) {
      if (--waiting[next] == 0) ready.push(next);
    }
  }
  if (static_cast<int32_t>(nodes.order.size()) == n) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("graph has a cycle through op \"",
                                                 NodeOnCycle(predecessors, ordered, nodes), "\""));
}

}  // namespace

std::vector<std::string> UniqueNodeNames(const GraphProto& graph) {
  absl::flat_hash_set<absl::string_view> given;  // views of names in `graph`
  for (const NodeProto& node : graph.node()) {
    if (!node.name().empty()) given.insert(node.name());
  }
  absl::flat_hash_set<std::string> assigned;
  // Next suffix to try per base name, so n copies of one name cost O(n), not
  // O(n^2).
  absl::flat_hash_map<std::string, int> next_suffix;
  std::vector<std::string> names;
  names.reserve(graph.node_size());
  for (int32_t i = 0; i < graph.node_size(); ++i) {
    const std::string& own = graph.node(i).name();
    std::string base = own.empty() ? absl::StrCat("n", i) : own;
    // A generated name must not take a name some node was given in the file.
    const bool free = !assigned.contains(base) && (!own.empty() || !given.contains(base));
    std::string name = base;
    if (!free) {
      // `base` itself is taken, so the loop runs at least once.
      int& suffix = next_suffix.try_emplace(base, 1).first->second;
      while (assigned.contains(name) || given.contains(name)) {
        name = absl::StrCat(base, "_", suffix++);
      }
    }
    assigned.insert(name);
    names.push_back(std::move(name));
  }
  return names;
}

absl::StatusOr<NodeGraph> AnalyzeNodeGraph(const GraphProto& graph,
                                           std::vector<std::string> names) {
  NodeGraph nodes;
  nodes.names = std::move(names);
  for (const onnx::TensorProto& initializer : graph.initializer()) {
    nodes.initializers.insert(initializer.name());
  }
  for (const onnx::ValueInfoProto& input : graph.input()) {
    if (!nodes.initializers.contains(input.name())) nodes.graph_inputs.insert(input.name());
  }
  ORDO_RETURN_IF_ERROR(RecordProducers(graph, nodes));
  ORDO_RETURN_IF_ERROR(CheckInputsDefined(graph, nodes));
  ORDO_RETURN_IF_ERROR(TopologicalOrder(graph, nodes));
  return nodes;
}

}  // namespace ordo::onnx_import
