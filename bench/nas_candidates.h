#ifndef ORDO_BENCH_NAS_CANDIDATES_H_
#define ORDO_BENCH_NAS_CANDIDATES_H_

#include <cstdint>
#include <random>
#include <vector>

#include "ordo/v1/graph.pb.h"

namespace ordo::bench {

// A stream of NAS-like candidate networks as ordo.v1.Graph messages, the
// kind of traffic a neural architecture search sends a compile service.
//
// Algorithm (NASNet-style search space, Zoph et al. 2018 §3):
//   1. A pool of `cell_types` random cells is drawn once. A cell reads one
//      tensor x and has `blocks` blocks; block b applies one op from
//      {Conv, MaxPool, AveragePool, Identity} to each of two inputs chosen
//      among x and the outputs of blocks < b, then Adds them. A Concat of
//      the block outputs nobody read ends the cell.
//   2. Each candidate is a stem Conv, `cells` cells drawn with replacement
//      from the pool, and a GlobalAveragePool head.
// Every cell reads only the previous cell's output and ends in one op, so
// cell boundaries are cut ops (SERENITY §3.2) and each cell becomes its own
// part; cells drawn from the same pool entry have the same canonical part
// key, so candidates share cached parts the way real search candidates do.
// All activations have one shape, so a cell's key does not depend on where
// it sits in the stack.
//
// Deterministic for a seed; not thread-safe (owns its random engine).
class NasCandidateStream {
 public:
  struct Options {
    int32_t cell_types = 8;
    int32_t blocks = 6;
    int32_t cells = 6;
    // Activation shape [1, channels, size, size], float32.
    int64_t channels = 32;
    int64_t size = 16;
    uint64_t seed = 1;
  };

  explicit NasCandidateStream(Options options);

  // The next candidate, named "candidate<i>".
  v1::Graph Next();

  // Which pool cell each position of the last candidate used.
  const std::vector<int32_t>& last_cells() const { return last_cells_; }

 private:
  // One block: two (input, op type) pairs; input -1 is the cell input.
  struct Block {
    int32_t input[2];
    int32_t op[2];
  };
  using Cell = std::vector<Block>;

  Cell RandomCell();
  // Appends cell `cell` reading `input`; returns its output tensor's name.
  std::string AppendCell(v1::Graph& graph, const Cell& cell, const std::string& prefix,
                         const std::string& input) const;
  void AddActivation(v1::Graph& graph, const std::string& name) const;

  Options options_;
  std::mt19937_64 rng_;
  std::vector<Cell> pool_;
  std::vector<int32_t> last_cells_;
  int64_t next_index_ = 0;
};

}  // namespace ordo::bench

#endif  // ORDO_BENCH_NAS_CANDIDATES_H_
