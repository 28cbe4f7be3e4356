#include "core/compile/compile_request.h"

#include "absl/strings/str_cat.h"
#include "core/arena/arena_planner_registry.h"
#include "core/pools/memory_pools.h"
#include "core/schedule/scheduler_registry.h"
#include "core/util/status_macros.h"

namespace ordo {
namespace {

// "<what>: needs <need> (<where it goes>); <model> is <its format>".
absl::Status NeedsFormat(absl::string_view what, absl::string_view need, absl::string_view where,
                         const CompileRequestNames& names, ModelFormat format) {
  return absl::InvalidArgumentError(absl::StrCat(what, ": needs ", need, " (", where, "); ",
                                                 names.model, " is ",
                                                 ModelFormatDescription(format)));
}

}  // namespace

const char* ModelFormatDescription(ModelFormat format) {
  switch (format) {
    case ModelFormat::kOnnx:
      return "an ONNX model";
    case ModelFormat::kGraphProto:
    case ModelFormat::kGraphJson:
      return "a native ordo.v1.Graph";
    case ModelFormat::kTflite:
      return "a TFLite model";
  }
  return "a model of unknown format";
}

RewriteMode RewriteModeToRun(const RewriteCompileOptions& rewrite) {
  return rewrite.pareto && rewrite.mode == RewriteMode::kNone && !rewrite.fit_fallback
             ? RewriteMode::kAll
             : rewrite.mode;
}

void ImplyOneArena(CompileRequest& request) {
  if (request.reordered_tflite && request.options.pools.enabled()) {
    request.options.pools.one_arena = true;
  }
}

absl::Status CheckInputShapesApply(ModelFormat format, const InputShapes& shapes,
                                   const CompileRequestNames& names) {
  if (shapes.empty() || format == ModelFormat::kOnnx) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat(
      names.input_shapes, " apply to ONNX models (", names.onnx_model, "); ", names.model, " is ",
      ModelFormatDescription(format), ", whose shapes are static"));
}

namespace {

// The registry's refusal of an unknown name, naming the flag or field.
absl::Status Named(const absl::Status& status, const std::string& name) {
  if (status.ok()) return status;
  return absl::InvalidArgumentError(absl::StrCat(name, ": ", status.message()));
}

}  // namespace

absl::Status WithTheFix(const absl::Status& status, const CompileOptions& options,
                        const CompileRequestNames& names) {
  if (!IsGraphInputOrOutputLargerThanEveryPool(status) || options.memory.io_outside_arena) {
    return status;
  }
  return absl::InvalidArgumentError(
      absl::StrCat(status.message(),
                   "; if the device keeps the model's input and output in buffers of their own, "
                   "outside the pools, set ",
                   names.io_outside_arena));
}

absl::Status CompileRequest::Validate() const {
  ORDO_RETURN_IF_ERROR(CheckRewriteCompileOptions(rewrite));
  ORDO_RETURN_IF_ERROR(
      Named(BuiltinSchedulers().Create(options.scheduler).status(), names.scheduler));
  if (options.arena_planner != kNoArenaPlanner) {
    ORDO_RETURN_IF_ERROR(Named(BuiltinArenaPlanners().Create(options.arena_planner).status(),
                               names.arena_planner));
  }
  const bool onnx = format == ModelFormat::kOnnx;
  // Rewrites edit ONNX nodes; "auto" without an ONNX model compiles as is.
  if (const RewriteMode mode = RewriteModeToRun(rewrite); mode != RewriteMode::kNone && !onnx) {
    const absl::Status refusal =
        NeedsFormat(absl::StrCat(names.rewrite, " \"", RewriteModeName(mode), "\"",
                                 rewrite.pareto ? " (for the Pareto front)" : ""),
                    "an ONNX model to rewrite", names.onnx_model, names, format);
    return absl::InvalidArgumentError(absl::StrCat(
        refusal.message(), "; to rewrite this network, compile its ONNX export with ",
        names.rewrite, " (", names.rewrite, " \"auto\" compiles a model of any format as it is)"));
  }
  ORDO_RETURN_IF_ERROR(CheckInputShapesApply(format, input_shapes, names));
  if (reordered_onnx && !onnx) {
    return NeedsFormat(names.reordered_onnx, "an ONNX input model", names.onnx_model, names,
                       format);
  }
  if (reordered_tflite) {
    if (format != ModelFormat::kTflite) {
      return NeedsFormat(names.reordered_tflite, "a TFLite input model", names.tflite_model, names,
                         format);
    }
    // The offline plan is the arena's layout.
    if (options.arena_planner == kNoArenaPlanner) {
      return absl::InvalidArgumentError(absl::StrCat(
          names.reordered_tflite, ": needs an arena plan; ", names.arena_planner, " is \"none\""));
    }
  }
  return absl::OkStatus();
}

}  // namespace ordo
