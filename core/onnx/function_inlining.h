#ifndef ORDO_CORE_ONNX_FUNCTION_INLINING_H_
#define ORDO_CORE_ONNX_FUNCTION_INLINING_H_

#include <cstdint>
#include <limits>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/string_view.h"
#include "core/onnx/model_view.h"
#include "onnx/onnx_pb.h"

namespace ordo {

// ordo's own fused stages (core/rewrite/patch_fusion.h): a node of this
// domain is one op that a runtime knowing it runs patch-wise, so its local
// function (the layers it replaces) is never inlined.
inline constexpr absl::string_view kOrdoFusionDomain = "ai.ordo";

// The first node of `view`'s graph that calls one of the model's local
// functions (ModelProto.functions, same domain and name) other than a
// kOrdoFusionDomain stage, if any: the model must be inlined
// (InlineLocalFunctions) before its graph is what a runtime runs.
// O(nodes + functions).
std::optional<int32_t> FirstLocalFunctionCall(const onnx_import::ModelView& view);

// Replaces every node of `model`'s graph that calls a model-local function
// (kOrdoFusionDomain stages excepted) by the function's body, as a runtime
// runs it, recursively for functions calling functions. PyTorch's dynamo
// exporter (torch 2.1-2.4) wraps each module and each aten op in one;
// counted as one op, a module's intermediate activations would be missing
// from the peak.
//
// As the ONNX IR spec defines a call: formal inputs and outputs become the
// node's (an input the node leaves out is absent, ""); attributes that
// reference the node's (ref_attr_name) take its value, else the function's
// default (FunctionProto.attribute_proto, IR 9, read from unknown fields
// since the linked ONNX 1.12 predates it), else are left out. Body values and
// node names get the calling node's name as a prefix ("block1/conv/Y"),
// made unique against every name in the graph. Opsets the functions import
// are added to the model's. The inlined functions are removed.
//
// INVALID_ARGUMENT naming the node and function when a call has more inputs
// or outputs than the function, a function calls itself, calls nest more
// than 64 deep, a function imports another version of a domain than the
// model does, or two functions share a domain and name (IR 10 overloads);
// RESOURCE_EXHAUSTED when the inlined graph would have more than `max_nodes`
// nodes. O(nodes of the inlined graph).
absl::Status InlineLocalFunctions(onnx::ModelProto& model,
                                  int64_t max_nodes = std::numeric_limits<int64_t>::max());

}  // namespace ordo

#endif  // ORDO_CORE_ONNX_FUNCTION_INLINING_H_
