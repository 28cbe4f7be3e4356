#include "core/graph/canonical_graph.h"

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <type_traits>
#include <utility>

namespace ordo {
namespace {

// Fixed-width words and length-prefixed strings: the form is read by
// nobody, only compared, so it only has to be unambiguous.
class FormWriter {
 public:
  explicit FormWriter(std::string& out) : out_(out) {}
  void Word(int64_t value) {
    char bytes[sizeof(value)];
    std::memcpy(bytes, &value, sizeof(value));
    out_.append(bytes, sizeof(value));
  }
  void Text(absl::string_view text) {
    Word(static_cast<int64_t>(text.size()));
    out_.append(text.data(), text.size());
  }
  void Words(absl::Span<const int64_t> values) {
    Word(static_cast<int64_t>(values.size()));
    for (int64_t v : values) Word(v);
  }
  void Attribute(const ordo::Attribute& attribute) {
    Text(attribute.name);
    Word(static_cast<int64_t>(attribute.value.index()));
    std::visit(
        [this](const auto& value) {
          using T = std::decay_t<decltype(value)>;
          if constexpr (std::is_same_v<T, int64_t>) {
            Word(value);
          } else if constexpr (std::is_same_v<T, double>) {
            Double(value);
          } else if constexpr (std::is_same_v<T, std::string>) {
            Text(value);
          } else if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
            Words(value);
          } else {
            Word(static_cast<int64_t>(value.size()));
            for (double d : value) Double(d);
          }
        },
        attribute.value);
  }

 private:
  void Double(double value) {
    int64_t bits;
    std::memcpy(&bits, &value, sizeof(bits));
    Word(bits);
  }
  std::string& out_;
};

// Everything of a tensor but its name and its edges (those are the ops').
std::string TensorDescription(const Tensor& tensor) {
  std::string out;
  FormWriter writer(out);
  writer.Word(static_cast<int64_t>(tensor.kind));
  writer.Word(static_cast<int64_t>(tensor.dtype));
  writer.Words(tensor.dims);
  writer.Word(tensor.bytes);
  writer.Word(tensor.is_graph_output);
  // Only when set, so the keys of every other graph (and the part caches
  // that hold them) stay as they were.
  if (tensor.is_runtime_buffer) writer.Word(1);
  return out;
}

// Canonical ids: first touch by the ops, then untouched graph inputs and
// outputs in graph order, then the rest by description.
void NumberTensors(const Graph& graph, CanonicalGraph& canonical) {
  const int32_t n = graph.num_tensors();
  canonical.canonical_of_tensor.assign(n, kNoId);
  canonical.tensor_of_canonical.clear();
  canonical.tensor_of_canonical.reserve(n);
  auto touch = [&](TensorId t) {
    if (canonical.canonical_of_tensor[t] != kNoId) return;
    canonical.canonical_of_tensor[t] = static_cast<TensorId>(canonical.tensor_of_canonical.size());
    canonical.tensor_of_canonical.push_back(t);
  };
  for (const Op& op : graph.ops()) {
    for (TensorId t : op.inputs) touch(t);
    for (TensorId t : op.outputs) touch(t);
  }
  for (TensorId t : graph.inputs()) touch(t);
  for (TensorId t : graph.outputs()) touch(t);
  std::vector<std::pair<std::string, TensorId>> rest;
  for (TensorId t = 0; t < n; ++t) {
    if (canonical.canonical_of_tensor[t] == kNoId) {
      rest.emplace_back(TensorDescription(graph.tensor(t)), t);
    }
  }
  std::sort(rest.begin(), rest.end());
  for (const auto& entry : rest) touch(entry.second);
}

}  // namespace

CanonicalGraph CanonicalizeGraph(const Graph& graph) {
  CanonicalGraph canonical;
  NumberTensors(graph, canonical);
  const std::vector<TensorId>& id = canonical.canonical_of_tensor;
  std::string& form = canonical.form;
  form.reserve(64 * static_cast<size_t>(graph.num_ops() + graph.num_tensors()));
  FormWriter writer(form);
  writer.Word(graph.num_ops());
  writer.Word(graph.num_tensors());
  for (const Op& op : graph.ops()) {
    writer.Text(op.type);
    writer.Text(op.domain);
    writer.Word(static_cast<int64_t>(op.attributes.size()));
    for (const Attribute& attribute : op.attributes) writer.Attribute(attribute);
    writer.Word(static_cast<int64_t>(op.inputs.size()));
    for (TensorId t : op.inputs) writer.Word(id[t]);
    writer.Word(static_cast<int64_t>(op.outputs.size()));
    for (TensorId t : op.outputs) writer.Word(id[t]);
  }
  for (TensorId t : canonical.tensor_of_canonical) form += TensorDescription(graph.tensor(t));
  writer.Word(static_cast<int64_t>(graph.inputs().size()));
  for (TensorId t : graph.inputs()) writer.Word(id[t]);
  writer.Word(static_cast<int64_t>(graph.outputs().size()));
  for (TensorId t : graph.outputs()) writer.Word(id[t]);
  return canonical;
}

}  // namespace ordo
