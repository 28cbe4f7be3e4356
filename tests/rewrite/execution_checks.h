// Test helpers shared by the proofs by execution of core/rewrite: import and
// check a (rewritten) model, make random inputs, and run the original and the
// rewritten model on the reference executor and compare their outputs.
// Test-only; failures are reported through gtest.

#ifndef ORDO_TESTS_REWRITE_EXECUTION_CHECKS_H_
#define ORDO_TESTS_REWRITE_EXECUTION_CHECKS_H_

#include <cstdint>
#include <random>
#include <string>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "core/graph/graph.h"
#include "onnx/onnx_pb.h"
#include "core/rewrite/onnx_test_model.h"  // Import
#include "tests/rewrite/reference_executor.h"

namespace ordo {

// ONNX's checker, on a copy whose unshipped external data is zero-filled
// (the checker insists the files exist) and whose graph outputs without a
// shape get the shapes the importer inferred (the test models leave them
// out, which the checker does not allow). The import error, or the checker's
// message as InvalidArgument. A model importing a standard opset newer than
// the linked libonnx knows (17) is checked by the import only: the library's
// checker has no schema for the ops those opsets added.
absl::Status CheckOnnx(const onnx::ModelProto& model);

// One float tensor per graph input of `model`, with the input's static shape
// and values uniform in [-1, 1) drawn from `rng` in input order.
TensorMap RandomInputs(const onnx::ModelProto& model, std::mt19937& rng);

// How close the rewritten model's outputs must be to the original's: every
// element within `relative * scale`, where scale is the largest finite
// magnitude of that output, and at least `min_scale`. Non-finite expected
// values must match exactly (NaN matches NaN). With `expect_nonzero`, an
// output whose scale stays at or below 1e-6 fails as a vacuous comparison.
struct OutputTolerance {
  double relative = 1e-4;
  double min_scale = 1.0;
  bool expect_nonzero = false;
};

// Runs `original` and `rewritten` on the reference executor with `feeds` and
// expects the same output names, dims and values (within `tolerance`).
// `what` names the case in failure messages. O(total elements).
void ExpectSameOutputs(const onnx::ModelProto& original, const onnx::ModelProto& rewritten,
                       const TensorMap& feeds, const std::string& what,
                       const OutputTolerance& tolerance);

// As above, on RandomInputs(original) drawn from a generator seeded `seed`.
void ExpectSameOutputs(const onnx::ModelProto& original, const onnx::ModelProto& rewritten,
                       uint32_t seed, const std::string& what, const OutputTolerance& tolerance);

}  // namespace ordo

#endif  // ORDO_TESTS_REWRITE_EXECUTION_CHECKS_H_
