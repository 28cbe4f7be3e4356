#include "core/onnx/model_view.h"

#include <climits>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/util/wire_field_count.h"
#include "onnx/onnx_pb.h"

namespace ordo::onnx_import {
namespace {

using wire_internal::ReadVarint;

enum WireType : uint32_t {
  kVarint = 0,
  kFixed64 = 1,
  kLengthDelimited = 2,
  kStartGroup = 3,
  kEndGroup = 4,
  kFixed32 = 5
};

// One field of a message on the wire: `value` for varint and fixed types,
// `payload` for length-delimited ones.
struct Field {
  uint64_t number = 0;
  uint32_t wire_type = 0;
  uint64_t value = 0;
  absl::string_view payload;
};

// protobuf's default recursion limit: a group nested deeper does not parse.
constexpr int kMaxGroupDepth = 100;

// protobuf's varint, with the one-byte case (tags, small ints, short
// lengths: most of an ONNX file) first.
inline bool ReadVarintFast(absl::string_view bytes, size_t& pos, uint64_t& value) {
  if (pos < bytes.size() && static_cast<uint8_t>(bytes[pos]) < 0x80) {
    value = static_cast<uint8_t>(bytes[pos++]);
    return true;
  }
  return ReadVarint(bytes, pos, value);
}

// protobuf reads a tag of up to 5 bytes as 32 bits, dropping the rest of
// a 5-byte one, and refuses a longer one.
inline bool ReadTag(absl::string_view bytes, size_t& pos, uint64_t& tag) {
  const size_t at = pos;
  if (!ReadVarintFast(bytes, pos, tag) || pos - at > 5) return false;
  tag = static_cast<uint32_t>(tag);
  return true;
}

bool SkipGroup(absl::string_view bytes, size_t& pos, uint64_t number, int depth);

// Reads the field at `pos` into `field`; groups are skipped whole and read as
// a field of wire type kStartGroup. False when the bytes do not parse.
inline bool ReadField(absl::string_view bytes, size_t& pos, Field& field, int depth = 0) {
  uint64_t tag;
  if (!ReadTag(bytes, pos, tag) || (tag >> 3) == 0) return false;
  field.number = tag >> 3;
  field.wire_type = static_cast<uint32_t>(tag & 7);
  switch (field.wire_type) {
    case kVarint:
      return ReadVarintFast(bytes, pos, field.value);
    case kFixed64:
      if (8 > bytes.size() - pos) return false;
      std::memcpy(&field.value, bytes.data() + pos, 8);  // little-endian hosts only
      pos += 8;
      return true;
    case kFixed32: {
      uint32_t value;
      if (4 > bytes.size() - pos) return false;
      std::memcpy(&value, bytes.data() + pos, 4);
      pos += 4;
      field.value = value;
      return true;
    }
    case kLengthDelimited: {
      uint64_t length;
      if (!ReadVarintFast(bytes, pos, length) || length > bytes.size() - pos) return false;
      field.payload = bytes.substr(pos, length);
      pos += length;
      return true;
    }
    case kStartGroup:
      return SkipGroup(bytes, pos, field.number, depth);
    default:
      return false;  // an end-group tag with no group open, or wire type 6 or 7
  }
}

// Past the end-group tag of group `number`, whose start tag was just read.
bool SkipGroup(absl::string_view bytes, size_t& pos, uint64_t number, int depth) {
  if (depth >= kMaxGroupDepth) return false;
  Field inner;
  while (pos < bytes.size()) {
    const size_t at = pos;
    uint64_t tag;
    if (!ReadTag(bytes, pos, tag)) return false;
    if ((tag & 7) == kEndGroup) return (tag >> 3) == number;
    pos = at;
    if (!ReadField(bytes, pos, inner, depth + 1)) return false;
  }
  return false;  // no end-group tag
}

// Calls visit(field) for every field of the message in `bytes`; false when
// the bytes do not parse or visit returns false.
template <typename Visit>
bool ForEachField(absl::string_view bytes, Visit visit) {
  size_t pos = 0;
  Field field;
  while (pos < bytes.size()) {
    if (!ReadField(bytes, pos, field) || !visit(field)) return false;
  }
  return true;
}

bool Is(const Field& field, uint64_t number, uint32_t wire_type) {
  return field.number == number && field.wire_type == wire_type;
}

int32_t AsInt32(uint64_t value) { return static_cast<int32_t>(static_cast<uint32_t>(value)); }

// A repeated int64 field, unpacked (one varint) or packed.
bool AppendInt64s(const Field& field, std::vector<int64_t>& out) {
  if (field.wire_type == kVarint) {
    out.push_back(static_cast<int64_t>(field.value));
    return true;
  }
  size_t pos = 0;
  while (pos < field.payload.size()) {
    uint64_t value;
    if (!ReadVarintFast(field.payload, pos, value)) return false;
    out.push_back(static_cast<int64_t>(value));
  }
  return true;
}

// A repeated float field, unpacked (one fixed32) or packed.
bool AppendFloats(const Field& field, std::vector<float>& out) {
  if (field.wire_type == kFixed32) {
    const auto bits = static_cast<uint32_t>(field.value);
    float value;
    std::memcpy(&value, &bits, 4);
    out.push_back(value);
    return true;
  }
  if (field.payload.size() % 4 != 0) return false;
  for (size_t pos = 0; pos < field.payload.size(); pos += 4) {
    float value;
    std::memcpy(&value, field.payload.data() + pos, 4);
    out.push_back(value);
  }
  return true;
}

bool IsRepeatedScalar(const Field& field, uint64_t number, uint32_t unpacked_wire_type) {
  return field.number == number &&
         (field.wire_type == unpacked_wire_type || field.wire_type == kLengthDelimited);
}

// TensorShapeProto.Dimension: value (1) and param (2) are a oneof.
struct Dimension {
  bool has_value = false;
  int64_t value = 0;
  bool has_param = false;
  absl::string_view param;
};

bool ScanDimension(absl::string_view bytes, Dimension& dim) {
  return ForEachField(bytes, [&](const Field& f) {
    if (Is(f, 1, kVarint)) {
      dim = {true, static_cast<int64_t>(f.value), false, {}};
    } else if (Is(f, 2, kLengthDelimited)) {
      dim = {false, 0, true, f.payload};
    }
    return true;
  });
}

// TensorShapeProto: every dim appends, as merging repeated fields does.
bool ScanShape(absl::string_view bytes, TensorType& type) {
  return ForEachField(bytes, [&](const Field& f) {
    if (!Is(f, 1, kLengthDelimited)) return true;
    Dimension dim;
    if (!ScanDimension(f.payload, dim)) return false;
    const size_t d = type.dims.size();
    type.dims.push_back(dim.has_value ? dim.value : kUnknownDim);
    if (!dim.has_value && dim.has_param) {
      if (type.symbols.size() <= d) type.symbols.resize(d + 1);
      type.symbols[d] = std::string(dim.param);
    }
    return true;
  });
}

// TypeProto.Tensor: elem_type (1), shape (2).
bool ScanTensorTypeProto(absl::string_view bytes, TensorType& type) {
  return ForEachField(bytes, [&](const Field& f) {
    if (Is(f, 1, kVarint)) {
      type.elem_type = AsInt32(f.value);
    } else if (Is(f, 2, kLengthDelimited)) {
      type.has_shape = true;
      return ScanShape(f.payload, type);
    }
    return true;
  });
}

// TypeProto: its value is a oneof; only tensor_type (1) describes a tensor,
// and any other member (sequence 4, map 5, opaque 7 in ONNX-ML, which this
// build's onnx_pb.h is, sparse tensor 8, optional 9) replaces it.
struct TypeState {
  uint64_t member = 0;  // the oneof's field number, 0 for none
  TensorType tensor;
};

bool ScanTypeProto(absl::string_view bytes, TypeState& state) {
  return ForEachField(bytes, [&](const Field& f) {
    if (f.wire_type != kLengthDelimited) return true;
    if (f.number == 1) {
      if (state.member != 1) state = {1, {}};
      return ScanTensorTypeProto(f.payload, state.tensor);
    }
    if (f.number == 4 || f.number == 5 || f.number == 7 || f.number == 8 || f.number == 9) {
      state = {f.number, {}};
    }
    return true;
  });
}

// ValueInfoProto: name (1), type (2).
bool ScanValueInfo(absl::string_view bytes, ValueInfoView& info) {
  TypeState state;
  const bool ok = ForEachField(bytes, [&](const Field& f) {
    if (Is(f, 1, kLengthDelimited)) {
      info.name = f.payload;
    } else if (Is(f, 2, kLengthDelimited)) {
      return ScanTypeProto(f.payload, state);
    }
    return true;
  });
  if (state.member == 1) info.type = std::move(state.tensor);
  if (!info.type.symbols.empty()) info.type.symbols.resize(info.type.dims.size());
  return ok;
}

// TensorProto: dims (1), data_type (2), name (8); the data is not read.
bool ScanInitializer(absl::string_view bytes, InitializerView& initializer) {
  return ForEachField(bytes, [&](const Field& f) {
    if (IsRepeatedScalar(f, 1, kVarint)) return AppendInt64s(f, initializer.dims);
    if (Is(f, 2, kVarint)) {
      initializer.data_type = AsInt32(f.value);
    } else if (Is(f, 8, kLengthDelimited)) {
      initializer.name = f.payload;
    }
    return true;
  });
}

bool ScanAttribute(absl::string_view bytes, ModelView& view, AttributeView& a) {
  a.ints_begin = a.ints_end = static_cast<int32_t>(view.ints.size());
  a.floats_begin = a.floats_end = static_cast<int32_t>(view.floats.size());
  const bool ok = ForEachField(bytes, [&](const Field& f) {
    if (Is(f, 1, kLengthDelimited)) {
      a.name = f.payload;
    } else if (Is(f, 2, kFixed32)) {
      const auto bits = static_cast<uint32_t>(f.value);
      std::memcpy(&a.f, &bits, 4);
    } else if (Is(f, 3, kVarint)) {
      a.i = static_cast<int64_t>(f.value);
    } else if (Is(f, 4, kLengthDelimited)) {
      a.s = f.payload;
    } else if (Is(f, 6, kLengthDelimited) || Is(f, 11, kLengthDelimited)) {
      a.has_graph = true;
    } else if (IsRepeatedScalar(f, 7, kFixed32)) {
      return AppendFloats(f, view.floats);
    } else if (IsRepeatedScalar(f, 8, kVarint)) {
      return AppendInt64s(f, view.ints);
    } else if (Is(f, 20, kVarint)) {
      // proto2: a value outside the enum is an unknown field and leaves the
      // field as it was.
      const int32_t type = AsInt32(f.value);
      if (onnx::AttributeProto::AttributeType_IsValid(type)) a.type = type;
    }
    return true;
  });
  a.ints_end = static_cast<int32_t>(view.ints.size());
  a.floats_end = static_cast<int32_t>(view.floats.size());
  return ok;
}

// NodeProto: input (1), output (2), name (3), op_type (4), attribute (5),
// domain (7). Outputs and attributes wait in `scratch` until the node's last
// field, so that its inputs, outputs and attributes each take one range of
// the shared arrays however the file interleaves them.
struct NodeScratch {
  std::vector<absl::string_view> outputs;
  std::vector<absl::string_view> attributes;
};

bool ScanNode(absl::string_view bytes, ModelView& view, NodeScratch& scratch, NodeView& node) {
  scratch.outputs.clear();
  scratch.attributes.clear();
  node.inputs_begin = static_cast<int32_t>(view.value_refs.size());
  const bool ok = ForEachField(bytes, [&](const Field& f) {
    if (f.wire_type != kLengthDelimited) return true;
    switch (f.number) {
      case 1:
        view.value_refs.push_back(f.payload);
        break;
      case 2:
        scratch.outputs.push_back(f.payload);
        break;
      case 3:
        node.name = f.payload;
        break;
      case 4:
        node.op_type = f.payload;
        break;
      case 5:
        scratch.attributes.push_back(f.payload);
        break;
      case 7:
        node.domain = f.payload;
        break;
      default:
        break;
    }
    return true;
  });
  if (!ok) return false;
  node.inputs_end = node.outputs_begin = static_cast<int32_t>(view.value_refs.size());
  view.value_refs.insert(view.value_refs.end(), scratch.outputs.begin(), scratch.outputs.end());
  node.outputs_end = static_cast<int32_t>(view.value_refs.size());
  node.attributes_begin = static_cast<int32_t>(view.attributes.size());
  for (absl::string_view payload : scratch.attributes) {
    AttributeView attribute;
    if (!ScanAttribute(payload, view, attribute)) return false;
    view.attributes.push_back(attribute);
  }
  node.attributes_end = static_cast<int32_t>(view.attributes.size());
  return true;
}

// GraphProto: node (1), name (2), initializer (5), input (11), output (12),
// value_info (13).
bool ScanGraph(absl::string_view bytes, ModelView& view) {
  NodeScratch scratch;
  return ForEachField(bytes, [&](const Field& f) {
    if (f.wire_type != kLengthDelimited) return true;
    switch (f.number) {
      case 1:
        return ScanNode(f.payload, view, scratch, view.nodes.emplace_back());
      case 2:
        view.graph_name = f.payload;
        return true;
      case 5:
        return ScanInitializer(f.payload, view.initializers.emplace_back());
      case 11:
        return ScanValueInfo(f.payload, view.inputs.emplace_back());
      case 12:
        return ScanValueInfo(f.payload, view.outputs.emplace_back());
      case 13:
        return ScanValueInfo(f.payload, view.value_info.emplace_back());
      default:
        return true;
    }
  });
}

}  // namespace

absl::StatusOr<ModelView> ScanModel(absl::string_view model_bytes, int64_t max_nodes) {
  if (model_bytes.size() > static_cast<size_t>(INT_MAX)) {
    return absl::InvalidArgumentError("not a valid ONNX model: larger than protobuf's 2 GiB limit");
  }
  // ModelProto.graph (7) -> GraphProto.node (1), counted first: a model over
  // the limit is refused before a view per node is built, and the others'
  // arrays are allocated once. Bytes that do not count fail the scan below.
  const std::optional<int64_t> node_count = CountNestedWireField(model_bytes, 7, 1);
  if (node_count.has_value() && *node_count > max_nodes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("model has ", *node_count, " nodes; the limit is ", max_nodes, " ops"));
  }
  ModelView view;
  if (node_count.has_value()) {
    // About what exported models have per node; only a hint.
    view.nodes.reserve(*node_count);
    view.value_refs.reserve(4 * *node_count);
    view.attributes.reserve(2 * *node_count);
    view.ints.reserve(6 * *node_count);
  }
  bool has_graph = false;
  // ModelProto.graph (7); its occurrences merge.
  if (!ForEachField(model_bytes, [&](const Field& f) {
        if (!Is(f, 7, kLengthDelimited)) return true;
        has_graph = true;
        return ScanGraph(f.payload, view);
      })) {
    return absl::InvalidArgumentError(
        "not a valid ONNX model: the bytes do not parse as onnx.ModelProto");
  }
  if (!has_graph) {
    // Bytes of another message (a TensorProto, say) often scan as a model
    // without a graph; protobuf's parse, on this error path only, tells
    // which of the two the user has.
    onnx::ModelProto model;
    return absl::InvalidArgumentError(
        model.ParseFromArray(model_bytes.data(), static_cast<int>(model_bytes.size()))
            ? "not a valid ONNX model: it has no graph"
            : "not a valid ONNX model: the bytes do not parse as onnx.ModelProto");
  }
  // The count above gives up on groups (which the scan reads).
  if (static_cast<int64_t>(view.nodes.size()) > max_nodes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("model has ", view.nodes.size(), " nodes; the limit is ", max_nodes, " ops"));
  }
  // The ranges are int32: a file under 2 GiB has fewer names and
  // attributes than that, but packed ints take a byte each.
  constexpr size_t kMaxRange = std::numeric_limits<int32_t>::max();
  if (view.value_refs.size() > kMaxRange || view.attributes.size() > kMaxRange ||
      view.ints.size() > kMaxRange || view.floats.size() > kMaxRange) {
    return absl::ResourceExhaustedError(
        "the model's attributes hold more than 2^31 values; ordo reads at most that many");
  }
  return view;
}

}  // namespace ordo::onnx_import
