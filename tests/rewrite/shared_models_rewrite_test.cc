// SERENITY's identity rewrites on the NAS benchmark models of
// ORDO_SHARED_MODELS_DIR: the rewritten models pass ONNX's checker, stay
// weightless, re-import, peak where the report says under the returned
// schedule, and (DARTS CIFAR-10, with random weights filled in) compute the
// same outputs as the original on the reference executor. Skips when the
// folder is not there.

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <ostream>
#include <random>
#include <sstream>
#include <string>

#include "core/memory/memory_model.h"
#include "core/memory/simulator.h"
#include "core/onnx/onnx_import.h"
#include "core/rewrite/onnx_test_model.h"
#include "core/rewrite/rewrite.h"
#include "core/testing/status_matchers.h"
#include "core/testing/test_paths.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onnx/checker.h"
#include "tests/rewrite/reference_executor.h"

namespace ordo {
namespace {

std::string ModelPath(const std::string& name) {
  return ordo::testing::SharedModelsDir() + "/" + name + ".onnx";
}

bool LoadModel(const std::string& name, onnx::ModelProto& model) {
  std::ifstream file(ModelPath(name), std::ios::binary);
  if (!file) return false;
  std::stringstream bytes;
  bytes << file.rdbuf();
  return model.ParseFromString(bytes.str());
}

#define ORDO_SKIP_WITHOUT_SHARED_MODELS()                                           \
  if (!std::filesystem::exists(ModelPath("darts_cifar"))) {                         \
    GTEST_SKIP() << "../shared/models not found; skipping the NAS rewrite checks (" \
                 << ordo::testing::SharedModelsDir() << ")";                        \
  }

// Peaks of `best` before and after, as ordo-rewrite-bench measured them
// (the originals are the proven optima of ../shared/models/README.md).
struct Expectation {
  std::string model;
  int64_t original_peak;
  int64_t rewritten_peak_at_most;
};

void PrintTo(const Expectation& e, std::ostream* os) { *os << e.model; }

class SharedModelRewriteTest : public ::testing::TestWithParam<Expectation> {};

TEST_P(SharedModelRewriteTest, RewritesCheckReimportAndPeakAsReported) {
  ORDO_SKIP_WITHOUT_SHARED_MODELS();
  const Expectation& want = GetParam();
  onnx::ModelProto model;
  ASSERT_TRUE(LoadModel(want.model, model));
  ORDO_ASSERT_OK_AND_ASSIGN(RewriteResult result, RewriteForMemory(model, RewriteOptions()));
  EXPECT_EQ(result.original_peak_bytes, want.original_peak);
  EXPECT_LE(result.schedule.peak_bytes, want.rewritten_peak_at_most);
  EXPECT_FALSE(result.rewrites.empty());

  // Weightless in, weightless out (the int64 shape constants carry data in
  // the originals too).
  for (const onnx::TensorProto& t : result.model.graph().initializer()) {
    if (t.data_type() != onnx::TensorProto::FLOAT) continue;
    EXPECT_EQ(t.data_location(), onnx::TensorProto::EXTERNAL) << t.name();
    EXPECT_FALSE(t.has_raw_data()) << t.name();
  }
  try {
    onnx::checker::check_model(WithZeroExternalData(result.model));
  } catch (const std::exception& e) {
    FAIL() << "check_model: " << e.what();
  }
  std::string bytes;
  result.model.SerializeToString(&bytes);
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(bytes));
  EXPECT_EQ(graph.num_ops(), result.graph.num_ops());
  ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel memory, BuildMemoryModel(graph, MemoryOptions()));
  ORDO_ASSERT_OK_AND_ASSIGN(int64_t peak, SimulatePeak(memory, result.schedule.order));
  EXPECT_EQ(peak, result.schedule.peak_bytes);
  int64_t before = result.original_peak_bytes;
  for (const AppliedRewrite& applied : result.rewrites) {
    EXPECT_EQ(applied.peak_before_bytes, before) << applied.concat;
    before = applied.peak_after_bytes;
  }
  EXPECT_EQ(before, peak);
}

INSTANTIATE_TEST_SUITE_P(Nas, SharedModelRewriteTest,
                         ::testing::Values(Expectation{"darts_cifar", 1400832, 1327104},
                                           Expectation{"nasnet_imagenet", 4276608, 4164608}),
                         [](const auto& info) { return info.param.model; });

// Random weights in place of the missing ones, then original and rewritten
// DARTS CIFAR-10 on the same random image.
TEST(SharedModelExecutionTest, DartsCifarComputesTheSameLogits) {
  ORDO_SKIP_WITHOUT_SHARED_MODELS();
  onnx::ModelProto model;
  ASSERT_TRUE(LoadModel("darts_cifar", model));
  std::mt19937 rng(11);
  // Small weights keep activations in range through 20 cells.
  std::uniform_real_distribution<float> uniform(-0.1f, 0.1f);
  for (onnx::TensorProto& t : *model.mutable_graph()->mutable_initializer()) {
    if (t.data_location() != onnx::TensorProto::EXTERNAL) continue;
    ASSERT_EQ(t.data_type(), onnx::TensorProto::FLOAT) << t.name();
    t.clear_external_data();
    t.clear_data_location();
    int64_t count = 1;
    for (int64_t d : t.dims()) count *= d;
    for (int64_t i = 0; i < count; ++i) t.add_float_data(uniform(rng));
  }
  ORDO_ASSERT_OK_AND_ASSIGN(RewriteResult result, RewriteForMemory(model, RewriteOptions()));
  ASSERT_FALSE(result.rewrites.empty());

  FloatTensor image;
  for (const auto& d : model.graph().input(0).type().tensor_type().shape().dim()) {
    image.dims.push_back(d.dim_value());
  }
  int64_t count = 1;
  for (int64_t d : image.dims) count *= d;
  std::uniform_real_distribution<float> pixel(-1.0f, 1.0f);
  for (int64_t i = 0; i < count; ++i) image.values.push_back(pixel(rng));
  const TensorMap feeds = {{model.graph().input(0).name(), image}};
  ORDO_ASSERT_OK_AND_ASSIGN(TensorMap expected, RunReference(model, feeds));
  ORDO_ASSERT_OK_AND_ASSIGN(TensorMap actual, RunReference(result.model, feeds));
  ASSERT_EQ(expected.size(), actual.size());
  for (const auto& [name, want] : expected) {
    const FloatTensor& got = actual.at(name);
    ASSERT_EQ(got.dims, want.dims);
    double scale = 1e-30;
    for (float v : want.values) scale = std::max(scale, static_cast<double>(std::fabs(v)));
    // Not a vacuous comparison: the logits are not all (near) zero.
    EXPECT_GT(scale, 1e-3) << name;
    for (size_t i = 0; i < want.values.size(); ++i) {
      EXPECT_NEAR(got.values[i], want.values[i], 1e-4 * scale) << name << "[" << i << "]";
    }
  }
}

}  // namespace
}  // namespace ordo
