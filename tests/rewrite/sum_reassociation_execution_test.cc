// Sum reassociation (core/rewrite/sum_reassociation.h) proved by execution
// on random RandWire-like graphs: every node sums its predecessors' weighted
// outputs in edge order, then Relu and a 1x1 Conv. The search keeps the
// reassociation only where it lowers the peak; the kept models pass ONNX's
// checker and compute the original's outputs up to float rounding.

#include <algorithm>
#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "core/rewrite/onnx_test_model.h"
#include "core/rewrite/rewrite.h"
#include "core/rewrite/sum_reassociation.h"
#include "core/testing/status_matchers.h"
#include "core/testing/trials.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/rewrite/execution_checks.h"

namespace ordo {
namespace {

// A random DAG of `nodes` nodes on x [1, 4, 6, 6]: node i reads 1 to 4
// earlier nodes (node -1 is x), each through its own Mul by a scalar
// weight, sums them in index order, then Relu and a 1x1 Conv; the output
// is the sum of the nodes nobody reads. Weights carry random data.
OnnxTestModel RandomWiring(uint32_t seed, int nodes) {
  std::mt19937 rng(seed);
  OnnxTestModel m;
  m.Input("x", {1, 4, 6, 6});
  std::vector<std::string> outputs;
  std::vector<bool> read(nodes, false);
  for (int i = 0; i < nodes; ++i) {
    std::vector<int> preds;
    const int fan_in = 1 + static_cast<int>(rng() % 4);
    for (int k = 0; k < fan_in; ++k) {
      const int p = static_cast<int>(rng() % (i + 1)) - 1;  // -1: x
      if (std::find(preds.begin(), preds.end(), p) == preds.end()) preds.push_back(p);
    }
    std::sort(preds.begin(), preds.end());
    std::string sum;
    for (int p : preds) {
      const std::string source = p < 0 ? "x" : outputs[p];
      if (p >= 0) read[p] = true;
      const std::string w = absl::StrCat("w", i, "_", p + 1);
      m.Weight(w, {1}, &rng);
      const std::string term = absl::StrCat("m", i, "_", p + 1);
      m.Node("Mul", {source, w}, {term});
      if (sum.empty()) {
        sum = term;
        continue;
      }
      const std::string next = absl::StrCat("s", i, "_", p + 1);
      m.Node("Add", {sum, term}, {next});
      sum = next;
    }
    const std::string relu = absl::StrCat("r", i);
    m.Node("Relu", {sum}, {relu});
    m.Weight(absl::StrCat("k", i), {4, 4, 1, 1}, &rng);
    outputs.push_back(absl::StrCat("n", i));
    m.Node("Conv", {relu, absl::StrCat("k", i)}, {outputs.back()});
  }
  std::string y;
  for (int i = 0; i < nodes; ++i) {
    if (read[i]) continue;
    if (y.empty()) {
      y = outputs[i];
      continue;
    }
    const std::string next = absl::StrCat("y", i);
    m.Node("Add", {y, outputs[i]}, {next});
    y = next;
  }
  m.Output(y);
  return m;
}

TEST(SumReassociationExecutionTest, KeptOnlyWhereItLowersThePeakAndComputesTheSame) {
  int kept = 0;
  const int trials = testing::Trials(12);
  for (int trial = 0; trial < trials; ++trial) {
    const uint32_t seed = 100 + static_cast<uint32_t>(trial);
    const onnx::ModelProto model = RandomWiring(seed, 12).model();
    RewriteOptions options;
    options.mode = RewriteMode::kIdentity;
    options.schedule_time_limit = absl::Seconds(2);
    options.time_limit = absl::Seconds(10);
    ORDO_ASSERT_OK_AND_ASSIGN(RewriteResult result, RewriteForMemory(model, options));
    const std::string what = absl::StrCat("seed ", seed);
    EXPECT_LE(result.schedule.peak_bytes, result.original_peak_bytes) << what;
    EXPECT_EQ(result.rewritten_macs, result.original_macs) << what;
    EXPECT_EQ(result.rewritten_ops, result.original_ops) << what;
    int64_t before = result.original_peak_bytes;
    for (const AppliedRewrite& applied : result.rewrites) {
      EXPECT_EQ(applied.kind, "reassociate") << what;
      EXPECT_EQ(applied.peak_before_bytes, before) << what;
      EXPECT_LT(applied.peak_after_bytes, applied.peak_before_bytes) << what;
      EXPECT_EQ(applied.extra_macs, 0) << what;
      before = applied.peak_after_bytes;
    }
    EXPECT_EQ(before, result.schedule.peak_bytes) << what;
    if (result.rewrites.empty()) continue;
    ++kept;
    ORDO_EXPECT_OK(CheckOnnx(result.model)) << what;
    ExpectSameOutputs(model, result.model, seed, what, OutputTolerance{1e-5, 1.0, true});
  }
  // Random wirings hold terms that wait for late ones: some must gain.
  EXPECT_GT(kept, 0);
}

TEST(SumReassociationExecutionTest, EveryOrderOfEveryTreeComputesTheSame) {
  for (uint32_t seed : {7u, 8u, 9u}) {
    const onnx::ModelProto model = RandomWiring(seed, 10).model();
    ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, Import(model));
    const std::vector<SumTree> trees = FindSumTrees(graph);
    ASSERT_FALSE(trees.empty()) << "seed " << seed;
    // The model order reversed (not a valid schedule, only a ranking): every
    // tree is rebuilt.
    std::vector<int32_t> reversed;
    for (OpId op = graph.num_ops() - 1; op >= 0; --op) reversed.push_back(op);
    for (SumOrder how : {SumOrder::kProduced, SumOrder::kReleased}) {
      int32_t rebuilt = 0;
      ORDO_ASSERT_OK_AND_ASSIGN(onnx::ModelProto out,
                                ReassociateSums(model, graph, trees, reversed, how, &rebuilt));
      EXPECT_GT(rebuilt, 0);
      ORDO_EXPECT_OK(CheckOnnx(out));
      ExpectSameOutputs(model, out, seed, absl::StrCat("reversed, seed ", seed),
                        OutputTolerance{1e-5, 1.0, true});
    }
  }
}

}  // namespace
}  // namespace ordo
