#include "core/onnx/node_graph.h"

#include <functional>
#include <queue>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/util/status_macros.h"

namespace ordo::onnx_import {
namespace {

// Gives `name` the next id if it has none. "" has no id.
int32_t Intern(absl::string_view name, NodeGraph& nodes) {
  if (name.empty()) return kNoValue;
  auto [it, inserted] = nodes.value_ids.try_emplace(name, nodes.num_values());
  if (inserted) nodes.value_names.push_back(name);
  return it->second;
}

// The one pass over the file's names: every value gets its id and every node
// its input and output ids.
void NumberValues(const ModelView& graph, NodeGraph& nodes) {
  nodes.value_ids.reserve(graph.inputs.size() + graph.initializers.size() +
                          graph.nodes.size() * 2);
  nodes.edges.reserve(graph.value_refs.size());
  nodes.edge_begin.reserve(2 * graph.nodes.size() + 1);
  nodes.input_ids.reserve(graph.inputs.size());
  for (const ValueInfoView& input : graph.inputs) nodes.input_ids.push_back(Intern(input.name, nodes));
  nodes.initializer_ids.reserve(graph.initializers.size());
  for (const InitializerView& initializer : graph.initializers) {
    nodes.initializer_ids.push_back(Intern(initializer.name, nodes));
  }
  for (int32_t i = 0; i < graph.num_nodes(); ++i) {
    nodes.edge_begin.push_back(static_cast<int32_t>(nodes.edges.size()));
    for (absl::string_view input : graph.inputs_of(i)) nodes.edges.push_back(Intern(input, nodes));
    nodes.edge_begin.push_back(static_cast<int32_t>(nodes.edges.size()));
    for (absl::string_view output : graph.outputs_of(i)) {
      nodes.edges.push_back(Intern(output, nodes));
    }
  }
  nodes.edge_begin.push_back(static_cast<int32_t>(nodes.edges.size()));
  for (const ValueInfoView& output : graph.outputs) Intern(output.name, nodes);

  nodes.producer.assign(nodes.num_values(), kNoValue);
  nodes.is_initializer.assign(nodes.num_values(), false);
  nodes.is_graph_input.assign(nodes.num_values(), false);
  for (int32_t id : nodes.initializer_ids) {
    if (id != kNoValue) nodes.is_initializer[id] = true;
  }
  for (int32_t id : nodes.input_ids) {
    if (id != kNoValue && !nodes.is_initializer[id]) nodes.is_graph_input[id] = true;
  }
}

absl::Status RecordProducers(const ModelView& graph, NodeGraph& nodes) {
  for (int32_t i = 0; i < graph.num_nodes(); ++i) {
    for (int32_t output : nodes.outputs(i)) {
      if (output == kNoValue) continue;
      const std::string& op = nodes.names[i];
      const absl::string_view name = nodes.value_names[output];
      if (nodes.is_initializer[output]) {
        return absl::InvalidArgumentError(
            absl::StrCat("op \"", op, "\" writes tensor \"", name, "\", which is a weight"));
      }
      if (nodes.is_graph_input[output]) {
        return absl::InvalidArgumentError(
            absl::StrCat("op \"", op, "\" writes tensor \"", name, "\", which is a graph input"));
      }
      if (nodes.producer[output] != kNoValue) {
        return absl::InvalidArgumentError(
            absl::StrCat("tensor \"", name, "\" has two producers: op \"",
                         nodes.names[nodes.producer[output]], "\" and op \"", op, "\""));
      }
      nodes.producer[output] = i;
    }
  }
  return absl::OkStatus();
}

absl::Status CheckInputsDefined(const ModelView& graph, const NodeGraph& nodes) {
  for (int32_t i = 0; i < graph.num_nodes(); ++i) {
    for (int32_t input : nodes.inputs(i)) {
      if (input == kNoValue || nodes.producer[input] != kNoValue || nodes.is_initializer[input] ||
          nodes.is_graph_input[input]) {
        continue;
      }
      return absl::InvalidArgumentError(absl::StrCat("op \"", nodes.names[i], "\" reads tensor \"",
                                                     nodes.value_names[input],
                                                     "\", which is not defined"));
    }
  }
  return absl::OkStatus();
}

// The node that writes input `input`, or kNoValue.
int32_t ProducerOf(int32_t input, const NodeGraph& nodes) {
  return input == kNoValue ? kNoValue : nodes.producer[input];
}

// Names a node on a cycle: every node left out of the order has a
// predecessor that is also left out, so walking back node_size() steps from
// any of them must end on a cycle.
std::string NodeOnCycle(int32_t n, const std::vector<bool>& ordered, const NodeGraph& nodes) {
  int32_t node = 0;
  while (ordered[node]) ++node;
  for (int32_t step = 0; step < n; ++step) {
    for (int32_t input : nodes.inputs(node)) {
      const int32_t pred = ProducerOf(input, nodes);
      if (pred != kNoValue && !ordered[pred]) {
        node = pred;
        break;
      }
    }
  }
  return nodes.names[node];
}

absl::Status TopologicalOrder(int32_t n, NodeGraph& nodes) {
  // Successor lists in one array, counted per input edge.
  std::vector<int32_t> waiting(n, 0);
  std::vector<int32_t> successor_begin(n + 1, 0);
  for (int32_t i = 0; i < n; ++i) {
    for (int32_t input : nodes.inputs(i)) {
      const int32_t pred = ProducerOf(input, nodes);
      if (pred == kNoValue) continue;
      ++waiting[i];
      ++successor_begin[pred + 1];
    }
  }
  for (int32_t i = 0; i < n; ++i) successor_begin[i + 1] += successor_begin[i];
  std::vector<int32_t> successors(successor_begin[n]);
  std::vector<int32_t> fill(successor_begin.begin(), successor_begin.end() - 1);
  for (int32_t i = 0; i < n; ++i) {
    for (int32_t input : nodes.inputs(i)) {
      const int32_t pred = ProducerOf(input, nodes);
      if (pred != kNoValue) successors[fill[pred]++] = i;
    }
  }
  std::priority_queue<int32_t, std::vector<int32_t>, std::greater<int32_t>> ready;
  for (int32_t i = 0; i < n; ++i) {
    if (waiting[i] == 0) ready.push(i);
  }
  std::vector<bool> ordered(n, false);
  nodes.order.reserve(n);
  while (!ready.empty()) {
    const int32_t node = ready.top();
    ready.pop();
    ordered[node] = true;
    nodes.order.push_back(node);
    for (int32_t s = successor_begin[node]; s < successor_begin[node + 1]; ++s) {
      if (--waiting[successors[s]] == 0) ready.push(successors[s]);
    }
  }
  if (static_cast<int32_t>(nodes.order.size()) == n) return absl::OkStatus();
  return absl::InvalidArgumentError(
      absl::StrCat("graph has a cycle through op \"", NodeOnCycle(n, ordered, nodes), "\""));
}

}  // namespace

int32_t NodeGraph::FindValue(absl::string_view name) const {
  auto it = value_ids.find(name);
  return it == value_ids.end() ? kNoValue : it->second;
}

std::vector<std::string> UniqueNodeNames(const ModelView& graph) {
  absl::flat_hash_set<absl::string_view> given;  // views of names in `graph`
  given.reserve(graph.nodes.size());
  bool all_named = true;
  for (const NodeView& node : graph.nodes) {
    all_named = all_named && !node.name.empty();
    if (!node.name.empty()) given.insert(node.name);
  }
  std::vector<std::string> names;
  names.reserve(graph.nodes.size());
  // The common case (every exporter's): each node has its own distinct name.
  if (all_named && static_cast<int32_t>(given.size()) == graph.num_nodes()) {
    for (const NodeView& node : graph.nodes) names.emplace_back(node.name);
    return names;
  }
  absl::flat_hash_set<std::string> assigned;
  // Next suffix to try per base name, so n copies of one name cost O(n), not
  // O(n^2).
  absl::flat_hash_map<std::string, int> next_suffix;
  for (int32_t i = 0; i < graph.num_nodes(); ++i) {
    const absl::string_view own = graph.nodes[i].name;
    std::string base = own.empty() ? absl::StrCat("n", i) : std::string(own);
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

absl::StatusOr<NodeGraph> AnalyzeNodeGraph(const ModelView& graph,
                                           std::vector<std::string> names) {
  NodeGraph nodes;
  nodes.names = std::move(names);
  NumberValues(graph, nodes);
  ORDO_RETURN_IF_ERROR(RecordProducers(graph, nodes));
  ORDO_RETURN_IF_ERROR(CheckInputsDefined(graph, nodes));
  ORDO_RETURN_IF_ERROR(TopologicalOrder(graph.num_nodes(), nodes));
  return nodes;
}

}  // namespace ordo::onnx_import
