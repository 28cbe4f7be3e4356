#include "core/rewrite/pareto_front.h"

#include <algorithm>
#include <tuple>

namespace ordo {

std::vector<ParetoPoint> NonDominated(std::vector<ParetoPoint> points) {
  // Cheapest first; at equal cost the lowest peak, then the shortest route.
  // A point then survives iff its peak is below every peak kept before it.
  std::stable_sort(points.begin(), points.end(), [](const ParetoPoint& a, const ParetoPoint& b) {
    return std::make_tuple(a.latency_overhead, a.peak_bytes, a.rewrites.size()) <
           std::make_tuple(b.latency_overhead, b.peak_bytes, b.rewrites.size());
  });
  std::vector<ParetoPoint> front;
  for (ParetoPoint& point : points) {
    if (!front.empty() && point.peak_bytes >= front.back().peak_bytes) continue;
    front.push_back(std::move(point));
  }
  return front;
}

}  // namespace ordo
