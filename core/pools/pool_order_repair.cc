#include "core/pools/pool_order_repair.h"

#include <algorithm>
#include <limits>
#include <tuple>
#include <utility>

#include "core/memory/simulator.h"

namespace ordo {
namespace {

// An order and where its first step without a split is.
struct ScoredOrder {
  std::vector<int32_t> order;
  PoolProblem problem;
  UnsplittableStep bad;

  // Later first bad step, then fewer live bytes there, is better; an order
  // with none is best.
  std::tuple<int32_t, int64_t> Score() const {
    if (!bad.found()) return {std::numeric_limits<int32_t>::max(), 0};
    return {bad.step, -bad.live_bytes};
  }
};

// nullopt: the order breaks a dependency (or its pool problem cannot be
// built, which no order changes).
std::optional<ScoredOrder> ScoreOrder(const Graph& graph, const MemoryModel& model,
                                      int64_t alignment, const PoolOptions& options,
                                      std::vector<int32_t> order) {
  absl::StatusOr<SimulationResult> simulation = Simulate(model, order);
  if (!simulation.ok()) return std::nullopt;
  absl::StatusOr<PoolProblem> problem =
      BuildPoolProblem(graph, model, *simulation, alignment, options);
  if (!problem.ok()) return std::nullopt;
  ScoredOrder scored{std::move(order), std::move(*problem), {}};
  scored.bad = FirstUnsplittableStep(scored.problem, kRepairSplitTries);
  return scored;
}

// `order` with the op at `from` moved to just after step `to` (from < to),
// together with the ops between them that depend on it (directly or not)
// and the ops before it that only feed what moves (their tensors die
// later instead of waiting), in their order: a valid order when `order` is.
std::vector<int32_t> Delay(const MemoryModel& model, const std::vector<int32_t>& order,
                           int32_t from, int32_t to) {
  std::vector<bool> moving(model.num_ops(), false);
  moving[order[from]] = true;
  for (int32_t i = from - 1; i >= 0; --i) {
    const MemoryModel::OpInfo& op = model.ops[order[i]];
    bool only_feeds_moving = !op.outputs.empty();
    for (int32_t t : op.outputs) {
      only_feeds_moving = only_feeds_moving && !model.tensors[t].live_at_end &&
                          !model.tensors[t].consumers.empty();
      for (int32_t consumer : model.tensors[t].consumers) {
        only_feeds_moving = only_feeds_moving && moving[consumer];
      }
    }
    moving[order[i]] = only_feeds_moving;
  }
  for (int32_t i = from + 1; i <= to; ++i) {
    for (int32_t t : model.ops[order[i]].inputs) {
      const int32_t producer = model.tensors[t].producer;
      if (producer != kNoId && moving[producer]) moving[order[i]] = true;
    }
  }
  std::vector<int32_t> result, moved;
  for (int32_t i = 0; i <= to; ++i) (moving[order[i]] ? moved : result).push_back(order[i]);
  result.insert(result.end(), moved.begin(), moved.end());
  result.insert(result.end(), order.begin() + to + 1, order.end());
  return result;
}

// `order` with the op at `from` moved before step `s` (from > s), together
// with the ops between them it depends on, in their order.
std::vector<int32_t> Pull(const MemoryModel& model, const std::vector<int32_t>& order,
                          int32_t from, int32_t s) {
  std::vector<bool> needed(model.num_ops(), false);
  auto need_inputs = [&](int32_t op) {
    for (int32_t t : model.ops[op].inputs) {
      const int32_t producer = model.tensors[t].producer;
      if (producer != kNoId) needed[producer] = true;
    }
  };
  need_inputs(order[from]);
  std::vector<int32_t> stay, moved = {order[from]};
  for (int32_t i = from - 1; i >= s; --i) {
    const int32_t op = order[i];
    if (needed[op]) {
      need_inputs(op);
      moved.push_back(op);
    } else {
      stay.push_back(op);
    }
  }
  std::reverse(moved.begin(), moved.end());
  std::reverse(stay.begin(), stay.end());
  std::vector<int32_t> result(order.begin(), order.begin() + s);
  result.insert(result.end(), moved.begin(), moved.end());
  result.insert(result.end(), stay.begin(), stay.end());
  result.insert(result.end(), order.begin() + from + 1, order.end());
  return result;
}

// The step of the first op after `s` that reads a tensor of `block`
// (the order's length when none does).
int32_t FirstReaderAfter(const MemoryModel& model, const std::vector<int32_t>& order,
                         const ArenaBlock& block, int32_t s) {
  for (int32_t i = s + 1; i < static_cast<int32_t>(order.size()); ++i) {
    for (int32_t t : model.ops[order[i]].inputs) {
      if (std::find(block.tensors.begin(), block.tensors.end(), t) != block.tensors.end()) return i;
    }
  }
  return static_cast<int32_t>(order.size());
}

// The orders of step 2 (header), in the order tried.
std::vector<std::vector<int32_t>> Moves(const MemoryModel& model, const ScoredOrder& current) {
  const int32_t s = current.bad.step;
  std::vector<std::vector<int32_t>> moves;
  auto add = [&](std::vector<int32_t> order) {
    if (order != current.order && std::find(moves.begin(), moves.end(), order) == moves.end()) {
      moves.push_back(std::move(order));
    }
  };
  if (s < 0) return moves;
  for (int32_t b : current.bad.blocks) {
    const ArenaBlock& block = current.problem.arena.blocks[b];
    // Written before s: written after it instead, right after s or as late
    // as its first reader after s allows.
    if (block.first >= 0 && block.first < s) {
      add(Delay(model, current.order, block.first, s));
      const int32_t reader = FirstReaderAfter(model, current.order, block, s);
      if (reader - 1 > s) add(Delay(model, current.order, block.first, reader - 1));
    }
    // Read after s: its last reader before s, so it dies before it.
    if (block.last > s && block.last < static_cast<int32_t>(current.order.size())) {
      add(Pull(model, current.order, block.last, s));
    }
  }
  return moves;
}

}  // namespace

PoolOrderRepair RepairOrderForPools(const Graph& graph, const MemoryModel& model,
                                    int64_t alignment, const PoolOptions& options,
                                    absl::Span<const std::vector<int32_t>> starts,
                                    int64_t max_orders) {
  PoolOrderRepair repair;
  for (size_t index = 0; index < starts.size(); ++index) {
    const std::vector<int32_t>& start = starts[index];
    if (repair.orders_tried >= max_orders) break;
    ++repair.orders_tried;
    std::optional<ScoredOrder> current = ScoreOrder(graph, model, alignment, options, start);
    if (!current) continue;
    bool gained = true;
    while (current->bad.found() && gained && repair.orders_tried < max_orders) {
      gained = false;
      for (std::vector<int32_t>& order : Moves(model, *current)) {
        if (repair.orders_tried >= max_orders) break;
        ++repair.orders_tried;
        std::optional<ScoredOrder> next =
            ScoreOrder(graph, model, alignment, options, std::move(order));
        if (next && next->Score() > current->Score()) {
          current = std::move(next);
          gained = true;
          break;
        }
      }
    }
    if (!current->bad.found()) {
      repair.order = std::move(current->order);
      repair.start = static_cast<int32_t>(index);
      return repair;
    }
  }
  return repair;
}

}  // namespace ordo
