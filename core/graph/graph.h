#ifndef ORDO_CORE_GRAPH_GRAPH_H_
#define ORDO_CORE_GRAPH_GRAPH_H_

#include <cstdint>
#include <optional>
#include <string>
#include "absl/strings/string_view.h"
#include <variant>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/types/span.h"
#include "core/graph/dtype.h"

namespace ordo {

// Dense ids: index into Graph::ops() / Graph::tensors(). Schedulers use them
// directly as array indices.
using OpId = int32_t;
using TensorId = int32_t;
inline constexpr int32_t kNoId = -1;

// What a tensor is to the memory model (spec: "Graph, tensors, steps").
enum class TensorKind : int8_t {
  kInput,       // fed from outside; live before step 0
  kActivation,  // produced by a scheduled op, consumed inside the graph
  kWeight,      // initializer or compile-time constant; not scheduled
  kOutput,      // produced by a scheduled op and returned to the caller
};

absl::string_view TensorKindName(TensorKind kind);

using AttributeValue = std::variant<int64_t, double, std::string,
                                    std::vector<int64_t>, std::vector<double>>;

struct Attribute {
  std::string name;
  AttributeValue value;
};

struct Tensor {
  std::string name;
  DataType dtype = DataType::kUnknown;
  std::vector<int64_t> dims;
  // dims x element size, or the explicit size when dtype is kUnknown.
  int64_t bytes = 0;
  TensorKind kind = TensorKind::kActivation;
  // A graph input can be a graph output too, so this is not implied by kind.
  bool is_graph_output = false;
  // A buffer the runtime keeps in the arena that is no model input or output
  // (a TFLite variable, a tensor no operator writes such as Vela's scratch):
  // a graph input (and output, when it lives to the end) for its lifetime,
  // but --io-outside-arena leaves it in the arena.
  bool is_runtime_buffer = false;
  OpId producer = kNoId;
  // Distinct consumers in op-id order.
  std::vector<OpId> consumers;
};

// The domain the TFLite importer gives custom operators (type = the custom
// code): what they compute is unknown, so rules by op type (in-place) skip
// them even where a custom code reads like an ONNX op ("Sin", "Mean").
inline constexpr absl::string_view kTfliteCustomDomain = "tflite.custom";

struct Op {
  std::string name;
  std::string type;    // ONNX op type, e.g. "Conv"
  std::string domain;  // ONNX domain; empty for the default domain
  // Inputs in positional order, weights included; duplicates kept.
  std::vector<TensorId> inputs;
  std::vector<TensorId> outputs;
  std::vector<Attribute> attributes;
  // Index of the node in the source file, or kNoId.
  int32_t source_index = kNoId;
};

// Limits that bound what a graph may cost before it is built.
struct GraphLimits {
  int64_t max_ops = 100000;
  int64_t max_tensors = 1000000;
};

// A model graph: ops to schedule and the tensors between them. Ops are only
// the ones a runtime executes (compile-time constants are already folded into
// weights). Immutable once GraphBuilder::Build returns; ops are in model order
// (the order of the source file), so OpId order is the "model order" baseline.
// Thread-compatible: const methods may be called concurrently.
class Graph {
 public:
  Graph() = default;
  // The name indexes view the Graph's own names: a copy indexes its copies;
  // a move keeps them (a moved vector keeps its elements where they are).
  Graph(const Graph& other);
  Graph& operator=(const Graph& other);
  Graph(Graph&&) = default;
  Graph& operator=(Graph&&) = default;

  const std::string& name() const { return name_; }
  int32_t num_ops() const { return static_cast<int32_t>(ops_.size()); }
  int32_t num_tensors() const { return static_cast<int32_t>(tensors_.size()); }
  absl::Span<const Op> ops() const { return ops_; }
  absl::Span<const Tensor> tensors() const { return tensors_; }
  const Op& op(OpId id) const { return ops_[id]; }
  const Tensor& tensor(TensorId id) const { return tensors_[id]; }
  absl::Span<const TensorId> inputs() const { return inputs_; }
  absl::Span<const TensorId> outputs() const { return outputs_; }
  // What the importer tells the user about how it read the model, one
  // sentence each (a dynamic dim it planned at a fixed size): the compile's
  // answer carries them (CompileResponse.import_notes, the CLI's `note`
  // rows). They describe the file, not the graph: no memory rule, schedule
  // or cache key reads them.
  absl::Span<const std::string> notes() const { return notes_; }

  std::optional<OpId> FindOp(absl::string_view name) const;
  std::optional<TensorId> FindTensor(absl::string_view name) const;

  // Distinct ops that consume an output of `op`, ascending.
  std::vector<OpId> Successors(OpId op) const;
  // Distinct ops that produce an input of `op`, ascending.
  std::vector<OpId> Predecessors(OpId op) const;

 private:
  friend class GraphBuilder;

  std::string name_;
  std::vector<Op> ops_;
  std::vector<Tensor> tensors_;
  std::vector<TensorId> inputs_;
  std::vector<TensorId> outputs_;
  std::vector<std::string> notes_;
  // Keys view ops_[id].name and tensors_[id].name: no second copy of every
  // name (a large import's most frequent allocation).
  absl::flat_hash_map<absl::string_view, OpId> op_index_;
  absl::flat_hash_map<absl::string_view, TensorId> tensor_index_;

  void IndexNames();
};

// Builds a Graph and validates it. Declare tensors, then ops by tensor name, in
// any order; Build() resolves names and checks every rule of the memory model:
// unique names, every input defined, one producer per tensor, static positive
// dims whose byte size fits int64, known dtypes, no cycles, ops added in an
// order that runs (each after the producers of its inputs: OpId order is the
// model order), at least one op, limits. Errors name the offending op or
// tensor. Not thread-safe.
class GraphBuilder {
 public:
  explicit GraphBuilder(std::string name = "", GraphLimits limits = {});

  // A tensor with dtype and dims; size = product(dims) x element size.
  // Returns the tensor's id in the built Graph (tensors keep declaration
  // order).
  TensorId AddTensor(std::string name, DataType dtype, std::vector<int64_t> dims,
                     TensorKind kind = TensorKind::kActivation);
  // A tensor given by its byte size only (native format, tests).
  TensorId AddTensorBytes(std::string name, int64_t bytes,
                          TensorKind kind = TensorKind::kActivation);
  // `inputs` may contain "" for an omitted optional input; it is dropped.
  void AddOp(std::string name, std::string type, std::vector<std::string> inputs,
             std::vector<std::string> outputs,
             std::vector<Attribute> attributes = {}, int32_t source_index = kNoId,
             std::string domain = "");
  // The same with tensors given by the ids Add* returned, for an importer
  // that has numbered its tensors already (no name lookups). An id that was
  // not returned is an error of Build().
  void AddOpWithTensorIds(std::string name, std::string type, std::vector<TensorId> inputs,
                          std::vector<TensorId> outputs, std::vector<Attribute> attributes,
                          int32_t source_index, std::string domain);
  void AddGraphInput(std::string tensor_name);
  void AddGraphOutput(std::string tensor_name);
  // A runtime's own buffer (Tensor::is_runtime_buffer): live before step 0,
  // and to the end of the schedule when `lives_to_end`.
  void AddRuntimeBuffer(std::string tensor_name, bool lives_to_end);
  // A sentence for Graph::notes(), in the order added.
  void AddNote(std::string note) { notes_.push_back(std::move(note)); }

  // Room for this many ops and tensors, for an importer that knows its
  // counts: no regrowth of the pending lists (a hint; more may be added).
  void Reserve(int64_t ops, int64_t tensors);

  // Number of ops added so far (lets importers refuse early).
  int64_t num_ops() const { return static_cast<int64_t>(pending_ops_.size()); }
  // The dims a tensor was added with (for an importer's messages); empty
  // for an id not returned.
  absl::Span<const int64_t> dims_of(TensorId id) const {
    if (id < 0 || id >= static_cast<TensorId>(pending_tensors_.size())) return {};
    return pending_tensors_[id].dims;
  }

  absl::StatusOr<Graph> Build() &&;

 private:
  struct PendingTensor {
    std::string name;
    DataType dtype;
    std::vector<int64_t> dims;
    int64_t bytes;  // < 0: computed from dims
    TensorKind kind;
  };
  struct PendingOp {
    std::string name;
    std::string type;
    std::string domain;
    // By name, or, when by_id, as ids in input_ids and output_ids.
    std::vector<std::string> inputs;
    std::vector<std::string> outputs;
    std::vector<Attribute> attributes;
    int32_t source_index;
    bool by_id = false;
    std::vector<TensorId> input_ids;
    std::vector<TensorId> output_ids;
  };

  absl::Status ResolveTensors(Graph& graph);
  absl::Status ResolveOps(Graph& graph);
  static absl::Status ResolveNames(const Graph& graph, PendingOp& pending);
  static absl::Status ConnectOp(Graph& graph, Op op);
  absl::Status ResolveGraphIo(Graph& graph) const;
  static absl::Status CheckAcyclic(const Graph& graph);

  std::string name_;
  GraphLimits limits_;
  std::vector<PendingTensor> pending_tensors_;
  std::vector<PendingOp> pending_ops_;
  std::vector<std::string> graph_inputs_;
  std::vector<std::string> graph_outputs_;
  std::vector<std::string> runtime_buffers_;
  std::vector<std::string> notes_;
};

}  // namespace ordo

#endif  // ORDO_CORE_GRAPH_GRAPH_H_
