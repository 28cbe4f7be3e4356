// The placer's first fit, exposed for its property test (internal to
// core/pools: PoolFiller's queries).
#ifndef ORDO_CORE_POOLS_LOWEST_GAP_H_
#define ORDO_CORE_POOLS_LOWEST_GAP_H_

#include <cstdint>
#include <limits>
#include <utility>
#include <vector>

#include "absl/types/span.h"

namespace ordo {

// (offset, size) of placed blocks, in any order.
using Extents = std::vector<std::pair<int64_t, int64_t>>;

// TFLite Micro's first fit: the lowest offset c >= 0 where [c, c + size)
// overlaps none of `taken` (the co-live blocks of one pool; zero-size ones
// overlap nothing), i.e. the lowest gap. Without sorting: every offset below
// a lower bound c is taken, and a block overlapping [c, c + size) pushes
// every free offset past its end (it starts below c + size), so c rises to
// the furthest such end until nothing overlaps. Usually a few rounds over
// the handful of co-live blocks of one pool, against a sort per query (most
// of a greedy pass); a chain of adjacent blocks stored in descending offset
// order moves c by one block a round, so after a few rounds it sorts a copy
// and finishes in one scan: O(k r) for r <= kLowestGapRounds, at worst
// O(k log k) more. With `limit` (a pool's capacity), a first fit that only
// asks whether the block fits below it: once no gap can end at or below
// `limit`, returns an offset past `limit - size` at once (not the lowest gap
// then).
int64_t LowestGap(absl::Span<const std::pair<int64_t, int64_t>> taken, int64_t size,
                  int64_t limit = std::numeric_limits<int64_t>::max());

}  // namespace ordo

#endif  // ORDO_CORE_POOLS_LOWEST_GAP_H_
