#include "core/arena/arena_problem.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/util/checked_math.h"

namespace ordo {
namespace {

absl::Status CheckShapes(const MemoryModel& model, const SimulationResult& simulation) {
  const size_t n = model.tensors.size();
  if (simulation.intervals.size() != n || simulation.has_interval.size() != n ||
      simulation.inplace_source.size() != n) {
    return absl::InvalidArgumentError(absl::StrCat(
        "simulation describes ", simulation.intervals.size(), " tensors; the model has ", n));
  }
  const int32_t steps = static_cast<int32_t>(simulation.step_bytes.size());
  for (size_t t = 0; t < n; ++t) {
    if (!simulation.has_interval[t]) continue;
    const LiveInterval& live = simulation.intervals[t];
    // [-1, -1] is a graph input nobody reads, valid even with no steps.
    if (live.first < -1 || live.first > live.last || live.last > std::max(steps - 1, -1)) {
      return absl::InvalidArgumentError(absl::StrCat("tensor ", t, ": live interval [", live.first,
                                                     ", ", live.last, "] outside the ", steps,
                                                     " steps of the schedule"));
    }
  }
  return absl::OkStatus();
}

// next[s] = the tensor that overwrote s in place, or kNoId.
absl::StatusOr<std::vector<int32_t>> InplaceSuccessors(const MemoryModel& model,
                                                       const SimulationResult& simulation) {
  std::vector<int32_t> next(model.tensors.size(), kNoId);
  for (int32_t t = 0; t < model.num_tensors(); ++t) {
    const int32_t source = simulation.inplace_source[t];
    if (source == kNoId || !simulation.has_interval[t]) continue;
    if (source < 0 || source >= model.num_tensors() || !simulation.has_interval[source]) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor ", t, ": in-place source ", source, " is not an activation"));
    }
    if (model.tensors[source].bytes != model.tensors[t].bytes) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor ", t, " (", model.tensors[t].bytes, " bytes) overwrites tensor ",
                       source, " (", model.tensors[source].bytes, " bytes) in place"));
    }
    if (next[source] != kNoId) {
      return absl::InvalidArgumentError(absl::StrCat(
          "tensor ", source, " is overwritten in place twice (by ", next[source], " and ", t, ")"));
    }
    next[source] = t;
  }
  return next;
}

absl::StatusOr<ArenaBlock> MakeBlock(const MemoryModel& model, const SimulationResult& simulation,
                                     const std::vector<int32_t>& next, int32_t owner,
                                     int64_t alignment) {
  ArenaBlock block;
  block.raw_bytes = model.tensors[owner].bytes;
  if (block.raw_bytes < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor ", owner, ": negative size ", block.raw_bytes));
  }
  std::optional<int64_t> size = AlignUp(block.raw_bytes, alignment);
  if (!size) {
    return absl::InvalidArgumentError(
        absl::StrCat("tensor ", owner, ": aligned size overflows int64"));
  }
  block.size = *size;
  block.first = simulation.intervals[owner].first;
  block.last = simulation.intervals[owner].last;
  // A chain only grows forward in time, but the walk is bounded by the tensor
  // count so that a malformed simulation cannot loop.
  for (int32_t t = owner, guard = 0; t != kNoId && guard <= model.num_tensors();
       t = next[t], ++guard) {
    block.tensors.push_back(t);
    block.last = std::max(block.last, simulation.intervals[t].last);
  }
  block.whole_run = block.first <= 0 && model.tensors[block.tensors.back()].live_at_end;
  return block;
}

int64_t AlignedPeak(const ArenaProblem& problem) {
  // Difference array over step + 1 in [0, num_steps]: slot 0 is "before step 0".
  std::vector<int64_t> delta(problem.num_steps + 2, 0);
  for (const ArenaBlock& block : problem.blocks) {
    delta[block.first + 1] += block.size;
    delta[block.last + 2] -= block.size;
  }
  int64_t live = 0;
  int64_t peak = 0;
  for (int32_t slot = 0; slot <= problem.num_steps; ++slot) {
    live += delta[slot];
    peak = std::max(peak, live);
  }
  return peak;
}

}  // namespace

std::optional<int64_t> AlignUp(int64_t bytes, int64_t alignment) {
  const int64_t remainder = bytes % alignment;
  if (remainder == 0) return bytes;
  return CheckedAdd(bytes, alignment - remainder);
}

absl::StatusOr<ArenaProblem> BuildArenaProblem(const MemoryModel& model,
                                               const SimulationResult& simulation,
                                               int64_t alignment) {
  if (alignment < 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("arena alignment must be at least 1 byte, got ", alignment));
  }
  if (absl::Status status = CheckShapes(model, simulation); !status.ok()) return status;
  absl::StatusOr<std::vector<int32_t>> next = InplaceSuccessors(model, simulation);
  if (!next.ok()) return next.status();

  ArenaProblem problem;
  problem.num_steps = static_cast<int32_t>(simulation.step_bytes.size());
  problem.alignment = alignment;
  problem.block_of_tensor.assign(model.tensors.size(), kNoId);
  for (int32_t t = 0; t < model.num_tensors(); ++t) {
    if (!simulation.has_interval[t] || simulation.inplace_source[t] != kNoId) continue;
    absl::StatusOr<ArenaBlock> block = MakeBlock(model, simulation, *next, t, alignment);
    if (!block.ok()) return block.status();
    const int32_t index = static_cast<int32_t>(problem.blocks.size());
    for (int32_t member : block->tensors) problem.block_of_tensor[member] = index;
    problem.blocks.push_back(*std::move(block));
  }
  // Every activation must belong to a chain that starts at an owner; a cycle
  // of in-place sources (impossible in a real simulation) leaves some out.
  for (int32_t t = 0; t < model.num_tensors(); ++t) {
    if (simulation.has_interval[t] && problem.block_of_tensor[t] == kNoId) {
      return absl::InvalidArgumentError(
          absl::StrCat("tensor ", t, ": in-place chain has no owner (cycle)"));
    }
  }
  // No layout a planner makes ends past the blocks' total (a block's offset
  // is at most the sizes of the blocks below it), so a total that fits in
  // int64 keeps every offset, end and arena size from overflowing.
  int64_t total = 0;
  for (const ArenaBlock& block : problem.blocks) {
    const std::optional<int64_t> sum = CheckedAdd(total, block.size);
    if (!sum) {
      return absl::InvalidArgumentError(absl::StrCat(
          "alignment ", alignment, ": the activations' aligned sizes add up past 2^63 bytes; ",
          "use a smaller alignment"));
    }
    total = *sum;
  }
  problem.lower_bound_bytes = AlignedPeak(problem);
  return problem;
}

void SortByFirstStep(const std::vector<ArenaBlock>& blocks, std::vector<int32_t>& ids) {
  if (ids.empty()) return;
  int32_t lowest = blocks[ids[0]].first, highest = lowest;
  for (int32_t id : ids) {
    lowest = std::min(lowest, blocks[id].first);
    highest = std::max(highest, blocks[id].first);
  }
  const auto span = static_cast<size_t>(static_cast<int64_t>(highest) - lowest) + 1;
  constexpr size_t kFewIds = 32;
  if (ids.size() < kFewIds || span > 4 * ids.size()) {
    std::stable_sort(ids.begin(), ids.end(),
                     [&](int32_t a, int32_t b) { return blocks[a].first < blocks[b].first; });
    return;
  }
  std::vector<int32_t> start(span + 1, 0);
  for (int32_t id : ids) ++start[blocks[id].first - lowest + 1];
  for (size_t i = 1; i <= span; ++i) start[i] += start[i - 1];
  std::vector<int32_t> sorted(ids.size());
  for (int32_t id : ids) sorted[start[blocks[id].first - lowest]++] = id;
  ids = std::move(sorted);
}

int64_t ArenaBytes(const ArenaProblem& problem, const std::vector<int64_t>& offsets) {
  int64_t arena = 0;
  for (size_t b = 0; b < problem.blocks.size(); ++b) {
    arena = std::max(arena, offsets[b] + problem.blocks[b].size);
  }
  return arena;
}

}  // namespace ordo
