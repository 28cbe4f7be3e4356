#include "core/pools/memory_pools.h"

#include <algorithm>
#include <limits>
#include <numeric>
#include <optional>
#include <set>
#include <utility>

#include "absl/strings/cord.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/memory/simulator.h"
#include "core/pools/pool_relaxation.h"
#include "core/util/check.h"
#include "core/util/status_macros.h"

namespace ordo {
namespace {

// Payload type URLs marking IsTensorLargerThanEveryPool's and
// IsGraphInputOrOutputLargerThanEveryPool's refusals.
constexpr absl::string_view kLargerThanEveryPoolPayload = "ordo/tensor-larger-than-every-pool";
constexpr absl::string_view kInterfaceLargerThanEveryPoolPayload =
    "ordo/graph-input-or-output-larger-than-every-pool";

// A graph input or output keeps its shape through every rewrite
// (CheckSameInterface), so no rewrite shrinks a block holding one.
bool HoldsGraphInputOrOutput(const Graph& graph, const ArenaBlock& block) {
  for (int32_t t : block.tensors) {
    const Tensor& tensor = graph.tensor(t);
    if (tensor.kind == TensorKind::kInput || tensor.is_graph_output) return true;
  }
  return false;
}

}  // namespace

bool IsTensorLargerThanEveryPool(const absl::Status& status) {
  return status.code() == absl::StatusCode::kInvalidArgument &&
         status.GetPayload(kLargerThanEveryPoolPayload).has_value();
}

bool IsGraphInputOrOutputLargerThanEveryPool(const absl::Status& status) {
  return status.code() == absl::StatusCode::kInvalidArgument &&
         status.GetPayload(kInterfaceLargerThanEveryPoolPayload).has_value();
}

absl::Status ValidatePoolOptions(const PoolOptions& options) {
  if (options.pools.size() > kMaxMemoryPools) {
    return absl::InvalidArgumentError(absl::StrCat(options.pools.size(),
                                                   " memory pools given; at most ",
                                                   kMaxMemoryPools, " are supported"));
  }
  std::set<std::string> names;
  // The proofs and the single_pool baseline add capacities up; like the
  // model's tensor bytes (BuildMemoryModel), their total stays below 2^62.
  constexpr int64_t kMaxTotalCapacity = int64_t{1} << 62;
  int64_t total_capacity = 0;
  for (const MemoryPool& pool : options.pools) {
    if (pool.name.empty()) return absl::InvalidArgumentError("a memory pool has no name");
    if (!names.insert(pool.name).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("memory pool \"", pool.name, "\" is given twice; pool names must differ"));
    }
    if (pool.capacity_bytes <= 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "memory pool \"", pool.name, "\": capacity must be positive, got ", pool.capacity_bytes));
    }
    if (pool.capacity_bytes > kMaxTotalCapacity - total_capacity) {
      return absl::InvalidArgumentError(absl::StrCat(
          "memory pool \"", pool.name, "\": the pools' capacities add up past 2^62 bytes (4 EiB)"));
    }
    total_capacity += pool.capacity_bytes;
    for (double bandwidth : {pool.read_bytes_per_second, pool.write_bytes_per_second}) {
      // Written so that NaN fails too.
      if (!(bandwidth >= kMinPoolBytesPerSecond && bandwidth <= kMaxPoolBytesPerSecond)) {
        return absl::InvalidArgumentError(absl::StrCat(
            "memory pool \"", pool.name, "\": bandwidths must be positive, between ",
            kMinPoolBytesPerSecond, " and ", kMaxPoolBytesPerSecond, " bytes/s; got ",
            bandwidth));
      }
    }
  }
  for (const auto& [tensor, pool] : options.pinned) {
    if (names.count(pool) == 0) {
      return absl::InvalidArgumentError(absl::StrCat("tensor \"", tensor,
                                                     "\" is pinned to unknown memory pool \"",
                                                     pool, "\""));
    }
  }
  if (options.one_arena && options.pools.empty()) {
    return absl::InvalidArgumentError(
        "one arena needs memory pools: without them the arena is one already");
  }
  return absl::OkStatus();
}

std::optional<PlacementEffort> ParsePlacementEffort(absl::string_view name) {
  if (name == "fast") return PlacementEffort::kFast;
  if (name == "thorough") return PlacementEffort::kThorough;
  return std::nullopt;
}

double TensorMemorySeconds(const MemoryModel& model, int32_t tensor, int64_t aligned_bytes,
                           const MemoryPool& pool) {
  const MemoryModel::TensorInfo& info = model.tensors[tensor];
  const double bytes = static_cast<double>(aligned_bytes);
  const double writes = info.producer == kNoId ? 0.0 : 1.0;
  const double reads = static_cast<double>(info.consumers.size());
  return writes * bytes / pool.write_bytes_per_second + reads * bytes / pool.read_bytes_per_second;
}

namespace {

absl::StatusOr<std::vector<int32_t>> PinnedPoolOfTensor(const Graph& graph,
                                                        const SimulationResult& simulation,
                                                        const PoolOptions& options) {
  std::vector<int32_t> pinned(graph.num_tensors(), kNoId);
  for (const auto& [name, pool_name] : options.pinned) {
    const std::optional<TensorId> tensor = graph.FindTensor(name);
    if (!tensor) {
      // Pins are mostly of the model's input: name the ones it has.
      std::vector<std::string> inputs;
      for (TensorId input : graph.inputs()) {
        inputs.push_back(absl::StrCat("\"", graph.tensor(input).name, "\""));
      }
      return absl::InvalidArgumentError(absl::StrCat(
          "pinned tensor \"", name, "\" is not a tensor of the model; its graph inputs are ",
          inputs.empty() ? "none" : absl::StrJoin(inputs, ", "),
          " (`ordo compile --json` lists the activations under arena.tensors)"));
    }
    if (!simulation.has_interval[*tensor]) {
      const Tensor& pinned_tensor = graph.tensor(*tensor);
      const bool interface =
          pinned_tensor.kind == TensorKind::kInput || pinned_tensor.is_graph_output;
      return absl::InvalidArgumentError(absl::StrCat(
          "pinned tensor \"", name, "\" is not an activation tensor of the model (it is ",
          pinned_tensor.kind == TensorKind::kWeight ? "a weight"
          : interface ? "a graph input or output, kept outside the arena by --io-outside-arena "
                        "(io_outside_arena)"
                      : "never live",
          "; only activations in the arena are placed in the pools)"));
    }
    for (int32_t p = 0; p < static_cast<int32_t>(options.pools.size()); ++p) {
      if (options.pools[p].name == pool_name) pinned[*tensor] = p;
    }
  }
  return pinned;
}

}  // namespace

absl::StatusOr<PoolProblem> BuildPoolProblem(const Graph& graph, const MemoryModel& model,
                                             const SimulationResult& simulation,
                                             int64_t alignment, const PoolOptions& options) {
  ORDO_RETURN_IF_ERROR(ValidatePoolOptions(options));
  if (!options.enabled()) return absl::InvalidArgumentError("no memory pools given");
  ORDO_ASSIGN_OR_RETURN(ArenaProblem arena, BuildArenaProblem(model, simulation, alignment));
  return BuildPoolProblem(graph, model, simulation, std::move(arena), options);
}

absl::StatusOr<PoolProblem> BuildPoolProblem(const Graph& graph, const MemoryModel& model,
                                             const SimulationResult& simulation, ArenaProblem arena,
                                             const PoolOptions& options) {
  ORDO_RETURN_IF_ERROR(ValidatePoolOptions(options));
  if (!options.enabled()) return absl::InvalidArgumentError("no memory pools given");
  PoolProblem problem;
  problem.arena = std::move(arena);
  ORDO_ASSIGN_OR_RETURN(std::vector<int32_t> pinned,
                        PinnedPoolOfTensor(graph, simulation, options));
  problem.pools = options.pools;
  const int32_t num_pools = problem.num_pools();
  // The first block larger than every pool it may use, and the first of
  // those no rewrite can shrink: that one is the refusal to report.
  absl::Status too_large, not_curable;
  problem.seconds.reserve(problem.arena.blocks.size(), num_pools);
  problem.allowed.reserve(problem.arena.blocks.size(), num_pools);
  std::vector<double> seconds(num_pools);
  std::vector<uint8_t> allowed(num_pools);
  for (const ArenaBlock& block : problem.arena.blocks) {
    std::fill(seconds.begin(), seconds.end(), 0.0);
    int32_t pinned_to = kNoId;
    int32_t pinned_tensor = block.tensors[0];  // the one to name: the user pinned it
    for (int32_t t : block.tensors) {
      for (int32_t p = 0; p < num_pools; ++p) {
        seconds[p] += TensorMemorySeconds(model, t, block.size, problem.pools[p]);
      }
      if (pinned[t] == kNoId) continue;
      if (pinned_to != kNoId && pinned_to != pinned[t]) {
        return absl::InvalidArgumentError(absl::StrCat(
            "tensor \"", graph.tensor(t).name, "\" shares its memory in place with tensor \"",
            graph.tensor(pinned_tensor).name,
            "\" but is pinned to another pool; pin both to one pool, or compile with "
            "--no-inplace (inplace=false) to give each its own block"));
      }
      pinned_to = pinned[t];
      pinned_tensor = t;
    }
    bool any = false;
    for (int32_t p = 0; p < num_pools; ++p) {
      allowed[p] = (pinned_to == kNoId || pinned_to == p) &&
                   block.size <= problem.pools[p].capacity_bytes;
      any = any || allowed[p];
    }
    if (!any) {
      const std::string shares = pinned_tensor != block.tensors[0]
                                     ? absl::StrCat(", its block shared in place with \"",
                                                    graph.tensor(block.tensors[0]).name, "\"")
                                     : "";
      absl::Status status = absl::InvalidArgumentError(absl::StrCat(
          "tensor \"", graph.tensor(pinned_tensor).name, "\" (", block.size, " bytes", shares,
          ") is larger than every memory pool it may use",
          pinned_to != kNoId ? absl::StrCat(" (pinned to \"", problem.pools[pinned_to].name, "\")")
                             : ""));
      const bool holds_interface = HoldsGraphInputOrOutput(graph, block);
      const bool curable = pinned_to == kNoId && !holds_interface;
      if (pinned_to == kNoId && holds_interface) {
        status.SetPayload(kInterfaceLargerThanEveryPoolPayload, absl::Cord());
      }
      if (too_large.ok()) too_large = status;
      if (!curable && not_curable.ok()) not_curable = status;
    }
    problem.seconds.push_back(absl::MakeConstSpan(seconds));
    problem.allowed.push_back(absl::MakeConstSpan(allowed));
  }
  if (!not_curable.ok()) return not_curable;
  if (!too_large.ok()) {
    too_large.SetPayload(kLargerThanEveryPoolPayload, absl::Cord());
    return too_large;
  }
  return problem;
}

PoolEvaluation EvaluatePoolAssignment(const PoolProblem& problem,
                                      const PoolAssignment& assignment) {
  PoolEvaluation evaluation;
  for (const MemoryPool& pool : problem.pools) {
    evaluation.pools.push_back({pool.name, pool.capacity_bytes, 0, 0, 0.0});
  }
  for (int32_t b = 0; b < problem.num_blocks(); ++b) {
    const int32_t p = assignment.pool[b];
    PoolUsage& usage = evaluation.pools[p];
    const ArenaBlock& block = problem.arena.blocks[b];
    if (block.size > 0) {
      usage.used_bytes = std::max(usage.used_bytes, assignment.offset[b] + block.size);
    }
    usage.tensors += static_cast<int32_t>(block.tensors.size());
    usage.modelled_seconds += problem.seconds[b][p];
  }
  for (const PoolUsage& usage : evaluation.pools) {
    evaluation.modelled_seconds += usage.modelled_seconds;
    evaluation.overflow_bytes += std::max<int64_t>(0, usage.used_bytes - usage.capacity_bytes);
  }
  return evaluation;
}

absl::Status CheckPoolAssignment(const PoolProblem& problem, const PoolAssignment& assignment) {
  const int32_t num_blocks = problem.num_blocks();
  if (static_cast<int32_t>(assignment.pool.size()) != num_blocks ||
      static_cast<int32_t>(assignment.offset.size()) != num_blocks) {
    return absl::InternalError("pool placement: not one pool and offset per block");
  }
  std::vector<std::vector<int32_t>> blocks_of_pool(problem.num_pools());
  for (int32_t b = 0; b < num_blocks; ++b) {
    const int32_t p = assignment.pool[b];
    const ArenaBlock& block = problem.arena.blocks[b];
    if (p < 0 || p >= problem.num_pools() || !problem.allowed[b][p]) {
      return absl::InternalError(
          absl::StrCat("pool placement: tensor ", block.tensors[0], " is in a pool it may not use"));
    }
    const int64_t offset = assignment.offset[b];
    if (offset < 0 || offset % problem.arena.alignment != 0) {
      return absl::InternalError(absl::StrCat("pool placement: tensor ", block.tensors[0],
                                              " has a misaligned offset ", offset));
    }
    if (block.size > 0 && offset + block.size > problem.pools[p].capacity_bytes) {
      return absl::InternalError(absl::StrCat("pool placement: tensor ", block.tensors[0],
                                              " ends beyond pool \"", problem.pools[p].name,
                                              "\""));
    }
    if (block.size > 0) blocks_of_pool[p].push_back(b);
  }
  // Only blocks live at a common step may not share bytes.
  for (std::vector<int32_t>& blocks : blocks_of_pool) {
    SortByFirstStep(problem.arena.blocks, blocks);
    std::optional<std::pair<int32_t, int32_t>> overlap;
    ForEachCoLivePair(problem.arena.blocks, blocks, [&](int32_t x, int32_t y) {
      const int64_t ox = assignment.offset[x], oy = assignment.offset[y];
      if (!overlap && ox < oy + problem.arena.blocks[y].size &&
          oy < ox + problem.arena.blocks[x].size) {
        overlap = {x, y};
      }
    });
    if (overlap) {
      return absl::InternalError(absl::StrCat(
          "pool placement: tensors ", problem.arena.blocks[overlap->first].tensors[0], " and ",
          problem.arena.blocks[overlap->second].tensors[0], " overlap"));
    }
  }
  return absl::OkStatus();
}

namespace {

// A pool at least as fast as every other for reads and writes, or kNoId.
int32_t DominantPool(const std::vector<MemoryPool>& pools) {
  for (int32_t f = 0; f < static_cast<int32_t>(pools.size()); ++f) {
    bool dominant = true;
    for (const MemoryPool& other : pools) {
      dominant = dominant && pools[f].read_bytes_per_second >= other.read_bytes_per_second &&
                 pools[f].write_bytes_per_second >= other.write_bytes_per_second;
    }
    if (dominant) return f;
  }
  return kNoId;
}

}  // namespace

// Why the raise holds: with F dominant, a block b allowed in F costs at
// least its minimum plus penalty(b) x size(b) when it is elsewhere, where
// penalty is its cheapest alternative's extra time per byte. At a step s the
// blocks live there outside F hold at least live(s) - capacity(F) bytes, so
// every valid placement pays at least the cheapest fractional choice of such
// bytes. Blocks that may not use F are outside for free. Steps do not add up
// (the same blocks may serve several), hence the maximum over steps.
double CheapestPoolsSeconds(const PoolProblem& problem) {
  double seconds = 0;
  for (int32_t b = 0; b < problem.num_blocks(); ++b) {
    double cheapest = std::numeric_limits<double>::infinity();
    for (int32_t p = 0; p < problem.num_pools(); ++p) {
      if (problem.allowed[b][p]) cheapest = std::min(cheapest, problem.seconds[b][p]);
    }
    seconds += cheapest;
  }
  return seconds;
}

double PoolPeakStepBoundSeconds(const PoolProblem& problem) {
  const int32_t num_blocks = problem.num_blocks();
  const double base = CheapestPoolsSeconds(problem);
  const int32_t f = DominantPool(problem.pools);
  if (f == kNoId) return base;
  // Per block, once: outside F for free (it may not use F), or its extra
  // time per byte outside F (none when F is its only pool).
  constexpr double kNoAlternative = std::numeric_limits<double>::infinity();
  std::vector<double> penalty(num_blocks, kNoAlternative);
  for (int32_t b = 0; b < num_blocks; ++b) {
    if (!problem.allowed[b][f] || problem.arena.blocks[b].size == 0) continue;
    double alternative = kNoAlternative;
    for (int32_t p = 0; p < problem.num_pools(); ++p) {
      if (p != f && problem.allowed[b][p]) {
        alternative = std::min(alternative, problem.seconds[b][p]);
      }
    }
    if (alternative != kNoAlternative) {
      penalty[b] = (alternative - problem.seconds[b][f]) / problem.arena.blocks[b].size;
    }
  }
  // Bytes that may use F live at each step (index s + 1 for step s, from
  // -1); blocks that may not are outside F for free. The movable blocks
  // (an alternative to F) live at a step over F's capacity are evicted
  // cheapest first, by (penalty, size); the list stays in that order from
  // one such step to the next, so each sorts only the blocks started since
  // and merges them in.
  const int32_t num_steps = problem.arena.num_steps;
  std::vector<int64_t> live_bytes(num_steps + 2, 0);
  std::vector<int32_t> by_first;
  for (int32_t b = 0; b < num_blocks; ++b) {
    const ArenaBlock& block = problem.arena.blocks[b];
    if (block.size == 0 || !problem.allowed[b][f]) continue;
    live_bytes[block.first + 1] += block.size;
    live_bytes[block.last + 2] -= block.size;
    if (penalty[b] != kNoAlternative) by_first.push_back(b);
  }
  SortByFirstStep(problem.arena.blocks, by_first);
  auto cheaper = [&](int32_t a, int32_t b) {
    return std::pair(penalty[a], problem.arena.blocks[a].size) <
           std::pair(penalty[b], problem.arena.blocks[b].size);
  };
  double best_raise = 0;
  int64_t bytes = 0;
  size_t next = 0;
  std::vector<int32_t> movable, merged;  // by `cheaper` up to `sorted`
  size_t sorted = 0;
  for (int32_t s = -1; s < num_steps; ++s) {
    bytes += live_bytes[s + 1];
    for (; next < by_first.size() && problem.arena.blocks[by_first[next]].first <= s; ++next) {
      movable.push_back(by_first[next]);
    }
    int64_t to_move = bytes - problem.pools[f].capacity_bytes;
    if (to_move <= 0) continue;
    // Merged into a buffer kept from step to step (inplace_merge would
    // allocate one at every step).
    const auto started = movable.begin() + static_cast<std::ptrdiff_t>(sorted);
    std::sort(started, movable.end(), cheaper);
    merged.resize(movable.size());
    std::merge(movable.begin(), started, started, movable.end(), merged.begin(), cheaper);
    movable.swap(merged);
    std::erase_if(movable, [&](int32_t b) { return problem.arena.blocks[b].last < s; });
    sorted = movable.size();
    double raise = 0;
    for (int32_t b : movable) {
      if (to_move <= 0) break;
      const int64_t moved = std::min(to_move, problem.arena.blocks[b].size);
      raise += penalty[b] * static_cast<double>(moved);
      to_move -= moved;
    }
    best_raise = std::max(best_raise, raise);
  }
  return base + best_raise;
}

namespace {

// Depth-first: can `blocks` (largest first) be split over the pools they
// may use with the byte sums within capacities? `nodes` bounds the tries;
// running out answers true (no proof). `rest[i]`: the bytes of blocks i...
// Prunes when the room that the smallest block still fits in is less than
// the bytes left, and tries a block of the same size and pools as the one
// before only in the same or a later pool (the two are interchangeable).
bool Splittable(const PoolProblem& problem, const std::vector<int32_t>& blocks,
                const std::vector<int64_t>& rest, size_t index, int32_t first_pool,
                std::vector<int64_t>& room, int64_t& nodes) {
  if (index == blocks.size() || --nodes <= 0) return true;
  const int64_t smallest = problem.arena.blocks[blocks.back()].size;
  int64_t usable = 0;
  for (int64_t r : room) usable += r >= smallest ? r : 0;
  if (usable < rest[index]) return false;
  const int32_t b = blocks[index];
  const int64_t size = problem.arena.blocks[b].size;
  for (int32_t p = first_pool; p < problem.num_pools(); ++p) {
    if (!problem.allowed[b][p] || room[p] < size) continue;
    room[p] -= size;
    int32_t next_first = 0;
    if (index + 1 < blocks.size()) {
      const int32_t next = blocks[index + 1];
      const bool same = problem.arena.blocks[next].size == size &&
                        problem.allowed[next] == problem.allowed[b];
      next_first = same ? p : 0;
    }
    const bool ok = Splittable(problem, blocks, rest, index + 1, next_first, room, nodes);
    room[p] += size;
    if (ok) return true;
  }
  return false;
}

// Whether `blocks` (any order) have a split over the pools within their
// capacities, as far as `nodes` tries can tell (true when they run out);
// `nodes` keeps the tries left.
bool HaveASplit(const PoolProblem& problem, std::vector<int32_t> blocks, int64_t& nodes) {
  std::sort(blocks.begin(), blocks.end(), [&](int32_t a, int32_t b) {
    return problem.arena.blocks[a].size > problem.arena.blocks[b].size;
  });
  std::vector<int64_t> rest(blocks.size() + 1, 0);
  for (size_t i = blocks.size(); i-- > 0;) {
    rest[i] = rest[i + 1] + problem.arena.blocks[blocks[i]].size;
  }
  std::vector<int64_t> room;
  for (const MemoryPool& pool : problem.pools) room.push_back(pool.capacity_bytes);
  return Splittable(problem, blocks, rest, 0, 0, room, nodes);
}

std::string NameBlocks(const Graph& graph, const PoolProblem& problem,
                       const std::vector<int32_t>& blocks) {
  std::vector<std::string> named;
  for (int32_t b : blocks) {
    const int32_t t = problem.arena.blocks[b].tensors[0];
    named.push_back(
        absl::StrCat("\"", graph.tensor(t).name, "\" (", problem.arena.blocks[b].size, " B)"));
  }
  return absl::StrJoin(named, ", ");
}

// Proof 1 of PoolInfeasibility: an op whose own blocks have no split.
std::string OpWithoutASplit(const Graph& graph, const MemoryModel& model,
                            const PoolProblem& problem) {
  std::vector<int32_t> block_of(model.num_tensors(), kNoId);
  for (int32_t b = 0; b < problem.num_blocks(); ++b) {
    for (int32_t t : problem.arena.blocks[b].tensors) block_of[t] = b;
  }
  for (int32_t op = 0; op < model.num_ops(); ++op) {
    const MemoryModel::OpInfo& info = model.ops[op];
    std::vector<int32_t> tensors = info.inputs;
    for (size_t i = 0; i < info.outputs.size(); ++i) {
      // In another order this output may share its input's bytes.
      if (i == 0 && info.inplace_input != kNoId) continue;
      tensors.push_back(info.outputs[i]);
    }
    std::vector<int32_t> blocks;
    for (int32_t t : tensors) {
      const int32_t b = block_of[t];
      if (b != kNoId && problem.arena.blocks[b].size > 0 &&
          std::find(blocks.begin(), blocks.end(), b) == blocks.end()) {
        blocks.push_back(b);
      }
    }
    int64_t nodes = 100000;
    if (HaveASplit(problem, blocks, nodes)) continue;
    return absl::StrCat("op \"", graph.op(op).name, "\" needs ", NameBlocks(graph, problem, blocks),
                        " at once, and no split of them over the pools fits: no order of "
                        "this model fits these pools");
  }
  return "";
}

// Proof 2 of PoolInfeasibility, by size granularity. Why it is sound:
//  - Take any order and any valid placement of its blocks. At a step s the
//    simulator's footprint is constant_bytes (weights, in no pool) plus the
//    bytes of the activation tensors it counts at s. Each counted tensor
//    lies in a block live at s, and no two in one block: an in-place pair
//    shares a block, but the spec counts the overwritten input not at the
//    step that writes the output, and neither at any other step together.
//  - Blocks live at s are pairwise co-live, so those in one pool are
//    disjoint there; their aligned sizes (each >= the bytes of the tensor
//    counted in it) sum to at most the pool's capacity C. So the counted
//    bytes in that pool are at most C; they are a sum of tensor sizes, all
//    multiples of g, hence at most floor(C / g) * g. Summed over pools: H.
//  - Every order has a step whose footprint is at least L (a bound over all
//    orders, not one schedule's peak), so activation bytes of at least
//    L - constant_bytes there. L - constant_bytes > H contradicts the above.
//  - Per part (PartLiveBounds): the partition is exact (core/partition:
//    every order runs each part as a contiguous block, and at each of the
//    part's steps the whole's footprint is the part's, with the same tensors
//    counted, the part's constant_bytes standing for the weights and the
//    tensors live across it untouched). The part's footprint before its
//    first op is the tensors live after the previous part's last step, which
//    that step of the whole counts too. So every order has a step of the
//    whole where the part's own tensors, counted, total at least the part's
//    peak bound less its constant_bytes: L. They are multiples of the
//    part's g, one per block as above, so at most H of them fit; L > H
//    proves it. The other tensors live there only take more room.
// Pins and sizes that keep tensors out of a pool only lower what it holds,
// so counting every pool stays an upper bound.
struct PoolsHold {
  int64_t bytes = 0;     // H
  std::string per_pool;  // each pool's share
};

PoolsHold HoldOfMultiples(const PoolProblem& problem, int64_t g) {
  PoolsHold hold;
  std::vector<std::string> per_pool;
  for (const MemoryPool& pool : problem.pools) {
    const int64_t units = pool.capacity_bytes / g;
    hold.bytes += units * g;
    per_pool.push_back(g > 1 ? absl::StrCat(pool.name, " ", units, " x ", g, " B")
                             : absl::StrCat(pool.name, " ", units, " B"));
  }
  hold.per_pool = absl::StrJoin(per_pool, ", ");
  return hold;
}

std::string WholeModelGranularity(const MemoryModel& model, const PoolProblem& problem,
                                  const EveryOrderPeakBound& every_order_peak) {
  int64_t g = 0;
  for (const MemoryModel::TensorInfo& tensor : model.tensors) g = std::gcd(g, tensor.bytes);
  if (g <= 0) return "";
  const PoolsHold hold = HoldOfMultiples(problem, g);
  const int64_t spec_bound = MemoryLowerBound(model);
  const bool spec_is_larger = spec_bound >= every_order_peak.bytes;
  const int64_t bound = std::max(spec_bound, every_order_peak.bytes);
  const int64_t live = bound - model.constant_bytes;
  if (live <= hold.bytes) return "";
  const std::string source =
      spec_is_larger ? std::string("the largest footprint an op needs at its own step")
                     : every_order_peak.source;
  return absl::StrCat(
      "no order of this model fits these pools: ",
      g > 1 ? absl::StrCat("every activation tensor is a multiple of ", g, " B, so ") : "",
      "the pools hold at most ", hold.bytes, " B of them at once (", hold.per_pool,
      "), and every order has a step with at least ", live, " B of them live (", source,
      model.constant_bytes > 0 ? absl::StrCat(", less ", model.constant_bytes, " B of weights")
                               : "",
      ")");
}

std::string PartGranularity(const PoolProblem& problem, const PartLiveBound& part) {
  // A unit of 1 holds the summed capacity, which the whole's proof uses
  // against a bound at least as large.
  if (part.unit <= 1) return "";
  const PoolsHold hold = HoldOfMultiples(problem, part.unit);
  if (part.live_bytes <= hold.bytes) return "";
  return absl::StrCat("no order of this model fits these pools: every tensor of ", part.name,
                      " is a multiple of ", part.unit, " B, so the pools hold at most ",
                      hold.bytes, " B of them at once (", hold.per_pool,
                      "), and every order has a step with at least ", part.live_bytes,
                      " B of them live (", part.source, ")");
}

std::string GranularityInfeasibility(const MemoryModel& model, const PoolProblem& problem,
                                     const EveryOrderPeakBound& every_order_peak) {
  std::string why = WholeModelGranularity(model, problem, every_order_peak);
  for (size_t p = 0; why.empty() && p < every_order_peak.parts.size(); ++p) {
    why = PartGranularity(problem, every_order_peak.parts[p]);
  }
  return why;
}

}  // namespace

std::string PoolInfeasibility(const Graph& graph, const MemoryModel& model,
                              const PoolProblem& problem,
                              const EveryOrderPeakBound& every_order_peak) {
  std::string why = OpWithoutASplit(graph, model, problem);
  if (why.empty()) why = GranularityInfeasibility(model, problem, every_order_peak);
  return why;
}

std::vector<PartLiveBound> PartLiveBounds(const Graph& graph, const Partition& partition,
                                          const std::vector<EveryOrderPeakBound>& part_peaks) {
  ORDO_CHECK(part_peaks.size() == partition.parts.size());
  std::vector<PartLiveBound> bounds;
  for (size_t p = 0; p < partition.parts.size(); ++p) {
    const Part& part = partition.parts[p];
    if (part.ops.empty()) continue;
    PartLiveBound bound;
    bound.name = absl::StrCat("the part from op \"", graph.op(part.ops.front()).name,
                              "\" to op \"", graph.op(part.ops.back()).name, "\"");
    for (const MemoryModel::TensorInfo& tensor : part.model.tensors) {
      bound.unit = std::gcd(bound.unit, tensor.bytes);
    }
    const int64_t spec_bound = MemoryLowerBound(part.model);
    const bool spec_is_larger = spec_bound >= part_peaks[p].bytes;
    bound.live_bytes = std::max(spec_bound, part_peaks[p].bytes) - part.model.constant_bytes;
    bound.source = absl::StrCat(
        spec_is_larger ? std::string("the largest footprint an op of it needs at its own step")
                       : part_peaks[p].source,
        part.model.constant_bytes > 0
            ? absl::StrCat(", less ", part.model.constant_bytes,
                           " B of weights and of tensors live across it")
            : "");
    bounds.push_back(std::move(bound));
  }
  return bounds;
}

UnsplittableStep FirstUnsplittableStep(const PoolProblem& problem, int64_t max_nodes) {
  // The blocks live at each step, by a sweep over their first and last steps.
  const int32_t steps = problem.arena.num_steps;
  std::vector<std::vector<int32_t>> starting(steps + 1);
  for (int32_t b = 0; b < problem.num_blocks(); ++b) {
    if (problem.arena.blocks[b].size > 0) starting[problem.arena.blocks[b].first + 1].push_back(b);
  }
  int64_t total_capacity = 0;
  for (const MemoryPool& pool : problem.pools) total_capacity += pool.capacity_bytes;
  std::vector<int32_t> live;
  for (int32_t step = -1; step < steps && max_nodes > 0; ++step) {
    live.erase(std::remove_if(live.begin(), live.end(),
                              [&](int32_t b) { return problem.arena.blocks[b].last < step; }),
               live.end());
    live.insert(live.end(), starting[step + 1].begin(), starting[step + 1].end());
    int64_t bytes = 0;
    for (int32_t b : live) bytes += problem.arena.blocks[b].size;
    // Steps far from full have a split; the others share the tries.
    if (bytes * 8 < total_capacity * 7) continue;
    const int64_t given = std::min<int64_t>(max_nodes, 100000);
    int64_t nodes = given;
    const bool split = HaveASplit(problem, live, nodes);
    max_nodes -= given - std::max<int64_t>(nodes, 0);
    if (split) continue;
    std::sort(live.begin(), live.end(), [&](int32_t a, int32_t b) {
      return problem.arena.blocks[a].size > problem.arena.blocks[b].size;
    });
    return {step, std::move(live), bytes};
  }
  return {};
}

std::string ScheduleInfeasibility(const Graph& graph, const PoolProblem& problem,
                                  int64_t max_nodes) {
  const UnsplittableStep found = FirstUnsplittableStep(problem, max_nodes);
  if (!found.found()) return "";
  const std::string at = found.step < 0 ? std::string("before the first op")
                                        : absl::StrCat("at step ", found.step);
  return absl::StrCat(at, ", ", found.blocks.size(), " blocks are live (",
                      NameBlocks(graph, problem, found.blocks),
                      ") and no split of them over the pools fits: this order has no valid "
                      "placement");
}

double PoolLowerBoundSeconds(const PoolProblem& problem) {
  return std::max(PoolPeakStepBoundSeconds(problem), PoolRelaxationBound(problem, kPoolBoundSteps));
}

}  // namespace ordo
