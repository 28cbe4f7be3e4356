#include "tests/rewrite/execution_checks.h"

#include <algorithm>
#include <cmath>
#include <exception>
#include <optional>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/graph/onnx_domain.h"
#include "core/onnx/onnx_import.h"
#include "core/rewrite/onnx_test_model.h"
#include "gtest/gtest.h"
#include "onnx/checker.h"
#include "onnx/defs/schema.h"

namespace ordo {

absl::Status CheckOnnx(const onnx::ModelProto& model) {
  absl::StatusOr<Graph> graph = Import(model);
  if (!graph.ok()) return graph.status();
  const auto& versions = onnx::OpSchemaRegistry::DomainToVersionRange::Instance().Map();
  for (const onnx::OperatorSetIdProto& opset : model.opset_import()) {
    if (IsStandardOnnxDomain(opset.domain()) &&
        opset.version() > versions.at(onnx::ONNX_DOMAIN).second) {
      return absl::OkStatus();
    }
  }
  onnx::ModelProto copy = WithZeroExternalData(model);
  for (onnx::ValueInfoProto& output : *copy.mutable_graph()->mutable_output()) {
    auto* type = output.mutable_type()->mutable_tensor_type();
    if (type->has_shape()) continue;
    std::optional<TensorId> t = graph->FindTensor(output.name());
    if (!t) return absl::InvalidArgumentError(absl::StrCat("no tensor ", output.name()));
    for (int64_t d : graph->tensor(*t).dims) type->mutable_shape()->add_dim()->set_dim_value(d);
  }
  try {
    onnx::checker::check_model(copy);
  } catch (const std::exception& e) {
    return absl::InvalidArgumentError(e.what());
  }
  return absl::OkStatus();
}

TensorMap RandomInputs(const onnx::ModelProto& model, std::mt19937& rng) {
  std::uniform_real_distribution<float> uniform(-1.0f, 1.0f);
  TensorMap feeds;
  for (const onnx::ValueInfoProto& input : model.graph().input()) {
    FloatTensor t;
    int64_t count = 1;
    for (const auto& d : input.type().tensor_type().shape().dim()) {
      t.dims.push_back(d.dim_value());
      count *= d.dim_value();
    }
    for (int64_t i = 0; i < count; ++i) t.values.push_back(uniform(rng));
    feeds[input.name()] = std::move(t);
  }
  return feeds;
}

void ExpectSameOutputs(const onnx::ModelProto& original, const onnx::ModelProto& rewritten,
                       const TensorMap& feeds, const std::string& what,
                       const OutputTolerance& tolerance) {
  absl::StatusOr<TensorMap> expected = RunReference(original, feeds);
  ASSERT_TRUE(expected.ok()) << what << ": " << expected.status();
  absl::StatusOr<TensorMap> actual = RunReference(rewritten, feeds);
  ASSERT_TRUE(actual.ok()) << what << ": " << actual.status();
  ASSERT_EQ(expected->size(), actual->size()) << what;
  for (const auto& [name, want] : *expected) {
    ASSERT_TRUE(actual->count(name)) << what << ": output " << name << " missing";
    const FloatTensor& got = actual->at(name);
    ASSERT_EQ(got.dims, want.dims) << what << ": " << name;
    double scale = tolerance.min_scale;
    for (float v : want.values) {
      if (std::isfinite(v)) scale = std::max(scale, static_cast<double>(std::fabs(v)));
    }
    if (tolerance.expect_nonzero) {
      EXPECT_GT(scale, 1e-6) << what << ": " << name << " is all zeros; a vacuous comparison";
    }
    for (size_t i = 0; i < want.values.size(); ++i) {
      // A ceil_mode MaxPool window lying wholly in the padding is -inf in
      // both.
      if (!std::isfinite(want.values[i]) &&
          (got.values[i] == want.values[i] ||
           (std::isnan(got.values[i]) && std::isnan(want.values[i])))) {
        continue;
      }
      ASSERT_NEAR(got.values[i], want.values[i], tolerance.relative * scale)
          << what << ": " << name << "[" << i << "]";
    }
  }
}

void ExpectSameOutputs(const onnx::ModelProto& original, const onnx::ModelProto& rewritten,
                       uint32_t seed, const std::string& what, const OutputTolerance& tolerance) {
  std::mt19937 rng(seed);
  ExpectSameOutputs(original, rewritten, RandomInputs(original, rng), what, tolerance);
}

}  // namespace ordo
