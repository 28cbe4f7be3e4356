#include "core/arena/arena_plan.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"

namespace ordo {
namespace {

std::string Describe(const TensorPlacement& p) {
  return absl::StrCat("tensor ", p.tensor, " [offset ", p.offset, ", ", p.size, " bytes, steps ",
                      p.first_step, "..", p.last_step, "]");
}

// Coverage, alignment, sizes and intervals of each placement on its own.
absl::Status VerifyPlacements(const MemoryModel& model, const SimulationResult& simulation,
                              const ArenaPlan& plan) {
  std::vector<int32_t> index_of(model.tensors.size(), -1);
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    const TensorPlacement& p = plan.tensors[i];
    if (p.tensor < 0 || p.tensor >= model.num_tensors() || !simulation.has_interval[p.tensor]) {
      return absl::InternalError(
          absl::StrCat("arena: ", Describe(p), " is not an activation of the model"));
    }
    if (index_of[p.tensor] != -1) {
      return absl::InternalError(absl::StrCat("arena: tensor ", p.tensor, " placed twice"));
    }
    index_of[p.tensor] = static_cast<int32_t>(i);
    if (p.offset < 0 || p.offset % plan.alignment != 0) {
      return absl::InternalError(absl::StrCat(
          "arena: ", Describe(p), ": offset not a non-negative multiple of ", plan.alignment));
    }
    const std::optional<int64_t> size = AlignUp(model.tensors[p.tensor].bytes, plan.alignment);
    if (!size || p.size != *size) {
      return absl::InternalError(
          absl::StrCat("arena: ", Describe(p), ": size should be ", size.value_or(-1)));
    }
    const LiveInterval& live = simulation.intervals[p.tensor];
    if (p.first_step != live.first || p.last_step != live.last) {
      return absl::InternalError(absl::StrCat(
          "arena: ", Describe(p), ": simulated live interval is ", live.first, "..", live.last));
    }
  }
  for (int32_t t = 0; t < model.num_tensors(); ++t) {
    if (simulation.has_interval[t] && index_of[t] == -1) {
      return absl::InternalError(absl::StrCat("arena: tensor ", t, " is not placed"));
    }
  }
  return absl::OkStatus();
}

// Sweeps the steps keeping the tensors live at the current step in a map by
// offset. The live tensors never overlap (the invariant being checked), so a
// new tensor overlaps one of them iff it overlaps its neighbour on either
// side. An in-place output takes over its source's entry.
absl::Status VerifyDisjoint(const SimulationResult& simulation, const ArenaPlan& plan,
                            int32_t num_steps) {
  std::vector<std::vector<int32_t>> starts(num_steps + 1), ends(num_steps + 1);
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    const TensorPlacement& p = plan.tensors[i];
    if (p.size == 0) continue;  // occupies no bytes
    starts[p.first_step + 1].push_back(static_cast<int32_t>(i));
    ends[p.last_step + 1].push_back(static_cast<int32_t>(i));
  }
  std::vector<int32_t> index_of(simulation.intervals.size(), -1);
  for (size_t i = 0; i < plan.tensors.size(); ++i) {
    index_of[plan.tensors[i].tensor] = static_cast<int32_t>(i);
  }
  std::map<int64_t, int32_t> live;  // offset -> index into plan.tensors
  auto erase_if_owner = [&live](int64_t offset, int32_t index) {
    auto it = live.find(offset);
    if (it != live.end() && it->second == index) live.erase(it);
  };
  for (int32_t slot = 0; slot <= num_steps; ++slot) {
    if (slot > 0) {
      for (int32_t i : ends[slot - 1]) erase_if_owner(plan.tensors[i].offset, i);
    }
    for (int32_t i : starts[slot]) {
      const TensorPlacement& p = plan.tensors[i];
      const int32_t source = simulation.inplace_source[p.tensor];
      if (source != kNoId) {
        const TensorPlacement& s = plan.tensors[index_of[source]];
        if (s.offset != p.offset || s.size != p.size) {
          return absl::InternalError(absl::StrCat(
              "arena: in-place ", Describe(p), " does not coincide with its source ", Describe(s)));
        }
        erase_if_owner(s.offset, index_of[source]);
      }
      auto next = live.lower_bound(p.offset);
      if (next != live.end() && next->first < p.offset + p.size) {
        return absl::InternalError(absl::StrCat("arena: ", Describe(p), " overlaps ",
                                                Describe(plan.tensors[next->second])));
      }
      if (next != live.begin()) {
        const TensorPlacement& before = plan.tensors[std::prev(next)->second];
        if (before.offset + before.size > p.offset) {
          return absl::InternalError(
              absl::StrCat("arena: ", Describe(p), " overlaps ", Describe(before)));
        }
      }
      live.emplace(p.offset, i);
    }
  }
  return absl::OkStatus();
}

absl::Status VerifyTotals(const ArenaProblem& problem, const ArenaPlan& plan) {
  int64_t arena = 0;
  for (const TensorPlacement& p : plan.tensors) arena = std::max(arena, p.offset + p.size);
  if (plan.arena_bytes != arena) {
    return absl::InternalError(
        absl::StrCat("arena: arena_bytes is ", plan.arena_bytes, "; the placements span ", arena));
  }
  if (plan.lower_bound_bytes != problem.lower_bound_bytes) {
    return absl::InternalError(absl::StrCat("arena: lower_bound_bytes is ", plan.lower_bound_bytes,
                                            "; the aligned peak is ", problem.lower_bound_bytes));
  }
  if (plan.arena_bytes < plan.lower_bound_bytes) {
    return absl::InternalError(absl::StrCat(
        "arena: ", plan.arena_bytes, " bytes is below the lower bound ", plan.lower_bound_bytes));
  }
  if (plan.gap_bytes != plan.arena_bytes - plan.lower_bound_bytes) {
    return absl::InternalError(absl::StrCat("arena: gap_bytes is ", plan.gap_bytes));
  }
  return absl::OkStatus();
}

char OrdinalCharacter(size_t i) {
  if (i < 10) return static_cast<char>('0' + i);
  if (i < 36) return static_cast<char>('a' + (i - 10));
  if (i < 62) return static_cast<char>('A' + (i - 36));
  return '*';
}

}  // namespace

std::optional<int64_t> PlannedArenaBytes(const ArenaPlan& plan, absl::string_view planner) {
  for (const PlannerArena& arena : plan.arenas_by_planner) {
    if (arena.planner == planner) return arena.arena_bytes;
  }
  return std::nullopt;
}

ArenaPlan MakeArenaPlan(const ArenaProblem& problem, const SimulationResult& simulation,
                        const std::vector<int64_t>& offsets) {
  ArenaPlan plan;
  plan.alignment = problem.alignment;
  for (int32_t t = 0; t < static_cast<int32_t>(problem.block_of_tensor.size()); ++t) {
    const int32_t b = problem.block_of_tensor[t];
    if (b == kNoId) continue;
    plan.tensors.push_back({t, offsets[b], problem.blocks[b].size, simulation.intervals[t].first,
                            simulation.intervals[t].last});
  }
  plan.arena_bytes = ArenaBytes(problem, offsets);
  plan.lower_bound_bytes = problem.lower_bound_bytes;
  plan.gap_bytes = plan.arena_bytes - plan.lower_bound_bytes;
  plan.optimal = plan.gap_bytes == 0;
  return plan;
}

absl::Status VerifyArena(const MemoryModel& model, const SimulationResult& simulation,
                         const ArenaPlan& plan) {
  absl::StatusOr<ArenaProblem> problem = BuildArenaProblem(model, simulation, plan.alignment);
  if (!problem.ok()) return problem.status();
  if (absl::Status s = VerifyPlacements(model, simulation, plan); !s.ok()) return s;
  if (absl::Status s = VerifyDisjoint(simulation, plan, problem->num_steps); !s.ok()) return s;
  return VerifyTotals(*problem, plan);
}

std::string DrawArenaAscii(const ArenaPlan& plan, int32_t width) {
  int32_t last_step = -1;
  for (const TensorPlacement& p : plan.tensors) last_step = std::max(last_step, p.last_step);
  const int64_t span = std::max<int64_t>(plan.arena_bytes, 1);
  std::string out;
  for (int32_t step = -1; step <= last_step; ++step) {
    std::string line(width, '.');
    std::vector<int32_t> owner(width, -1);
    int64_t used = 0;
    for (size_t i = 0; i < plan.tensors.size(); ++i) {
      const TensorPlacement& p = plan.tensors[i];
      if (step < p.first_step || step > p.last_step || p.size == 0) continue;
      const int64_t begin = p.offset * width / span;
      const int64_t end = std::max(begin + 1, (p.offset + p.size) * width / span);
      // An in-place pair shares its block at the step where one replaces the
      // other: same offset and size, so it is drawn once, not as an overlap.
      const int32_t under = begin < width ? owner[begin] : -1;
      const bool replaces = under != -1 && plan.tensors[under].offset == p.offset &&
                            plan.tensors[under].size == p.size;
      if (!replaces) used += p.size;
      for (int64_t c = begin; c < end && c < width; ++c) {
        line[c] = line[c] == '.' || replaces ? OrdinalCharacter(i) : '!';
        owner[c] = static_cast<int32_t>(i);
      }
    }
    absl::StrAppend(&out, step < 0 ? "in" : absl::StrCat(step), ":\t", line, " ", used, "\n");
  }
  return out;
}

}  // namespace ordo
