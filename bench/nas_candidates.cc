#include "bench/nas_candidates.h"

#include <string>
#include <utility>

#include "absl/strings/str_cat.h"

namespace ordo::bench {
namespace {

constexpr const char* kOpTypes[] = {"Conv", "MaxPool", "AveragePool", "Identity"};
constexpr int32_t kNumOpTypes = 4;

v1::Op* AddOp(v1::Graph& graph, std::string name, const char* type, std::vector<std::string> inputs,
              std::string output) {
  v1::Op* op = graph.add_ops();
  op->set_name(std::move(name));
  op->set_type(type);
  for (std::string& input : inputs) op->add_inputs(std::move(input));
  op->add_outputs(std::move(output));
  return op;
}

}  // namespace

NasCandidateStream::NasCandidateStream(Options options) : options_(options), rng_(options.seed) {
  for (int32_t i = 0; i < options_.cell_types; ++i) pool_.push_back(RandomCell());
}

NasCandidateStream::Cell NasCandidateStream::RandomCell() {
  Cell cell(options_.blocks);
  for (int32_t b = 0; b < options_.blocks; ++b) {
    // Inputs -1 (the cell input) .. b-1; ops uniform over kOpTypes.
    std::uniform_int_distribution<int32_t> input(-1, b - 1);
    std::uniform_int_distribution<int32_t> op(0, kNumOpTypes - 1);
    for (int i = 0; i < 2; ++i) {
      cell[b].input[i] = input(rng_);
      cell[b].op[i] = op(rng_);
    }
  }
  return cell;
}

void NasCandidateStream::AddActivation(v1::Graph& graph, const std::string& name) const {
  v1::Tensor* tensor = graph.add_tensors();
  tensor->set_name(name);
  tensor->set_dtype(v1::DATA_TYPE_FLOAT32);
  for (int64_t dim : {int64_t{1}, options_.channels, options_.size, options_.size}) {
    tensor->add_dims(dim);
  }
}

std::string NasCandidateStream::AppendCell(v1::Graph& graph, const Cell& cell,
                                           const std::string& prefix,
                                           const std::string& input) const {
  std::vector<std::string> block_outputs;
  std::vector<bool> read(cell.size(), false);
  for (size_t b = 0; b < cell.size(); ++b) {
    std::vector<std::string> branch_outputs;
    for (int i = 0; i < 2; ++i) {
      const int32_t source = cell[b].input[i];
      if (source >= 0) read[source] = true;
      const std::string& from = source < 0 ? input : block_outputs[source];
      std::string out = absl::StrCat(prefix, "b", b, "_", i);
      AddActivation(graph, out);
      AddOp(graph, out, kOpTypes[cell[b].op[i]], {from}, out);
      branch_outputs.push_back(std::move(out));
    }
    std::string sum = absl::StrCat(prefix, "b", b);
    AddActivation(graph, sum);
    AddOp(graph, sum, "Add", branch_outputs, sum);
    block_outputs.push_back(std::move(sum));
  }
  // Sum keeps the cell output at the shape of its input (a Concat would
  // grow it), so the next cell's key does not depend on this one.
  std::vector<std::string> unread;
  for (size_t b = 0; b < cell.size(); ++b) {
    if (!read[b]) unread.push_back(block_outputs[b]);
  }
  std::string out = absl::StrCat(prefix, "out");
  AddActivation(graph, out);
  AddOp(graph, out, "Sum", unread, out);
  return out;
}

v1::Graph NasCandidateStream::Next() {
  v1::Graph graph;
  graph.set_name(absl::StrCat("candidate", next_index_++));
  AddActivation(graph, "image");
  graph.mutable_tensors(0)->set_kind(v1::TENSOR_KIND_INPUT);
  graph.add_inputs("image");
  AddActivation(graph, "stem");
  AddOp(graph, "stem", "Conv", {"image"}, "stem");
  std::string previous = "stem";
  last_cells_.clear();
  std::uniform_int_distribution<int32_t> pick(0, options_.cell_types - 1);
  for (int32_t c = 0; c < options_.cells; ++c) {
    const int32_t type = pick(rng_);
    last_cells_.push_back(type);
    previous = AppendCell(graph, pool_[type], absl::StrCat("c", c, "_"), previous);
  }
  v1::Tensor* logits = graph.add_tensors();
  logits->set_name("pooled");
  logits->set_dtype(v1::DATA_TYPE_FLOAT32);
  for (int64_t dim : {int64_t{1}, options_.channels, int64_t{1}, int64_t{1}}) {
    logits->add_dims(dim);
  }
  logits->set_kind(v1::TENSOR_KIND_OUTPUT);
  AddOp(graph, "head", "GlobalAveragePool", {previous}, "pooled");
  graph.add_outputs("pooled");
  return graph;
}

}  // namespace ordo::bench
