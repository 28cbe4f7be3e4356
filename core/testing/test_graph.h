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

// `graph` (or `text` parsed by TestGraph) under the memory rules `options`;
// aborts when the model cannot be built, like TestGraph.
MemoryModel TestModel(const Graph& graph, const MemoryOptions& options = {});
MemoryModel TestModel(absl::string_view text, const MemoryOptions& options = {});

// Shared fixtures, one definition each; tests that use one say which.

// Two 50-byte branches from one input, each shrunk to 1 byte, then added.
// Model order holds both branches at once (peak 101); the best order
// finishes one branch first (peak 52).
inline constexpr char kTwoBranchesGraph[] = R"(
  input x 1
  op a1 Conv x -> a:50
  op b1 Conv x -> b:50
  op a2 Conv a -> a_small:1
  op b2 Conv b -> b_small:1
  op j Add a_small b_small -> y:1
  output y
)";

// A trap for greedy: it starts branch a (a1 is the cheaper first step) and
// then holds a_small (30 bytes) while branch b peaks at 45; finishing b
// first is better. The optimum is found by the exact searches and by window
// refinement from greedy's order.
inline constexpr char kGreedyTrapGraph[] = R"(
  input x 1
  op a1 Conv x -> a:40
  op a2 Conv a -> a_small:30
  op b1 Conv x -> b:45
  op b2 Conv b -> b_small:1
  op j Add a_small b_small -> y:1
  output y
)";

// A chain whose middle op is in-place capable: r (Relu) overwrites y with z
// of the same size, so the steps cost 30, 20 and 21 bytes with in-place and
// 30, 40 and 21 without.
inline constexpr char kInPlaceChainGraph[] = R"(
  input x 10
  op a Conv x -> y:20
  op r Relu y -> z:20
  op b Conv z -> w:1
  output w
)";

// Three parts under the hourglass partitioner with merge_up_to_ops = 1: a
// one-op stem, then two identical three-op cells (same sizes, renamed), so
// the second cell's part key equals the first's.
inline constexpr char kTwoCellsGraph[] = R"(
  input x 8
  op s Conv x -> s0:32
  op b1 Conv s0 -> b1:32
  op c1 Conv s0 -> c1:64
  op j1 Concat b1 c1 -> j1:32
  op b2 Conv j1 -> b2:32
  op c2 Conv j1 -> c2:64
  op j2 Concat b2 c2 -> j2:32
  output j2
)";

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

struct RandomHourglassOptions {
  int32_t num_cells = 4;
  // Each cell has 1..max_cell_ops ops before the op that joins it.
  int32_t max_cell_ops = 6;
  // Chance an op also reads a tensor of an earlier cell (a skip that passes
  // over the cells between).
  double skip_chance = 0.15;
  // Chance a tensor is also a graph output.
  double output_chance = 0.05;
  double inplace_chance = 0.3;
  double second_output_chance = 0.15;
  int64_t min_bytes = 1;
  int64_t max_bytes = 64;
};

// Cells in a row, each a random DAG on the previous cell's output ended by a
// join op reading every tensor of the cell nobody read: hourglass-shaped
// like NAS and random-wired networks, so the joins are cut ops.
Graph RandomHourglass(std::mt19937_64& rng, const RandomHourglassOptions& options);

// `branches` identical branches x -> p_i (10 bytes) -> r_i (1 byte), all
// joined by one Concat: whatever the order, the last branch runs beside the
// other branches' results, so the optimum is above the spec's bound. The
// exact search orders identical branches (chain_symmetry.h) and proves it
// at once; searches without that visit every subset of branches.
Graph ManyBranches(int branches);

// The probe's fan-in of alike branches: `branches` copies of x -> Conv
// (c:10) -> Relu (in place) -> Conv (o:1), summed by one op (in place over
// the first branch's o). The optimum is above the spec's bound; the exact
// search proves it through its symmetry edges (chain_symmetry.h).
Graph SummedBranches(int branches);

// ManyBranches with no two branches alike: x -> p_i (1000 bytes) -> r_i
// (10 + i bytes). The optimum is above the spec's bound too, and proving it
// means visiting about every subset of branches, for every search.
Graph DistinctBranches(int branches);

// x -> Relu -> y, with `constants` weights c0, c1, ... listed as graph
// outputs after y (a detection export's anchors, or a hostile file's
// hundreds of thousands), not yet built: Build() leaves them out with one
// note.
GraphBuilder ManyConstantOutputs(int64_t constants);

// A uniformly random ready op at every step: a random valid schedule.
std::vector<int32_t> RandomTopologicalOrder(const MemoryModel& model, std::mt19937_64& rng);

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
