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

MemoryModel TestModel(const Graph& graph, const MemoryOptions& options) {
  absl::StatusOr<MemoryModel> model = BuildMemoryModel(graph, options);
  if (!model.ok()) {
    std::fprintf(stderr, "TestModel: %s\n", model.status().ToString().c_str());
    std::abort();
  }
  return *std::move(model);
}

MemoryModel TestModel(absl::string_view text, const MemoryOptions& options) {
  return TestModel(TestGraph(text), options);
}

Graph RandomDag(std::mt19937_64& rng, const RandomDagOptions& options) {
  GraphBuilder builder("random");
  std::vector<std::string> available;
  std::vector<int64_t> sizes;  // bytes, parallel to `available`
  std::vector<int32_t> uses;
  auto random_bytes = [&] {
    return std::uniform_int_distribution<int64_t>(options.min_bytes,
                                                  options.max_bytes)(rng);
  };
  for (int32_t i = 0; i < options.num_inputs; ++i) {
    std::string name = absl::StrCat("in", i);
    sizes.push_back(random_bytes());
    builder.AddTensorBytes(name, sizes.back(), TensorKind::kInput);
    builder.AddGraphInput(name);
    available.push_back(name);
    uses.push_back(0);
  }
  std::uniform_real_distribution<double> chance(0.0, 1.0);
  for (int32_t op = 0; op < options.num_ops; ++op) {
    int32_t max_inputs = std::min<int32_t>(options.max_inputs, available.size());
    int32_t num_inputs = std::uniform_int_distribution<int32_t>(1, max_inputs)(rng);
    std::vector<std::string> inputs;
    int64_t first_input_bytes = 0;
    // Favour recent tensors so graphs are deep, not all fan-out from inputs.
    for (int32_t k = 0; k < num_inputs; ++k) {
      int32_t lo = std::max<int32_t>(0, static_cast<int32_t>(available.size()) - 4);
      int32_t pick = chance(rng) < 0.7
                         ? std::uniform_int_distribution<int32_t>(lo, available.size() - 1)(rng)
                         : std::uniform_int_distribution<int32_t>(0, available.size() - 1)(rng);
      if (inputs.empty()) first_input_bytes = sizes[pick];
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
    const bool inplace_type = type != "Conv" && outputs.size() == 1;
    for (const std::string& out : outputs) {
      // In-place ops keep their input's size half the time, so the rule fires.
      int64_t bytes = inplace_type && chance(rng) < 0.5 ? first_input_bytes : random_bytes();
      builder.AddTensorBytes(out, bytes);
      sizes.push_back(bytes);
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

Graph RandomHourglass(std::mt19937_64& rng, const RandomHourglassOptions& options) {
  GraphBuilder builder("hourglass");
  std::uniform_real_distribution<double> chance(0.0, 1.0);
  auto random_bytes = [&] {
    return std::uniform_int_distribution<int64_t>(options.min_bytes, options.max_bytes)(rng);
  };
  struct Available {
    std::string name;
    int64_t bytes;
    bool read;
  };
  std::vector<Available> earlier;  // tensors of finished cells
  std::string cell_input = "in";
  int64_t cell_input_bytes = random_bytes();
  builder.AddTensorBytes(cell_input, cell_input_bytes, TensorKind::kInput);
  builder.AddGraphInput(cell_input);
  int32_t next_op = 0;
  for (int32_t cell = 0; cell < options.num_cells; ++cell) {
    std::vector<Available> cell_tensors = {{cell_input, cell_input_bytes, false}};
    const int32_t ops = std::uniform_int_distribution<int32_t>(1, options.max_cell_ops)(rng);
    for (int32_t i = 0; i < ops; ++i) {
      const int32_t size = static_cast<int32_t>(cell_tensors.size());
      const int32_t reads = std::uniform_int_distribution<int32_t>(1, std::min(size, 3))(rng);
      std::vector<std::string> inputs;
      int64_t first_bytes = 0;
      for (int32_t k = 0; k < reads; ++k) {
        const int32_t lo = std::max(0, size - 3);
        Available& pick = cell_tensors[std::uniform_int_distribution<int32_t>(lo, size - 1)(rng)];
        if (inputs.empty()) first_bytes = pick.bytes;
        pick.read = true;
        inputs.push_back(pick.name);
      }
      if (!earlier.empty() && chance(rng) < options.skip_chance) {
        Available& skip = earlier[rng() % earlier.size()];
        skip.read = true;
        inputs.push_back(skip.name);
      }
      const bool two = chance(rng) < options.second_output_chance;
      const bool inplace = !two && chance(rng) < options.inplace_chance;
      std::vector<std::string> outputs;
      for (int32_t k = 0; k < (two ? 2 : 1); ++k) {
        Available out{absl::StrCat("t", next_op, k == 0 ? "" : "b"),
                      inplace && chance(rng) < 0.5 ? first_bytes : random_bytes(), false};
        builder.AddTensorBytes(out.name, out.bytes);
        if (chance(rng) < options.output_chance) builder.AddGraphOutput(out.name);
        outputs.push_back(out.name);
        cell_tensors.push_back(out);
      }
      builder.AddOp(absl::StrCat("op", next_op++), inplace ? "Relu" : "Conv", inputs, outputs);
    }
    std::vector<std::string> unread;
    for (Available& t : cell_tensors) {
      if (!t.read) unread.push_back(t.name);
      t.read = true;
    }
    cell_input = absl::StrCat("join", cell);
    cell_input_bytes = random_bytes();
    builder.AddTensorBytes(cell_input, cell_input_bytes);
    builder.AddOp(absl::StrCat("op", next_op++), "Concat", unread, {cell_input});
    earlier.insert(earlier.end(), cell_tensors.begin(), cell_tensors.end());
  }
  builder.AddGraphOutput(cell_input);
  absl::StatusOr<Graph> graph = std::move(builder).Build();
  ORDO_CHECK(graph.ok());
  return *std::move(graph);
}

Graph ManyBranches(int branches) {
  std::string text = "input x 1\n";
  std::string join = "op join Concat";
  for (int i = 0; i < branches; ++i) {
    absl::StrAppend(&text, "op a", i, " Conv x -> p", i, ":10\n");
    absl::StrAppend(&text, "op b", i, " Conv p", i, " -> r", i, ":1\n");
    absl::StrAppend(&join, " r", i);
  }
  absl::StrAppend(&text, join, " -> y:1\noutput y\n");
  return TestGraph(text);
}

GraphBuilder ManyConstantOutputs(int64_t constants) {
  GraphBuilder builder("g");
  builder.AddTensorBytes("x", 4, TensorKind::kInput);
  builder.AddTensorBytes("y", 4);
  builder.AddOp("relu", "Relu", {"x"}, {"y"});
  builder.AddGraphInput("x");
  builder.AddGraphOutput("y");
  for (int64_t i = 0; i < constants; ++i) {
    const std::string name = absl::StrCat("c", i);
    builder.AddTensorBytes(name, 4, TensorKind::kWeight);
    builder.AddGraphOutput(name);
  }
  return builder;
}

Graph SummedBranches(int branches) {
  std::string text = "input x 4\n";
  std::string sum = "op join Sum";
  for (int i = 0; i < branches; ++i) {
    absl::StrAppend(&text, "op c", i, " Conv x -> c", i, ":10\n", "op r", i, " Relu c", i, " -> r",
                    i, ":10\n", "op o", i, " Conv r", i, " -> o", i, ":1\n");
    absl::StrAppend(&sum, " o", i);
  }
  return TestGraph(absl::StrCat(text, sum, " -> y:1\noutput y\n"));
}

Graph DistinctBranches(int branches) {
  std::string text = "input x 1\n";
  std::string join = "op join Concat";
  for (int i = 0; i < branches; ++i) {
    absl::StrAppend(&text, "op a", i, " Conv x -> p", i, ":1000\n");
    absl::StrAppend(&text, "op b", i, " Conv p", i, " -> r", i, ":", 10 + i, "\n");
    absl::StrAppend(&join, " r", i);
  }
  absl::StrAppend(&text, join, " -> y:1\noutput y\n");
  return TestGraph(text);
}

std::vector<int32_t> RandomTopologicalOrder(const MemoryModel& model, std::mt19937_64& rng) {
  std::vector<int32_t> missing(model.num_ops(), 0);
  for (int32_t op = 0; op < model.num_ops(); ++op) {
    for (int32_t t : model.ops[op].inputs) {
      if (model.tensors[t].producer != kNoId) ++missing[op];
    }
  }
  std::vector<int32_t> ready, order;
  for (int32_t op = 0; op < model.num_ops(); ++op) {
    if (missing[op] == 0) ready.push_back(op);
  }
  while (!ready.empty()) {
    const size_t pick = std::uniform_int_distribution<size_t>(0, ready.size() - 1)(rng);
    const int32_t op = ready[pick];
    ready.erase(ready.begin() + pick);
    order.push_back(op);
    for (int32_t t : model.ops[op].outputs) {
      for (int32_t consumer : model.tensors[t].consumers) {
        if (--missing[consumer] == 0) ready.push_back(consumer);
      }
    }
  }
  return order;
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
