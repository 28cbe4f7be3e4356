#include "bench/darts_candidates.h"

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"

namespace ordo::bench {
namespace {

enum Primitive : int32_t {
  kSepConv3,
  kSepConv5,
  kDilConv3,
  kDilConv5,
  kMaxPool3,
  kAvgPool3,
  kSkip,
  kNumPrimitives
};

// Appends ops and tensors to one Graph; shapes are [1, C, H, H], float32.
class NetworkWriter {
 public:
  NetworkWriter(v1::Graph& graph, std::string prefix)
      : graph_(graph), prefix_(std::move(prefix)) {}

  struct Value {
    std::string name;
    int64_t channels = 0;
    int64_t size = 0;
  };

  Value Input(const std::string& name, int64_t channels, int64_t size) {
    Value v{prefix_ + name, channels, size};
    AddTensor(v.name, {1, channels, size, size});
    graph_.add_inputs(v.name);
    return v;
  }

  // One op `type` at `path` (a module path as the ONNX export names it)
  // reading `inputs` and writing a [1, channels, size, size] tensor.
  Value Op(const std::string& path, const char* type, const std::vector<const Value*>& inputs,
           int64_t channels, int64_t size) {
    const std::string name = absl::StrCat(prefix_, path, "/", type);
    Value out{name + "_output_0", channels, size};
    AddTensor(out.name, {1, channels, size, size});
    v1::Op* op = graph_.add_ops();
    op->set_name(name);
    op->set_type(type);
    for (const Value* input : inputs) op->add_inputs(input->name);
    op->add_outputs(out.name);
    return out;
  }

  void Output(const std::string& path, const Value& features, int64_t classes) {
    const Value pooled = Op(path + "/global_pooling", "GlobalAveragePool", {&features},
                            features.channels, 1);
    const std::string name = prefix_ + "logits";
    AddTensor(name, {1, classes});
    v1::Op* op = graph_.add_ops();
    op->set_name(prefix_ + path + "/classifier/Gemm");
    op->set_type("Gemm");
    op->add_inputs(pooled.name);
    op->add_outputs(name);
    graph_.add_outputs(name);
  }

 private:
  void AddTensor(const std::string& name, std::initializer_list<int64_t> dims) {
    v1::Tensor* tensor = graph_.add_tensors();
    tensor->set_name(name);
    tensor->set_dtype(v1::DATA_TYPE_FLOAT32);
    for (int64_t d : dims) tensor->add_dims(d);
  }

  v1::Graph& graph_;
  std::string prefix_;
};

using Value = NetworkWriter::Value;

// DARTS' FactorizedReduce: ReLU, two strided 1x1 Convs (one on the input
// shifted by a pixel), Concat: halves H and W.
Value FactorizedReduce(NetworkWriter& w, const std::string& path, const Value& in,
                       int64_t channels) {
  const int64_t size = in.size / 2;
  const Value relu = w.Op(path, "Relu", {&in}, in.channels, in.size);
  const Value a = w.Op(path + "/conv_1", "Conv", {&relu}, channels / 2, size);
  const Value shifted = w.Op(path, "Slice", {&relu}, in.channels, in.size - 1);
  const Value b = w.Op(path + "/conv_2", "Conv", {&shifted}, channels - channels / 2, size);
  return w.Op(path, "Concat", {&a, &b}, channels, size);
}

Value ReluConv(NetworkWriter& w, const std::string& path, const Value& in, int64_t channels) {
  const Value relu = w.Op(path + "/op/op.0", "Relu", {&in}, in.channels, in.size);
  return w.Op(path + "/op/op.1", "Conv", {&relu}, channels, in.size);
}

// ReLU, depthwise Conv (stride `stride`), 1x1 Conv: one half of a sep_conv,
// or a whole dil_conv.
Value ReluDwPw(NetworkWriter& w, const std::string& path, int first, const Value& in,
               int64_t stride) {
  const int64_t size = in.size / stride;
  const Value relu = w.Op(absl::StrCat(path, "/op/op.", first), "Relu", {&in}, in.channels, in.size);
  const Value dw =
      w.Op(absl::StrCat(path, "/op/op.", first + 1), "Conv", {&relu}, in.channels, size);
  return w.Op(absl::StrCat(path, "/op/op.", first + 2), "Conv", {&dw}, in.channels, size);
}

Value EdgeOp(NetworkWriter& w, const std::string& path, int32_t primitive, const Value& in,
           int64_t stride) {
  switch (primitive) {
    case kSepConv3:
    case kSepConv5: {
      const Value half = ReluDwPw(w, path, 0, in, stride);
      return ReluDwPw(w, path, 4, half, 1);
    }
    case kDilConv3:
    case kDilConv5:
      return ReluDwPw(w, path, 0, in, stride);
    case kMaxPool3:
      return w.Op(path, "MaxPool", {&in}, in.channels, in.size / stride);
    case kAvgPool3:
      return w.Op(path, "AveragePool", {&in}, in.channels, in.size / stride);
    default:
      return stride == 1 ? in : FactorizedReduce(w, path, in, in.channels);
  }
}

bool Reads(const DartsCandidateStream::Cell& cell, int32_t input) {
  return std::any_of(cell.begin(), cell.end(),
                     [&](const DartsCandidateStream::Edge& e) { return e.input == input; });
}

int32_t SepConvs(const DartsCandidateStream::Genotype& g) {
  int32_t n = 0;
  for (const auto* cell : {&g.normal, &g.reduce}) {
    for (const DartsCandidateStream::Edge& e : *cell) {
      n += e.op == kSepConv3 || e.op == kSepConv5;
    }
  }
  return n;
}

// What a cell's ops are a function of: its genotype, whether it reduces,
// the shapes of its inputs (which also say whether the cell before reduced)
// and its channel count.
std::string CellKey(const DartsCandidateStream::Cell& cell, bool reduction, const Value& s0,
                    const Value& s1, int64_t channels) {
  std::string key = absl::StrCat(reduction ? "reduce" : "normal", " c", channels, " in ",
                                 s0.channels, "x", s0.size, ",", s1.channels, "x", s1.size, " :");
  for (const DartsCandidateStream::Edge& e : cell) absl::StrAppend(&key, " ", e.op, "/", e.input);
  return key;
}

}  // namespace

DartsCandidateStream::DartsCandidateStream(Options options)
    : options_(options), rng_(options.seed) {}

v1::Graph DartsCandidateStream::Build(const Genotype& genotype, const Options& options,
                                      const std::string& name_prefix) {
  return BuildNetwork(genotype, options, name_prefix).graph;
}

DartsCandidateStream::Network DartsCandidateStream::BuildNetwork(const Genotype& genotype,
                                                                 const Options& options,
                                                                 const std::string& name_prefix) {
  Network network;
  v1::Graph& graph = network.graph;
  // Closes the segment that began at op `first` under `key`.
  const auto close_segment = [&](int32_t first, std::string key, bool cell) {
    network.segments.push_back({std::move(key), first, graph.ops_size() - first, cell});
  };
  NetworkWriter w(graph, name_prefix);
  const Value image = w.Input("input", 3, options.image_size);
  const Value stem = w.Op("/stem/stem.0", "Conv", {&image}, 3 * options.channels, image.size);
  close_segment(0, absl::StrCat("stem ", options.image_size, " ", options.channels), false);
  Value s0 = stem, s1 = stem;
  int64_t channels = options.channels;
  bool reduction_prev = false;
  for (int32_t k = 0; k < options.cells; ++k) {
    const bool reduction = k == options.cells / 3 || k == 2 * options.cells / 3;
    if (reduction) channels *= 2;
    const Cell& cell = reduction ? genotype.reduce : genotype.normal;
    const std::string path = absl::StrCat("/cells.", k);
    const int32_t first_op = graph.ops_size();
    // The export drops a preprocessing whose output no edge reads.
    std::vector<Value> states(2);
    if (Reads(cell, 0)) {
      states[0] = reduction_prev ? FactorizedReduce(w, path + "/preprocess0", s0, channels)
                                 : ReluConv(w, path + "/preprocess0", s0, channels);
    }
    if (Reads(cell, 1)) states[1] = ReluConv(w, path + "/preprocess1", s1, channels);
    const int64_t size = reduction ? s1.size / 2 : s1.size;
    std::vector<const Value*> nodes;
    for (int node = 0; node < kNodes; ++node) {
      Value edges[2];
      for (int i = 0; i < 2; ++i) {
        const int e = 2 * node + i;
        const Edge& edge = cell[e];
        const int64_t stride = reduction && edge.input < 2 ? 2 : 1;
        edges[i] = EdgeOp(w, absl::StrCat(path, "/_ops.", e), edge.op,
                        states[static_cast<size_t>(edge.input)], stride);
      }
      states.push_back(w.Op(absl::StrCat(path, "/node.", node), "Add", {&edges[0], &edges[1]},
                            channels, size));
    }
    for (int node = 0; node < kNodes; ++node) nodes.push_back(&states[2 + node]);
    const Value out = w.Op(path, "Concat", nodes, kNodes * channels, size);
    close_segment(first_op, CellKey(cell, reduction, s0, s1, channels), true);
    s0 = std::move(s1);
    s1 = out;
    reduction_prev = reduction;
  }
  const int32_t head_first_op = graph.ops_size();
  w.Output("", s1, 10);
  close_segment(head_first_op, absl::StrCat("head ", s1.channels, "x", s1.size), false);
  return network;
}

DartsCandidateStream::Genotype DartsCandidateStream::Random() {
  Genotype g;
  for (Cell* cell : {&g.normal, &g.reduce}) {
    for (int e = 0; e < 2 * kNodes; ++e) {
      std::uniform_int_distribution<int32_t> op(0, kNumPrimitives - 1);
      std::uniform_int_distribution<int32_t> input(0, e / 2 + 1);
      (*cell)[e] = {op(rng_), input(rng_)};
    }
  }
  return g;
}

void DartsCandidateStream::MutateEdge(Cell& cell) {
  const int e = std::uniform_int_distribution<int>(0, 2 * kNodes - 1)(rng_);
  Edge& edge = cell[e];
  if (std::bernoulli_distribution(0.5)(rng_)) {
    // Another op: draw from the others.
    const int32_t other = std::uniform_int_distribution<int32_t>(0, kNumPrimitives - 2)(rng_);
    edge.op = other >= edge.op ? other + 1 : other;
  } else {
    const int32_t choices = e / 2 + 2;  // node e/2 reads the 2 inputs or earlier nodes
    const int32_t other = std::uniform_int_distribution<int32_t>(0, choices - 2)(rng_);
    edge.input = other >= edge.input ? other + 1 : other;
  }
}

DartsCandidateStream::Genotype DartsCandidateStream::Mutate(Genotype genotype) {
  const int mutations = std::bernoulli_distribution(0.5)(rng_) ? 2 : 1;
  for (int m = 0; m < mutations; ++m) {
    MutateEdge(std::bernoulli_distribution(0.5)(rng_) ? genotype.normal : genotype.reduce);
  }
  return genotype;
}

v1::Graph DartsCandidateStream::Next() {
  const int64_t index = next_index_++;
  std::uniform_int_distribution<size_t> member(0, population_.empty() ? 0 : population_.size() - 1);
  if (static_cast<int32_t>(population_.size()) < options_.population) {
    last_ = Random();
    population_.push_back(last_);
  } else if (std::bernoulli_distribution(options_.resend_probability)(rng_)) {
    last_ = population_[member(rng_)];
  } else {
    const Genotype* best = nullptr;
    for (int32_t t = 0; t < options_.tournament; ++t) {
      const Genotype& candidate = population_[member(rng_)];
      if (best == nullptr || SepConvs(candidate) > SepConvs(*best)) best = &candidate;
    }
    last_ = Mutate(*best);
    population_.pop_front();
    population_.push_back(last_);
  }
  Network network =
      BuildNetwork(last_, options_, options_.rename ? absl::StrCat("k", index) : "");
  last_segments_ = std::move(network.segments);
  network.graph.set_name("main_graph");  // as torch.onnx.export names every graph
  return std::move(network.graph);
}

}  // namespace ordo::bench
