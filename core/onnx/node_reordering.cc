#include "core/onnx/node_reordering.h"

#include <functional>
#include <queue>
#include <string>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"

namespace ordo::onnx_import {
namespace {

// Emits nodes while tracking which compile-time nodes have all their
// producers written. `graph` and `nodes` must outlive it.
class NodeWriter {
 public:
  NodeWriter(const onnx::GraphProto& graph, const NodeGraph& nodes,
             absl::Span<const int32_t> scheduled, absl::Span<const int32_t> frozen);

  // Writes `node` and then every compile-time node it makes ready.
  absl::Status WriteScheduled(int32_t node);
  // Writes the compile-time nodes that are ready now.
  void WriteReady();
  // Compile-time nodes that never became ready (only on a cycle, which
  // import rejects), in file order.
  void WriteRest();

  std::vector<int32_t> TakeOrder() && { return std::move(order_); }
  // Drops the compile-time nodes none of whose outputs a written node or
  // the graph reads.
  void DropUnread();

 private:
  void Write(int32_t node);
  // Write's bookkeeping for a node whose outputs are initializers.
  void Release(int32_t node);

  const onnx::GraphProto& graph_;
  const NodeGraph& nodes_;
  std::vector<bool> scheduled_;
  std::vector<bool> written_;
  // Per compile-time node: inputs whose producer is not written yet, counted
  // per input edge.
  std::vector<int32_t> waiting_;
  // By value id.
  absl::flat_hash_map<int32_t, std::vector<int32_t>> compile_time_readers_;
  std::priority_queue<int32_t, std::vector<int32_t>, std::greater<int32_t>> ready_;
  std::vector<int32_t> order_;
};

NodeWriter::NodeWriter(const onnx::GraphProto& graph, const NodeGraph& nodes,
                       absl::Span<const int32_t> scheduled, absl::Span<const int32_t> frozen)
    : graph_(graph),
      nodes_(nodes),
      scheduled_(graph.node_size(), false),
      written_(graph.node_size(), false),
      waiting_(graph.node_size(), 0) {
  for (int32_t node : scheduled) scheduled_[node] = true;
  for (int32_t node : frozen) written_[node] = true;
  for (int32_t i = 0; i < graph.node_size(); ++i) {
    if (scheduled_[i] || written_[i]) continue;
    for (int32_t input : nodes.inputs(i)) {
      if (input == kNoValue || nodes.producer[input] == kNoValue) continue;
      ++waiting_[i];
      compile_time_readers_[input].push_back(i);
    }
    if (waiting_[i] == 0) ready_.push(i);
  }
  for (int32_t node : frozen) Release(node);
}

absl::Status NodeWriter::WriteScheduled(int32_t node) {
  for (int32_t input : nodes_.inputs(node)) {
    const int32_t producer = input == kNoValue ? kNoValue : nodes_.producer[input];
    if (producer == kNoValue || written_[producer]) continue;
    const std::string& name = nodes_.names[node];
    const absl::string_view tensor = nodes_.value_names[input];
    if (scheduled_[producer]) {
      return absl::InvalidArgumentError(
          absl::StrCat("schedule runs op \"", name, "\" before op \"", nodes_.names[producer],
                       "\", which produces its input \"", tensor, "\""));
    }
    return absl::InvalidArgumentError(
        absl::StrCat("op \"", name, "\" reads compile-time tensor \"", tensor,
                     "\", which is computed from an activation the schedule produces later; "
                     "no topologically sorted file can run this schedule"));
  }
  Write(node);
  WriteReady();
  return absl::OkStatus();
}

void NodeWriter::WriteReady() {
  while (!ready_.empty()) {
    const int32_t node = ready_.top();
    ready_.pop();
    Write(node);
  }
}

void NodeWriter::WriteRest() {
  for (int32_t i = 0; i < graph_.node_size(); ++i) {
    if (!written_[i]) Write(i);
  }
}

void NodeWriter::Write(int32_t node) {
  order_.push_back(node);
  Release(node);
}

void NodeWriter::Release(int32_t node) {
  written_[node] = true;
  for (int32_t output : nodes_.outputs(node)) {
    auto it = output == kNoValue ? compile_time_readers_.end() : compile_time_readers_.find(output);
    if (it == compile_time_readers_.end()) continue;
    for (int32_t reader : it->second) {
      if (--waiting_[reader] == 0 && !written_[reader]) ready_.push(reader);
    }
  }
}

void NodeWriter::DropUnread() {
  std::vector<bool> read(nodes_.num_values(), false);
  for (const onnx::ValueInfoProto& output : graph_.output()) {
    const auto id = nodes_.value_ids.find(output.name());
    if (id != nodes_.value_ids.end()) read[id->second] = true;
  }
  // Readers come after their producers in order_: one backward pass.
  std::vector<int32_t> kept;
  for (auto it = order_.rbegin(); it != order_.rend(); ++it) {
    bool keep = scheduled_[*it];
    for (int32_t output : nodes_.outputs(*it)) keep = keep || (output != kNoValue && read[output]);
    if (!keep) continue;
    kept.push_back(*it);
    for (int32_t input : nodes_.inputs(*it)) {
      if (input != kNoValue) read[input] = true;
    }
  }
  order_.assign(kept.rbegin(), kept.rend());
}

}  // namespace

absl::StatusOr<std::vector<int32_t>> InterleaveCompileTimeNodes(const onnx::GraphProto& graph,
                                                                const NodeGraph& nodes,
                                                                absl::Span<const int32_t> scheduled,
                                                                absl::Span<const int32_t> frozen) {
  NodeWriter writer(graph, nodes, scheduled, frozen);
  writer.WriteReady();
  for (int32_t node : scheduled) {
    absl::Status status = writer.WriteScheduled(node);
    if (!status.ok()) return status;
  }
  writer.WriteRest();
  if (!frozen.empty()) writer.DropUnread();
  return std::move(writer).TakeOrder();
}

std::vector<int32_t> CompileTimeNodesOfActivationsReadByScheduled(
    const NodeGraph& nodes, absl::Span<const int32_t> scheduled) {
  const int32_t num_nodes = static_cast<int32_t>(nodes.names.size());
  std::vector<bool> is_scheduled(num_nodes, false), of_activation(num_nodes, false);
  for (int32_t node : scheduled) is_scheduled[node] = true;
  for (int32_t node : nodes.order) {  // producers first
    if (is_scheduled[node]) continue;
    for (int32_t input : nodes.inputs(node)) {
      const int32_t producer = input == kNoValue ? kNoValue : nodes.producer[input];
      if (producer != kNoValue && (is_scheduled[producer] || of_activation[producer])) {
        of_activation[node] = true;
      }
    }
  }
  std::vector<bool> taken(num_nodes, false);
  std::vector<int32_t> read;
  for (int32_t node : scheduled) {
    for (int32_t input : nodes.inputs(node)) {
      const int32_t producer = input == kNoValue ? kNoValue : nodes.producer[input];
      if (producer == kNoValue || !of_activation[producer] || taken[producer]) continue;
      taken[producer] = true;
      read.push_back(producer);
    }
  }
  return read;
}

}  // namespace ordo::onnx_import
