#ifndef ORDO_CORE_ARENA_ARENA_PLANNER_H_
#define ORDO_CORE_ARENA_ARENA_PLANNER_H_

#include <cstdint>
#include <string>
#include <vector>

#include "absl/strings/string_view.h"
#include "absl/time/time.h"
#include "core/arena/arena_problem.h"
#include "core/util/clock.h"

namespace ordo {

// What a planner may spend. Greedy planners ignore it; searching planners
// return their best placement so far when a limit is hit.
struct ArenaLimits {
  // Wall-clock deadline, read from `clock`.
  absl::Time deadline = absl::InfiniteFuture();
  // Must outlive the call; null means the real clock.
  const Clock* clock = nullptr;
  // Search nodes in total (a deterministic budget, unlike the deadline).
  int64_t max_search_nodes = 4'000'000;

  absl::Time Now() const { return clock != nullptr ? clock->Now() : absl::Now(); }
  bool Expired() const { return deadline != absl::InfiniteFuture() && Now() >= deadline; }
};

// The arena one planner produced for a problem, in bytes.
struct PlannerArena {
  std::string planner;
  int64_t arena_bytes = 0;
};

// A planner's answer: one offset per block of the problem.
struct ArenaPlacement {
  std::vector<int64_t> offsets;
  // The strategy that produced it (for portfolios: the winner).
  std::string algorithm;
  // Proved: no placement of the problem is smaller.
  bool optimal = false;
  // A portfolio's members and the arena each produced, in the order run
  // (empty for a single planner). Figures only: their placements are dropped.
  std::vector<PlannerArena> member_arenas;
};

// An arena planning algorithm: places the blocks of an ArenaProblem so that
// blocks live at a common step do not overlap, offsets stay multiples of the
// problem's alignment (block sizes are aligned, so offsets built by adding
// sizes are), and zero-size blocks sit at offset 0. Implementations are
// stateless between calls, so one instance may serve concurrent calls.
class ArenaPlanner {
 public:
  virtual ~ArenaPlanner() = default;
  virtual absl::string_view name() const = 0;
  virtual ArenaPlacement Place(const ArenaProblem& problem, const ArenaLimits& limits) const = 0;
};

}  // namespace ordo

#endif  // ORDO_CORE_ARENA_ARENA_PLANNER_H_
