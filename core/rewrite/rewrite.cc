#include "core/rewrite/rewrite.h"

#include <algorithm>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/memory/simulator.h"
#include "core/onnx/onnx_import.h"
#include "core/rewrite/concat_conv_rewrite.h"
#include "core/rewrite/cost_model.h"
#include "core/rewrite/fusion_search.h"
#include "core/rewrite/model_edit.h"
#include "core/rewrite/partition_search.h"
#include "core/rewrite/patch_fusion.h"
#include "core/rewrite/sum_reassociation.h"
#include "core/schedule/divide_and_conquer_scheduler.h"
#include "core/schedule/scheduler_registry.h"
#include "core/util/status_macros.h"

namespace ordo {
namespace {

// A model with its graph and schedule.
struct Candidate {
  onnx::ModelProto model;
  Graph graph;
  ScheduleResult schedule;
  int64_t peak() const { return schedule.peak_bytes; }
};

class Search {
 public:
  Search(const RewriteOptions& options, const Scheduler& scheduler, const Graph& original,
         std::vector<ConcatConvSite> sites)
      : options_(options), scheduler_(scheduler), original_(original), sites_(std::move(sites)) {
    start_ = Now();
  }

  absl::StatusOr<Candidate> Evaluate(onnx::ModelProto model) {
    std::string bytes;
    if (!model.SerializeToString(&bytes)) {
      return absl::InternalError("rewritten model does not serialize");
    }
    ORDO_ASSIGN_OR_RETURN(Graph graph, ImportOnnx(bytes, options_.limits));
    ORDO_ASSIGN_OR_RETURN(ScheduleResult schedule, Schedule(graph));
    return Candidate{std::move(model), std::move(graph), std::move(schedule)};
  }

  absl::StatusOr<ScheduleResult> Schedule(const Graph& graph) {
    options_.CountScheduleRun(schedules_run_);
    ORDO_ASSIGN_OR_RETURN(MemoryModel memory, BuildMemoryModel(graph, options_.memory));
    ScheduleLimits limits;
    limits.clock = options_.clock;
    limits.cancelled = options_.cancelled;
    // Never past the search's own limit.
    const absl::Time now = limits.Now();
    limits.deadline =
        std::min(now + options_.schedule_time_limit, std::max(now, start_ + options_.time_limit));
    return scheduler_.Schedule(memory, limits);
  }

  // `model` with the sites `indices` (into sites_) rewritten, in order.
  // Sites are found in the original graph: they are disjoint and keep every
  // name outside themselves, so each applies to the result of the others.
  absl::StatusOr<onnx::ModelProto> Apply(onnx::ModelProto model,
                                         const std::vector<int32_t>& indices) const {
    for (int32_t index : indices) {
      ORDO_ASSIGN_OR_RETURN(model, ApplyConcatConvRewrite(model, original_, sites_[index]));
    }
    return model;
  }

  AppliedRewrite Describe(int32_t index, int64_t before, int64_t after) const {
    AppliedRewrite applied;
    const ConcatConvSite& site = sites_[index];
    applied.concat = original_.op(site.concat).name;
    for (OpId conv : site.convs) applied.convs.push_back(original_.op(conv).name);
    applied.partitions = site.partitions;
    applied.peak_before_bytes = before;
    applied.peak_after_bytes = after;
    return applied;
  }

  bool Expired() const {
    return Now() - start_ >= options_.time_limit ||
           (options_.cancelled != nullptr && options_.cancelled->load(std::memory_order_relaxed));
  }
  absl::Duration Elapsed() const { return Now() - start_; }
  int32_t schedules_run() const { return schedules_run_; }
  int32_t num_sites() const { return static_cast<int32_t>(sites_.size()); }

 private:
  absl::Time Now() const { return options_.clock != nullptr ? options_.clock->Now() : absl::Now(); }

  const RewriteOptions& options_;
  const Scheduler& scheduler_;
  const Graph& original_;
  std::vector<ConcatConvSite> sites_;
  absl::Time start_;
  int32_t schedules_run_ = 0;
};

void AddCostDelta(const Graph& before, const Graph& after, AppliedRewrite& applied) {
  const GraphCost b = CostOf(before);
  const GraphCost a = CostOf(after);
  applied.extra_macs = a.macs - b.macs;
  applied.extra_ops = a.ops - b.ops;
}

// Whether the model carries its weights: every initializer has its data in
// the file. The benchmark models carry none (their data is external and not
// shipped), though a few small constants there do have data.
bool CarriesWeights(const onnx::ModelProto& model) {
  for (const onnx::TensorProto& t : model.graph().initializer()) {
    if (t.data_location() == onnx::TensorProto::EXTERNAL) return false;
    if (t.raw_data().empty() && t.float_data_size() == 0 && t.int64_data_size() == 0 &&
        t.int32_data_size() == 0 && t.double_data_size() == 0 && t.uint64_data_size() == 0) {
      return false;
    }
  }
  return model.graph().initializer_size() > 0;
}

std::vector<AppliedRewrite> ConcatRoutes(const std::vector<AppliedRewrite>& first,
                                         const std::vector<AppliedRewrite>& then) {
  std::vector<AppliedRewrite> route = first;
  route.insert(route.end(), then.begin(), then.end());
  return route;
}

// The input and the model after each prefix of `route`: every
// AppliedRewrite carries the peak it reached and the MACs and ops it added,
// so no model has to be kept or rebuilt.
std::vector<ParetoPoint> RoutePoints(int64_t original_peak, const GraphCost& original,
                                     const std::vector<AppliedRewrite>& route,
                                     const LatencyModel& latency) {
  std::vector<ParetoPoint> points(1);
  points[0].peak_bytes = original_peak;
  GraphCost cost = original;
  for (const AppliedRewrite& applied : route) {
    cost.macs += applied.extra_macs;
    cost.ops += applied.extra_ops;
    ParetoPoint point;
    point.peak_bytes = applied.peak_after_bytes;
    point.latency_overhead = LatencyOverhead(original, cost, latency);
    point.mac_overhead =
        original.macs > 0
            ? static_cast<double>(cost.macs - original.macs) / static_cast<double>(original.macs)
            : 0.0;
    point.rewrites = points.back().rewrites;
    point.rewrites.push_back(applied.description.empty()
                                 ? absl::StrCat(applied.kind, ": Concat ", applied.concat,
                                                " read by its Convs in parts")
                                 : applied.description);
    points.push_back(std::move(point));
  }
  return points;
}

std::vector<std::string> PeakTensorNames(const EvaluatedModel& m) {
  std::vector<std::string> names;
  for (TensorId t : m.peak_tensors) names.push_back(m.graph.tensor(t).name);
  return names;
}

// A model the search reached and the rewrites that lead to it.
struct Reached {
  std::shared_ptr<const EvaluatedModel> model;
  std::vector<AppliedRewrite> route;
};

// Patch-wise fusion (fusion_search.h) on top of `start`: every fused model
// scheduled becomes a route of the Pareto front; the best, if it beats
// `start`, is returned.
absl::StatusOr<std::optional<Reached>> TryFusion(const Reached& start, const GraphCost& original,
                                                 ModelEvaluator& evaluator, RewriteResult& result,
                                                 std::vector<std::vector<AppliedRewrite>>& routes) {
  ORDO_ASSIGN_OR_RETURN(FusionSearchResult fused, SearchFusion(start.model, original, evaluator));
  result.time_limit_hit = result.time_limit_hit || fused.time_limit_hit;
  for (const AppliedRewrite& tried : fused.tried) routes.push_back(ConcatRoutes(start.route, {tried}));
  if (fused.best == nullptr) return std::nullopt;
  return Reached{fused.best, ConcatRoutes(start.route, {fused.rewrite})};
}

// Region fusion (fusion_search.h) grown from `start` until `deadline`,
// reported like TryFusion.
absl::StatusOr<std::optional<Reached>> TryRegionFusion(
    const Reached& start, const GraphCost& original, ModelEvaluator& evaluator,
    absl::Time deadline, RewriteResult& result, std::vector<std::vector<AppliedRewrite>>& routes) {
  ORDO_ASSIGN_OR_RETURN(FusionSearchResult fused,
                        SearchRegionFusion(start.model, original, evaluator, deadline));
  // Its own deadline is a share of the search's; only the whole search's
  // limit is reported.
  result.time_limit_hit = result.time_limit_hit || (fused.time_limit_hit && evaluator.Expired());
  for (const AppliedRewrite& tried : fused.tried) routes.push_back(ConcatRoutes(start.route, {tried}));
  if (fused.best == nullptr) return std::nullopt;
  return Reached{fused.best, ConcatRoutes(start.route, {fused.rewrite})};
}

// Sum reassociation (sum_reassociation.h) by the current schedule, both
// orders tried, the lower peak kept while it lowers the peak: each round's
// schedule can free a term early that the previous one did not. At most a
// few rounds (RandWire settles in two).
absl::Status ReassociateWhileLower(Search& search, Candidate& current, RewriteResult& result) {
  constexpr int kMaxRounds = 4;
  for (int round = 0; round < kMaxRounds && !search.Expired(); ++round) {
    const std::vector<SumTree> trees = FindSumTrees(current.graph);
    if (trees.empty()) return absl::OkStatus();
    std::optional<Candidate> best;
    int32_t best_rebuilt = 0;
    for (SumOrder how : {SumOrder::kProduced, SumOrder::kReleased}) {
      int32_t rebuilt = 0;
      ORDO_ASSIGN_OR_RETURN(onnx::ModelProto model,
                            ReassociateSums(current.model, current.graph, trees,
                                            current.schedule.order, how, &rebuilt));
      if (rebuilt == 0) continue;
      ORDO_ASSIGN_OR_RETURN(Candidate trial, search.Evaluate(std::move(model)));
      if (trial.peak() < (best ? best->peak() : current.peak())) {
        best = std::move(trial);
        best_rebuilt = rebuilt;
      }
    }
    if (!best) return absl::OkStatus();
    AppliedRewrite applied;
    applied.kind = "reassociate";
    applied.description = absl::StrCat(best_rebuilt, " sum", best_rebuilt == 1 ? "" : "s",
                                       " of 3 or more terms reassociated to follow the schedule");
    applied.peak_before_bytes = current.peak();
    applied.peak_after_bytes = best->peak();
    AddCostDelta(current.graph, best->graph, applied);
    result.rewrites.push_back(std::move(applied));
    current = *std::move(best);
  }
  return absl::OkStatus();
}

// The search schedules many candidates within one budget: `best` there
// does not spend the time its rounds left on its peak parts again (that
// time buys more candidates; on densenet121 the search scheduled half as
// many with it), and the rewritten model's own compile does.
absl::StatusOr<std::unique_ptr<Scheduler>> CandidateScheduler(const std::string& name) {
  if (name != "best") return BuiltinSchedulers().Create(name);
  DivideAndConquerOptions options;
  options.search_peak_parts_again = false;
  return std::make_unique<DivideAndConquerScheduler>("best", options);
}

}  // namespace

bool RewriteOptions::Fits(const Graph& graph, const ScheduleResult& schedule) const {
  if (!fit_mode()) return false;
  if (memory_limit_bytes > 0 && schedule.peak_bytes > memory_limit_bytes) return false;
  return fit_test == nullptr || fit_test(graph, schedule);
}

absl::StatusOr<RewriteMode> ParseRewriteMode(absl::string_view name) {
  if (name == "none") return RewriteMode::kNone;
  if (name == "identity") return RewriteMode::kIdentity;
  if (name == "partition") return RewriteMode::kPartition;
  if (name == "all") return RewriteMode::kAll;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown rewrite mode \"", name, "\"; expected none|identity|partition|all"));
}

absl::string_view RewriteModeName(RewriteMode mode) {
  switch (mode) {
    case RewriteMode::kNone:
      return "none";
    case RewriteMode::kIdentity:
      return "identity";
    case RewriteMode::kPartition:
      return "partition";
    case RewriteMode::kAll:
      return "all";
  }
  return "none";
}

absl::StatusOr<RewriteResult> RewriteForMemory(const onnx::ModelProto& model,
                                               const RewriteOptions& options) {
  // Below kFirstFusionOpset a fused stage's function body would not pass
  // ONNX's checker.
  if (options.fusion && StandardOpset(model) < kFirstFusionOpset) {
    RewriteOptions without_fusion = options;
    without_fusion.fusion = false;
    return RewriteForMemory(model, without_fusion);
  }
  ORDO_ASSIGN_OR_RETURN(std::unique_ptr<Scheduler> scheduler,
                        CandidateScheduler(options.scheduler));
  std::string bytes;
  if (!model.SerializeToString(&bytes)) {
    return absl::InvalidArgumentError("model does not serialize");
  }
  ORDO_ASSIGN_OR_RETURN(Graph original, ImportOnnx(bytes, options.limits));
  onnx::ModelProto named = model;
  NameNodesAsGraph(original, named);

  std::vector<ConcatConvSite> sites;
  const bool identity = options.mode == RewriteMode::kIdentity || options.mode == RewriteMode::kAll;
  const bool partition =
      options.mode == RewriteMode::kPartition || options.mode == RewriteMode::kAll;
  RewriteResult result;
  const GraphCost original_cost = CostOf(original);
  result.original_macs = original_cost.macs;
  result.original_ops = original_cost.ops;
  result.weights_carried = CarriesWeights(model);
  if (identity) sites = FindConcatConvSites(original);
  Search search(options, *scheduler, original, sites);
  ORDO_ASSIGN_OR_RETURN(Candidate current, search.Evaluate(std::move(named)));
  result.original_peak_bytes = current.peak();
  result.sites_found = search.num_sites();

  const bool fits_already = options.Fits(current.graph, current.schedule);
  std::vector<int32_t> pending;
  for (int32_t i = 0; i < search.num_sites() && !fits_already; ++i) pending.push_back(i);
  std::vector<int32_t> failed;

  // 3. One at a time, kept when the peak drops; again while anything was
  // kept, since a site can start to matter once another cell stopped
  // holding the peak.
  bool changed = true;
  while (changed && !pending.empty()) {
    changed = false;
    std::vector<int32_t> still_pending;
    for (int32_t site : pending) {
      if (search.Expired()) {
        result.time_limit_hit = true;
        still_pending.push_back(site);
        continue;
      }
      absl::StatusOr<onnx::ModelProto> rewritten = search.Apply(current.model, {site});
      if (!rewritten.ok()) {
        failed.push_back(site);  // not understood here: never rewritten
        continue;
      }
      ORDO_ASSIGN_OR_RETURN(Candidate trial, search.Evaluate(*std::move(rewritten)));
      if (trial.peak() < current.peak()) {
        result.rewrites.push_back(search.Describe(site, current.peak(), trial.peak()));
        AddCostDelta(current.graph, trial.graph, result.rewrites.back());
        current = std::move(trial);
        changed = true;
      } else {
        still_pending.push_back(site);
      }
    }
    pending = std::move(still_pending);
  }

  // 4. The rest together.
  if (pending.size() >= 2 && !search.Expired()) {
    ORDO_ASSIGN_OR_RETURN(onnx::ModelProto all, search.Apply(current.model, pending));
    ORDO_ASSIGN_OR_RETURN(Candidate joint, search.Evaluate(std::move(all)));
    if (joint.peak() < current.peak()) {
      std::vector<int32_t> kept = pending;
      for (int32_t site : pending) {
        if (search.Expired()) {
          result.time_limit_hit = true;
          break;
        }
        std::vector<int32_t> without;
        for (int32_t k : kept) {
          if (k != site) without.push_back(k);
        }
        ORDO_ASSIGN_OR_RETURN(onnx::ModelProto fewer, search.Apply(current.model, without));
        ORDO_ASSIGN_OR_RETURN(Candidate trial, search.Evaluate(std::move(fewer)));
        if (trial.peak() <= joint.peak()) {
          kept = std::move(without);
          joint = std::move(trial);
        }
      }
      // One by one, for the report; the last step is the joint model. A
      // heuristic schedule (a part the exact search did not prove in its
      // limit) can differ between runs of the same graph, so the replay is
      // kept only if it still lowers the peak.
      Candidate step = current;
      std::vector<AppliedRewrite> steps;
      for (int32_t site : kept) {
        ORDO_ASSIGN_OR_RETURN(onnx::ModelProto next_model, search.Apply(step.model, {site}));
        ORDO_ASSIGN_OR_RETURN(Candidate next, search.Evaluate(std::move(next_model)));
        steps.push_back(search.Describe(site, step.peak(), next.peak()));
        AddCostDelta(step.graph, next.graph, steps.back());
        step = std::move(next);
      }
      if (step.peak() < current.peak()) {
        current = std::move(step);
        for (AppliedRewrite& applied : steps) result.rewrites.push_back(std::move(applied));
      }
    }
  }
  if (search.Expired() && !pending.empty()) result.time_limit_hit = true;
  // 5. Sums in schedule order (identity and partition: no extra MACs or
  // ops), again on the new schedule while the peak drops.
  if (!fits_already) {
    ORDO_RETURN_IF_ERROR(ReassociateWhileLower(search, current, result));
  }
  result.schedules_run = search.schedules_run();
  result.sites_skipped = static_cast<int32_t>(failed.size());

  // MOTES partitioning on top, with what is left of the time limit.
  RewriteOptions rest = options;
  rest.time_limit = std::max(absl::ZeroDuration(), options.time_limit - search.Elapsed());
  ModelEvaluator evaluator(rest, *scheduler);
  const absl::Time search_start = evaluator.Now();
  ORDO_ASSIGN_OR_RETURN(std::shared_ptr<const EvaluatedModel> final_model,
                        evaluator.Adopt(std::move(current.model), std::move(current.graph),
                                        std::move(current.schedule), "start"));
  // Routes the Pareto front is read from: each a sequence of rewrites from
  // the input, every prefix a model the search scheduled.
  std::vector<std::vector<AppliedRewrite>> routes;
  const std::shared_ptr<const EvaluatedModel> partition_start = final_model;
  const std::vector<AppliedRewrite> identity_rewrites = result.rewrites;
  if (partition && !fits_already) {
    // 6. Patch-wise fusion of the search's start first: a few schedules,
    // which the partition search would otherwise leave no time for.
    std::vector<Reached> fused_first;
    if (options.fusion) {
      // Regions first: they cost no MACs, and where branches hold the peak
      // they are what lowers it; at most 40% of the time left.
      const absl::Time deadline = evaluator.Now() + rest.time_limit * 0.4;
      ORDO_ASSIGN_OR_RETURN(std::optional<Reached> regions,
                            TryRegionFusion({partition_start, identity_rewrites}, original_cost,
                                            evaluator, deadline, result, routes));
      if (regions) fused_first.push_back(*std::move(regions));
      ORDO_ASSIGN_OR_RETURN(std::optional<Reached> fused,
                            TryFusion({partition_start, identity_rewrites}, original_cost,
                                      evaluator, result, routes));
      if (fused) fused_first.push_back(*std::move(fused));
    }
    PartitionSearchOptions knobs;
    knobs.beam_width = std::max(1, options.beam_width);
    // The partition search leaves a sixth of what is left to fusing its
    // result (regions, then chains): on a model it does not finish, that is
    // what the searches after it would otherwise never get.
    if (options.fusion) {
      const absl::Duration left = rest.time_limit - (evaluator.Now() - search_start);
      knobs.deadline = evaluator.Now() + left * 5 / 6;
    }
    ORDO_ASSIGN_OR_RETURN(PartitionSearchResult searched,
                          SearchPartitions(final_model, original_cost, knobs, evaluator));
    // Finished early (nothing more helped): search again, wider (more
    // windows, finer row tilings), with the time left. A wider first round
    // often finds a cheaper route the greedy narrow search passed by; the
    // evaluator's cache serves the candidates both searches share.
    if (!searched.time_limit_hit && !evaluator.Expired()) {
      PartitionSearchOptions wide;
      wide.windows = 8;
      wide.beam_width = knobs.beam_width;
      wide.deadline = knobs.deadline;
      wide.tilings = {{2, 1}, {3, 1}, {4, 1}, {6, 1}, {8, 1}, {2, 2}, {4, 2}, {4, 4}};
      ORDO_ASSIGN_OR_RETURN(PartitionSearchResult second,
                            SearchPartitions(final_model, original_cost, wide, evaluator));
      // Fit mode wants the cheapest result that fits, as the search does;
      // otherwise (or when neither fits) the lowest peak.
      auto rank = [&](const PartitionSearchResult& r) {
        return RankModel(*r.best, original_cost, options);
      };
      const bool cut_short = second.time_limit_hit;
      if (rank(second) < rank(searched)) std::swap(searched, second);
      routes.push_back(ConcatRoutes(result.rewrites, second.rewrites));
      searched.time_limit_hit = cut_short;
    }
    for (AppliedRewrite& applied : searched.rewrites) result.rewrites.push_back(std::move(applied));
    result.time_limit_hit = result.time_limit_hit || searched.time_limit_hit;
    final_model = searched.best;
    // Fusion on the partition search's result, then the best of it, the
    // fusion of the search's start (tried first, below) and the result.
    std::vector<Reached> fused = std::move(fused_first);
    if (options.fusion && !evaluator.Expired()) {
      ORDO_ASSIGN_OR_RETURN(
          std::optional<Reached> regions_on_top,
          TryRegionFusion({final_model, result.rewrites}, original_cost, evaluator,
                          absl::InfiniteFuture(), result, routes));
      if (regions_on_top) fused.push_back(*std::move(regions_on_top));
    }
    if (options.fusion && !evaluator.Expired()) {
      ORDO_ASSIGN_OR_RETURN(std::optional<Reached> on_top,
                            TryFusion({final_model, result.rewrites}, original_cost, evaluator,
                                      result, routes));
      if (on_top) fused.push_back(*std::move(on_top));
    }
    for (Reached& candidate : fused) {
      if (RankModel(*candidate.model, original_cost, options) <
          RankModel(*final_model, original_cost, options)) {
        routes.push_back(result.rewrites);
        final_model = std::move(candidate.model);
        result.rewrites = std::move(candidate.route);
      }
    }
  }
  result.schedules_run += evaluator.schedules_run();
  routes.push_back(result.rewrites);
  std::vector<ParetoPoint> points;
  for (const std::vector<AppliedRewrite>& route : routes) {
    for (ParetoPoint& point :
         RoutePoints(result.original_peak_bytes, original_cost, route, options.latency)) {
      points.push_back(std::move(point));
    }
  }
  result.pareto = NonDominated(std::move(points));

  result.model = final_model->model;
  result.graph = final_model->graph;
  result.schedule = final_model->schedule;
  result.rewritten_macs = final_model->cost.macs;
  result.rewritten_ops = final_model->cost.ops;
  result.latency_overhead = LatencyOverhead(original_cost, final_model->cost, options.latency);
  if (options.fit_mode()) {
    result.fits = final_model->fits;
    if (!result.fits) result.bottleneck_tensors = PeakTensorNames(*final_model);
  }
  return result;
}

}  // namespace ordo
