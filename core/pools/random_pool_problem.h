// Random pool problems for the tests of core/pools (header-only, tests only).
#ifndef ORDO_CORE_POOLS_RANDOM_POOL_PROBLEM_H_
#define ORDO_CORE_POOLS_RANDOM_POOL_PROBLEM_H_

#include <random>

#include "absl/status/statusor.h"
#include "core/memory/simulator.h"
#include "core/pools/memory_pools.h"
#include "core/testing/test_graph.h"

namespace ordo::testing {

// A random graph of 4 to 33 ops (by `iteration`), tensors of 16-256 bytes,
// in a random order, on `options`' banks at alignment 16 (an error when a
// tensor is larger than every bank).
inline absl::StatusOr<PoolProblem> RandomOrderPoolProblem(std::mt19937_64& rng, int iteration,
                                                          const PoolOptions& options) {
  RandomDagOptions dag;
  dag.num_ops = 4 + iteration % 30;
  dag.min_bytes = 16;
  dag.max_bytes = 256;
  const Graph graph = RandomDag(rng, dag);
  const MemoryModel model = *BuildMemoryModel(graph, {});
  const SimulationResult simulation = *Simulate(model, RandomTopologicalOrder(model, rng));
  return BuildPoolProblem(graph, model, simulation, 16, options);
}

}  // namespace ordo::testing

#endif  // ORDO_CORE_POOLS_RANDOM_POOL_PROBLEM_H_
