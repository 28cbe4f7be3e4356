#include "core/rewrite/partition_search.h"

#include <algorithm>
#include <limits>
#include <optional>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "core/memory/memory_model.h"
#include "core/memory/simulator.h"
#include "core/onnx/onnx_import.h"
#include "core/rewrite/axis_graph.h"
#include "core/rewrite/channel_split.h"
#include "core/rewrite/early_subsample.h"
#include "core/rewrite/op_semantics.h"
#include "core/util/status_macros.h"

#include "core/rewrite/spatial_tiling.h"

namespace ordo {
namespace {

// One proposed rewrite of a state's model.
struct Proposal {
  std::string kind;  // "channel" / "spatial"
  std::string key;   // identifies it within the state
  std::string description;
  std::vector<std::string> convs;
  ChannelSplit channel;
  std::vector<std::string> region;
  int32_t parts_h = 1;
  int32_t parts_w = 1;
  HaloMode halo = HaloMode::kRecompute;
  std::vector<SubsampleSite> sites;
};

struct State {
  std::shared_ptr<const EvaluatedModel> model;
  std::vector<AppliedRewrite> history;
  std::string key;
  double latency = 0;
};

// Ordering of states: lower peak, then fewer steps at it, then cheaper.
auto Rank(const State& s) {
  return std::make_tuple(s.model->peak(), s.model->steps_at_peak, s.latency);
}

bool IsPerChannelKind(const Graph& graph, const Op& op) {
  const OpKind kind = ClassifyOp(op);
  if (kind == OpKind::kResize) {
    // Only a Resize that keeps N and C carries a channel split.
    return ChannelDependenceOf(graph, op) == ChannelDependence::kPerChannel;
  }
  return kind == OpKind::kUnaryElementwise || kind == OpKind::kBatchNormalization ||
         kind == OpKind::kMaxPool || kind == OpKind::kAveragePool || kind == OpKind::kConv ||
         op.type == "Clip";
}

// Group-1 Convs whose split chain may cover a bottleneck tensor: walk back
// from the tensor through per-channel ops to the Conv starting the chain.
std::vector<OpId> ChainStarts(const Graph& graph, absl::Span<const TensorId> tensors) {
  std::vector<OpId> starts;
  for (TensorId t : tensors) {
    OpId p = graph.tensor(t).producer;
    for (int32_t depth = 0; p != kNoId && depth < 12; ++depth) {
      const Op& op = graph.op(p);
      if (!IsPerChannelKind(graph, op) || op.inputs.empty()) break;
      if (ClassifyOp(op) == OpKind::kConv) {
        absl::StatusOr<ConvInfo> info = AnalyzeConv(op, InputDims(graph, op));
        if (info.ok() && info->group == 1) {
          if (std::find(starts.begin(), starts.end(), p) == starts.end()) starts.push_back(p);
          break;
        }
        if (!info.ok() || !info->depthwise()) break;
      }
      p = graph.tensor(op.inputs[0]).producer;
    }
  }
  return starts;
}

// Every early-subsampling site at once (an identity rewrite at no extra
// MACs: each only removes full-size shifted copies).
std::vector<Proposal> SubsampleProposals(const EvaluatedModel& state) {
  std::vector<SubsampleSite> sites = FindSubsampleSites(state.model, state.graph);
  if (sites.empty()) return {};
  Proposal p;
  p.kind = "subsample";
  p.key = absl::StrCat("u:", sites.size(), ":", sites.front().window);
  p.description =
      absl::StrCat(sites.size(), " shift chains (Slice/Pad) before a strided 1x1 window ",
                   "read as one strided Slice (first: ", sites.front().window, ")");
  p.sites = std::move(sites);
  return {std::move(p)};
}

std::vector<Proposal> ChannelProposals(const EvaluatedModel& state,
                                       const PartitionSearchOptions& search) {
  std::vector<Proposal> proposals;
  const Graph& graph = state.graph;
  std::vector<TensorId> bottleneck = state.peak_tensors;
  if (static_cast<int32_t>(bottleneck.size()) > search.bottleneck_tensors) {
    bottleneck.resize(search.bottleneck_tensors);
  }
  for (OpId conv : ChainStarts(graph, bottleneck)) {
    const std::string& name = graph.op(conv).name;
    for (int32_t parts : search.channel_parts) {
      ChannelSplit split{name, parts};
      absl::StatusOr<ChannelSplitPlan> plan = PlanChannelSplit(graph, split);
      if (!plan.ok()) continue;
      Proposal p;
      p.kind = "channel";
      p.key = absl::StrCat("c:", name, "/", parts);
      p.channel = split;
      p.convs.push_back(name);
      std::string end = "a Concat";
      if (plan->consumer != kNoId) {
        p.convs.push_back(graph.op(plan->consumer).name);
        end = absl::StrCat("partial ", graph.op(plan->consumer).name, " + Adds");
      }
      p.description = absl::StrCat(name, " split into ", parts, " channel slices through ",
                                   plan->chain.size(), " per-channel ops into ", end);
      proposals.push_back(std::move(p));
    }
  }
  return proposals;
}

bool IsTileableKind(const Op& op) {
  switch (ClassifyOp(op)) {
    case OpKind::kConv:
    case OpKind::kMaxPool:
    case OpKind::kAveragePool:
    case OpKind::kUnaryElementwise:
    case OpKind::kBinaryElementwise:
    case OpKind::kSum:
    case OpKind::kBatchNormalization:
    case OpKind::kConcat:
      return true;
    default:
      return op.type == "Clip";
  }
}

// Activation-connected neighbours of `op` that could join a tiled region.
std::vector<OpId> Neighbours(const Graph& graph, OpId op) {
  std::vector<OpId> out;
  for (OpId p : graph.Predecessors(op)) {
    if (IsTileableKind(graph.op(p))) out.push_back(p);
  }
  for (OpId s : graph.Successors(op)) {
    if (IsTileableKind(graph.op(s))) out.push_back(s);
  }
  return out;
}

// Dataflow restructuring's critical subgraph: from the peak op, the
// connected ops whose own step needs >= alpha x peak; then grown by one and
// two layers of neighbours (a region's inputs and outputs stay whole, so a
// larger region often pays off).
std::vector<std::vector<OpId>> CriticalRegions(const EvaluatedModel& state, double alpha,
                                               const MemoryOptions& memory_options) {
  const Graph& graph = state.graph;
  std::vector<std::vector<OpId>> regions;
  if (state.peak_step < 0) return regions;
  const OpId peak_op = state.schedule.order[state.peak_step];
  if (!IsTileableKind(graph.op(peak_op))) return regions;
  absl::StatusOr<MemoryModel> memory = BuildMemoryModel(graph, memory_options);
  if (!memory.ok()) return regions;
  const double threshold = alpha * static_cast<double>(state.peak());
  absl::flat_hash_set<OpId> region = {peak_op};
  std::vector<OpId> frontier = {peak_op};
  while (!frontier.empty() && region.size() < 16) {
    OpId op = frontier.back();
    frontier.pop_back();
    for (OpId n : Neighbours(graph, op)) {
      if (region.contains(n) || OpStepBytes(*memory, n) < threshold) continue;
      region.insert(n);
      frontier.push_back(n);
    }
  }
  for (int32_t grow = 0; grow < 3; ++grow) {
    std::vector<OpId> sorted(region.begin(), region.end());
    std::sort(sorted.begin(), sorted.end());
    regions.push_back(sorted);
    for (OpId op : sorted) {
      for (OpId n : Neighbours(graph, op)) region.insert(n);
    }
    if (region.size() > 48) break;
  }
  return regions;
}

// Bytes of the activations crossing into and out of ops [begin, end] (op
// ids): what a tiled region keeps whole.
int64_t BoundaryBytes(const Graph& graph, OpId begin, OpId end) {
  int64_t bytes = 0;
  absl::flat_hash_set<TensorId> counted;
  for (OpId id = begin; id <= end; ++id) {
    const Op& op = graph.op(id);
    for (TensorId t : op.inputs) {
      const Tensor& tensor = graph.tensor(t);
      if (tensor.kind == TensorKind::kWeight) continue;
      if ((tensor.producer == kNoId || tensor.producer < begin) && counted.insert(t).second) {
        bytes += tensor.bytes;
      }
    }
    for (TensorId t : op.outputs) {
      const Tensor& tensor = graph.tensor(t);
      bool leaves = tensor.is_graph_output;
      for (OpId c : tensor.consumers) leaves = leaves || c > end;
      if (leaves && counted.insert(t).second) bytes += tensor.bytes;
    }
  }
  return bytes;
}

// Windows of consecutive op ids around the peak op (always convex: a path
// between two ops of a window only passes through ids between them) whose
// boundary is light: cutting where the tensors are small is what makes a
// tiled region pay (dataflow restructuring's cut points). The `count`
// lightest windows of at most kMaxWindow ops, tileable ops only.
std::vector<std::vector<OpId>> WindowRegions(const EvaluatedModel& state, int32_t count) {
  constexpr int32_t kMaxWindow = 48;
  const Graph& graph = state.graph;
  std::vector<std::vector<OpId>> regions;
  if (state.peak_step < 0) return regions;
  const OpId peak_op = state.schedule.order[state.peak_step];
  if (!IsTileableKind(graph.op(peak_op))) return regions;
  OpId first = peak_op, last = peak_op;
  while (first > 0 && peak_op - first < kMaxWindow && IsTileableKind(graph.op(first - 1))) --first;
  while (last + 1 < graph.num_ops() && last - peak_op < kMaxWindow &&
         IsTileableKind(graph.op(last + 1))) {
    ++last;
  }
  std::vector<std::tuple<int64_t, int32_t, OpId, OpId>> windows;  // bytes, -size, b, e
  for (OpId b = first; b <= peak_op; ++b) {
    for (OpId e = peak_op; e <= last && e - b < kMaxWindow; ++e) {
      if (e == b) continue;
      windows.emplace_back(BoundaryBytes(graph, b, e), -(e - b), b, e);
    }
  }
  std::sort(windows.begin(), windows.end());
  for (const auto& [bytes, size, b, e] : windows) {
    if (static_cast<int32_t>(regions.size()) >= count) break;
    if (bytes >= state.peak()) break;
    std::vector<OpId> region;
    for (OpId id = b; id <= e; ++id) region.push_back(id);
    regions.push_back(std::move(region));
  }
  return regions;
}

// `spare_seconds`: the latency the state may still add under delta (may be
// negative); a recomputing tiling whose extra MACs alone exceed it cannot
// pass and is not proposed. Every tiling over H that recomputes some halo
// also comes with cached halos (halo == kCache), which the search screens
// only when nothing else lowers the peak.
std::vector<Proposal> SpatialProposals(const EvaluatedModel& state,
                                       const PartitionSearchOptions& search, int32_t windows,
                                       const std::vector<std::pair<int32_t, int32_t>>& tilings,
                                       const MemoryOptions& memory_options,
                                       const LatencyModel& latency, double spare_seconds) {
  std::vector<Proposal> proposals;
  const Graph& graph = state.graph;
  std::vector<std::vector<OpId>> regions = CriticalRegions(state, search.alpha, memory_options);
  for (std::vector<OpId>& region : WindowRegions(state, windows)) {
    if (std::find(regions.begin(), regions.end(), region) == regions.end()) {
      regions.push_back(std::move(region));
    }
  }
  for (const std::vector<OpId>& region : regions) {
    if (!AxisGraph::Build(graph, region).SpatiallyTileable()) continue;
    std::vector<std::string> names;
    names.reserve(region.size());
    for (OpId op : region) names.push_back(graph.op(op).name);
    for (const auto& [h, w] : tilings) {
      const SpatialTiling tiling{names, h, w};
      absl::StatusOr<int64_t> extra_macs = SpatialTilingExtraMacs(graph, tiling);
      if (!extra_macs.ok()) continue;  // CheckSpatialTiling refuses
      const double extra_seconds =
          static_cast<double>(*extra_macs) / std::max(latency.macs_per_second, 1.0);
      std::vector<HaloMode> modes;
      if (extra_seconds <= spare_seconds) modes.push_back(HaloMode::kRecompute);
      if (w == 1 && h > 1 && *extra_macs > 0) modes.push_back(HaloMode::kCache);
      for (HaloMode halo : modes) {
        Proposal p;
        p.kind = "spatial";
        p.region = names;
        p.parts_h = h;
        p.parts_w = w;
        p.halo = halo;
        p.key = absl::StrCat("s:", absl::StrJoin(names, ","), "/", h, "x", w,
                             halo == HaloMode::kCache ? "/cache" : "");
        p.description = absl::StrCat(names.front(), "..", names.back(), " (", names.size(),
                                     " ops) tiled ", h, "x", w, " (H x W), halos ",
                                     halo == HaloMode::kCache ? "cached" : "recomputed");
        proposals.push_back(std::move(p));
      }
    }
  }
  return proposals;
}

absl::StatusOr<onnx::ModelProto> ApplyProposal(const EvaluatedModel& state, const Proposal& p) {
  if (p.kind == "channel") return ApplyChannelSplit(state.model, state.graph, p.channel);
  if (p.kind == "subsample") return ApplyEarlySubsample(state.model, state.graph, p.sites);
  if (p.kind == "spatial") {
    return ApplySpatialTiling(state.model, state.graph,
                              SpatialTiling{p.region, p.parts_h, p.parts_w, p.halo});
  }
  return absl::UnimplementedError(absl::StrCat("rewrite kind ", p.kind));
}

// Rewrites that left the peak unchanged are merged into the next one that
// lowered it; trailing ones are dropped by the caller choosing the state.
std::vector<AppliedRewrite> Fold(const std::vector<AppliedRewrite>& history) {
  std::vector<AppliedRewrite> out;
  std::optional<AppliedRewrite> pending;
  for (const AppliedRewrite& r : history) {
    AppliedRewrite merged = r;
    if (pending) {
      merged.kind = pending->kind == r.kind ? r.kind : absl::StrCat(pending->kind, "+", r.kind);
      merged.description = absl::StrCat(pending->description, "; ", r.description);
      merged.convs.insert(merged.convs.begin(), pending->convs.begin(), pending->convs.end());
      merged.peak_before_bytes = pending->peak_before_bytes;
      merged.extra_macs += pending->extra_macs;
      merged.extra_ops += pending->extra_ops;
      pending.reset();
    }
    if (merged.peak_after_bytes < merged.peak_before_bytes) {
      out.push_back(std::move(merged));
    } else {
      pending = std::move(merged);
    }
  }
  return out;
}

// What one evaluated model holds in memory, roughly: the model (its
// serialized size: weight data dominates), the graph's ops and tensors
// with their names and lists, the schedule.
int64_t EstimatedBytes(const EvaluatedModel& m) {
  int64_t bytes = static_cast<int64_t>(sizeof(EvaluatedModel) + m.model.ByteSizeLong());
  for (const Op& op : m.graph.ops()) {
    bytes += static_cast<int64_t>(sizeof(Op) + op.name.size() + op.type.size() +
                                  4 * (op.inputs.size() + op.outputs.size())) +
             64;  // attributes, map nodes
  }
  for (TensorId t = 0; t < m.graph.num_tensors(); ++t) {
    const Tensor& tensor = m.graph.tensor(t);
    bytes += static_cast<int64_t>(sizeof(Tensor) + tensor.name.size() + 8 * tensor.dims.size() +
                                  4 * tensor.consumers.size()) +
             32;
  }
  bytes += static_cast<int64_t>(4 * m.schedule.order.size() + 4 * m.peak_tensors.size());
  return bytes;
}

}  // namespace

void NameNodesAsGraph(const Graph& graph, onnx::ModelProto& model) {
  onnx::GraphProto* g = model.mutable_graph();
  for (const Op& op : graph.ops()) {
    if (op.source_index >= 0 && op.source_index < g->node_size()) {
      g->mutable_node(op.source_index)->set_name(op.name);
    }
  }
}

ModelEvaluator::ModelEvaluator(const RewriteOptions& options, const Scheduler& scheduler)
    : options_(options), scheduler_(scheduler) {
  start_ = Now();
}

absl::Time ModelEvaluator::Now() const {
  return options_.clock != nullptr ? options_.clock->Now() : absl::Now();
}

bool ModelEvaluator::Expired() const {
  return Now() - start_ >= options_.time_limit ||
         (options_.cancelled != nullptr && options_.cancelled->load(std::memory_order_relaxed));
}

void ModelEvaluator::Remember(const std::string& key,
                              std::shared_ptr<const EvaluatedModel> evaluated, int64_t bytes) {
  if (!cache_.emplace(key, CacheEntry{std::move(evaluated), bytes}).second) return;
  cached_bytes_ += bytes;
  if (cached_bytes_ <= options_.max_search_bytes) return;
  // Over the budget: drop what only the cache holds (screened candidates
  // that did not make the beam, states the search has moved past). A
  // result cached under two keys is held by both entries.
  absl::flat_hash_map<const EvaluatedModel*, int64_t> cache_refs;
  for (const auto& [k, entry] : cache_) ++cache_refs[entry.evaluated.get()];
  for (auto it = cache_.begin(); it != cache_.end();) {
    const auto& evaluated_ptr = it->second.evaluated;
    if (evaluated_ptr.use_count() == cache_refs[evaluated_ptr.get()]) {
      cached_bytes_ -= it->second.bytes;
      cache_.erase(it++);
    } else {
      ++it;
    }
  }
}

absl::StatusOr<ScheduleResult> ModelEvaluator::RunScheduler(const MemoryModel& memory,
                                                            absl::Duration limit) {
  ScheduleLimits limits;
  limits.clock = options_.clock;
  limits.cancelled = options_.cancelled;
  // Never past the search's own limit (one schedule may not overrun it by
  // its whole budget).
  const absl::Time now = Now();
  limits.deadline = std::min(now + limit, std::max(now, start_ + options_.time_limit));
  options_.CountScheduleRun(schedules_run_);
  return scheduler_.Schedule(memory, limits);
}

absl::StatusOr<std::shared_ptr<const EvaluatedModel>> ModelEvaluator::Evaluate(
    onnx::ModelProto model, const std::string& key, absl::Duration schedule_time_limit) {
  if (auto it = cache_.find(key); it != cache_.end()) return it->second.evaluated;
  std::string bytes;
  if (!model.SerializeToString(&bytes)) {
    return absl::InternalError("rewritten model does not serialize");
  }
  auto result = std::make_shared<EvaluatedModel>();
  ORDO_ASSIGN_OR_RETURN(result->graph, ImportOnnx(bytes, options_.limits));
  NameNodesAsGraph(result->graph, model);
  result->model = std::move(model);
  ORDO_ASSIGN_OR_RETURN(MemoryModel memory, BuildMemoryModel(result->graph, options_.memory));
  const bool screen = schedule_time_limit > absl::ZeroDuration() &&
                      schedule_time_limit < options_.schedule_time_limit;
  result->full = !screen;
  ORDO_ASSIGN_OR_RETURN(
      result->schedule,
      RunScheduler(memory, screen ? schedule_time_limit : options_.schedule_time_limit));
  return Finish(std::move(result), memory, key);
}

absl::StatusOr<std::shared_ptr<const EvaluatedModel>> ModelEvaluator::Refine(
    std::shared_ptr<const EvaluatedModel> evaluated, const std::string& key) {
  if (evaluated->full) return evaluated;
  if (auto it = cache_.find(key); it != cache_.end()) return it->second.evaluated;
  ORDO_ASSIGN_OR_RETURN(MemoryModel memory, BuildMemoryModel(evaluated->graph, options_.memory));
  ORDO_ASSIGN_OR_RETURN(ScheduleResult schedule,
                        RunScheduler(memory, options_.schedule_time_limit));
  ORDO_ASSIGN_OR_RETURN(SimulationResult sim, Simulate(memory, schedule.order));
  if (sim.peak_bytes >= evaluated->peak()) {
    Remember(key, evaluated, 0);
    return evaluated;
  }
  auto result = std::make_shared<EvaluatedModel>();
  result->model = evaluated->model;
  result->graph = evaluated->graph;
  result->schedule = std::move(schedule);
  return Finish(std::move(result), memory, key);
}

absl::StatusOr<std::shared_ptr<const EvaluatedModel>> ModelEvaluator::Adopt(
    onnx::ModelProto model, Graph graph, ScheduleResult schedule, const std::string& key) {
  auto result = std::make_shared<EvaluatedModel>();
  NameNodesAsGraph(graph, model);
  result->model = std::move(model);
  result->graph = std::move(graph);
  result->schedule = std::move(schedule);
  ORDO_ASSIGN_OR_RETURN(MemoryModel memory, BuildMemoryModel(result->graph, options_.memory));
  return Finish(std::move(result), memory, key);
}

absl::StatusOr<std::shared_ptr<const EvaluatedModel>> ModelEvaluator::Finish(
    std::shared_ptr<EvaluatedModel> result, const MemoryModel& memory, const std::string& key) {
  ORDO_ASSIGN_OR_RETURN(SimulationResult sim, Simulate(memory, result->schedule.order));
  result->schedule.peak_bytes = sim.peak_bytes;
  result->peak_step = sim.peak_step;
  for (int64_t bytes_at_step : sim.step_bytes) {
    if (bytes_at_step == sim.peak_bytes) ++result->steps_at_peak;
  }
  if (sim.peak_step >= 0) {
    for (TensorId t = 0; t < result->graph.num_tensors(); ++t) {
      if (!sim.has_interval[t] || memory.tensors[t].bytes == 0) continue;
      const LiveInterval& live = sim.intervals[t];
      if (live.first <= sim.peak_step && sim.peak_step <= live.last) {
        result->peak_tensors.push_back(t);
      }
    }
    std::stable_sort(result->peak_tensors.begin(), result->peak_tensors.end(),
                     [&memory](TensorId a, TensorId b) {
                       return memory.tensors[a].bytes > memory.tensors[b].bytes;
                     });
  }
  result->cost = CostOf(result->graph);
  result->fits = options_.Fits(result->graph, result->schedule);
  const int64_t bytes = EstimatedBytes(*result);
  std::shared_ptr<const EvaluatedModel> shared = std::move(result);
  Remember(key, shared, bytes);
  return shared;
}

absl::StatusOr<PartitionSearchResult> SearchPartitions(
    const std::shared_ptr<const EvaluatedModel>& start, const GraphCost& baseline,
    const PartitionSearchOptions& search, ModelEvaluator& evaluator) {
  const RewriteOptions& options = evaluator.options();
  PartitionSearchResult result;
  const double limit_overhead = options.max_latency_overhead;
  auto overhead = [&](const EvaluatedModel& m) {
    return LatencyOverhead(baseline, m.cost, options.latency);
  };
  State initial{start, {}, "", LatencySeconds(start->cost, options.latency)};
  State best = initial;
  std::optional<State> fitting;
  if (start->fits) fitting = initial;

  auto expired = [&] { return evaluator.Expired() || evaluator.Now() >= search.deadline; };
  std::vector<State> beam = {initial};
  absl::flat_hash_set<std::string> seen_models;
  for (int32_t round = 0; round < search.max_rounds && !fitting && !beam.empty(); ++round) {
    std::vector<State> next;
    for (const State& state : beam) {
      // Finding sites and planning proposals is not free on a large model.
      if (expired()) {
        result.time_limit_hit = true;
        break;
      }
      std::vector<Proposal> proposals = SubsampleProposals(*state.model);
      for (Proposal& p : ChannelProposals(*state.model, search)) proposals.push_back(std::move(p));
      std::vector<Proposal> fallback;  // screened when `proposals` beat nothing
      if (search.spatial) {
        // What the state may still add under delta (LatencyOverhead's
        // terms); with a baseline costing nothing, nothing is pruned.
        const double base_seconds = LatencySeconds(baseline, options.latency);
        const double spare_seconds =
            base_seconds > 0 ? limit_overhead * base_seconds - (state.latency - base_seconds)
                             : std::numeric_limits<double>::infinity();
        for (Proposal& p : SpatialProposals(*state.model, search, search.windows, search.tilings,
                                            options.memory, options.latency, spare_seconds)) {
          (p.halo == HaloMode::kCache ? fallback : proposals).push_back(std::move(p));
        }
      }
      // A child of `state` when `m` lowers its peak (or the steps at it).
      auto consider = [&](const Proposal& p, const std::string& key,
                          const std::shared_ptr<const EvaluatedModel>& evaluated) {
        const EvaluatedModel& m = *evaluated;
        const bool lower = m.peak() < state.model->peak();
        const bool fewer =
            m.peak() == state.model->peak() && m.steps_at_peak < state.model->steps_at_peak;
        if (!lower && !fewer) return false;
        State child{evaluated, state.history, key, LatencySeconds(m.cost, options.latency)};
        AppliedRewrite applied;
        applied.kind = p.kind;
        applied.description = p.description;
        applied.convs = p.convs;
        applied.peak_before_bytes = state.model->peak();
        applied.peak_after_bytes = m.peak();
        applied.extra_macs = m.cost.macs - state.model->cost.macs;
        applied.extra_ops = m.cost.ops - state.model->cost.ops;
        child.history.push_back(std::move(applied));
        // The cheap tests first: the device's may place the schedule.
        if (options.fit_mode() && (!fitting || child.latency < fitting->latency) &&
            m.fits) {
          fitting = child;
        }
        next.push_back(std::move(child));
        return true;
      };
      // Screened candidates within delta that did not beat the state.
      std::vector<std::tuple<int64_t, int32_t, double, const Proposal*, std::string,
                             std::shared_ptr<const EvaluatedModel>>>
          unconfirmed;
      auto most_promising = [](const auto& a, const auto& b) {
        return std::make_tuple(std::get<0>(a), std::get<1>(a), std::get<2>(a)) <
               std::make_tuple(std::get<0>(b), std::get<1>(b), std::get<2>(b));
      };
      bool any_child = false;
      absl::flat_hash_set<std::string> screened_keys;
      auto screen_all = [&](const std::vector<Proposal>& list) {
        for (const Proposal& p : list) {
          if (!screened_keys.insert(p.key).second) continue;
          if (expired()) {
            result.time_limit_hit = true;
            break;
          }
          absl::StatusOr<onnx::ModelProto> rewritten = ApplyProposal(*state.model, p);
          if (!rewritten.ok()) continue;
          const std::string key = absl::StrCat(state.key, "|", p.key);
          absl::StatusOr<std::shared_ptr<const EvaluatedModel>> evaluated =
              evaluator.Evaluate(*std::move(rewritten), key, search.screen_time_limit);
          if (!evaluated.ok()) continue;  // e.g. a shape the importer rejects
          ++result.candidates_evaluated;
          const EvaluatedModel& m = **evaluated;
          if (overhead(m) > limit_overhead) {
            ++result.over_latency_budget;
            continue;
          }
          if (consider(p, key, *evaluated)) {
            any_child = true;
          } else if (!m.full) {
            unconfirmed.emplace_back(m.peak(), m.steps_at_peak,
                                     LatencySeconds(m.cost, options.latency), &p, key, *evaluated);
            // Over the memory budget: hold on to the `confirm` most
            // promising only (the others are never confirmed).
            if (evaluator.cached_bytes() > options.max_search_bytes &&
                static_cast<int32_t>(unconfirmed.size()) > search.confirm) {
              std::stable_sort(unconfirmed.begin(), unconfirmed.end(), most_promising);
              unconfirmed.resize(std::max(search.confirm, 0));
            }
          }
        }
      };
      screen_all(proposals);
      // Cached halos only when nothing else lowered the peak: recomputed
      // tiles can be tiled again by later rounds (a tile's ops are all
      // tileable), a cached block cannot (Slices and Concats over H join its
      // tiles), so a cached tiling taken early traps the greedy search above
      // where recomputation leads (mnasnet1_0 in 60 s: 54.9% vs 61.9%).
      // Screened last, they also cost no time while anything else helps.
      if (!any_child && !result.time_limit_hit) screen_all(fallback);
      // Nothing beat the state on a short schedule: give the most promising
      // ones the full limit before giving up on this state.
      if (!any_child && !result.time_limit_hit) {
        std::sort(unconfirmed.begin(), unconfirmed.end(), most_promising);
        for (int32_t i = 0; i < search.confirm && i < static_cast<int32_t>(unconfirmed.size());
             ++i) {
          if (expired()) {
            result.time_limit_hit = true;
            break;
          }
          const auto& [peak, steps, latency, p, key, screened] = unconfirmed[i];
          absl::StatusOr<std::shared_ptr<const EvaluatedModel>> refined =
              evaluator.Refine(screened, absl::StrCat(key, "#full"));
          if (refined.ok() && consider(*p, key, *refined)) break;
        }
      }
      if (result.time_limit_hit) break;
    }
    std::sort(next.begin(), next.end(),
              [](const State& a, const State& b) { return Rank(a) < Rank(b); });
    beam.clear();
    for (State& s : next) {
      if (static_cast<int32_t>(beam.size()) >= search.beam_width) break;
      // Two routes to the same graph size and peak are one state.
      const std::string signature =
          absl::StrCat(s.model->peak(), "/", s.model->cost.macs, "/", s.model->cost.ops);
      if (!seen_models.insert(signature).second) continue;
      beam.push_back(std::move(s));
    }
    // Kept states get the full schedule (a lower peak for the next round to
    // beat, and the one reported).
    for (State& s : beam) {
      if (s.model->full) continue;
      absl::StatusOr<std::shared_ptr<const EvaluatedModel>> refined =
          evaluator.Refine(s.model, absl::StrCat(s.key, "#full"));
      if (!refined.ok()) continue;
      s.model = *refined;
      s.history.back().peak_after_bytes = s.model->peak();
    }
    for (const State& s : beam) {
      // Only a state whose last rewrite lowered the peak can be the result:
      // every reported rewrite lowers it (Fold).
      const AppliedRewrite& last = s.history.back();
      if (last.peak_after_bytes < last.peak_before_bytes &&
          std::make_tuple(s.model->peak(), s.latency) <
              std::make_tuple(best.model->peak(), best.latency)) {
        best = s;
      }
    }
    if (result.time_limit_hit) break;
  }
  if (fitting) {
    best = *fitting;
    if (!best.model->full) {
      absl::StatusOr<std::shared_ptr<const EvaluatedModel>> refined =
          evaluator.Refine(best.model, absl::StrCat(best.key, "#full"));
      if (refined.ok()) {
        best.model = *refined;
        best.history.back().peak_after_bytes = best.model->peak();
      }
    }
  }
  result.best = best.model;
  result.rewrites = Fold(best.history);
  result.fits = result.best->fits;
  return result;
}

// How the search compares two models it reached, smaller first: fit mode
// wants the cheapest that fits (then the lowest peak), otherwise (or when
// neither fits) the lowest peak, then the lowest latency.
std::tuple<bool, double, double> RankModel(const EvaluatedModel& m, const GraphCost& original,
                                           const RewriteOptions& options) {
  const double latency = LatencyOverhead(original, m.cost, options.latency);
  const double peak = static_cast<double>(m.peak());
  if (m.fits) return {false, latency, peak};
  return {options.fit_mode(), peak, latency};
}

}  // namespace ordo
