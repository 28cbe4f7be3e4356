#include "core/traffic/traffic.h"

#include <limits>
#include <utility>

#include "absl/strings/str_cat.h"
#include "core/memory/simulator.h"

namespace ordo {
namespace {

constexpr int32_t kNever = std::numeric_limits<int32_t>::max();

// One run of the replacement policy over a schedule. Tensor state lives in
// dense vectors; the resident set is an unordered list with positions, so
// adding and removing are O(1) and choosing a victim is a scan.
class BeladySimulation {
 public:
  BeladySimulation(const MemoryModel& model, absl::Span<const int32_t> schedule,
                   const SimulationResult& simulation, const TrafficOptions& options)
      : model_(model),
        schedule_(schedule),
        simulation_(simulation),
        capacity_(options.on_chip_bytes),
        record_(options.record_residency) {}

  TrafficResult Run();

 private:
  int64_t Bytes(int32_t t) const { return model_.tensors[t].bytes; }
  int32_t NextUse(int32_t t) const {
    return next_[t] < use_begin_[t + 1] ? uses_[next_[t]] : kNever;
  }
  // Evicting t would add to write_bytes.
  bool CostsWrite(int32_t t) const {
    return NextUse(t) != kNever && !has_copy_[t] && !model_.tensors[t].live_at_end;
  }
  void IndexUses();
  void FixedCost();
  void Load(int32_t t);
  void Allocate(int32_t t);
  void Add(int32_t t);
  void Remove(int32_t t);
  void Evict(int32_t t);
  // Belady's choice among resident tensors (step tensors only if
  // `include_step`), or kNoId.
  int32_t Victim(int32_t step, bool include_step) const;
  void Step(int32_t step);

  const MemoryModel& model_;
  const absl::Span<const int32_t> schedule_;
  const SimulationResult& simulation_;
  const int64_t capacity_;
  const bool record_;
  TrafficResult result_;
  // Steps reading each tensor, ascending (CSR), and the first one not yet run.
  std::vector<int32_t> use_begin_, uses_, next_;
  std::vector<bool> has_copy_, read_once_;
  // Last step that used each tensor (marks "used at step i").
  std::vector<int32_t> used_at_;
  std::vector<int32_t> resident_, position_;  // position_[t] = -1: off-chip
  int64_t resident_bytes_ = 0;
};

void BeladySimulation::IndexUses() {
  const int32_t num_tensors = model_.num_tensors();
  use_begin_.assign(num_tensors + 1, 0);
  for (int32_t op : schedule_) {
    for (int32_t t : model_.ops[op].inputs) ++use_begin_[t + 1];
  }
  for (int32_t t = 0; t < num_tensors; ++t) use_begin_[t + 1] += use_begin_[t];
  uses_.resize(use_begin_[num_tensors]);
  next_.assign(use_begin_.begin(), use_begin_.end() - 1);
  std::vector<int32_t> fill = next_;
  for (int32_t step = 0; step < static_cast<int32_t>(schedule_.size()); ++step) {
    for (int32_t t : model_.ops[schedule_[step]].inputs) uses_[fill[t]++] = step;
  }
}

void BeladySimulation::FixedCost() {
  const TrafficResult fixed = FixedTraffic(model_);
  result_.fixed_read_bytes = fixed.fixed_read_bytes;
  result_.fixed_write_bytes = fixed.fixed_write_bytes;
}

void BeladySimulation::Add(int32_t t) {
  position_[t] = static_cast<int32_t>(resident_.size());
  resident_.push_back(t);
  resident_bytes_ += Bytes(t);
}

void BeladySimulation::Remove(int32_t t) {
  const int32_t last = resident_.back();
  resident_[position_[t]] = last;
  position_[last] = position_[t];
  resident_.pop_back();
  position_[t] = -1;
  resident_bytes_ -= Bytes(t);
}

void BeladySimulation::Load(int32_t t) {
  if (position_[t] != -1) return;
  if (model_.tensors[t].producer == kNoId && !read_once_[t]) {
    read_once_[t] = true;  // the fixed cost
  } else {
    result_.read_bytes += Bytes(t);
  }
  Add(t);
}

void BeladySimulation::Allocate(int32_t t) {
  // The in-place source is an input of this step, loaded just before.
  const int32_t source = simulation_.inplace_source[t];
  if (source != kNoId && position_[source] != -1) Remove(source);
  Add(t);
}

void BeladySimulation::Evict(int32_t t) {
  if (NextUse(t) != kNever && !has_copy_[t]) {
    if (!model_.tensors[t].live_at_end) result_.write_bytes += Bytes(t);
    has_copy_[t] = true;
  }
  Remove(t);
}

int32_t BeladySimulation::Victim(int32_t step, bool include_step) const {
  // Among tensors with the furthest next use: free ones first (no write),
  // then the smallest that alone brings the resident bytes down to C, else
  // the largest (evicting fewer bytes when fewer suffice is what a later
  // re-read pays for); last, the lower tensor id.
  const int64_t excess = resident_bytes_ - capacity_;
  auto better = [&](int32_t t, int32_t best) {
    const int32_t a = NextUse(t), b = NextUse(best);
    if (a != b) return a > b;
    const bool wa = CostsWrite(t), wb = CostsWrite(best);
    if (wa != wb) return !wa;
    const bool fa = Bytes(t) >= excess, fb = Bytes(best) >= excess;
    if (fa != fb) return fa;
    if (Bytes(t) != Bytes(best)) return fa ? Bytes(t) < Bytes(best) : Bytes(t) > Bytes(best);
    return t < best;
  };
  int32_t best = kNoId;
  for (int32_t t : resident_) {
    if (!include_step && used_at_[t] == step) continue;
    if (best == kNoId || better(t, best)) best = t;
  }
  return best;
}

void BeladySimulation::Step(int32_t step) {
  const MemoryModel::OpInfo& op = model_.ops[schedule_[step]];
  for (int32_t t : op.inputs) {
    if (Bytes(t) == 0) continue;
    used_at_[t] = step;
    Load(t);
  }
  for (int32_t t : op.outputs) {
    if (Bytes(t) == 0) continue;
    used_at_[t] = step;
    Allocate(t);
  }
  // From here on NextUse means the first use after this step.
  for (int32_t t : op.inputs) ++next_[t];
  while (resident_bytes_ > capacity_) {
    const int32_t victim = Victim(step, /*include_step=*/false);
    if (victim == kNoId) break;
    Evict(victim);
  }
  if (resident_bytes_ > capacity_) {
    ++result_.streamed_steps;
    while (resident_bytes_ > capacity_) {
      const int32_t victim = Victim(step, /*include_step=*/true);
      if (victim == kNoId) break;
      result_.streamed_bytes += Bytes(victim);
      Evict(victim);
    }
  }
  if (record_) result_.resident_bytes.push_back(resident_bytes_);
  for (int32_t t : op.inputs) {
    if (position_[t] != -1 && NextUse(t) == kNever && !model_.tensors[t].live_at_end) Remove(t);
  }
  for (int32_t t : op.outputs) {
    const MemoryModel::TensorInfo& info = model_.tensors[t];
    if (position_[t] != -1 && info.consumers.empty() && !info.live_at_end) Remove(t);
  }
}

TrafficResult BeladySimulation::Run() {
  const int32_t num_tensors = model_.num_tensors();
  result_.on_chip_bytes = capacity_;
  IndexUses();
  FixedCost();
  has_copy_.assign(num_tensors, false);
  for (int32_t t = 0; t < num_tensors; ++t) {
    has_copy_[t] = model_.tensors[t].producer == kNoId;
  }
  read_once_.assign(num_tensors, false);
  used_at_.assign(num_tensors, -1);
  position_.assign(num_tensors, -1);
  for (int32_t step = 0; step < static_cast<int32_t>(schedule_.size()); ++step) Step(step);
  result_.total_bytes = result_.read_bytes + result_.write_bytes;
  return std::move(result_);
}

}  // namespace

TrafficResult FixedTraffic(const MemoryModel& model) {
  TrafficResult result;
  for (const MemoryModel::TensorInfo& info : model.tensors) {
    if (info.bytes == 0) continue;
    if (info.producer == kNoId && !info.consumers.empty()) result.fixed_read_bytes += info.bytes;
    if (info.producer != kNoId && info.live_at_end) result.fixed_write_bytes += info.bytes;
  }
  return result;
}

TrafficResult PlacedTraffic(const MemoryModel& model, const std::vector<bool>& off_chip,
                            int64_t on_chip_bytes) {
  TrafficResult result = FixedTraffic(model);
  result.on_chip_bytes = on_chip_bytes;
  for (int32_t t = 0; t < model.num_tensors(); ++t) {
    const MemoryModel::TensorInfo& info = model.tensors[t];
    if (!off_chip[t] || info.bytes == 0) continue;
    int64_t reads = static_cast<int64_t>(info.consumers.size());
    if (info.producer == kNoId && reads > 0) --reads;  // the fixed first read
    result.read_bytes += reads * info.bytes;
    if (info.producer != kNoId && !info.live_at_end) result.write_bytes += info.bytes;
  }
  result.total_bytes = result.read_bytes + result.write_bytes;
  return result;
}

absl::StatusOr<TrafficResult> EstimateTraffic(const MemoryModel& model,
                                              absl::Span<const int32_t> schedule,
                                              const TrafficOptions& options) {
  if (options.on_chip_bytes < 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("on-chip size must be non-negative, got ", options.on_chip_bytes));
  }
  // The simulator checks the schedule and says which outputs run in place.
  absl::StatusOr<SimulationResult> simulation = Simulate(model, schedule);
  if (!simulation.ok()) return simulation.status();
  return BeladySimulation(model, schedule, *simulation, options).Run();
}

}  // namespace ordo
