#ifndef ORDO_CORE_GRAPH_GRAPH_PROTO_H_
#define ORDO_CORE_GRAPH_GRAPH_PROTO_H_

// ordo's native graph format (proto/ordo/v1/graph.proto) <-> Graph.

#include <string>
#include "absl/strings/string_view.h"

#include "absl/status/statusor.h"
#include "core/graph/graph.h"
#include "ordo/v1/graph.pb.h"

namespace ordo {

// Builds a Graph from the message. A tensor's kind, when unspecified, is
// derived: listed in `inputs` -> input, produced by an op -> activation
// (output if listed in `outputs`), otherwise a weight. A tensor with a dtype
// takes its size from dims; without one, `size_bytes` must be positive.
absl::StatusOr<Graph> GraphFromProto(const v1::Graph& proto,
                                     const GraphLimits& limits = {});

// Binary protobuf. Refuses (RESOURCE_EXHAUSTED) a message declaring more ops
// than limits.max_ops before building anything.
absl::StatusOr<Graph> ParseGraphBinary(absl::string_view bytes,
                                       const GraphLimits& limits = {});

// The protobuf JSON mapping of the same message (protobuf's own parser).
absl::StatusOr<Graph> ParseGraphJson(absl::string_view json,
                                     const GraphLimits& limits = {});

// The message for a graph; GraphFromProto(GraphToProto(g)) rebuilds g.
v1::Graph GraphToProto(const Graph& graph);

// The API's element types and core's, one to one; unknown values map to
// DataType::kUnknown and back to DATA_TYPE_UNSPECIFIED.
DataType DataTypeFromProto(v1::DataType dtype);
v1::DataType DataTypeToProto(DataType dtype);

}  // namespace ordo

#endif  // ORDO_CORE_GRAPH_GRAPH_PROTO_H_
