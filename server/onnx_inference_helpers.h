#ifndef ORDO_SERVER_ONNX_INFERENCE_HELPERS_H_
#define ORDO_SERVER_ONNX_INFERENCE_HELPERS_H_

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/status/status.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/time.h"
#include "onnx/onnx_pb.h"
#include "sys/child_process.h"

namespace ordo::server {

// libonnx's shape inference (onnx_import::InferShapesHere) in helper
// processes, so that a model that crashes libonnx 1.12 (it has, on
// malformed models: docs/testing.md, "Found and fixed") fails alone while
// the server keeps serving. The import's ShapeInferenceRunner in
// ordo-server (--isolate_onnx_inference, the default).
//
// A helper is `binary --onnx-inference-helper` (ordo-server itself),
// started on first use and kept for the next inference; at most
// `max_idle` wait between calls, more are stopped. One inference: the
// model goes to the helper as it is (the importer's copies hold no bulk
// weight data: DropBulkInitializerData), and the declarations inference
// wrote (graph value_info and outputs) come back into `model`. A helper that dies of a fault during the call, or does not
// answer within `timeout` (then killed), fails the call with
// INVALID_ARGUMENT saying so; one found dead before the call, or killed by
// another process during it (SIGKILL, SIGTERM: an operator, the OOM
// killer), is replaced and the call retried once. Only helpers whose call
// succeeded are kept; a helper also ends itself 180 s into one inference. When no helper starts (fork fails, or the binary does not
// greet as a helper within 10 s), inference runs in this process for
// kRetryStartAfter, with one warning. Thread-safe; each call uses a helper of
// its own.
class OnnxInferenceHelpers {
 public:
  struct Options {
    std::string binary;
    int max_idle = 4;
    absl::Duration timeout = absl::Seconds(60);
  };
  // After a helper fails to start, inference runs in process this long.
  static constexpr absl::Duration kRetryStartAfter = absl::Seconds(10);

  explicit OnnxInferenceHelpers(Options options) : options_(std::move(options)) {}
  OnnxInferenceHelpers(const OnnxInferenceHelpers&) = delete;
  OnnxInferenceHelpers& operator=(const OnnxInferenceHelpers&) = delete;

  // InferShapesHere(model, strict, check_types), in a helper.
  absl::Status Infer(onnx::ModelProto& model, bool strict, bool check_types);

  // Helpers that died or were killed during a call, since construction.
  int64_t failures() const;

 private:
  // An idle helper, or a new one.
  absl::StatusOr<std::unique_ptr<ChildProcess>> Take();
  void Give(std::unique_ptr<ChildProcess> helper);
  // One request on `helper`; the answer's declarations into `model`.
  // UNAVAILABLE when the helper was gone before reading it.
  absl::Status Call(ChildProcess& helper, const std::string& request, onnx::ModelProto& model);

  const Options options_;
  mutable absl::Mutex mu_;
  std::vector<std::unique_ptr<ChildProcess>> idle_ ABSL_GUARDED_BY(mu_);
  int64_t failures_ ABSL_GUARDED_BY(mu_) = 0;
  absl::Time no_helper_until_ ABSL_GUARDED_BY(mu_) = absl::InfinitePast();
};

// The helper's side: reads requests from `in_fd` and writes answers to
// `out_fd` until `in_fd` ends; returns the process's exit code (0 at the
// end of input, 2 on a malformed request).
int ServeOnnxInferenceHelper(int in_fd, int out_fd);

// The flag that makes ordo-server a helper (argv[1]); not an absl flag.
inline constexpr char kOnnxInferenceHelperFlag[] = "--onnx-inference-helper";

}  // namespace ordo::server

#endif  // ORDO_SERVER_ONNX_INFERENCE_HELPERS_H_
