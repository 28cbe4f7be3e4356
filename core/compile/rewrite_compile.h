#ifndef ORDO_CORE_COMPILE_REWRITE_COMPILE_H_
#define ORDO_CORE_COMPILE_REWRITE_COMPILE_H_

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "core/compile/compile.h"
#include "core/graph/graph.h"
#include "core/rewrite/rewrite.h"
#include "core/util/clock.h"

namespace ordo {

// core/compile/compile_request.h; it holds a RewriteCompileOptions.
struct CompileRequest;

// Whether and how a compile rewrites the model first (`ordo compile
// --rewrite`, CompileOptions.rewrite of the API).
struct RewriteCompileOptions {
  RewriteMode mode = RewriteMode::kNone;
  // "auto": with mode kNone and a memory limit or memory pools, compile as
  // is; when that does not fit the device (FitsDevice), rewrite with kAll
  // in fit mode and compile again.
  bool fit_fallback = false;
  // Partitioning's latency budget (MOTES' delta), a fraction of the
  // original's modelled latency.
  double max_latency_overhead = 0.05;
  // The partition search's beam width (RewriteOptions::beam_width); 0 means
  // its default (1, greedy). At most kMaxRewriteBeamWidth.
  int32_t beam_width = 0;
  // Patch-wise fusion of layer chains in the partition search
  // (RewriteOptions::fusion); false for runtimes that run standard ops only.
  bool fusion = true;
  // Report the Pareto front of (peak, latency overhead) the search found
  // (RewriteSummary::pareto). With mode kNone and no fallback it means kAll.
  bool pareto = false;
  LatencyModel latency;
  // Budget of the rewrite search (each candidate's schedule gets at most
  // 5 s of it).
  absl::Duration time_limit = absl::Seconds(10);
  // Every stage (plain compile, rewrite search, final compile) ends by
  // then: each gets at most an equal share of what is left. Infinite means
  // only the stages' own limits apply.
  absl::Time deadline = absl::InfiniteFuture();
  GraphLimits limits;
};

// "none" | "identity" | "partition" | "all" | "auto" (mode kNone with
// fit_fallback) into `options`; INVALID_ARGUMENT listing them otherwise.
// Callers prefix the flag or field name.
absl::Status SetRewriteMode(absl::string_view name, RewriteCompileOptions& options);
// The name SetRewriteMode reads back into the same mode and fallback.
std::string RewriteModeNameOf(const RewriteCompileOptions& options);
// Widest beam a caller may ask for: each round costs about beam_width times
// the schedules, so wider beams only spend the time limit on fewer rounds.
inline constexpr int32_t kMaxRewriteBeamWidth = 16;

// INVALID_ARGUMENT for a negative, NaN or infinite overhead, speed or op
// overhead, or a beam width outside [0, kMaxRewriteBeamWidth] (the message
// names the field as `max_latency_overhead`, `beam_width`,
// `macs_per_second`, `op_overhead_seconds`; callers prefix where it lives).
absl::Status CheckRewriteCompileOptions(const RewriteCompileOptions& options);

// What rewriting did, for reports and the API.
struct RewriteSummary {
  // The mode that ran ("identity", "partition" or "all").
  std::string mode;
  // Ran because the plain schedule (peak `fallback_from_peak_bytes`) did not
  // fit the memory limit or the pools ("auto"). When the model as given has
  // no placement at all (`tensor_larger_than_every_pool`; `note` names the
  // tensor), it is the search's peak of the input.
  bool fit_fallback = false;
  // With fit_fallback: the model as given has an intermediate tensor larger
  // than every memory pool, so no placement at all; rewriting removed it.
  bool tensor_larger_than_every_pool = false;
  int64_t fallback_from_peak_bytes = 0;
  // The rewrites kept, in the order applied; empty when none lowered the
  // peak (then the input model was compiled).
  std::vector<AppliedRewrite> rewrites;
  // With RewriteCompileOptions::pareto: RewriteResult::pareto (the search's
  // peaks; the returned schedule is re-compiled and may differ).
  std::vector<ParetoPoint> pareto;
  // The search's peak of the input model (by the compile's scheduler).
  int64_t original_peak_bytes = 0;
  int64_t original_macs = 0;
  int64_t rewritten_macs = 0;
  int32_t original_ops = 0;
  int32_t rewritten_ops = 0;
  double latency_overhead = 0;
  bool weights_carried = false;
  // Says so when the input had no weight data (the rewritten model then has
  // none either: fine for scheduling, not for running); empty otherwise.
  std::string note;
  // Fit mode (a memory limit or memory pools were given): whether the
  // returned compile fits the device (FitsDevice: within the limit, a valid
  // placement across the pools) and, when not, the tensors live at its
  // peak step (with pools, CompileResult::placement->overflow says which
  // pool overflows and by how much).
  bool fit_mode = false;
  bool fits = false;
  std::vector<std::string> bottleneck_tensors;
  int32_t sites_found = 0;
  int32_t sites_skipped = 0;
  int32_t schedules_run = 0;
  bool time_limit_hit = false;
  absl::Duration time = absl::ZeroDuration();
  // The rewritten ONNX model, nodes in the returned schedule's order;
  // empty when no rewrite was kept.
  std::string rewritten_model;
};

struct RewriteCompileResult {
  // The graph `compile` scheduled: the rewritten model's, or the input's
  // when nothing was rewritten. Schedule and arena name its ops and tensors.
  Graph graph;
  CompileResult compile;
  // Set when a rewrite search ran.
  std::optional<RewriteSummary> rewrite;
};

// The one compile path with rewriting in front (CLI local mode and server):
//
// 1. mode kNone without fallback: Compile(graph) and nothing else.
// 2. fallback: Compile(graph); done when it fits the device (FitsDevice:
//    the memory limit, the pools) or there is neither, else mode kAll.
//    Should Compile refuse an intermediate tensor larger than every pool
//    (IsTensorLargerThanEveryPool, after the schedule stage), the refusal
//    waits: rewriting may never form the tensor. It is returned, with what
//    rewriting did, when the rewritten model the search keeps still has a
//    tensor over every pool (that one or a new one) or none was kept.
// 3. RewriteForMemory(onnx_model) with the compile's memory rules and
//    scheduler, the latency budget and, when the compile has a memory
//    limit or pools, fit mode: with pools a candidate fits when
//    OrderFitsDevice places its schedule across them (the place stage of
//    Compile, at most 200 ms for layout and placement each).
// 4. When it kept rewrites: the rewritten graph must read and write the
//    same inputs and outputs as `graph`; Compile(rewritten graph) with the
//    same services (so the simulator re-checks that schedule like any
//    other); the rewritten model's nodes reordered into its order. Should
//    that schedule's peak be above the input's (a heuristic schedule can
//    vary), the rewrites are dropped and the input compiled instead: the
//    peak never rises, unless the rewritten model fits the device and the
//    input does not. A rewritten model refused for a tensor larger than
//    every pool (a fused stage's workspace) is dropped the same way when
//    "auto" compiled the input; the note says why.
// Explicit modes with pools: a refusal for a tensor larger than every pool
// (of the rewritten model, or of the input when no rewrite was kept) ends
// with what the search did, as "auto"'s does.
//
// `graph` is `model_bytes` imported (with request.input_shapes applied);
// `model_bytes` is read for rewriting when request.format is ONNX.
// Errors: request.Validate()'s (rewriting asked of a model that is not
// ONNX, ...), Compile's and RewriteForMemory's; INTERNAL when a rewrite
// changed the model's interface (a bug).
absl::StatusOr<RewriteCompileResult> CompileWithRewrite(const CompileRequest& request,
                                                        absl::string_view model_bytes,
                                                        const Graph& graph,
                                                        const CompileServices& services,
                                                        const Clock& clock);

// OK when `rewritten` has the graph inputs and outputs of `original`, in
// order, with the same names, dims and sizes; INVALID_ARGUMENT naming the
// first tensor that differs. Clients check a server's rewritten model
// with it before trusting its schedule.
absl::Status CheckSameInterface(const Graph& original, const Graph& rewritten);

// The activation tensors live at `simulation`'s peak step, largest first.
std::vector<std::string> TensorsLiveAtPeak(const Graph& graph, const SimulationResult& simulation);

}  // namespace ordo

#endif  // ORDO_CORE_COMPILE_REWRITE_COMPILE_H_
