#ifndef ORDO_CORE_REWRITE_PARETO_FRONT_H_
#define ORDO_CORE_REWRITE_PARETO_FRONT_H_

#include <cstdint>
#include <string>
#include <vector>

namespace ordo {

// One model the rewrite search reached: what it needs and what it costs
// over the input model (`ordo compile --pareto`, CompileResponse.pareto).
struct ParetoPoint {
  // Peak of the search's schedule of that model (re-simulated).
  int64_t peak_bytes = 0;
  // (latency - latency(input)) / latency(input) under the LatencyModel.
  double latency_overhead = 0;
  // (MACs - MACs(input)) / MACs(input); 0 when the input has no MACs.
  double mac_overhead = 0;
  // The rewrites that lead there from the input, in the order applied
  // (AppliedRewrite::description); empty for the input itself.
  std::vector<std::string> rewrites;
};

// The points no other point dominates (another with a peak and a latency
// overhead no higher, one of them lower), by latency overhead ascending (so
// peak descending). Of points equal in both, the one with fewer rewrites
// (then the first given) stays. Sort and sweep: O(n log n).
std::vector<ParetoPoint> NonDominated(std::vector<ParetoPoint> points);

}  // namespace ordo

#endif  // ORDO_CORE_REWRITE_PARETO_FRONT_H_
