#ifndef ORDO_CORE_COMPILE_COMPILE_REQUEST_H_
#define ORDO_CORE_COMPILE_COMPILE_REQUEST_H_

#include <string>

#include "absl/status/status.h"
#include "core/compile/compile.h"
#include "core/compile/import_model.h"
#include "core/compile/rewrite_compile.h"
#include "core/onnx/input_shapes.h"

namespace ordo {

// What the user calls each part of a request, so that an error names the
// flag or field they wrote: the CLI fills in its flags and the model's
// path, the service its proto fields. The defaults are the API's fields.
struct CompileRequestNames {
  // The model as the user knows it ("model.json", "the request's model").
  std::string model = "the request's model";
  // Where an ONNX / a TFLite model goes.
  std::string onnx_model = "onnx_model";
  std::string tflite_model = "tflite_model";
  std::string rewrite = "options.rewrite";
  std::string input_shapes = "options.input_shapes / options.dim_params / options.batch";
  std::string reordered_onnx = "options.return_reordered_onnx";
  std::string reordered_tflite = "options.return_reordered_tflite";
  std::string scheduler = "options.scheduler";
  std::string arena_planner = "options.arena_planner";
  std::string io_outside_arena = "options.io_outside_arena";
};

// A compile as the CLI and the service both ask for it: the model's
// format, how to compile and rewrite it, the input shapes to fix, and the
// model files wanted back. The model's bytes travel beside it. Validate()
// holds the request-level rules (which options need which model format),
// written once; field-level checks (a negative overhead, an unknown
// scheduler) stay with the options they concern.
struct CompileRequest {
  ModelFormat format = ModelFormat::kOnnx;
  CompileOptions options;
  RewriteCompileOptions rewrite;
  InputShapes input_shapes;
  // The input model with its nodes in schedule order (or the rewritten
  // model): `ordo compile --emit-onnx/--rewritten-model`,
  // CompileOptions.return_reordered_onnx.
  bool reordered_onnx = false;
  // The TFLite model in schedule order with the arena as its offline plan:
  // `--emit-tflite`, CompileOptions.return_reordered_tflite.
  bool reordered_tflite = false;
  // The plan as a C header: CompileOptions.return_plan_header (the CLI
  // writes plan.h in --out-dir itself).
  bool plan_header = false;
  CompileRequestNames names;

  // OK, or INVALID_ARGUMENT naming the first flag or field (by `names`)
  // that the model's format cannot serve: rewriting, input shapes and
  // reordered ONNX need an ONNX model, a reordered TFLite model needs a
  // TFLite model and an arena plan; and CheckRewriteCompileOptions. Cheap:
  // callers run it before importing the model.
  absl::Status Validate() const;
};

// `status` with the fix its user can apply, in `names`' words: a graph
// input or output larger than every pool (IsGraphInputOrOutputLargerThan-
// EveryPool) may live outside the pools (io_outside_arena) on a device
// that keeps it in a buffer of its own. Any other status is returned as it
// is. Compile and Estimate, on the CLI and in the service, refuse through it.
absl::Status WithTheFix(const absl::Status& status, const CompileOptions& options,
                        const CompileRequestNames& names);

// The rewrite mode a compile runs: `rewrite.mode`, except that a Pareto
// front asked for alone needs a search and means kAll.
RewriteMode RewriteModeToRun(const RewriteCompileOptions& rewrite);

// TensorFlow Lite Micro plans one arena, and a reordered TFLite model's
// offline plan is that arena's layout: with memory pools, a request for
// one places the arena whole in one pool. Sets options.pools.one_arena
// then. The CLI and the server apply it to every request they build, so
// the options in force (and echoed in the response) say so; the TFLite
// writer refuses an arena that spans pools should a caller not.
void ImplyOneArena(CompileRequest& request);

// OK when `shapes` is empty or `format` is ONNX (the only format with
// symbolic dims); else INVALID_ARGUMENT naming names.input_shapes. Part of
// Validate(), and alone for the requests that only import (estimate,
// inspect).
absl::Status CheckInputShapesApply(ModelFormat format, const InputShapes& shapes,
                                   const CompileRequestNames& names);

// "an ONNX model", "a native ordo.v1.Graph", "a TFLite model".
const char* ModelFormatDescription(ModelFormat format);

}  // namespace ordo

#endif  // ORDO_CORE_COMPILE_COMPILE_REQUEST_H_
