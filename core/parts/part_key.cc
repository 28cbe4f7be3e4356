#include "core/parts/part_key.h"

#include <algorithm>
#include <numeric>
#include <vector>

#include "absl/strings/str_format.h"

namespace ordo {
namespace {

// splitmix64's finalizer: a bijective 64-bit mix with good avalanche.
uint64_t Mix(uint64_t x) {
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ULL;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebULL;
  x ^= x >> 31;
  return x;
}

// Two independent 64-bit lanes over a stream of words. Stable across
// processes and builds (unlike absl::Hash, which is seeded per process), as
// a key shared through Redis must be.
class Hasher128 {
 public:
  void Add(uint64_t word) {
    ++count_;
    a_ = Mix(a_ ^ (word + 0x9e3779b97f4a7c15ULL * count_));
    b_ = Mix((b_ + word) * 0xff51afd7ed558ccdULL ^ (b_ >> 17));
  }
  void AddString(absl::string_view s) {
    Add(s.size());
    for (unsigned char c : s) Add(c);
  }
  std::string Hex() const {
    return absl::StrFormat("%016x%016x", Mix(a_ ^ count_), Mix(b_ + count_));
  }

 private:
  uint64_t a_ = 0x243f6a8885a308d3ULL;
  uint64_t b_ = 0x13198a2e03707344ULL;
  uint64_t count_ = 0;
};

}  // namespace

PartKey CanonicalPartKey(const MemoryModel& model, absl::string_view scheduler) {
  const int32_t num_tensors = model.num_tensors();
  // Canonical tensor ids: first touch by the ops, then untouched tensors.
  std::vector<int32_t> canonical(num_tensors, -1);
  std::vector<int32_t> members;  // canonical id -> tensor id
  auto touch = [&](int32_t t) {
    if (t >= 0 && t < num_tensors && canonical[t] < 0) {
      canonical[t] = static_cast<int32_t>(members.size());
      members.push_back(t);
    }
  };
  for (const MemoryModel::OpInfo& op : model.ops) {
    for (int32_t t : op.inputs) touch(t);
    for (int32_t t : op.outputs) touch(t);
  }
  std::vector<int32_t> untouched;
  for (int32_t t = 0; t < num_tensors; ++t) {
    if (canonical[t] < 0 && model.tensors[t].bytes != 0) untouched.push_back(t);
  }
  std::stable_sort(untouched.begin(), untouched.end(), [&](int32_t x, int32_t y) {
    const auto& a = model.tensors[x];
    const auto& b = model.tensors[y];
    return std::make_pair(a.bytes, a.live_at_end) < std::make_pair(b.bytes, b.live_at_end);
  });
  for (int32_t t : untouched) touch(t);

  int64_t scale = model.constant_bytes > 0 ? model.constant_bytes : 0;
  for (int32_t t : members) scale = std::gcd(scale, model.tensors[t].bytes);
  if (scale <= 0) scale = 1;

  Hasher128 h;
  h.AddString(kPartAlgorithmVersion);
  h.AddString(scheduler);
  h.Add(model.options.inplace);
  h.Add(model.options.count_weights);
  h.Add(static_cast<uint64_t>(model.options.activation_element_bytes));
  h.Add(static_cast<uint64_t>(model.num_ops()));
  h.Add(members.size());
  std::vector<int32_t> ids;
  for (const MemoryModel::OpInfo& op : model.ops) {
    ids.clear();
    for (int32_t t : op.inputs) ids.push_back(canonical[t]);
    std::sort(ids.begin(), ids.end());
    h.Add(ids.size());
    for (int32_t id : ids) h.Add(static_cast<uint64_t>(id));
    h.Add(op.outputs.size());
    for (int32_t t : op.outputs) h.Add(static_cast<uint64_t>(canonical[t]));
    h.Add(static_cast<uint64_t>(op.inplace_input >= 0 && op.inplace_input < num_tensors
                                    ? canonical[op.inplace_input]
                                    : -1));
  }
  for (int32_t t : members) {
    const MemoryModel::TensorInfo& tensor = model.tensors[t];
    h.Add(static_cast<uint64_t>(tensor.bytes / scale));
    h.Add(static_cast<uint64_t>(tensor.producer));
    h.Add(tensor.consumers.size());
    for (int32_t op : tensor.consumers) h.Add(static_cast<uint64_t>(op));
    h.Add(tensor.live_at_end);
  }
  h.Add(static_cast<uint64_t>(model.constant_bytes / scale));
  return PartKey{h.Hex(), scale};
}

}  // namespace ordo
