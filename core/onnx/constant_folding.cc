#include "core/onnx/constant_folding.h"

#include <algorithm>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "core/onnx/constant_evaluator.h"
#include "google/protobuf/arena.h"
#include "core/onnx/constant_tensor.h"

namespace ordo::onnx_import {
namespace {

// ONNX shape inference takes a tensor's type from value_info before its
// initializer: a value_info that an earlier round inferred without a shape
// (the value was not known then) would hide the folded value's dims from
// every consumer (Swin's shifted-window attention mask: the Add of mask and
// scores stayed shapeless). A folded tensor's initializer is its type.
void DropValueInfoOfInitializers(onnx::GraphProto& graph) {
  absl::flat_hash_set<absl::string_view> initializers;
  for (const onnx::TensorProto& initializer : graph.initializer()) {
    initializers.insert(initializer.name());
  }
  auto* value_info = graph.mutable_value_info();
  value_info->erase(std::remove_if(value_info->begin(), value_info->end(),
                                   [&](const onnx::ValueInfoProto& info) {
                                     return initializers.contains(info.name());
                                   }),
                    value_info->end());
}

using onnx::NodeProto;

bool IsShapeOf(const NodeProto& node) {
  return (node.domain().empty() || node.domain() == "ai.onnx") &&
         (node.op_type() == "Shape" || node.op_type() == "Size") && node.input_size() == 1;
}

// One FoldConstants call. Owns the working copy of the model whose folded
// nodes are replaced by initializers; `model_` and `nodes_` must outlive it.
// The copy is made lazily, on the first inference or replacement: a model
// whose every value already has a static shape and nothing to fold (an
// exported NAS candidate) is read in place, and copying and destroying a
// 782-node ModelProto was a third of its import.
class ConstantFolder {
 public:
  ConstantFolder(const onnx::ModelProto& model, const NodeGraph& nodes);

  FoldingResult Run() &&;

 private:
  const onnx::GraphProto& graph() const;
  onnx::ModelProto& Working();
  bool NeedsInference() const;
  void InferShapes();
  std::optional<std::vector<int64_t>> StaticDims(const std::string& tensor) const;
  bool IsCompileTime(const NodeProto& node) const;
  void Propagate();
  void Evaluate(int32_t index);
  bool HasAllValues(const NodeProto& node) const;
  bool ReplaceEvaluatedNodes();

  const onnx::ModelProto& model_;
  const NodeGraph& nodes_;
  google::protobuf::Arena arena_;
  onnx::ModelProto* working_ = nullptr;  // on arena_; null until Working()
  TensorTypes types_;
  absl::flat_hash_map<std::string, ConstantTensor> values_;
  absl::flat_hash_set<std::string> compile_time_;
  std::vector<bool> folded_;
  std::vector<bool> replaced_;
  std::string inference_error_;
};

ConstantFolder::ConstantFolder(const onnx::ModelProto& model, const NodeGraph& nodes)
    : model_(model),
      nodes_(nodes),
      folded_(model.graph().node_size(), false),
      replaced_(model.graph().node_size(), false) {
  // ConstantFromProto reads only small tensors, so bulk weight data left in
  // `model` changes nothing here.
  for (const onnx::TensorProto& initializer : model_.graph().initializer()) {
    std::optional<ConstantTensor> value = ConstantFromProto(initializer);
    if (value) values_.insert_or_assign(initializer.name(), std::move(*value));
  }
  types_ = CollectTensorTypes(model_.graph());
}

const onnx::GraphProto& ConstantFolder::graph() const {
  return working_ != nullptr ? working_->graph() : model_.graph();
}

onnx::ModelProto& ConstantFolder::Working() {
  if (working_ != nullptr) return *working_;
  working_ = google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&arena_);
  *working_ = model_;
  // Below IR version 4 inference only types initializers that are also graph
  // inputs; the initializers added here are not, so the copy says 4.
  if (working_->ir_version() < 4) working_->set_ir_version(4);
  // Inference reads data only of small shape-like operands; dropping the
  // bulk of real weights keeps the copies made per round cheap.
  DropBulkInitializerData(*working_->mutable_graph());
  return *working_;
}

FoldingResult ConstantFolder::Run() && {
  if (NeedsInference()) InferShapes();
  bool rounds_exhausted = true;
  for (int round = 0; round < kMaxFoldingRounds; ++round) {
    Propagate();
    if (!ReplaceEvaluatedNodes()) {
      rounds_exhausted = false;
      break;
    }
    types_ = CollectTensorTypes(graph());
    if (NeedsInference()) InferShapes();
  }
  // Evaluated values are exact even where no initializer replaced their node
  // (a multi-output node with one unknown output).
  for (const auto& [name, value] : values_) {
    TensorType& type = types_[name];
    type.elem_type = value.elem_type;
    type.has_shape = true;
    type.dims = value.dims;
    type.symbols.assign(value.dims.size(), "");
  }
  return {std::move(folded_), std::move(types_), std::move(inference_error_), rounds_exhausted};
}

bool ConstantFolder::NeedsInference() const {
  for (const NodeProto& node : graph().node()) {
    for (const std::string& output : node.output()) {
      if (output.empty() || values_.contains(output)) continue;
      auto it = types_.find(output);
      if (it == types_.end() || !it->second.IsStatic() || it->second.elem_type == 0) {
        return true;
      }
    }
  }
  return false;
}

void ConstantFolder::InferShapes() {
  absl::Status status = InferShapesInPlace(Working());
  inference_error_ = status.ok() ? "" : std::string(status.message());
  types_ = CollectTensorTypes(graph());
}

std::optional<std::vector<int64_t>> ConstantFolder::StaticDims(const std::string& tensor) const {
  if (auto value = values_.find(tensor); value != values_.end()) {
    return value->second.dims;
  }
  auto type = types_.find(tensor);
  if (type == types_.end() || !type->second.IsStatic()) return std::nullopt;
  return type->second.dims;
}

bool ConstantFolder::IsCompileTime(const NodeProto& node) const {
  if (IsShapeOf(node) && StaticDims(node.input(0))) return true;
  for (const std::string& input : node.input()) {
    if (!input.empty() && !compile_time_.contains(input)) return false;
  }
  return true;
}

// Recomputed from scratch each round: the compile-time set only grows as
// shapes become static, and a fresh walk in topological order sees each
// node's inputs settled before the node.
void ConstantFolder::Propagate() {
  compile_time_ = nodes_.initializers;
  for (int32_t index : nodes_.order) {
    const NodeProto& node = model_.graph().node(index);
    if (!IsCompileTime(node)) continue;
    folded_[index] = true;
    for (const std::string& output : node.output()) {
      if (!output.empty()) compile_time_.insert(output);
    }
    if (!HasAllValues(node)) Evaluate(index);
  }
}

void ConstantFolder::Evaluate(int32_t index) {
  const NodeProto& node = model_.graph().node(index);
  std::optional<std::vector<ConstantTensor>> outputs;
  std::optional<std::vector<int64_t>> dims =
      IsShapeOf(node) ? StaticDims(node.input(0)) : std::nullopt;
  if (dims) {
    std::optional<ConstantTensor> shape = EvaluateShapeOf(node, *dims);
    if (shape) outputs.emplace().push_back(std::move(*shape));
  } else {
    std::vector<const ConstantTensor*> inputs;
    for (const std::string& input : node.input()) {
      auto it = input.empty() ? values_.end() : values_.find(input);
      if (!input.empty() && it == values_.end()) return;  // not computable (yet)
      inputs.push_back(it == values_.end() ? nullptr : &it->second);
    }
    outputs = EvaluateConstantNode(node, inputs);
  }
  if (!outputs || static_cast<int>(outputs->size()) != node.output_size()) return;
  for (int i = 0; i < node.output_size(); ++i) {
    if (!node.output(i).empty()) {
      values_.insert_or_assign(node.output(i), std::move((*outputs)[i]));
    }
  }
}

bool ConstantFolder::HasAllValues(const NodeProto& node) const {
  for (const std::string& output : node.output()) {
    if (!output.empty() && !values_.contains(output)) return false;
  }
  return true;
}

bool ConstantFolder::ReplaceEvaluatedNodes() {
  const onnx::GraphProto& original = model_.graph();
  bool replaced_any = false;
  for (int32_t i = 0; i < original.node_size(); ++i) {
    if (!folded_[i] || replaced_[i] || !HasAllValues(original.node(i))) continue;
    replaced_[i] = true;
    replaced_any = true;
    for (const std::string& output : original.node(i).output()) {
      if (output.empty()) continue;
      // HasAllValues above: the value is there.
      *Working().mutable_graph()->add_initializer() =
          ConstantToProto(values_.find(output)->second, output);
    }
  }
  if (!replaced_any) return false;
  onnx::GraphProto& working = *Working().mutable_graph();
  working.clear_node();
  for (int32_t i = 0; i < original.node_size(); ++i) {
    if (!replaced_[i]) *working.add_node() = original.node(i);
  }
  DropValueInfoOfInitializers(working);
  return true;
}

}  // namespace

FoldingResult FoldConstants(const onnx::ModelProto& model, const NodeGraph& nodes) {
  return ConstantFolder(model, nodes).Run();
}

}  // namespace ordo::onnx_import
