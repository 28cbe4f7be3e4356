#ifndef ORDO_CORE_REWRITE_MODEL_EDIT_H_
#define ORDO_CORE_REWRITE_MODEL_EDIT_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/container/flat_hash_set.h"
#include "absl/strings/string_view.h"
#include "absl/status/statusor.h"
#include "core/graph/dtype.h"
#include "core/graph/graph.h"
#include "onnx/onnx_pb.h"

namespace ordo {

// Fresh names for the nodes and tensors a rewrite adds to an ONNX graph.
// Knows every name the graph uses (nodes, tensors, initializers, inputs,
// outputs, value_info) and every name it handed out; Fresh("conv_part0")
// returns that name, or "conv_part0_1", "conv_part0_2", ... when taken.
// Not thread-safe.
class NameScope {
 public:
  explicit NameScope(const onnx::GraphProto& graph);
  std::string Fresh(absl::string_view base);

 private:
  absl::flat_hash_set<std::string> taken_;
};

// What one transformation adds: nodes in a topological order, new
// initializers, and the shapes of the new tensors (value_info, so that the
// result needs no shape inference to be read).
struct ModelEdit {
  std::vector<onnx::NodeProto> nodes;
  std::vector<onnx::TensorProto> initializers;
  std::vector<onnx::ValueInfoProto> value_infos;

  void Append(ModelEdit other);
};

// A value_info for a dense tensor.
onnx::ValueInfoProto DenseValueInfo(const std::string& name, int32_t elem_type,
                                    const std::vector<int64_t>& dims);

// The index of the node `op` was imported from: at its source index when
// the model is the one the op's Graph was imported from, else (a model
// other rewrites changed since) the node of the same name and type; names
// are unique in models that RewriteForMemory edits. INVALID_ARGUMENT naming
// the op when neither matches. O(nodes).
absl::StatusOr<int32_t> NodeOf(const onnx::GraphProto& graph, const Op& op);

// The initializer named `name`, or null. O(initializers).
const onnx::TensorProto* FindInitializer(const onnx::GraphProto& graph, absl::string_view name);

// The version of the standard ONNX domain that `model` imports (1 when it
// names none: the ONNX default).
int64_t StandardOpset(const onnx::ModelProto& model);

// The ONNX TensorProto data type of `dtype` (UNDEFINED for kUnknown).
int32_t OnnxElemType(DataType dtype);

// The integer values of `name` when it is an int64/int32 initializer with
// data or the output of a Constant node, else nullopt. An initializer that
// is also a graph input is only a default the caller may override: nullopt.
// O(graph).
std::optional<std::vector<int64_t>> ConstantInts(const onnx::GraphProto& graph,
                                                 absl::string_view name);

// ConstantInts for many names of one graph: O(graph) to build, then
// O(1) per lookup (plus the values). `graph` must outlive it and not change.
class ConstantIndex {
 public:
  explicit ConstantIndex(const onnx::GraphProto& graph);
  std::optional<std::vector<int64_t>> Ints(absl::string_view name) const;

 private:
  // Null: an initializer that is also a graph input.
  absl::flat_hash_map<std::string, const onnx::TensorProto*> tensors_;
};

// The last step of a rewrite that replaced nodes of `original` by the nodes
// now in `graph`: `graph`'s initializers become `original`'s minus the
// `replaced_weights` that no node or graph output of `graph` reads any more
// (a weight shared with an untouched node stays), followed by `added`; the
// dropped ones also leave the graph inputs (old IR versions list
// initializers there). O(graph).
void ReplaceUnreadWeights(const onnx::GraphProto& original,
                          const absl::flat_hash_set<std::string>& replaced_weights,
                          std::vector<onnx::TensorProto> added, onnx::GraphProto& graph);

}  // namespace ordo

#endif  // ORDO_CORE_REWRITE_MODEL_EDIT_H_
