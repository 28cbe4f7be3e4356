#ifndef ORDO_CORE_ONNX_MODEL_VIEW_H_
#define ORDO_CORE_ONNX_MODEL_VIEW_H_

#include <cstdint>
#include <limits>
#include <string>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/types/span.h"
#include "core/onnx/tensor_type.h"

namespace ordo::onnx_import {

// What the importer reads of a serialized onnx::ModelProto, read from the
// wire format without building the message: every string is a view of the
// model's bytes, and the repeated parts of all nodes share flat arrays.
//
// Why: building the generated ModelProto (a heap or arena object per node,
// attribute, dim and string) was about half of importing an exported NAS
// network, and most models need nothing else of it. ONNX shape inference and
// the constant evaluator do need the message; constant folding parses it
// only when it runs them (see constant_folding.h).
//
// The scan (core/util/wire_reader.h) follows protobuf's parse rules for the
// fields it reads: the last occurrence of a singular scalar or string wins,
// occurrences of a singular message merge (repeated fields append),
// repeated scalars are accepted packed and unpacked, a field with an
// unexpected wire type is an unknown field, a member of a oneof clears the
// others, and a tag is at most 5 bytes read as 32 bits. Fields it does not read are skipped by wire type without
// looking inside them, so bytes whose only damage is inside such a field (an
// attribute's tensor, a function) scan where protobuf's full parse would
// refuse them; so do lengths padded past 5 bytes and groups nested over
// protobuf's depth limit inside a message. model_view_test.cc checks the
// scan against protobuf's parse on real models, hand-made edge cases and
// random mutations (never the other way round: whatever protobuf parses,
// the scan reads the same).

// AttributeProto: what the memory model and the import's checks read.
struct AttributeView {
  absl::string_view name;
  int32_t type = 0;  // onnx::AttributeProto::AttributeType; 0 when absent or not a valid value
  int64_t i = 0;
  float f = 0;
  absl::string_view s;
  // Ranges of ModelView::ints and ModelView::floats.
  int32_t ints_begin = 0, ints_end = 0;
  int32_t floats_begin = 0, floats_end = 0;
  bool has_graph = false;  // a g or graphs field: a subgraph
};

struct NodeView {
  absl::string_view name, op_type, domain;
  // Ranges of ModelView::value_refs (inputs, then outputs) and of
  // ModelView::attributes.
  int32_t inputs_begin = 0, inputs_end = 0;
  int32_t outputs_begin = 0, outputs_end = 0;
  int32_t attributes_begin = 0, attributes_end = 0;
};

// ValueInfoProto: a name and what its TypeProto says of a tensor (elem_type
// 0 and no shape when the type is not a tensor type).
struct ValueInfoView {
  absl::string_view name;
  TensorType type;
};

// TensorProto without its data.
struct InitializerView {
  absl::string_view name;
  int32_t data_type = 0;
  std::vector<int64_t> dims;
};

// OperatorSetIdProto: a domain ("" and "ai.onnx" are the standard one) and
// the operator set version the model uses from it.
struct OpsetView {
  absl::string_view domain;
  int64_t version = 0;
};

// FunctionProto (a model-local function): what a node calling it names.
struct FunctionView {
  absl::string_view domain;
  absl::string_view name;
};

struct ModelView {
  absl::string_view graph_name;
  std::vector<OpsetView> opsets;  // ModelProto.opset_import
  std::vector<FunctionView> functions;  // ModelProto.functions
  std::vector<NodeView> nodes;
  std::vector<ValueInfoView> inputs, outputs, value_info;
  std::vector<InitializerView> initializers;
  std::vector<absl::string_view> value_refs;
  std::vector<AttributeView> attributes;
  std::vector<int64_t> ints;
  std::vector<float> floats;
  // The element type the file gives each name that has one: initializers
  // first, then declared graph inputs and value_info (ScanModel fills it).
  absl::flat_hash_map<absl::string_view, int32_t> declared_element_types;

  int32_t num_nodes() const { return static_cast<int32_t>(nodes.size()); }
  absl::Span<const absl::string_view> inputs_of(int32_t node) const {
    return Range(value_refs, nodes[node].inputs_begin, nodes[node].inputs_end);
  }
  absl::Span<const absl::string_view> outputs_of(int32_t node) const {
    return Range(value_refs, nodes[node].outputs_begin, nodes[node].outputs_end);
  }
  absl::Span<const AttributeView> attributes_of(int32_t node) const {
    return Range(attributes, nodes[node].attributes_begin, nodes[node].attributes_end);
  }
  // `node`'s attribute `name` (the first, as ONNX's own lookup), or null.
  const AttributeView* FindAttribute(const NodeView& node, absl::string_view name) const {
    for (const AttributeView& attribute :
         Range(attributes, node.attributes_begin, node.attributes_end)) {
      if (attribute.name == name) return &attribute;
    }
    return nullptr;
  }
  absl::Span<const int64_t> ints_of(const AttributeView& a) const {
    return Range(ints, a.ints_begin, a.ints_end);
  }
  absl::Span<const float> floats_of(const AttributeView& a) const {
    return Range(floats, a.floats_begin, a.floats_end);
  }

 private:
  template <typename T>
  static absl::Span<const T> Range(const std::vector<T>& all, int32_t begin, int32_t end) {
    return absl::MakeConstSpan(all).subspan(begin, end - begin);
  }
};

// The view of `model_bytes`, whose strings it points into (the bytes must
// outlive it). INVALID_ARGUMENT "not a valid ONNX model: ..." when the bytes
// are not a protobuf message (a truncated field, a malformed varint, an
// unmatched group, wire type 6 or 7, field number 0), are over protobuf's
// 2 GiB limit, or have no graph; RESOURCE_EXHAUSTED when the graph has more
// than `max_nodes` nodes (counted before anything is built) or its
// attributes hold more than
// 2^31 values (the view's ranges are int32): the two places where the scan
// refuses what protobuf parses. O(bytes).
absl::StatusOr<ModelView> ScanModel(
    absl::string_view model_bytes,
    int64_t max_nodes = std::numeric_limits<int64_t>::max());

}  // namespace ordo::onnx_import

#endif  // ORDO_CORE_ONNX_MODEL_VIEW_H_
