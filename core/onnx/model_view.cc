#include "core/onnx/model_view.h"

#include <climits>
#include <cstring>
#include <limits>
#include <optional>
#include <utility>

#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/util/wire_field_count.h"
#include "core/util/wire_reader.h"
#include "onnx/onnx_pb.h"

namespace ordo::onnx_import {
namespace {

using wire::Field;
using wire::ForEachField;
using wire::Is;
using wire::kFixed32;
using wire::kLengthDelimited;
using wire::kVarint;

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
    if (!wire::ReadVarint(field.payload, pos, value)) return false;
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

// OperatorSetIdProto: domain (1), version (2).
bool ScanOpset(absl::string_view bytes, OpsetView& opset) {
  return ForEachField(bytes, [&](const Field& f) {
    if (Is(f, 1, kLengthDelimited)) opset.domain = f.payload;
    if (Is(f, 2, kVarint)) opset.version = static_cast<int64_t>(f.value);
    return true;
  });
}

// FunctionProto: name (1), domain (10).
bool ScanFunction(absl::string_view bytes, FunctionView& function) {
  return ForEachField(bytes, [&](const Field& f) {
    if (Is(f, 1, kLengthDelimited)) function.name = f.payload;
    if (Is(f, 10, kLengthDelimited)) function.domain = f.payload;
    return true;
  });
}

}  // namespace

absl::StatusOr<ModelView> ScanModel(absl::string_view model_bytes, int64_t max_nodes) {
  if (model_bytes.size() > static_cast<size_t>(INT_MAX)) {
    return absl::InvalidArgumentError("not a valid ONNX model: larger than protobuf's 2 GiB limit");
  }
  // ModelProto.graph (7) -> GraphProto.node (1), counted first: a model over
  // the limit is refused before a view per node is built, and the others'
  // arrays are allocated once. The count reads these fields as the scan
  // does (wire_reader.h): bytes it cannot read fail the scan below.
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
  // ModelProto.graph (7), whose occurrences merge, opset_import (8) and
  // functions (25).
  if (!ForEachField(model_bytes, [&](const Field& f) {
        if (Is(f, 8, kLengthDelimited)) return ScanOpset(f.payload, view.opsets.emplace_back());
        if (Is(f, 25, kLengthDelimited)) {
          return ScanFunction(f.payload, view.functions.emplace_back());
        }
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
  // The ranges are int32: a file under 2 GiB has fewer names and
  // attributes than that, but packed ints take a byte each.
  constexpr size_t kMaxRange = std::numeric_limits<int32_t>::max();
  if (view.value_refs.size() > kMaxRange || view.attributes.size() > kMaxRange ||
      view.ints.size() > kMaxRange || view.floats.size() > kMaxRange) {
    return absl::ResourceExhaustedError(
        "the model's attributes hold more than 2^31 values; ordo reads at most that many");
  }
  for (const InitializerView& initializer : view.initializers) {
    view.declared_element_types.emplace(initializer.name, initializer.data_type);
  }
  for (const auto* declared : {&view.inputs, &view.value_info}) {
    for (const ValueInfoView& value : *declared) {
      if (value.type.elem_type != 0)
        view.declared_element_types.emplace(value.name, value.type.elem_type);
    }
  }
  return view;
}

}  // namespace ordo::onnx_import
