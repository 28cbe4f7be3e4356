#ifndef ORDO_CORE_TESTING_TEST_GRAPH_H_
#define ORDO_CORE_TESTING_TEST_GRAPH_H_

#include <cstdint>
#include <random>
#include "absl/strings/string_view.h"
#include <vector>

#include "absl/status/statusor.h"
#include "core/graph/graph.h"
#include "core/memory/memory_model.h"

namespace ordo::testing {

// Parses a small text graph so tests show the graph beside the assertion:
//
//   input x 100           # graph input, 100 bytes
//   weight w 50           # weight, 50 bytes
//   op a Conv x w -> y:200 z:10
//   op b Relu y -> r:200
//   output r
//
// Outputs are `name:bytes`; ops keep declaration order (model order).
absl::StatusOr<Graph> ParseTestGraph(absl::string_view text,
                                     GraphLimits limits = {});

// ParseTestGraph that aborts on error: for graphs written in the test itself.
Graph TestGraph(absl::string_view text);

struct RandomDagOptions {
  int32_t num_ops = 8;
  int32_t num_inputs = 1;
  // Each op reads 1..max_inputs tensors from earlier ops or graph inputs.
  int32_t max_inputs = 3;
  // Chance an op writes a second output.
  double second_output_chance = 0.15;
  // Chance an op is of an in-place-capable type ("Add"/"Relu").
  double inplace_chance = 0.3;
  int64_t min_bytes = 1;
  int64_t max_bytes = 64;
};

// A random connected-ish DAG: op i reads outputs of ops < i or graph inputs,
// so the id order is topological. Ops nobody reads become graph outputs.
Graph RandomDag(std::mt19937_64& rng, const RandomDagOptions& options);

// Minimum peak over all topological orders by exhaustive enumeration, and one
// order achieving it. Exponential: for <= ~10 ops.
struct BruteForceResult {
  int64_t peak_bytes;
  std::vector<int32_t> order;
  int64_t orders_seen;
};
BruteForceResult BruteForceMinPeak(const MemoryModel& model);

}  // namespace ordo::testing

#endif  // ORDO_CORE_TESTING_TEST_GRAPH_H_
