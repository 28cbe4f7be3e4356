#ifndef ORDO_BENCH_DARTS_CANDIDATES_H_
#define ORDO_BENCH_DARTS_CANDIDATES_H_

#include <array>
#include <cstdint>
#include <deque>
#include <random>
#include <string>
#include <vector>

#include "ordo/v1/graph.pb.h"

namespace ordo::bench {

// A stream of candidates as a DARTS-space evolutionary search sends them:
// the realistic NAS workload for the service benchmark.
//
// Search space (DARTS, Liu et al. 2019, §2.1 and Fig. 1): a network is a
// stem, `cells` cells and a head. Every cell reads the outputs of the TWO
// previous cells (so no single tensor cuts the cell stack), preprocesses
// each with ReLU + 1x1 Conv, and has 4 nodes; node i sums two edges, each an
// op from {sep_conv 3x3/5x5, dil_conv 3x3/5x5, max/avg pool 3x3, skip} on
// one of the cell's inputs or an earlier node. The cell's output is the
// Concat of its 4 nodes. Cells at 1/3 and 2/3 of the stack are reduction
// cells (stride 2 on edges from the cell inputs, twice the channels). A
// candidate is two genotypes: one for all normal cells, one for all
// reduction cells.
//
// Search (regularised evolution, Real et al. 2019, §2): a population of
// random candidates; each next candidate is, with probability
// `resend_probability`, a member of the population sent again (a survivor
// re-evaluated), else a mutation of the best of `tournament` random members
// (best = most sep_conv edges, a deterministic stand-in for accuracy: the
// genotypes DARTS finds are dominated by them) in one or two edges (an
// edge's op or its input), which then replaces the oldest member. The first
// `population` candidates are the random initial population. Mutations that undo each other and
// re-sent survivors make exact repeats occur as in real searches.
//
// Ops as PyTorch's ONNX export leaves them after BatchNorm folding: sep_conv
// = ReLU, depthwise Conv, 1x1 Conv, twice (6 ops); dil_conv = ReLU,
// dilated depthwise Conv, 1x1 Conv (3 ops); pools 1 op; skip none (a
// reduction's skip is ReLU + strided 1x1 Conv). About 200 to 350 ops with
// the defaults: the tournament favours sep_conv-heavy cells, so candidates
// grow as the search goes on (283 on average over the first 300, 318 over
// 1000). Tensor names are the export's module paths, so a genotype sent
// twice is byte-identical unless `rename` gives every candidate its own
// names (a re-export by another tool).
//
// Deterministic for a seed; not thread-safe (owns its random engine).
class DartsCandidateStream {
 public:
  struct Options {
    int32_t cells = 6;
    int64_t channels = 16;  // of the first cell; the stem makes 3x
    int64_t image_size = 32;
    int32_t population = 16;
    int32_t tournament = 4;
    double resend_probability = 0.1;
    bool rename = false;
    uint64_t seed = 1;
  };

  // An edge: op index into the primitives, input 0/1 = the cell's inputs,
  // 2.. = earlier nodes.
  struct Edge {
    int32_t op = 0;
    int32_t input = 0;
    bool operator==(const Edge&) const = default;
  };
  static constexpr int kNodes = 4;
  using Cell = std::array<Edge, 2 * kNodes>;
  struct Genotype {
    Cell normal;
    Cell reduce;
    bool operator==(const Genotype&) const = default;
  };

  // A run of consecutive ops of a network that is a function of `key`
  // alone, whatever the names: a cell (its genotype, reduction flag, the
  // shapes of its two inputs and its channel count), the stem or the head.
  // Two segments with equal keys are the same subgraph, so a schedule of one
  // serves the other: the unit in which the stream's repeats are counted
  // (bench/cache_ceiling.h).
  struct Segment {
    std::string key;
    int32_t first_op = 0;  // index into the graph's ops
    int32_t ops = 0;
    bool cell = false;  // else the stem or the head
  };
  struct Network {
    v1::Graph graph;
    std::vector<Segment> segments;  // in op order, covering every op
  };

  explicit DartsCandidateStream(Options options);

  // The next candidate. Every graph is named "main_graph", as PyTorch's
  // exporter names them, so a re-sent candidate is byte-identical.
  v1::Graph Next();

  // The genotype and segments of the last candidate.
  const Genotype& last_genotype() const { return last_; }
  const std::vector<Segment>& last_segments() const { return last_segments_; }

  // The network of `genotype`; every tensor and op name starts with
  // `name_prefix`.
  static v1::Graph Build(const Genotype& genotype, const Options& options,
                         const std::string& name_prefix);
  // The same with its segments.
  static Network BuildNetwork(const Genotype& genotype, const Options& options,
                              const std::string& name_prefix);

 private:
  Genotype Random();
  Genotype Mutate(Genotype genotype);
  void MutateEdge(Cell& cell);

  Options options_;
  std::mt19937_64 rng_;
  std::deque<Genotype> population_;  // oldest first
  Genotype last_;
  std::vector<Segment> last_segments_;
  int64_t next_index_ = 0;
};

}  // namespace ordo::bench

#endif  // ORDO_BENCH_DARTS_CANDIDATES_H_
