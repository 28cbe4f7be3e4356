#include "core/compile/rewrite_compile.h"

#include <algorithm>
#include <cmath>
#include <tuple>
#include <utility>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/compile/compile_request.h"
#include "core/onnx/onnx_import.h"
#include "core/pools/memory_pools.h"
#include "core/util/status_macros.h"

namespace ordo {
namespace {

// Longest a single candidate's schedule may take inside the search.
constexpr absl::Duration kMaxCandidateScheduleTime = absl::Seconds(5);
// A candidate's placement in fit mode with memory pools gets at most this
// (the place stage's own cap per schedule); no one-arena plan is made.
constexpr absl::Duration kCandidatePlacementTime = absl::Milliseconds(200);

// Fit mode: the device's memory limit or its memory pools constrain the
// answer (FitsDevice).
bool FitMode(const CompileOptions& options) {
  return options.memory_limit_bytes > 0 || options.pools.enabled();
}

// FitsDevice of a compile that ran in fit mode.
bool Fits(const CompileOptions& options, const CompileResult& result) {
  return FitsDevice(options, result).value_or(false);
}

bool IsFiniteNonNegative(double value) { return std::isfinite(value) && value >= 0; }

// Stages left to run share what remains before the deadline equally; a
// stage never gets more than its own limit.
absl::Duration StageBudget(absl::Duration limit, absl::Time deadline, const Clock& clock,
                           int stages_left) {
  if (deadline == absl::InfiniteFuture()) return limit;
  const absl::Duration share = (deadline - clock.Now()) / stages_left;
  return std::clamp(share, absl::ZeroDuration(), limit);
}

absl::StatusOr<CompileResult> CompileStage(const Graph& graph, CompileOptions options,
                                           const RewriteCompileOptions& rewrite,
                                           const CompileServices& services, const Clock& clock,
                                           int stages_left) {
  options.time_limit = StageBudget(options.time_limit, rewrite.deadline, clock, stages_left);
  return Compile(graph, options, services, clock);
}

RewriteOptions SearchOptions(const CompileOptions& compile, const RewriteCompileOptions& rewrite,
                             const CompileServices& services, RewriteMode mode, const Clock& clock,
                             int stages_left) {
  RewriteOptions options;
  options.mode = mode;
  options.memory = compile.memory;
  options.scheduler = compile.scheduler;
  options.time_limit = StageBudget(rewrite.time_limit, rewrite.deadline, clock, stages_left);
  options.schedule_time_limit = std::min(kMaxCandidateScheduleTime, options.time_limit);
  options.limits = rewrite.limits;
  options.max_latency_overhead = rewrite.max_latency_overhead;
  if (rewrite.beam_width > 0) options.beam_width = rewrite.beam_width;
  options.fusion = rewrite.fusion;
  options.latency = rewrite.latency;
  options.memory_limit_bytes = compile.memory_limit_bytes;
  if (compile.pools.enabled()) {
    // The pools are the constraint: a candidate fits when the place stage
    // finds a valid placement of its schedule across them.
    options.fit_test = [compile, &clock](const Graph& graph, const ScheduleResult& schedule) {
      absl::StatusOr<bool> fits =
          OrderFitsDevice(graph, compile, schedule.order, kCandidatePlacementTime, clock);
      return fits.ok() && *fits;
    };
  }
  options.clock = &clock;
  options.cancelled = services.cancelled;
  return options;
}

RewriteSummary SummaryOf(RewriteMode mode, const RewriteResult& result) {
  RewriteSummary summary;
  summary.mode = std::string(RewriteModeName(mode));
  summary.rewrites = result.rewrites;
  summary.original_peak_bytes = result.original_peak_bytes;
  summary.original_macs = result.original_macs;
  summary.rewritten_macs = result.rewritten_macs;
  summary.original_ops = result.original_ops;
  summary.rewritten_ops = result.rewritten_ops;
  summary.latency_overhead = result.latency_overhead;
  summary.weights_carried = result.weights_carried;
  if (!result.weights_carried) {
    summary.note =
        "the input model carries no weight data, so neither does the rewritten model: "
        "its shapes and schedule are exact, but it cannot be run as is";
  }
  summary.sites_found = result.sites_found;
  summary.sites_skipped = result.sites_skipped;
  summary.schedules_run = result.schedules_run;
  summary.time_limit_hit = result.time_limit_hit;
  return summary;
}

// Appends to the summary's note (one line of several remarks).
void AddNote(RewriteSummary& summary, absl::string_view note) {
  summary.note = summary.note.empty() ? std::string(note) : absl::StrCat(summary.note, "; ", note);
}

// The model as it is was refused for a tensor larger than every pool, and
// rewriting did not cure it: the refusal stands, with what rewriting did.
absl::Status StillRefused(const absl::Status& refusal, absl::string_view why) {
  return absl::InvalidArgumentError(
      absl::StrCat(refusal.message(), "; rewrite \"auto\" could not make it fit: ", why));
}

// Fit-mode verdict on the schedule actually returned (not the search's).
void JudgeFit(const CompileOptions& options, const RewriteCompileResult& result,
              RewriteSummary& summary) {
  summary.fit_mode = FitMode(options);
  if (!summary.fit_mode) return;
  summary.fits = Fits(options, result.compile);
  if (!summary.fits) {
    summary.bottleneck_tensors = TensorsLiveAtPeak(result.graph, result.compile.simulation);
  }
}

absl::StatusOr<RewriteCompileResult> CompileAsIs(const Graph& graph, const CompileOptions& options,
                                                 const RewriteCompileOptions& rewrite,
                                                 const CompileServices& services,
                                                 const Clock& clock, int stages_left) {
  RewriteCompileResult result;
  ORDO_ASSIGN_OR_RETURN(result.compile,
                        CompileStage(graph, options, rewrite, services, clock, stages_left));
  result.graph = graph;
  return result;
}

}  // namespace

absl::Status SetRewriteMode(absl::string_view name, RewriteCompileOptions& options) {
  if (name == "auto") {
    options.mode = RewriteMode::kNone;
    options.fit_fallback = true;
    return absl::OkStatus();
  }
  absl::StatusOr<RewriteMode> mode = ParseRewriteMode(name);
  if (!mode.ok()) {
    return absl::InvalidArgumentError(absl::StrCat(
        "unknown rewrite mode \"", name, "\"; expected none|identity|partition|all|auto"));
  }
  options.mode = *mode;
  options.fit_fallback = false;
  return absl::OkStatus();
}

std::string RewriteModeNameOf(const RewriteCompileOptions& options) {
  if (options.mode == RewriteMode::kNone && options.fit_fallback) return "auto";
  return std::string(RewriteModeName(options.mode));
}

absl::Status CheckRewriteCompileOptions(const RewriteCompileOptions& options) {
  if (!IsFiniteNonNegative(options.max_latency_overhead)) {
    return absl::InvalidArgumentError(
        absl::StrCat("max_latency_overhead: must be a non-negative fraction, got ",
                     options.max_latency_overhead));
  }
  if (options.beam_width < 0 || options.beam_width > kMaxRewriteBeamWidth) {
    return absl::InvalidArgumentError(absl::StrCat("beam_width: must be 0 (the default) to ",
                                                   kMaxRewriteBeamWidth, ", got ",
                                                   options.beam_width));
  }
  if (!IsFiniteNonNegative(options.latency.macs_per_second) ||
      options.latency.macs_per_second == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("macs_per_second: must be positive, got ", options.latency.macs_per_second));
  }
  if (!IsFiniteNonNegative(options.latency.op_overhead_seconds)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "op_overhead_seconds: must not be negative, got ", options.latency.op_overhead_seconds));
  }
  if (options.time_limit < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("rewrite time limit is negative");
  }
  return absl::OkStatus();
}

absl::Status CheckSameInterface(const Graph& original, const Graph& rewritten) {
  for (const auto& [what, a, b] : {std::tuple{"input", original.inputs(), rewritten.inputs()},
                                   std::tuple{"output", original.outputs(), rewritten.outputs()}}) {
    if (a.size() != b.size()) {
      return absl::InvalidArgumentError(absl::StrCat("rewritten model has ", b.size(), " ", what,
                                                     "s; the original has ", a.size()));
    }
    for (size_t i = 0; i < a.size(); ++i) {
      const Tensor& x = original.tensor(a[i]);
      const Tensor& y = rewritten.tensor(b[i]);
      if (x.name != y.name || x.dims != y.dims || x.bytes != y.bytes) {
        return absl::InvalidArgumentError(
            absl::StrCat("rewritten model's ", what, " ", i, " is \"", y.name, "\" [",
                         absl::StrJoin(y.dims, "x"), "], ", y.bytes, " B; the original's is \"",
                         x.name, "\" [", absl::StrJoin(x.dims, "x"), "], ", x.bytes, " B"));
      }
    }
  }
  return absl::OkStatus();
}

std::vector<std::string> TensorsLiveAtPeak(const Graph& graph, const SimulationResult& simulation) {
  const int32_t step = simulation.peak_step;
  std::vector<TensorId> live;
  for (TensorId t = 0; t < static_cast<TensorId>(simulation.intervals.size()); ++t) {
    if (t >= static_cast<TensorId>(simulation.has_interval.size()) || !simulation.has_interval[t] ||
        t >= graph.num_tensors()) {
      continue;
    }
    const LiveInterval& interval = simulation.intervals[t];
    if (interval.first <= step && step <= interval.last) live.push_back(t);
  }
  std::stable_sort(live.begin(), live.end(), [&](TensorId a, TensorId b) {
    return graph.tensor(a).bytes > graph.tensor(b).bytes;
  });
  std::vector<std::string> names;
  names.reserve(live.size());
  for (TensorId t : live) names.push_back(graph.tensor(t).name);
  return names;
}

absl::StatusOr<RewriteCompileResult> CompileWithRewrite(const CompileRequest& request,
                                                        absl::string_view model_bytes,
                                                        const Graph& graph,
                                                        const CompileServices& services,
                                                        const Clock& clock) {
  ORDO_RETURN_IF_ERROR(request.Validate());
  const CompileOptions& options = request.options;
  const RewriteCompileOptions& rewrite = request.rewrite;
  const RewriteMode requested = RewriteModeToRun(rewrite);
  // Validate() let only ONNX through to rewriting; "auto" of any other
  // format compiles it as it is.
  const absl::string_view onnx_model =
      request.format == ModelFormat::kOnnx ? model_bytes : absl::string_view();
  const bool fallback = rewrite.fit_fallback && requested == RewriteMode::kNone &&
                        !onnx_model.empty() && FitMode(options);
  if (requested == RewriteMode::kNone && !fallback) {
    absl::StatusOr<RewriteCompileResult> as_is =
        CompileAsIs(graph, options, rewrite, services, clock, 1);
    if (!as_is.ok() && IsTensorLargerThanEveryPool(as_is.status()) && !onnx_model.empty()) {
      // The user can fix this one: say how.
      return absl::InvalidArgumentError(absl::StrCat(
          as_is.status().message(), "; rewriting may never form it: set ", request.names.rewrite,
          " to \"auto\""));
    }
    return as_is;
  }
  const absl::Time start = clock.Now();
  RewriteMode mode = requested;
  std::optional<RewriteCompileResult> plain;
  // Set when the model as it is has a tensor larger than every pool: only a
  // rewrite that splits it can fit, so the refusal stands only if none does.
  absl::Status refusal;
  if (fallback) {
    absl::StatusOr<RewriteCompileResult> as_is =
        CompileAsIs(graph, options, rewrite, services, clock, 3);
    if (as_is.ok()) {
      if (Fits(options, as_is->compile)) return *std::move(as_is);
      plain = *std::move(as_is);
    } else if (IsTensorLargerThanEveryPool(as_is.status())) {
      refusal = as_is.status();
    } else {
      return as_is.status();
    }
    mode = RewriteMode::kAll;
  }

  onnx::ModelProto model;
  if (!model.ParseFromArray(onnx_model.data(), static_cast<int>(onnx_model.size()))) {
    return absl::InvalidArgumentError("ONNX model does not parse");
  }
  absl::StatusOr<RewriteResult> searched_or =
      RewriteForMemory(model, SearchOptions(options, rewrite, services, mode, clock, 2));
  if (!searched_or.ok() && plain) {
    // "auto" already has an answer: a failed rewrite does not fail it.
    RewriteSummary summary;
    summary.mode = std::string(RewriteModeName(mode));
    summary.fit_fallback = true;
    summary.fallback_from_peak_bytes = plain->compile.peak_bytes;
    summary.original_peak_bytes = plain->compile.peak_bytes;
    summary.note = absl::StrCat("rewriting failed, the model is compiled as it is: ",
                                searched_or.status().message());
    JudgeFit(options, *plain, summary);
    summary.time = clock.Now() - start;
    plain->rewrite = std::move(summary);
    return *std::move(plain);
  }
  if (!searched_or.ok() && !refusal.ok()) {
    return StillRefused(refusal, absl::StrCat("rewriting failed: ", searched_or.status().message()));
  }
  ORDO_ASSIGN_OR_RETURN(RewriteResult searched, std::move(searched_or));
  RewriteSummary summary = SummaryOf(mode, searched);
  if (rewrite.pareto) summary.pareto = searched.pareto;
  if (plain) {
    summary.fit_fallback = true;
    summary.fallback_from_peak_bytes = plain->compile.peak_bytes;
  }
  if (!refusal.ok()) {
    summary.fit_fallback = true;
    summary.fallback_from_peak_bytes = searched.original_peak_bytes;
    AddNote(summary, absl::StrCat(kNoPlacementAsGivenNote, refusal.message()));
  }

  std::optional<RewriteCompileResult> result;
  if (!summary.rewrites.empty()) {
    if (absl::Status same = CheckSameInterface(graph, searched.graph); !same.ok()) {
      return absl::InternalError(absl::StrCat("rewriting broke the model: ", same.message()));
    }
    RewriteCompileResult rewritten;
    // Without a plain compile, time is kept for the input's compile should
    // the rewritten model's not beat the input's search peak.
    absl::StatusOr<CompileResult> compiled =
        CompileStage(searched.graph, options, rewrite, services, clock,
                     plain || !refusal.ok() ? 1 : 2);
    if (!compiled.ok() && !refusal.ok() && IsTensorLargerThanEveryPool(compiled.status())) {
      return StillRefused(refusal, absl::StrCat("after ", summary.rewrites.size(),
                                                " rewrite(s), ", compiled.status().message()));
    }
    ORDO_ASSIGN_OR_RETURN(rewritten.compile, std::move(compiled));
    if (!plain && refusal.ok() && rewritten.compile.peak_bytes > summary.original_peak_bytes) {
      // Above the input's search peak: compile the input too, with the time
      // kept for it, and keep whichever verified schedule is lower (never a
      // known peak for an unknown one).
      absl::StatusOr<RewriteCompileResult> as_is =
          CompileAsIs(graph, options, rewrite, services, clock, 1);
      if (as_is.ok()) plain = *std::move(as_is);
    }
    const int64_t input_peak = plain ? plain->compile.peak_bytes : rewritten.compile.peak_bytes;
    // Fitting the device is the question fit mode answers: a rewritten
    // model that fits where the input does not is kept even if its
    // schedule's peak came out higher (with pools, the peak is not what
    // decides); otherwise the peak never rises.
    const bool fits_only_rewritten = FitMode(options) && Fits(options, rewritten.compile) &&
                                     !(plain && Fits(options, plain->compile));
    if (rewritten.compile.peak_bytes <= input_peak || fits_only_rewritten) {
      ORDO_ASSIGN_OR_RETURN(summary.rewritten_model,
                            ReorderOnnxNodes(searched.model.SerializeAsString(), searched.graph,
                                             rewritten.compile.schedule));
      rewritten.graph = std::move(searched.graph);
      result = std::move(rewritten);
    } else {
      summary.rewrites.clear();
    }
  }
  if (!result) {
    // Nothing kept: the input model's compile is the answer.
    if (plain) {
      result = std::move(plain);
    } else if (!refusal.ok()) {
      return StillRefused(refusal, summary.time_limit_hit
                                       ? "the rewrite search hit its time limit before it found "
                                         "a rewritten model that fits; a longer time limit may "
                                         "find one"
                                       : "no rewritten model the search found fits");
    } else {
      ORDO_ASSIGN_OR_RETURN(result, CompileAsIs(graph, options, rewrite, services, clock, 1));
    }
    summary.rewritten_macs = summary.original_macs;
    summary.rewritten_ops = summary.original_ops;
    summary.latency_overhead = 0;
  }
  JudgeFit(options, *result, summary);
  summary.time = clock.Now() - start;
  result->rewrite = std::move(summary);
  return *std::move(result);
}

}  // namespace ordo
