#include "core/testing/test_graph.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <limits>
#include <string>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "core/memory/simulator.h"
#include "core/util/check.h"

namespace ordo::testing {
namespace {

absl::StatusOr<int64_t> ParseBytes(absl::string_view text, absl::string_view line) {
  int64_t bytes;
  if (!absl::SimpleAtoi(text, &bytes)) {
    return absl::InvalidArgumentError(absl::StrCat("bad byte count in: ", line));
  }
  return bytes;
}

}  // namespace

absl::StatusOr<Graph> ParseTestGraph(absl::string_view text, GraphLimits limits) {
  GraphBuilder builder("test", limits);
  for (absl::string_view raw : absl::StrSplit(text, '\n')) {
    absl::string_view line = raw.substr(0, raw.find('#'));
    std::vector<absl::string_view> words =
        absl::StrSplit(line, absl::ByAnyChar(" \t"), absl::SkipEmpty());
    if (words.empty()) continue;
    if ((words[0] == "input" || words[0] == "weight") && words.size() == 3) {
      absl::StatusOr<int64_t> bytes = ParseBytes(words[2], line);
      if (!bytes.ok()) return bytes.status();
      bool input = words[0] == "input";
      builder.AddTensorBytes(std::string(words[1]), *bytes,
                             input ? TensorKind::kInput : TensorKind::kWeight);
      if (input) builder.AddGraphInput(std::string(words[1]));
    } else if (words[0] == "output" && words.size() == 2) {
      builder.AddGraphOutput(std::string(words[1]));
    } else if (words[0] == "op" && words.size() >= 4) {
      auto arrow = std::find(words.begin(), words.end(), "->");
      if (arrow == words.end()) {
        return absl::InvalidArgumentError(absl::StrCat("no -> in: ", line));
      }
      std::vector<std::string> inputs(words.begin() + 3, arrow);
      std::vector<std::string> outputs;
      for (auto it = arrow + 1; it != words.end(); ++it) {
        std::vector<absl::string_view> parts = absl::StrSplit(*it, ':');
        if (parts.size() != 2) {
          return absl::InvalidArgumentError(absl::StrCat("bad output in: ", line));
        }
        absl::StatusOr<int64_t> bytes = ParseBytes(parts[1], line);
        if (!bytes.ok()) return bytes.status();
        builder.AddTensorBytes(std::string(parts[0]), *bytes);
        outputs.emplace_back(parts[0]);
      }
      builder.AddOp(std::string(words[1]), std::string(words[2]), inputs, outputs);
    } else {
      return absl::InvalidArgumentError(absl::StrCat("cannot parse: ", line));
    }
  }
  return std::move(builder).Build();
}

Graph TestGraph(absl::string_view text) {
  absl::StatusOr<Graph> graph = ParseTestGraph(text);
  if (!graph.ok()) {
    std::fprintf(stderr, "TestGraph: %s\n", graph.status().ToString().c_str());
    std::abort();
  }
  return *std::move(graph);
}

Graph RandomDag(std::mt19937_64& rng, const RandomDagOptions& options) {
  GraphBuilder builder("random");
  std::vector<std::string> available;
  std::vector<int32_t> uses;
  auto random_bytes = [&] {
    return std::uniform_int_distribution<int64_t>(options.min_bytes,
                                                  options.max_bytes)(rng);
  };
  for (int32_t i = 0; i < options.num_inputs; ++i) {
    std::string name = absl::StrCat("in", i);
    builder.AddTensorBytes(name, random_bytes(), TensorKind::kInput);
    builder.AddGraphInput(name);
    available.push_back(name);
    uses.push_back(0);
  }
  std::uniform_real_distribution<double> chance(0.0, 1.0);
  for (int32_t op = 0; op < options.num_ops; ++op) {
    int32_t max_inputs = std::min<int32_t>(options.max_inputs, available.size());
    int32_t num_inputs = std::uniform_int_distribution<int32_t>(1, max_inputs)(rng);
    std::vector<std::string> inputs;
    // Favour recent tensors so graphs are deep, not all fan-out from inputs.
    for (int32_t k = 0; k < num_inputs; ++k) {
      int32_t lo = std::max<int32_t>(0, static_cast<int32_t>(available.size()) - 4);
      int32_t pick = chance(rng) < 0.7
                         ? std::uniform_int_distribution<int32_t>(lo, available.size() - 1)(rng)
                         : std::uniform_int_distribution<int32_t>(0, available.size() - 1)(rng);
      inputs.push_back(available[pick]);
      ++uses[pick];
    }
    std::vector<std::string> outputs = {absl::StrCat("t", op)};
    if (chance(rng) < options.second_output_chance) {
      outputs.push_back(absl::StrCat("t", op, "b"));
    }
    std::string type = chance(rng) < options.inplace_chance
                           ? (inputs.size() > 1 ? "Add" : "Relu")
                           : "Conv";
    for (const std::string& out : outputs) {
      // In-place ops keep their input's size half the time, so the rule fires.
      int64_t bytes = random_bytes();
      builder.AddTensorBytes(out, bytes);
      available.push_back(out);
      uses.push_back(0);
    }
    builder.AddOp(absl::StrCat("op", op), type, inputs, outputs);
  }
  for (size_t i = options.num_inputs; i < available.size(); ++i) {
    if (uses[i] == 0) builder.AddGraphOutput(available[i]);
  }
  absl::StatusOr<Graph> graph = std::move(builder).Build();
  ORDO_CHECK(graph.ok());
  return *std::move(graph);
}

namespace {

struct BruteForce {
  const MemoryModel& model;
  std::vector<int32_t> order;
  std::vector<int32_t> missing_inputs;  // per op: unscheduled producers
  std::vector<bool> done;
  BruteForceResult best{std::numeric_limits<int64_t>::max(), {}, 0};

  void Recurse() {
    if (order.size() == model.ops.size()) {
      ++best.orders_seen;
      absl::StatusOr<int64_t> peak = SimulatePeak(model, order);
      ORDO_CHECK(peak.ok());
      if (*peak < best.peak_bytes) {
        best.peak_bytes = *peak;
        best.order = order;
      }
      return;
    }
    for (int32_t op = 0; op < model.num_ops(); ++op) {
      if (done[op] || missing_inputs[op] != 0) continue;
      done[op] = true;
      order.push_back(op);
      Adjust(op, -1);
      Recurse();
      Adjust(op, +1);
      order.pop_back();
      done[op] = false;
    }
  }

  void Adjust(int32_t op, int32_t delta) {
    for (int32_t t : model.ops[op].outputs) {
      for (int32_t consumer : model.tensors[t].consumers) missing_inputs[consumer] += delta;
    }
  }
};

}  // namespace

BruteForceResult BruteForceMinPeak(const MemoryModel& model) {
  BruteForce search{model, {}, std::vector<int32_t>(model.num_ops(), 0),
                    std::vector<bool>(model.num_ops(), false)};
  for (int32_t op = 0; op < model.num_ops(); ++op) {
    for (int32_t t : model.ops[op].outputs) {
      for (int32_t consumer : model.tensors[t].consumers) ++search.missing_inputs[consumer];
    }
  }
  search.Recurse();
  return search.best;
}

}  // namespace ordo::testing
