#ifndef ORDO_RPC_COMPILE_PROTO_H_
#define ORDO_RPC_COMPILE_PROTO_H_

#include <optional>

#include "absl/status/statusor.h"
#include "core/compile/compile.h"
#include "core/compile/compile_request.h"
#include "core/compile/rewrite_compile.h"
#include "core/graph/graph.h"
#include "ordo/v1/compiler_service.pb.h"

namespace ordo::rpc {

// The request's options and device as core CompileOptions (the server's
// side). INVALID_ARGUMENT naming the field for negative byte counts, an
// unknown activation dtype or a negative time limit. `time_limit` is left
// at the request's value (10 s when unset): the server caps it by the call's
// deadline.
absl::StatusOr<CompileOptions> CompileOptionsFromProto(const v1::CompileOptions& options,
                                                       const v1::DeviceSpec& device);

// The inverse, for clients: fills `options` and `device` of a request.
void CompileOptionsToProto(const CompileOptions& options, v1::CompileOptions& proto,
                           v1::DeviceSpec& device);

// A compile result as the API returns it: op and tensor ids become names.
v1::CompileResponse CompileResultToProto(const Graph& graph, const CompileResult& result);

// The response of a finished compile, as the server returns it and `ordo
// compile --json` prints it (the one builder of both): the result
// (CompileResultToProto), whether it fits the device (FitsDevice), the gap
// to the bound, the options and device in force (the request's, defaults
// applied) and, when a rewrite search ran, what it did
// (RewriteSummaryToProto, with the rewritten model). `compiled_graph` is
// the graph `compiled` scheduled (the rewritten one, or the request's).
// No reordered models: the server adds those when asked.
v1::CompileResponse CompileResponseOf(const CompileRequest& request, const Graph& compiled_graph,
                                      const CompileResult& compiled,
                                      const std::optional<RewriteSummary>& rewrite);

// A response back into a CompileResult for `graph` (the client's own copy of
// the model), so local and remote mode report through the same code. Trusts
// nothing: op and tensor names must name ops and tensors of `graph`, the
// schedule is re-simulated under `options.memory` and its peak must equal
// the server's (INVALID_ARGUMENT otherwise). The model order's profile is
// recomputed locally.
absl::StatusOr<CompileResult> CompileResultFromProto(const Graph& graph,
                                                     const CompileOptions& options,
                                                     const v1::CompileResponse& response);

// The request's rewriting options: CompileOptions.rewrite ("" = "none"),
// max_latency_overhead (unset = 0.05), beam_width (0 = the search's
// default, 1; at most 16), time_limit (the search's budget too)
// and DeviceSpec.macs_per_second / op_overhead_seconds (0 / unset = the
// defaults). INVALID_ARGUMENT naming the field for an unknown mode or a
// negative, NaN or infinite number. `deadline` is left infinite: the server
// sets it.
absl::StatusOr<RewriteCompileOptions> RewriteCompileOptionsFromProto(
    const v1::CompileOptions& options, const v1::DeviceSpec& device);

// The inverse, for clients.
void RewriteCompileOptionsToProto(const RewriteCompileOptions& rewrite,
                                  v1::CompileOptions& options, v1::DeviceSpec& device);

// A rewrite summary into the response's rewritten_onnx_model, rewrites and
// rewrite fields.
void RewriteSummaryToProto(const RewriteSummary& summary, v1::CompileResponse& response);

// A response to a request sent with rewriting, back into what
// CompileWithRewrite returns, for `original` (the client's own copy of the
// model, imported under `limits`). When the response carries a rewritten
// model, that model is imported, must have `original`'s inputs and outputs
// (CheckSameInterface), and the schedule is re-simulated on it
// (CompileResultFromProto); otherwise on `original`. INVALID_ARGUMENT,
// prefixed "response:", when anything does not check out.
absl::StatusOr<RewriteCompileResult> RewriteCompileResultFromProto(
    const Graph& original, const CompileOptions& options, const GraphLimits& limits,
    const v1::CompileResponse& response);

// The request as core's CompileRequest (the server's side): its model's
// format, options, rewriting, input shapes and the reordered models asked
// for, under the API's field names. INVALID_ARGUMENT naming the field from
// the conversions above, and "request has no model" when none is set. Not
// validated yet (CompileRequest::Validate).
absl::StatusOr<CompileRequest> CompileRequestFromProto(const v1::CompileRequest& request);
// The same for Estimate (no models back; the rewrite options are read, and
// so checked as Compile checks them, though Estimate rewrites nothing).
absl::StatusOr<CompileRequest> CompileRequestFromProto(const v1::EstimateRequest& request);

// EstimateResult <-> EstimateResponse.
v1::EstimateResponse EstimateResultToProto(const EstimateResult& estimate);
EstimateResult EstimateResultFromProto(const v1::EstimateResponse& response);

}  // namespace ordo::rpc

#endif  // ORDO_RPC_COMPILE_PROTO_H_
