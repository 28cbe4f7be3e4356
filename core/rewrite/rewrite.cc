#include "core/rewrite/rewrite.h"

#include <algorithm>
#include <memory>
#include <string>
#include <utility>

#include "absl/container/flat_hash_map.h"
#include "absl/status/status.h"
#include "absl/strings/str_cat.h"
#include "core/memory/simulator.h"
#include "core/onnx/onnx_import.h"
#include "core/rewrite/concat_conv_rewrite.h"
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
    ++schedules_run_;
    ORDO_ASSIGN_OR_RETURN(MemoryModel memory, BuildMemoryModel(graph, options_.memory));
    ScheduleLimits limits;
    limits.clock = options_.clock;
    limits.deadline = limits.Now() + options_.schedule_time_limit;
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

  bool Expired() const { return Now() - start_ >= options_.time_limit; }
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

// Names every node the importer names, as the Graph names it, so that
// nodes can be found by name after other rewrites moved them.
void NameNodesAsGraph(const Graph& graph, onnx::ModelProto& model) {
  onnx::GraphProto* g = model.mutable_graph();
  for (const Op& op : graph.ops()) {
    if (op.source_index >= 0 && op.source_index < g->node_size()) {
      g->mutable_node(op.source_index)->set_name(op.name);
    }
  }
}

}  // namespace

absl::StatusOr<RewriteMode> ParseRewriteMode(absl::string_view name) {
  if (name == "none") return RewriteMode::kNone;
  if (name == "identity") return RewriteMode::kIdentity;
  return absl::InvalidArgumentError(
      absl::StrCat("unknown rewrite mode \"", name, "\"; expected none|identity"));
}

absl::string_view RewriteModeName(RewriteMode mode) {
  return mode == RewriteMode::kNone ? "none" : "identity";
}

absl::StatusOr<RewriteResult> RewriteForMemory(const onnx::ModelProto& model,
                                               const RewriteOptions& options) {
  ORDO_ASSIGN_OR_RETURN(std::unique_ptr<Scheduler> scheduler,
                        BuiltinSchedulers().Create(options.scheduler));
  std::string bytes;
  if (!model.SerializeToString(&bytes)) {
    return absl::InvalidArgumentError("model does not serialize");
  }
  ORDO_ASSIGN_OR_RETURN(Graph original, ImportOnnx(bytes, options.limits));
  onnx::ModelProto named = model;
  NameNodesAsGraph(original, named);

  std::vector<ConcatConvSite> sites;
  if (options.mode == RewriteMode::kIdentity) sites = FindConcatConvSites(original);
  Search search(options, *scheduler, original, sites);
  ORDO_ASSIGN_OR_RETURN(Candidate current, search.Evaluate(std::move(named)));
  RewriteResult result;
  result.original_peak_bytes = current.peak();
  result.sites_found = search.num_sites();

  std::vector<int32_t> pending;
  for (int32_t i = 0; i < search.num_sites(); ++i) pending.push_back(i);
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
        step = std::move(next);
      }
      if (step.peak() < current.peak()) {
        current = std::move(step);
        for (AppliedRewrite& applied : steps) result.rewrites.push_back(std::move(applied));
      }
    }
  }
  if (search.Expired() && !pending.empty()) result.time_limit_hit = true;

  result.model = std::move(current.model);
  result.graph = std::move(current.graph);
  result.schedule = std::move(current.schedule);
  result.schedules_run = search.schedules_run();
  result.sites_skipped = static_cast<int32_t>(failed.size());
  return result;
}

}  // namespace ordo
