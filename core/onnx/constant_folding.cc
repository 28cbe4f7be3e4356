#include "core/onnx/constant_folding.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "core/graph/onnx_domain.h"
#include "core/onnx/constant_evaluator.h"
#include "core/onnx/constant_tensor.h"
#include "core/onnx/input_shapes.h"
#include "google/protobuf/arena.h"
#include "onnx/defs/schema.h"

namespace ordo::onnx_import {
namespace {

// ONNX shape inference takes a tensor's type from value_info and the graph
// outputs before its initializer: a value_info that an earlier round
// inferred without a shape (the value was not known then) would hide the
// folded value's dims from every consumer (Swin's shifted-window attention
// mask: the Add of mask and scores stayed shapeless), and so would a weight
// listed as a graph output without dims (bench/onnx-sweep: every Conv
// reading it was left unknown, and the refusal gave no reason instead of
// naming the weight output). A folded tensor's initializer is its type.
void DropDeclarationsOfInitializers(onnx::GraphProto& graph) {
  absl::flat_hash_set<absl::string_view> initializers;
  for (const onnx::TensorProto& initializer : graph.initializer()) {
    initializers.insert(initializer.name());
  }
  auto drop = [&](auto& declarations) {
    declarations.erase(std::remove_if(declarations.begin(), declarations.end(),
                                      [&](const onnx::ValueInfoProto& info) {
                                        return initializers.contains(info.name());
                                      }),
                       declarations.end());
  };
  drop(*graph.mutable_value_info());
  drop(*graph.mutable_output());
}

// A thread's first arena block for the parsed model and its working copy,
// reused from import to import:
// sized for the largest model the thread imported, up to kMaxBytes (a
// larger model's arena takes further blocks from the heap, as every block
// did before). At most kMaxBytes per thread that imports: about 20 MiB for
// a server's queue threads. A lease taken while another is held on the
// thread (nothing does that today) gets no block.
class ReusedArenaBlock {
 public:
  static constexpr size_t kMinBytes = size_t{64} << 10;
  static constexpr size_t kMaxBytes = size_t{2} << 20;
  // A parsed model takes about 7 arena bytes per byte of the file
  // (nasnet_cifar: 254 KB parse to 1.78 MB; resnet50, darts_cifar and
  // pnas_cifar alike).
  static constexpr size_t kArenaPerModelByte = 8;

  class Lease {
   public:
    // About the protobuf arena a model of `model_bytes` needs.
    explicit Lease(size_t model_bytes) : block_(ThisThread()) {
      if (block_.leased_) return;
      block_.leased_ = true;
      held_ = true;
      const size_t want = std::max(
          block_.size_, std::clamp(kArenaPerModelByte * model_bytes, kMinBytes, kMaxBytes));
      if (want > block_.size_) {
        block_.data_ = std::make_unique<char[]>(want);
        block_.size_ = want;
      }
    }
    ~Lease() {
      if (held_) block_.leased_ = false;
    }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;

    google::protobuf::ArenaOptions options() const {
      google::protobuf::ArenaOptions options;
      if (held_) {
        options.initial_block = block_.data_.get();
        options.initial_block_size = block_.size_;
      }
      return options;
    }

   private:
    ReusedArenaBlock& block_;
    bool held_ = false;
  };

 private:
  static ReusedArenaBlock& ThisThread() {
    thread_local ReusedArenaBlock block;
    return block;
  }

  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
  bool leased_ = false;
};

using onnx::NodeProto;

bool IsShapeOf(const ModelView& view, int32_t index) {
  const NodeView& node = view.nodes[index];
  return IsStandardOnnxDomain(node.domain) &&
         (node.op_type == "Shape" || node.op_type == "Size") && view.inputs_of(index).size() == 1;
}

// One FoldConstants call. Owns the parsed model and its working copy whose
// folded nodes are replaced by initializers; `view_`, `bytes_` and `nodes_`
// must outlive it. Both are made lazily: the model on the first evaluation,
// inference or replacement, the copy on the first inference or replacement.
// A model whose every value already has a static shape and nothing to fold
// (an exported NAS candidate) is read from the view alone: building a
// 782-node ModelProto was half of its import, copying it another third.
class ConstantFolder {
 public:
  ConstantFolder(const ModelView& view, absl::string_view bytes, const NodeGraph& nodes,
                 TensorTypes types);

  absl::StatusOr<FoldingResult> Run() &&;

 private:
  const onnx::ModelProto& Model();
  const onnx::GraphProto& graph();
  onnx::ModelProto& Working();
  void CopyNodesInOrder();
  bool DeclarationsAreStale() const;
  void ForgetDeclaredShapes();
  absl::Status CheckCustomOpDeclarations() const;
  absl::Status CheckCompileTimeIndices() const;
  void StripForgottenShapes(onnx::GraphProto& graph) const;
  bool NeedsInference() const;
  bool HasUnknownActivation() const;
  void InferShapes();
  std::optional<std::vector<int64_t>> StaticDims(int32_t value) const;
  bool IsCompileTime(int32_t index) const;
  void Propagate();
  void Evaluate(int32_t index);
  bool HasAllValues(int32_t index) const;
  bool ReplaceEvaluatedNodes();

  const ModelView& view_;
  const absl::string_view bytes_;
  const NodeGraph& nodes_;
  // Made with the model (a model read from the view alone needs neither);
  // block_ before arena_, which starts in it.
  std::optional<ReusedArenaBlock::Lease> block_;
  std::optional<google::protobuf::Arena> arena_;
  onnx::ModelProto* model_ = nullptr;    // on arena_; null until Model()
  onnx::ModelProto* working_ = nullptr;  // on arena_; null until Working()
  TensorTypes types_;  // by value id
  absl::flat_hash_map<int32_t, ConstantTensor> values_;  // by value id
  std::vector<bool> compile_time_;                       // by value id
  std::vector<bool> folded_;
  std::vector<bool> replaced_;
  std::string inference_error_;
  absl::Status parse_status_;
  // By value id: a declared shape not to be believed (ForgetDeclaredShapes).
  std::vector<bool> forgotten_;
  // By value id: the types as declared, kept when the declarations were
  // found stale (empty otherwise).
  TensorTypes declared_;
};

ConstantFolder::ConstantFolder(const ModelView& view, absl::string_view bytes,
                               const NodeGraph& nodes, TensorTypes types)
    : view_(view),
      bytes_(bytes),
      nodes_(nodes),
      types_(std::move(types)),
      folded_(view.nodes.size(), false),
      replaced_(view.nodes.size(), false) {}

// The message, with the initializers' values: a value's type is its
// initializer's dims and type either way, so reading them late changes no
// type. ScanModel accepted the bytes; protobuf may still refuse damage
// inside a field the scan skips: then Run fails with parse_status_, and the
// empty model left here has nothing to evaluate or infer meanwhile.
const onnx::ModelProto& ConstantFolder::Model() {
  if (model_ != nullptr) return *model_;
  block_.emplace(bytes_.size());
  arena_.emplace(block_->options());
  model_ = google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&*arena_);
  if (!model_->ParseFromArray(bytes_.data(), static_cast<int>(bytes_.size())) ||
      model_->graph().node_size() != view_.num_nodes()) {
    model_->Clear();
    parse_status_ = absl::InvalidArgumentError(
        "not a valid ONNX model: the bytes do not parse as onnx.ModelProto");
    return *model_;
  }
  DropBulkInitializerData(*model_->mutable_graph());
  // ConstantFromProto reads only small tensors.
  for (const onnx::TensorProto& initializer : model_->graph().initializer()) {
    const int32_t id = nodes_.FindValue(initializer.name());
    if (id == kNoValue) continue;
    std::optional<ConstantTensor> value = ConstantFromProto(initializer);
    if (value) values_.insert_or_assign(id, std::move(*value));
  }
  return *model_;
}

const onnx::GraphProto& ConstantFolder::graph() {
  return working_ != nullptr ? working_->graph() : Model().graph();
}

onnx::ModelProto& ConstantFolder::Working() {
  if (working_ != nullptr) return *working_;
  const onnx::ModelProto& model = Model();
  working_ = google::protobuf::Arena::CreateMessage<onnx::ModelProto>(&*arena_);
  *working_ = model;
  // Below IR version 4 inference only types initializers that are also graph
  // inputs; the initializers added here are not, so the copy says 4.
  if (working_->ir_version() < 4) working_->set_ir_version(4);
  // Inference reads data only of small shape-like operands; dropping the
  // bulk of real weights keeps the copies made per round cheap.
  DropBulkInitializerData(*working_->mutable_graph());
  StripForgottenShapes(*working_->mutable_graph());
  // A node using a newer opset's feature gets no inference from the
  // library's older schema: in a domain it has no schema for, its declared
  // shapes stand, as a custom op's do.
  bool newer = false;
  // Bytes protobuf refused leave the model empty (Run reports it; the
  // fuzzer found this loop indexing past its nodes): none to mark.
  const int32_t nodes = working_->graph().node_size() == view_.num_nodes() ? view_.num_nodes() : 0;
  for (int32_t i = 0; i < nodes; ++i) {
    if (FeatureNewerThanLibrary(view_, view_.nodes[i]).empty()) continue;
    working_->mutable_graph()->mutable_node(i)->set_domain(std::string(kNewerOpsetDomain));
    newer = true;
  }
  if (newer) {
    onnx::OperatorSetIdProto& id = *working_->add_opset_import();
    id.set_domain(std::string(kNewerOpsetDomain));
    id.set_version(1);
  }
  // ONNX's inference walks the nodes in file order: on a file that is not
  // topologically sorted it leaves shapes unknown, and libonnx 1.12
  // crashes on some (bench/onnx-sweep). It sees the order a runtime loads.
  if (!std::is_sorted(nodes_.order.begin(), nodes_.order.end())) CopyNodesInOrder();
  return *working_;
}

// The working graph's nodes: the original's not replaced by initializers,
// dependencies first. (Working() calls this once the copy exists, and then
// the call below returns it; a replaced node without outputs made no copy.)
void ConstantFolder::CopyNodesInOrder() {
  const onnx::GraphProto& original = Model().graph();
  onnx::GraphProto& working = *Working().mutable_graph();
  working.clear_node();
  // Bytes protobuf refused (Model() left it empty; Run reports it): none.
  if (original.node_size() != view_.num_nodes()) return;
  for (int32_t i : nodes_.order) {
    if (!replaced_[i]) *working.add_node() = original.node(i);
  }
}

onnx::TypeProto TypeProtoOf(const TensorType& type) {
  onnx::TypeProto proto;
  onnx::TypeProto::Tensor& tensor = *proto.mutable_tensor_type();
  tensor.set_elem_type(type.elem_type);
  if (type.has_shape) {
    onnx::TensorShapeProto& shape = *tensor.mutable_shape();
    for (int64_t dim : type.dims) {
      onnx::TensorShapeProto::Dimension& d = *shape.add_dim();
      if (dim != kUnknownDim) d.set_dim_value(dim);
    }
  }
  return proto;
}

// The ops whose inference in libonnx 1.12 is exact whatever their
// attributes, so a disagreement with a declaration means the declaration is
// stale (pooling with ceil_mode and pads, for one, was fixed only later).
bool HasExactInference(absl::string_view op_type) {
  static const absl::flat_hash_set<absl::string_view>* const kOps =
      new absl::flat_hash_set<absl::string_view>{
          "Conv", "Gemm", "MatMul", "BatchNormalization", "Relu", "Sigmoid", "Tanh", "LeakyRelu",
          "HardSigmoid", "HardSwish", "Clip", "Add", "Sub", "Mul", "Div", "Transpose", "Flatten",
          "Identity",
          // A quantized model's first op quantizes its input.
          "QuantizeLinear", "DequantizeLinear", "DynamicQuantizeLinear", "QLinearConv",
          "QLinearMatMul", "ConvInteger", "MatMulInteger"};
  return kOps->contains(op_type);
}

// Whether the shapes the file declares for what its first ops write (the
// ops reading a graph input) disagree with what ONNX infers for those ops
// from the graph inputs. A model whose input a tool resized without
// touching value_info (onnx.tools.update_model_dims does that) declares
// every shape at the old size; where every value is declared nothing runs
// inference, so the plan would be the old size's (bench/onnx-sweep's
// resized exports). Those ops alone are rebuilt from the view and inferred
// at the file's opsets; a value one of them reads that another op writes is
// given its element type only, so no stale declaration enters the check.
// A file whose first ops declare no static shape costs nothing, and nothing
// is parsed.
bool ConstantFolder::DeclarationsAreStale() const {
  std::vector<int32_t> first_ops;
  std::vector<bool> is_first(view_.num_nodes(), false);
  for (int32_t i = 0; i < view_.num_nodes(); ++i) {
    const NodeView& node = view_.nodes[i];
    if (!IsStandardOnnxDomain(node.domain) || !HasExactInference(node.op_type)) {
      continue;
    }
    bool reads_input = false, declares = false;
    for (int32_t input : nodes_.inputs(i)) {
      reads_input = reads_input || (input != kNoValue && nodes_.is_graph_input[input]);
    }
    for (int32_t output : nodes_.outputs(i)) {
      declares = declares || (output != kNoValue && types_[output].IsStatic());
    }
    if (reads_input && declares && IsKnownToOnnx(view_, node)) {
      first_ops.push_back(i);
      is_first[i] = true;
    }
  }
  if (first_ops.empty()) return false;
  onnx::ModelProto model;
  model.set_ir_version(8);
  for (const OpsetView& opset : view_.opsets) {
    onnx::OperatorSetIdProto& id = *model.add_opset_import();
    id.set_domain(std::string(opset.domain));
    id.set_version(opset.version);
  }
  onnx::GraphProto& graph = *model.mutable_graph();
  absl::flat_hash_set<int32_t> declared;
  for (int32_t i : first_ops) {
    onnx::NodeProto& node = *graph.add_node();
    node.set_op_type(std::string(view_.nodes[i].op_type));
    node.set_domain(std::string(view_.nodes[i].domain));
    for (absl::string_view input : view_.inputs_of(i)) node.add_input(std::string(input));
    for (absl::string_view output : view_.outputs_of(i)) node.add_output(std::string(output));
    for (const AttributeView& a : view_.attributes_of(i)) {
      onnx::AttributeProto& attribute = *node.add_attribute();
      attribute.set_name(std::string(a.name));
      attribute.set_type(static_cast<onnx::AttributeProto::AttributeType>(a.type));
      attribute.set_i(a.i);
      attribute.set_f(a.f);
      attribute.set_s(std::string(a.s));
      for (int64_t v : view_.ints_of(a)) attribute.add_ints(v);
      for (float v : view_.floats_of(a)) attribute.add_floats(v);
    }
    for (int32_t input : nodes_.inputs(i)) {
      if (input == kNoValue || !declared.insert(input).second) continue;
      const int32_t producer = nodes_.producer[input];
      if (producer != kNoValue && is_first[producer]) continue;  // computed in this model
      onnx::ValueInfoProto& info = *graph.add_input();
      info.set_name(std::string(nodes_.value_names[input]));
      TensorType type = types_[input];
      if (producer != kNoValue) {  // another op's output: its declaration may be stale too
        type.has_shape = false;
        type.dims.clear();
      }
      *info.mutable_type() = TypeProtoOf(type);
    }
  }
  if (!InferShapesInPlace(model).ok()) return false;
  const TensorTypes inferred = CollectTensorTypes(model.graph(), nodes_);
  for (int32_t i : first_ops) {
    for (int32_t output : nodes_.outputs(i)) {
      if (output == kNoValue) continue;
      const TensorType &said = types_[output], &found = inferred[output];
      if (said.IsStatic() && found.IsStatic() && said.dims != found.dims) return true;
    }
  }
  return false;
}

// In a resized model (its declarations found stale), a custom op's
// declared output still carries the old size where it copied an input's
// dim that changed: the input's dim k was declared d and is now d', and the
// output's dim k is declared d (the batch of a batch-major op, every dim of
// an element-wise one). Nothing infers a custom op, so planning that
// declaration would plan the old size: refused, naming the op and the fix.
// A declared dim that matches no changed input dim stands (a custom op may
// well fix its output's size).
absl::Status ConstantFolder::CheckCustomOpDeclarations() const {
  if (declared_.empty()) return absl::OkStatus();
  for (int32_t i = 0; i < view_.num_nodes(); ++i) {
    if (IsKnownToOnnx(view_, view_.nodes[i])) continue;
    for (int32_t output : nodes_.outputs(i)) {
      if (output == kNoValue || !types_[output].IsStatic()) continue;
      const std::vector<int64_t>& said = types_[output].dims;
      for (int32_t input : nodes_.inputs(i)) {
        if (input == kNoValue || !declared_[input].IsStatic() || !types_[input].IsStatic()) {
          continue;
        }
        const std::vector<int64_t>&old_dims = declared_[input].dims, &now = types_[input].dims;
        if (old_dims.size() != now.size()) continue;
        for (size_t k = 0; k < std::min(now.size(), said.size()); ++k) {
          if (old_dims[k] == now[k] || said[k] != old_dims[k]) continue;
          return absl::InvalidArgumentError(absl::StrCat(
              "op \"", nodes_.names[i], "\" (", view_.nodes[i].op_type,
              ") has no shape inference, and its output \"", nodes_.value_names[output],
              "\" is declared ", FormatDims(said), " for the model's old size: its input \"",
              nodes_.value_names[input], "\" was declared ", FormatDims(old_dims), " and is now ",
              FormatDims(now), " (the model was resized, e.g. by --batch or --input-shape), so ",
              "that declaration is stale. Give \"", nodes_.value_names[output],
              "\"'s dims at the new size in graph.value_info (dim ", k,
              " may be a named dim such as \"batch\", which the new size binds), or compile ",
              "at the model's own input shape"));
        }
      }
    }
  }
  return absl::OkStatus();
}

// A Gather whose indices are known at compile time (computed from the
// input size, as Range(sequence length) over a position table) but fall
// outside its data: the spec makes that an error at run time (PyTorch:
// IndexError), and inference sized the output from the indices' count, so a
// GPT longer than its position table was planned as if it ran. The
// evaluator only declines to fold such a Gather; refused here, naming the
// op, the table and how far the indices reach.
absl::Status ConstantFolder::CheckCompileTimeIndices() const {
  for (int32_t i = 0; i < view_.num_nodes(); ++i) {
    const NodeView& node = view_.nodes[i];
    if (node.op_type != "Gather" || !IsStandardOnnxDomain(node.domain)) continue;
    const absl::Span<const int32_t> inputs = nodes_.inputs(i);
    if (inputs.size() != 2 || inputs[0] == kNoValue || inputs[1] == kNoValue) continue;
    const auto indices = values_.find(inputs[1]);
    const TensorType& data = types_[inputs[0]];
    if (indices == values_.end() || indices->second.is_real() || !data.IsStatic() ||
        data.dims.empty()) {
      continue;
    }
    const AttributeView* axis_attribute = view_.FindAttribute(node, "axis");
    int64_t axis = axis_attribute != nullptr ? axis_attribute->i : 0;
    const int64_t rank = static_cast<int64_t>(data.dims.size());
    if (axis < -rank || axis >= rank) continue;  // inference reports it
    if (axis < 0) axis += rank;
    const int64_t extent = data.dims[axis];
    for (const int64_t index : indices->second.ints) {
      if (index >= -extent && index < extent) continue;
      return absl::InvalidArgumentError(absl::StrCat(
          "op \"", nodes_.names[i], "\" (Gather) reads index ", index, " of \"",
          nodes_.value_names[inputs[0]], "\", which has ", extent, " along axis ", axis,
          ": its indices are computed at compile time (from the input size, as a position "
          "table's), so the model does not run at this input size; compile at one within the "
          "table (e.g. a sequence of at most ",
          extent, "), or export the model with a larger table"));
    }
  }
  return absl::OkStatus();
}

// Every shape declared for a value an op ONNX knows writes is dropped:
// inference gives it (the op's element type stays; a custom op's outputs
// keep their declarations, the only source there is).
void ConstantFolder::ForgetDeclaredShapes() {
  if (declared_.empty()) declared_ = types_;
  forgotten_.assign(nodes_.num_values(), false);
  for (int32_t i = 0; i < view_.num_nodes(); ++i) {
    if (!IsKnownToOnnx(view_, view_.nodes[i])) continue;
    for (int32_t output : nodes_.outputs(i)) {
      if (output == kNoValue) continue;
      forgotten_[output] = true;
      TensorType& type = types_[output];
      type.has_shape = false;
      type.dims.clear();
      type.symbols.clear();
    }
  }
}

void ConstantFolder::StripForgottenShapes(onnx::GraphProto& graph) const {
  if (forgotten_.empty()) return;
  auto strip = [&](onnx::ValueInfoProto& info) {
    const int32_t id = nodes_.FindValue(info.name());
    if (id != kNoValue && forgotten_[id] && info.type().has_tensor_type()) {
      info.mutable_type()->mutable_tensor_type()->clear_shape();
    }
  };
  for (onnx::ValueInfoProto& info : *graph.mutable_value_info()) strip(info);
  for (onnx::ValueInfoProto& info : *graph.mutable_output()) strip(info);
}

absl::StatusOr<FoldingResult> ConstantFolder::Run() && {
  if (DeclarationsAreStale()) ForgetDeclaredShapes();
  if (NeedsInference()) InferShapes();
  bool rounds_exhausted = true;
  for (int round = 0; round < kMaxFoldingRounds; ++round) {
    Propagate();
    if (!ReplaceEvaluatedNodes()) {
      rounds_exhausted = false;
      break;
    }
    types_ = CollectTensorTypes(graph(), nodes_);
    if (NeedsInference()) InferShapes();
  }
  // Evaluated values are exact even where no initializer replaced their node
  // (a multi-output node with one unknown output).
  for (const auto& [id, value] : values_) {
    TensorType& type = types_[id];
    type.elem_type = value.elem_type;
    type.has_shape = true;
    type.dims = value.dims;
    type.symbols.clear();
  }
  if (!parse_status_.ok()) return parse_status_;
  if (absl::Status stale = CheckCustomOpDeclarations(); !stale.ok()) return stale;
  if (absl::Status indices = CheckCompileTimeIndices(); !indices.ok()) return indices;
  // A node left unknown without an exception was skipped by ONNX's lenient
  // mode; the strict mode's first error says why, for the message (and an
  // exception about element types is traced to its origin).
  if (working_ != nullptr && HasUnknownActivation()) {
    inference_error_ = std::string(FirstInferenceError(*working_, inference_error_).message());
  }
  return FoldingResult{std::move(folded_), std::move(types_), std::move(inference_error_),
                       rounds_exhausted, std::move(values_)};
}

// A value a run-time op writes whose shape is still unknown: the import
// will refuse it (a compile-time value left unknown may be unread).
bool ConstantFolder::HasUnknownActivation() const {
  for (int32_t i = 0; i < view_.num_nodes(); ++i) {
    if (folded_[i]) continue;
    for (int32_t output : nodes_.outputs(i)) {
      if (output != kNoValue && !values_.contains(output) && !types_[output].IsStatic()) {
        return true;
      }
    }
  }
  return false;
}

// Over the nodes still in graph(): those not replaced by initializers.
bool ConstantFolder::NeedsInference() const {
  for (int32_t i = 0; i < view_.num_nodes(); ++i) {
    if (replaced_[i]) continue;
    for (int32_t output : nodes_.outputs(i)) {
      if (output == kNoValue || values_.contains(output)) continue;
      const TensorType& type = types_[output];
      if (!type.IsStatic() || type.elem_type == 0) return true;
    }
  }
  return false;
}

void ConstantFolder::InferShapes() {
  onnx::GraphProto& working = *Working().mutable_graph();
  // From the file's declarations and the folded initializers, not from the
  // last round's results: ONNX's lenient mode skips a node whose inference
  // fails and keeps its declaration, so a shape inferred while a dim was
  // still unknown would outlive the dim becoming known (bench/onnx-sweep:
  // torchvision's ViT at 97x131 kept the 50-token Add that [1,13,768] +
  // [1,50,768] cannot give, and compiled to the 224 plan). Each round infers
  // everything anyway. (A file whose declaration contradicts what a later
  // round infers makes ONNX throw, and the import refuses it with ONNX's
  // reason, where it once kept the earlier round's shapes.)
  *working.mutable_value_info() = Model().graph().value_info();
  *working.mutable_output() = Model().graph().output();
  DropDeclarationsOfInitializers(working);
  StripForgottenShapes(working);
  absl::Status status = InferShapesInPlace(Working());
  // A declared shape that contradicts the inferred one is stale, like those
  // DeclarationsAreStale finds, but further on: a static export whose input
  // a tool made dynamic declares its graph outputs at the old batch
  // (bench/onnx-sweep, resnet18 at --batch 2 declared 1x1000). Inferred
  // again without them; a contradiction between computed shapes stays.
  if (!status.ok() && forgotten_.empty() &&
      absl::StrContains(status.message(), "Inferred shape and existing shape differ")) {
    ForgetDeclaredShapes();
    StripForgottenShapes(working);  // the failed inference left `working` as it was
    status = InferShapesInPlace(Working());
  }
  inference_error_ = status.ok() ? "" : std::string(status.message());
  types_ = CollectTensorTypes(graph(), nodes_);
}

std::optional<std::vector<int64_t>> ConstantFolder::StaticDims(int32_t value) const {
  if (value == kNoValue) return std::nullopt;
  if (auto it = values_.find(value); it != values_.end()) return it->second.dims;
  if (!types_[value].IsStatic()) return std::nullopt;
  return types_[value].dims;
}

bool ConstantFolder::IsCompileTime(int32_t index) const {
  const absl::Span<const int32_t> inputs = nodes_.inputs(index);
  if (IsShapeOf(view_, index) && StaticDims(inputs[0])) return true;
  for (int32_t input : inputs) {
    if (input != kNoValue && !compile_time_[input]) return false;
  }
  return true;
}

// Recomputed from scratch each round: the compile-time set only grows as
// shapes become static, and a fresh walk in topological order sees each
// node's inputs settled before the node.
void ConstantFolder::Propagate() {
  compile_time_ = nodes_.is_initializer;
  for (int32_t index : nodes_.order) {
    if (!IsCompileTime(index)) continue;
    folded_[index] = true;
    for (int32_t output : nodes_.outputs(index)) {
      if (output != kNoValue) compile_time_[output] = true;
    }
    if (!HasAllValues(index)) Evaluate(index);
  }
}

void ConstantFolder::Evaluate(int32_t index) {
  const onnx::GraphProto& model_graph = Model().graph();
  if (!parse_status_.ok()) return;
  const NodeProto& node = model_graph.node(index);
  std::optional<std::vector<ConstantTensor>> outputs;
  const absl::Span<const int32_t> input_ids = nodes_.inputs(index);
  const absl::Span<const int32_t> output_ids = nodes_.outputs(index);
  std::optional<std::vector<int64_t>> dims =
      IsShapeOf(view_, index) ? StaticDims(input_ids[0]) : std::nullopt;
  if (dims) {
    std::optional<ConstantTensor> shape = EvaluateShapeOf(node, *dims);
    if (shape) outputs.emplace().push_back(std::move(*shape));
  } else {
    std::vector<const ConstantTensor*> inputs;
    for (int32_t input : input_ids) {
      auto it = input == kNoValue ? values_.end() : values_.find(input);
      if (input != kNoValue && it == values_.end()) return;  // not computable (yet)
      inputs.push_back(it == values_.end() ? nullptr : &it->second);
    }
    outputs = EvaluateConstantNode(node, inputs);
  }
  if (!outputs || static_cast<int>(outputs->size()) != node.output_size()) return;
  for (int i = 0; i < node.output_size(); ++i) {
    if (output_ids[i] != kNoValue) values_.insert_or_assign(output_ids[i], std::move((*outputs)[i]));
  }
}

bool ConstantFolder::HasAllValues(int32_t index) const {
  for (int32_t output : nodes_.outputs(index)) {
    if (output != kNoValue && !values_.contains(output)) return false;
  }
  return true;
}

bool ConstantFolder::ReplaceEvaluatedNodes() {
  bool replaced_any = false;
  for (int32_t i = 0; i < view_.num_nodes(); ++i) {
    if (!folded_[i] || replaced_[i] || !HasAllValues(i)) continue;
    replaced_[i] = true;
    replaced_any = true;
    for (int32_t output : nodes_.outputs(i)) {
      if (output == kNoValue) continue;
      // HasAllValues above: the value is there.
      *Working().mutable_graph()->add_initializer() =
          ConstantToProto(values_.find(output)->second, std::string(nodes_.value_names[output]));
    }
  }
  if (!replaced_any) return false;
  CopyNodesInOrder();
  DropDeclarationsOfInitializers(*Working().mutable_graph());
  return true;
}

}  // namespace

absl::StatusOr<FoldingResult> FoldConstants(const ModelView& view, absl::string_view model_bytes,
                                            const NodeGraph& nodes, TensorTypes types) {
  return ConstantFolder(view, model_bytes, nodes, std::move(types)).Run();
}

}  // namespace ordo::onnx_import
