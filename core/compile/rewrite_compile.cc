#include "core/compile/rewrite_compile.h"

#include <algorithm>
#include <cmath>
#include <functional>
#include <memory>
#include <tuple>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/compile/compile_request.h"
#include "core/onnx/onnx_import.h"
#include "core/pools/memory_pools.h"
#include "core/util/status_macros.h"

namespace ordo {
namespace {

// Opens RewriteSummary::note's remark when "auto" rewrote a model that has
// no placement as given (RewriteSummary::tensor_larger_than_every_pool).
constexpr absl::string_view kNoPlacementAsGivenNote = "the model as it is does not fit: ";
// Longest a single candidate's schedule may take inside the search.
constexpr absl::Duration kMaxCandidateScheduleTime = absl::Seconds(5);
// A candidate's placement in fit mode with memory pools gets at most this
// (the place stage's own cap per schedule); no one-arena plan is made,
// unless the placement is that plan's (PoolOptions::one_arena).
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

// The search's progress as kRewriting reports, at most one per
// kRewriteProgressInterval (a search runs hundreds of schedules a second);
// empty when nobody listens.
constexpr absl::Duration kRewriteProgressInterval = absl::Seconds(1);
std::function<void()> RewriteProgress(const CompileServices& services, const Clock& clock) {
  if (!services.on_progress) return {};
  // Shared: the search copies its options for later steps, and every copy
  // counts into the one total and the one throttle.
  struct Reported {
    absl::Time start;
    absl::Time last = absl::InfinitePast();
    int32_t schedules_run = 0;
  };
  auto reported = std::make_shared<Reported>(Reported{clock.Now()});
  return [&services, &clock, reported] {
    ++reported->schedules_run;
    const absl::Time now = clock.Now();
    if (now - reported->last < kRewriteProgressInterval) return;
    reported->last = now;
    CompileProgress progress;
    progress.stage = CompileProgress::Stage::kRewriting;
    progress.elapsed = now - reported->start;
    progress.rewrite_schedules = reported->schedules_run;
    services.on_progress(progress);
  };
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
  options.on_schedule_run = RewriteProgress(services, clock);
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
  if (note.empty()) return;
  summary.note = summary.note.empty() ? std::string(note) : absl::StrCat(summary.note, "; ", note);
}

bool IsQuantizationOp(absl::string_view type) {
  return type == "QuantizeLinear" || type == "DequantizeLinear" ||
         type == "DynamicQuantizeLinear" || absl::StartsWith(type, "QLinear") ||
         absl::EndsWith(type, "Integer");
}

// Why a quantized model got no rewrite, and what to do instead; "" for a
// float model. The rewrites do not read the quantization ops, which sit
// between every pair of layers of a QDQ or QOperator model.
std::string QuantizedModelNote(const Graph& graph) {
  int32_t quantization_ops = 0;
  for (OpId op = 0; op < graph.num_ops(); ++op) {
    if (IsQuantizationOp(graph.op(op).type)) ++quantization_ops;
  }
  if (quantization_ops == 0) return "";
  return absl::StrCat(
      "the model is quantized (", quantization_ops,
      " quantization ops such as QuantizeLinear, DequantizeLinear, QLinearConv), which "
      "rewriting does not read, and they sit between the layers it rewrites: rewrite the float "
      "model (with --activation-dtype int8 for its int8 memory plan) and quantize the rewritten "
      "model");
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

// How a request's refusal for a tensor larger than every pool ends once
// rewriting ran: what it did, in the mode the user asked for.
absl::Status StillRefused(const absl::Status& refusal, absl::string_view mode_name,
                          absl::string_view why) {
  return absl::InvalidArgumentError(absl::StrCat(refusal.message(), "; rewrite \"", mode_name,
                                                 "\" could not make it fit: ", why));
}

// Steps 2-4 of one CompileWithRewrite call (see the header), past its
// checks: each member function is one of them. Holds references to the
// call's arguments, which outlive it; Run once per object.
class RewriteCompile {
 public:
  RewriteCompile(const CompileRequest& request, absl::string_view onnx_model, const Graph& graph,
                 const CompileServices& services, const Clock& clock)
      : options_(request.options),
        rewrite_(request.rewrite),
        onnx_model_(onnx_model),
        graph_(graph),
        services_(services),
        clock_(clock),
        start_(clock.Now()) {}

  absl::StatusOr<RewriteCompileResult> Run(RewriteMode mode, bool fallback) {
    mode_name_ = fallback ? "auto" : std::string(RewriteModeName(mode));
    if (fallback) {
      ORDO_ASSIGN_OR_RETURN(const bool fits, CompileAsGiven());
      if (fits) return *std::move(plain_);
      mode = RewriteMode::kAll;
    }
    onnx::ModelProto model;
    if (!model.ParseFromArray(onnx_model_.data(), static_cast<int>(onnx_model_.size()))) {
      return absl::InvalidArgumentError("ONNX model does not parse");
    }
    absl::StatusOr<RewriteResult> searched =
        RewriteForMemory(model, SearchOptions(options_, rewrite_, services_, mode, clock_, 2));
    if (!searched.ok()) return AnswerWithoutSearch(mode, searched.status());
    RewriteSummary summary = Summarize(mode, *searched);
    ORDO_ASSIGN_OR_RETURN(std::optional<RewriteCompileResult> result,
                          CompileRewritten(*searched, summary));
    if (!result) {
      ORDO_ASSIGN_OR_RETURN(result, InputAsAnswer(summary));
    }
    return Finish(*std::move(result), std::move(summary));
  }

 private:
  absl::StatusOr<RewriteCompileResult> CompileInput(int stages_left) const {
    return CompileAsIs(graph_, options_, rewrite_, services_, clock_, stages_left);
  }

  // "auto"'s first step: true when the input fits the device (its compile
  // is then plain_, the answer). A compile that does not fit is kept in
  // plain_ as the answer should rewriting do no better; a refusal for a
  // tensor larger than every pool waits in refusal_, since rewriting may
  // never form that tensor.
  absl::StatusOr<bool> CompileAsGiven() {
    absl::StatusOr<RewriteCompileResult> as_is = CompileInput(3);
    if (as_is.ok()) {
      plain_ = *std::move(as_is);
      return Fits(options_, plain_->compile);
    }
    if (!IsTensorLargerThanEveryPool(as_is.status())) return as_is.status();
    refusal_ = as_is.status();
    return false;
  }

  // The search failed: "auto" already has an answer when the input
  // compiled, and a failed rewrite does not fail it.
  absl::StatusOr<RewriteCompileResult> AnswerWithoutSearch(RewriteMode mode,
                                                           const absl::Status& failed) {
    if (!refusal_.ok()) {
      return StillRefused(refusal_, mode_name_,
                          absl::StrCat("rewriting failed: ", failed.message()));
    }
    if (!plain_) return failed;
    RewriteSummary summary;
    summary.mode = std::string(RewriteModeName(mode));
    summary.fit_fallback = true;
    summary.fallback_from_peak_bytes = plain_->compile.peak_bytes;
    summary.original_peak_bytes = plain_->compile.peak_bytes;
    summary.note =
        absl::StrCat("rewriting failed, the model is compiled as it is: ", failed.message());
    return Finish(*std::move(plain_), std::move(summary));
  }

  RewriteSummary Summarize(RewriteMode mode, const RewriteResult& searched) const {
    RewriteSummary summary = SummaryOf(mode, searched);
    if (rewrite_.pareto) summary.pareto = searched.pareto;
    if (plain_) {
      summary.fit_fallback = true;
      summary.fallback_from_peak_bytes = plain_->compile.peak_bytes;
    }
    if (!refusal_.ok()) {
      summary.fit_fallback = true;
      summary.tensor_larger_than_every_pool = true;
      summary.fallback_from_peak_bytes = searched.original_peak_bytes;
      AddNote(summary, absl::StrCat(kNoPlacementAsGivenNote, refusal_.message()));
    }
    return summary;
  }

  // Step 4: the rewritten model compiled, or nothing when no rewrite was
  // kept (then summary.rewrites is emptied).
  absl::StatusOr<std::optional<RewriteCompileResult>> CompileRewritten(RewriteResult& searched,
                                                                       RewriteSummary& summary) {
    if (summary.rewrites.empty()) return std::nullopt;
    if (absl::Status same = CheckSameInterface(graph_, searched.graph); !same.ok()) {
      return absl::InternalError(absl::StrCat("rewriting broke the model: ", same.message()));
    }
    // Without an earlier compile of the input, time is kept for one should
    // the rewritten model's schedule not beat the input's search peak.
    const bool input_compiled = plain_.has_value() || !refusal_.ok();
    absl::StatusOr<CompileResult> compiled =
        CompileStage(searched.graph, options_, rewrite_, services_, clock_, input_compiled ? 1 : 2);
    if (!compiled.ok() && IsTensorLargerThanEveryPool(compiled.status())) {
      if (plain_) {
        // "auto" has the input's compile: a rewrite that forms a tensor
        // over every pool (a fused stage's workspace) is dropped.
        AddNote(summary,
                absl::StrCat("the rewritten model was not kept: ", compiled.status().message()));
        summary.rewrites.clear();
        return std::nullopt;
      }
      const std::string after = absl::StrCat("after ", summary.rewrites.size(), " rewrite(s)");
      return refusal_.ok() ? StillRefused(compiled.status(), mode_name_, after)
                           : StillRefused(refusal_, mode_name_,
                                          absl::StrCat(after, ", ", compiled.status().message()));
    }
    RewriteCompileResult rewritten;
    ORDO_ASSIGN_OR_RETURN(rewritten.compile, std::move(compiled));
    if (!input_compiled && rewritten.compile.peak_bytes > summary.original_peak_bytes) {
      // Above the input's search peak: compile the input too, and keep
      // whichever verified schedule is lower (never a known peak for an
      // unknown one).
      absl::StatusOr<RewriteCompileResult> as_is = CompileInput(1);
      if (as_is.ok()) plain_ = *std::move(as_is);
    }
    if (!KeepRewritten(rewritten.compile)) {
      summary.rewrites.clear();
      return std::nullopt;
    }
    ORDO_ASSIGN_OR_RETURN(summary.rewritten_model,
                          ReorderOnnxNodes(searched.model.SerializeAsString(), searched.graph,
                                           rewritten.compile.schedule));
    rewritten.graph = std::move(searched.graph);
    return rewritten;
  }

  // Fitting the device is the question fit mode answers: a rewritten
  // model that fits where the input does not is kept even if its
  // schedule's peak came out higher (with pools, the peak is not what
  // decides); otherwise the peak never rises.
  bool KeepRewritten(const CompileResult& rewritten) const {
    const int64_t input_peak = plain_ ? plain_->compile.peak_bytes : rewritten.peak_bytes;
    const bool fits_only_rewritten = FitMode(options_) && Fits(options_, rewritten) &&
                                     !(plain_ && Fits(options_, plain_->compile));
    return rewritten.peak_bytes <= input_peak || fits_only_rewritten;
  }

  // No rewrite kept: the input model's compile is the answer, or its
  // refusal for a tensor larger than every pool, with why rewriting did not
  // help.
  absl::StatusOr<RewriteCompileResult> InputAsAnswer(RewriteSummary& summary) {
    const absl::string_view why =
        summary.time_limit_hit
            ? "the rewrite search hit its time limit before it found a rewritten model that "
              "fits; a longer time limit may find one"
            : "no rewritten model the search found fits";
    if (!refusal_.ok()) return StillRefused(refusal_, mode_name_, why);
    std::optional<RewriteCompileResult> input = std::move(plain_);
    if (!input) {
      absl::StatusOr<RewriteCompileResult> as_is = CompileInput(1);
      if (!as_is.ok() && IsTensorLargerThanEveryPool(as_is.status())) {
        return StillRefused(as_is.status(), mode_name_, why);
      }
      ORDO_ASSIGN_OR_RETURN(input, std::move(as_is));
    }
    summary.rewritten_macs = summary.original_macs;
    summary.rewritten_ops = summary.original_ops;
    summary.latency_overhead = 0;
    return *std::move(input);
  }

  absl::StatusOr<RewriteCompileResult> Finish(RewriteCompileResult result,
                                              RewriteSummary summary) const {
    JudgeFit(options_, result, summary);
    if (summary.rewrites.empty()) AddNote(summary, QuantizedModelNote(graph_));
    summary.time = clock_.Now() - start_;
    result.rewrite = std::move(summary);
    return result;
  }

  const CompileOptions& options_;
  const RewriteCompileOptions& rewrite_;
  // As the user asked: "auto", or the mode searched.
  std::string mode_name_;
  const absl::string_view onnx_model_;
  const Graph& graph_;
  const CompileServices& services_;
  const Clock& clock_;
  const absl::Time start_;
  // The input model compiled ("auto"'s first step, or when the rewritten
  // model's schedule came out above the input's search peak).
  std::optional<RewriteCompileResult> plain_;
  // "auto": the input model has a tensor larger than every pool.
  absl::Status refusal_;
};

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
  // Written so that NaN fails too.
  const double macs_per_second = options.latency.macs_per_second;
  if (!(macs_per_second >= kMinMacsPerSecond && macs_per_second <= kMaxMacsPerSecond)) {
    return absl::InvalidArgumentError(absl::StrCat("macs_per_second: must be from ",
                                                   kMinMacsPerSecond, " to ", kMaxMacsPerSecond,
                                                   ", got ", macs_per_second));
  }
  const double op_overhead_seconds = options.latency.op_overhead_seconds;
  if (!(op_overhead_seconds >= 0 && op_overhead_seconds <= kMaxOpOverheadSeconds)) {
    return absl::InvalidArgumentError(absl::StrCat("op_overhead_seconds: must be from 0 to ",
                                                   kMaxOpOverheadSeconds, ", got ",
                                                   op_overhead_seconds));
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
  const RewriteMode requested = RewriteModeToRun(request.rewrite);
  // Validate() let only ONNX through to rewriting; "auto" of any other
  // format compiles it as it is.
  const absl::string_view onnx_model =
      request.format == ModelFormat::kOnnx ? model_bytes : absl::string_view();
  const bool fallback = request.rewrite.fit_fallback && requested == RewriteMode::kNone &&
                        !onnx_model.empty() && FitMode(request.options);
  absl::StatusOr<RewriteCompileResult> result =
      requested != RewriteMode::kNone || fallback
          ? RewriteCompile(request, onnx_model, graph, services, clock).Run(requested, fallback)
          : CompileAsIs(graph, request.options, request.rewrite, services, clock, 1);
  if (result.ok()) return result;
  // The user can fix these: say how.
  const absl::Status& status = result.status();
  if (requested == RewriteMode::kNone && !fallback && IsTensorLargerThanEveryPool(status) &&
      !onnx_model.empty()) {
    return absl::InvalidArgumentError(absl::StrCat(status.message(),
                                                   "; rewriting may never form it: set ",
                                                   request.names.rewrite, " to \"auto\""));
  }
  return WithTheFix(status, request.options, request.names);
}

}  // namespace ordo
