#include "core/schedule/chain_symmetry.h"

#include <algorithm>
#include <array>
#include <tuple>
#include <utility>

#include "absl/types/span.h"

namespace ordo {
namespace {

// next[u] = w when u's one output is read by w alone, is not a graph
// output, and w has no other input of that kind; kNoId otherwise.
std::vector<int32_t> ChainSuccessors(const MemoryModel& model) {
  const int32_t n = model.num_ops();
  std::vector<int32_t> next(n, kNoId);
  std::vector<int32_t> links_in(n, 0);
  for (int32_t op = 0; op < n; ++op) {
    const std::vector<int32_t>& outputs = model.ops[op].outputs;
    if (outputs.size() != 1) continue;
    const MemoryModel::TensorInfo& out = model.tensors[outputs[0]];
    if (out.live_at_end || out.consumers.size() != 1) continue;
    next[op] = out.consumers[0];
    ++links_in[out.consumers[0]];
  }
  for (int32_t op = 0; op < n; ++op) {
    if (next[op] != kNoId && links_in[next[op]] != 1) next[op] = kNoId;
  }
  return next;
}

// What a swap of two chains must preserve of one of an op's inputs: a
// tensor others read too stays itself; one only this op reads maps to the
// other chain's, so only its size, producer and lifetime count.
using InputKey = std::array<int64_t, 4>;
InputKey KeyOfInput(const MemoryModel& model, int32_t op, int32_t tensor) {
  const MemoryModel::TensorInfo& info = model.tensors[tensor];
  if (info.consumers.size() == 1 && info.consumers[0] == op) {
    return {2, info.bytes, info.producer, info.live_at_end ? 1 : 0};
  }
  return {1, tensor, 0, 0};
}

// The chain's signature: equal for two chains exactly when swapping them,
// position by position, maps the memory model onto itself (header).
void ChainKey(const MemoryModel& model, absl::Span<const int32_t> chain,
              std::vector<int64_t>& key) {
  key.assign(1, static_cast<int64_t>(chain.size()));
  std::vector<InputKey> inputs;
  int32_t link = kNoId;  // the previous op's output
  for (size_t i = 0; i < chain.size(); ++i) {
    const MemoryModel::OpInfo& op = model.ops[chain[i]];
    // Shared inputs and inputs of its own, sorted: their order is no part
    // of the memory model.
    inputs.clear();
    for (int32_t tensor : op.inputs) {
      if (tensor != link) inputs.push_back(KeyOfInput(model, chain[i], tensor));
    }
    std::sort(inputs.begin(), inputs.end());
    key.push_back(static_cast<int64_t>(inputs.size()));
    for (const InputKey& input : inputs) key.insert(key.end(), input.begin(), input.end());
    if (op.inplace_input == kNoId) {
      key.push_back(0);
    } else if (op.inplace_input == link) {
      key.push_back(3);
    } else {
      const InputKey input = KeyOfInput(model, chain[i], op.inplace_input);
      key.insert(key.end(), input.begin(), input.end());
    }
    key.push_back(static_cast<int64_t>(op.outputs.size()));
    for (int32_t tensor : op.outputs) {
      const MemoryModel::TensorInfo& out = model.tensors[tensor];
      key.insert(key.end(), {out.bytes, out.live_at_end ? 1 : 0});
      if (i + 1 < chain.size()) continue;  // read by the next op only
      key.push_back(static_cast<int64_t>(out.consumers.size()));
      key.insert(key.end(), out.consumers.begin(), out.consumers.end());
    }
    link = op.outputs.size() == 1 ? op.outputs[0] : kNoId;
  }
}

// Edges between consecutive chains of `group` (ascending first ops), at
// each position where the ids ascend.
void AppendEdges(absl::Span<const absl::Span<const int32_t>> group, std::vector<OrderEdge>& edges) {
  for (size_t j = 1; j < group.size(); ++j) {
    for (size_t i = 0; i < group[j].size(); ++i) {
      if (group[j - 1][i] < group[j][i]) edges.push_back({group[j - 1][i], group[j][i]});
    }
  }
}

}  // namespace

std::vector<OrderEdge> InterchangeableChainEdges(const MemoryModel& model) {
  const int32_t n = model.num_ops();
  const std::vector<int32_t> next = ChainSuccessors(model);
  std::vector<bool> has_prev(n, false);
  for (int32_t op = 0; op < n; ++op) {
    if (next[op] != kNoId) has_prev[next[op]] = true;
  }
  // The chains, as runs of one array in ascending first op.
  std::vector<int32_t> chain_ops, chain_begin{0};
  for (int32_t head = 0; head < n; ++head) {
    if (has_prev[head]) continue;
    for (int32_t op = head; op != kNoId; op = next[op]) chain_ops.push_back(op);
    chain_begin.push_back(static_cast<int32_t>(chain_ops.size()));
  }
  const auto chain = [&](size_t c) {
    return absl::MakeConstSpan(chain_ops).subspan(chain_begin[c],
                                                  chain_begin[c + 1] - chain_begin[c]);
  };
  // Signatures are compared only among chains of one length whose last
  // op writes a first output of one size read first by one op: most chains
  // of a model are alike no other, and this costs no signature for them.
  struct Sketch {
    int32_t length;
    int32_t reader;
    int64_t bytes;
    int32_t chain;
    auto tie() const { return std::tie(length, reader, bytes, chain); }
  };
  std::vector<Sketch> sketches;
  for (size_t c = 0; c + 1 < chain_begin.size(); ++c) {
    const absl::Span<const int32_t> ops = chain(c);
    const std::vector<int32_t>& outputs = model.ops[ops.back()].outputs;
    Sketch sketch{static_cast<int32_t>(ops.size()), kNoId, -1, static_cast<int32_t>(c)};
    if (!outputs.empty()) {
      const MemoryModel::TensorInfo& out = model.tensors[outputs[0]];
      sketch.bytes = out.bytes;
      if (!out.consumers.empty()) sketch.reader = out.consumers[0];
    }
    sketches.push_back(sketch);
  }
  // Only chains that share their reader with another can be alike.
  std::vector<int32_t> chains_read_by(n + 1, 0);  // by reader + 1
  for (const Sketch& sketch : sketches) ++chains_read_by[sketch.reader + 1];
  sketches.erase(std::remove_if(sketches.begin(), sketches.end(),
                                [&](const Sketch& s) { return chains_read_by[s.reader + 1] < 2; }),
                 sketches.end());
  std::sort(sketches.begin(), sketches.end(),
            [](const Sketch& a, const Sketch& b) { return a.tie() < b.tie(); });
  std::vector<OrderEdge> edges;
  std::vector<std::pair<std::vector<int64_t>, int32_t>> keyed;  // signature, chain
  std::vector<absl::Span<const int32_t>> group;
  for (size_t begin = 0, end; begin < sketches.size(); begin = end) {
    const Sketch& first = sketches[begin];
    for (end = begin + 1;
         end < sketches.size() && sketches[end].length == first.length &&
         sketches[end].reader == first.reader && sketches[end].bytes == first.bytes;
         ++end) {
    }
    if (end - begin < 2) continue;
    keyed.resize(end - begin);
    for (size_t k = begin; k < end; ++k) {
      keyed[k - begin].second = sketches[k].chain;
      ChainKey(model, chain(sketches[k].chain), keyed[k - begin].first);
    }
    std::sort(keyed.begin(), keyed.end());  // alike chains adjacent, by first op
    for (size_t g = 0, g_end; g < keyed.size(); g = g_end) {
      group.clear();
      for (g_end = g; g_end < keyed.size() && keyed[g_end].first == keyed[g].first; ++g_end) {
        group.push_back(chain(keyed[g_end].second));
      }
      AppendEdges(group, edges);
    }
  }
  std::sort(edges.begin(), edges.end(), [](const OrderEdge& a, const OrderEdge& b) {
    return std::pair(a.after, a.before) < std::pair(b.after, b.before);
  });
  return edges;
}

}  // namespace ordo
