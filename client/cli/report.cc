#include "client/cli/report.h"

#include <algorithm>
#include <map>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/report/memory_svg.h"
#include "core/memory/simulator.h"

namespace ordo::cli {
namespace {

double Gap(int64_t peak, int64_t bound) {
  return bound > 0 ? static_cast<double>(peak - bound) / static_cast<double>(bound) : 0.0;
}

double Milliseconds(absl::Duration d) { return absl::ToDoubleMilliseconds(d); }

nlohmann::ordered_json OptionsJson(const CompileOptions& options) {
  return {{"inplace", options.memory.inplace},
          {"count_weights", options.memory.count_weights},
          {"io_outside_arena", options.memory.io_outside_arena},
          {"activation_element_bytes", options.memory.activation_element_bytes},
          {"alignment", options.alignment},
          {"arena_planner", options.arena_planner},
          {"time_limit_ms", Milliseconds(options.time_limit)}};
}

nlohmann::ordered_json PartsJson(const CompileResult& result) {
  nlohmann::ordered_json parts = nlohmann::ordered_json::array();
  for (const PartStats& part : result.parts) {
    parts.push_back({{"ops", part.ops},
                     {"peak_bytes", part.peak_bytes},
                     {"lower_bound_bytes", part.lower_bound_bytes},
                     {"status", std::string(ScheduleStatusName(part.status))},
                     {"algorithm", part.algorithm},
                     {"states_expanded", part.states_expanded},
                     {"time_ms", Milliseconds(part.time)}});
  }
  return parts;
}

std::string Row(absl::string_view label, absl::string_view value) {
  return absl::StrFormat("%-13s %s\n", label, value);
}

nlohmann::ordered_json TrafficJson(const CompileResult& result) {
  if (!result.traffic) return nullptr;
  const TrafficResult& traffic = *result.traffic;
  nlohmann::ordered_json json = {
      {"on_chip_bytes", traffic.on_chip_bytes},
      {"read_bytes", traffic.read_bytes},
      {"write_bytes", traffic.write_bytes},
      {"total_bytes", traffic.total_bytes},
      // With pools the traffic is the placement's; there is no model-order
      // placement to compare with.
      {"from", result.placement ? "placement" : "belady"},
      {"baseline_total_bytes", result.model_order_traffic
                                   ? nlohmann::ordered_json(result.model_order_traffic->total_bytes)
                                   : nlohmann::ordered_json(nullptr)},
      {"fixed_read_bytes", traffic.fixed_read_bytes},
      {"fixed_write_bytes", traffic.fixed_write_bytes},
      {"streamed_steps", traffic.streamed_steps}};
  if (!traffic.resident_bytes.empty()) json["resident_bytes"] = traffic.resident_bytes;
  return json;
}

nlohmann::ordered_json ArenaBaselinesJson(const CompileResult& result) {
  nlohmann::ordered_json json = nlohmann::ordered_json::object();
  for (const ArenaBaseline& baseline : result.arena_baselines) {
    json[baseline.name] = {{"schedule_bytes", baseline.schedule_bytes},
                           {"model_order_bytes", baseline.model_order_bytes}};
  }
  return json;
}

// What the service's cache and workers did; null in local mode.
nlohmann::ordered_json ServiceJson(const CompileResult& result) {
  if (!result.part_stats) return nullptr;
  const PartScheduleStats& stats = *result.part_stats;
  return {{"parts", stats.parts},
          {"cache_hits", stats.cache_hits},
          {"cache_misses", stats.cache_misses},
          {"cache_errors", stats.cache_errors},
          {"workers_used", stats.runners_used},
          {"task_retries", stats.task_retries},
          {"worker_answers_rejected", stats.rejected_answers},
          {"fallback_parts", stats.fallback_parts},
          {"deduplicated_parts", stats.deduplicated_parts}};
}

nlohmann::ordered_json ParetoJson(const std::vector<ParetoPoint>& front) {
  nlohmann::ordered_json points = nlohmann::ordered_json::array();
  for (const ParetoPoint& point : front) {
    points.push_back({{"peak_bytes", point.peak_bytes},
                      {"latency_overhead", point.latency_overhead},
                      {"mac_overhead", point.mac_overhead},
                      {"rewrites", point.rewrites}});
  }
  return points;
}

nlohmann::ordered_json RewriteJson(const RewriteSummary& summary) {
  nlohmann::ordered_json rewrites = nlohmann::ordered_json::array();
  for (const AppliedRewrite& applied : summary.rewrites) {
    rewrites.push_back({{"kind", applied.kind},
                        {"description", applied.description},
                        {"concat", applied.concat},
                        {"convs", applied.convs},
                        {"peak_before_bytes", applied.peak_before_bytes},
                        {"peak_after_bytes", applied.peak_after_bytes},
                        {"extra_macs", applied.extra_macs},
                        {"extra_ops", applied.extra_ops}});
  }
  return {{"mode", summary.mode},
          {"fit_fallback", summary.fit_fallback},
          {"fallback_from_peak_bytes",
           summary.fit_fallback ? nlohmann::ordered_json(summary.fallback_from_peak_bytes)
                                : nlohmann::ordered_json(nullptr)},
          {"original_peak_bytes", summary.original_peak_bytes},
          {"rewrites", rewrites},
          {"original_macs", summary.original_macs},
          {"rewritten_macs", summary.rewritten_macs},
          {"original_ops", summary.original_ops},
          {"rewritten_ops", summary.rewritten_ops},
          {"latency_overhead", summary.latency_overhead},
          {"weights_carried", summary.weights_carried},
          {"note", summary.note},
          {"fits", summary.fit_mode ? nlohmann::ordered_json(summary.fits)
                                    : nlohmann::ordered_json(nullptr)},
          {"bottleneck_tensors", summary.bottleneck_tensors},
          {"sites_found", summary.sites_found},
          {"sites_skipped", summary.sites_skipped},
          {"schedules_run", summary.schedules_run},
          {"time_limit_hit", summary.time_limit_hit},
          {"time_ms", Milliseconds(summary.time)},
          {"pareto", ParetoJson(summary.pareto)}};
}

std::string RewriteText(const RewriteSummary& summary) {
  std::string out;
  if (summary.fit_fallback) {
    out += Row("rewrite", absl::StrCat("peak ", FormatBytes(summary.fallback_from_peak_bytes),
                                       " did not fit: rewrote with --rewrite all (fit mode)"));
  }
  out += Row(summary.fit_fallback ? "" : "rewrite",
             absl::StrFormat("%s: %d rewrite(s) kept, peak %s before rewriting; "
                             "%+lld MACs, %+d ops, latency %+.1f%%",
                             summary.mode, summary.rewrites.size(),
                             FormatBytes(summary.original_peak_bytes),
                             static_cast<long long>(summary.rewritten_macs - summary.original_macs),
                             summary.rewritten_ops - summary.original_ops,
                             100 * summary.latency_overhead));
  for (const AppliedRewrite& applied : summary.rewrites) {
    const std::string what =
        !applied.description.empty()
            ? applied.description
            : absl::StrCat(applied.concat, " -> ", absl::StrJoin(applied.convs, ", "));
    out += Row("", absl::StrFormat("%s %s: %s -> %s", applied.kind, what,
                                   FormatBytes(applied.peak_before_bytes),
                                   FormatBytes(applied.peak_after_bytes)));
  }
  if (!summary.note.empty()) out += Row("", absl::StrCat("note: ", summary.note));
  for (const ParetoPoint& point : summary.pareto) {
    out += Row(&point == &summary.pareto.front() ? "pareto" : "",
               absl::StrFormat("%s at latency %+.1f%%, MACs %+.1f%% (%d rewrite(s))",
                               FormatBytes(point.peak_bytes), 100 * point.latency_overhead,
                               100 * point.mac_overhead, point.rewrites.size()));
  }
  if (summary.time_limit_hit) out += Row("", "the search hit its time limit");
  return out;
}

// One line per pool, then the total against the bound and the baselines.
std::string PlacementText(const PoolReport& report) {
  const PoolEvaluation& evaluation = report.placement.evaluation;
  std::string out;
  for (const PoolUsage& pool : evaluation.pools) {
    out += Row(absl::StrCat("pool ", pool.name),
               absl::StrFormat("%s of %s, %d tensors, %.3g ms%s", FormatBytes(pool.used_bytes),
                               FormatBytes(pool.capacity_bytes), pool.tensors,
                               1e3 * pool.modelled_seconds,
                               pool.used_bytes > pool.capacity_bytes ? " OVERFLOWS" : ""));
  }
  std::string baselines;
  for (const PoolBaseline& baseline : report.baselines) {
    if (baseline.name == "single_pool") continue;
    absl::StrAppend(&baselines, ", ", baseline.name, " ",
                    baseline.fits ? absl::StrFormat("%.3g ms", 1e3 * baseline.modelled_seconds)
                                  : std::string("does not fit"));
  }
  out += Row("placement",
             report.fits()
                 ? absl::StrFormat("fits; modelled memory time %.3g ms by %s (bound %.3g ms)%s",
                                   1e3 * evaluation.modelled_seconds, report.placement.algorithm,
                                   1e3 * report.lower_bound_seconds, baselines)
                 : absl::StrCat("DOES NOT FIT: ", report.overflow, baselines));
  return out;
}

// Spec "Memory pools": the placement, each pool's use and share of the
// modelled time, the bound and the baselines on the same schedule.
nlohmann::ordered_json PlacementJson(const CompileOptions& options, const CompileResult& result) {
  if (!result.placement) return nullptr;
  const PoolReport& report = *result.placement;
  const PoolEvaluation& evaluation = report.placement.evaluation;
  nlohmann::ordered_json pools = nlohmann::ordered_json::array();
  for (const PoolUsage& pool : evaluation.pools) {
    pools.push_back({{"name", pool.name},
                     {"off_chip", options.pools.pools[&pool - evaluation.pools.data()].off_chip},
                     {"capacity_bytes", pool.capacity_bytes},
                     {"used_bytes", pool.used_bytes},
                     {"tensors", pool.tensors},
                     {"modelled_time_s", pool.modelled_seconds},
                     {"time_share", evaluation.modelled_seconds > 0
                                        ? pool.modelled_seconds / evaluation.modelled_seconds
                                        : 0.0}});
  }
  nlohmann::ordered_json baselines = nlohmann::ordered_json::object();
  for (const PoolBaseline& baseline : report.baselines) {
    if (baseline.name == "single_pool") {
      baselines[baseline.name] = {{"fits", baseline.fits},
                                  {"arena_bytes", baseline.single_pool_bytes}};
    } else {
      baselines[baseline.name] = {{"fits", baseline.fits},
                                  {"modelled_time_s", baseline.modelled_seconds},
                                  {"overflow_bytes", baseline.overflow_bytes}};
    }
  }
  return {{"algorithm", report.placement.algorithm},
          {"fits", report.fits()},
          {"overflow", report.overflow.empty() ? nlohmann::ordered_json(nullptr)
                                               : nlohmann::ordered_json(report.overflow)},
          {"modelled_time_s", evaluation.modelled_seconds},
          {"lower_bound_s", report.lower_bound_seconds},
          {"gap", report.lower_bound_seconds > 0
                      ? evaluation.modelled_seconds / report.lower_bound_seconds - 1
                      : 0.0},
          {"pools", pools},
          {"baselines", baselines},
          {"time_ms", Milliseconds(report.time)}};
}

}  // namespace

nlohmann::ordered_json ArenaJson(const Graph& graph, const CompileResult& result) {
  const ArenaPlan& arena = result.arena;
  nlohmann::ordered_json tensors = nlohmann::ordered_json::array();
  for (const TensorPlacement& placement : arena.tensors) {
    nlohmann::ordered_json tensor = {{"name", graph.tensor(placement.tensor).name}};
    if (placement.pool != kNoId && result.placement) {
      tensor["pool"] = result.placement->placement.evaluation.pools[placement.pool].name;
    }
    tensor["offset"] = placement.offset;
    tensor["size"] = placement.size;
    tensor["first_step"] = placement.first_step;
    tensor["last_step"] = placement.last_step;
    tensors.push_back(std::move(tensor));
  }
  return {{"bytes", arena.arena_bytes},
          {"lower_bound_bytes", arena.lower_bound_bytes},
          {"gap", Gap(arena.arena_bytes, arena.lower_bound_bytes)},
          {"planner", arena.planner},
          {"algorithm", arena.algorithm},
          {"alignment", arena.alignment},
          {"optimal", arena.optimal},
          {"tensors", tensors}};
}

nlohmann::ordered_json CompileReportJson(const std::string& model_path, const Graph& graph,
                                         const CompileOptions& options,
                                         const CompileResult& result,
                                         const RewriteSummary* rewrite) {
  nlohmann::ordered_json json;
  json["model"] = model_path;
  json["ops"] = graph.num_ops();
  json["tensors"] = graph.num_tensors();
  json["scheduler"] = result.scheduler;
  json["algorithm"] = result.algorithm;
  json["status"] = std::string(ScheduleStatusName(result.status));
  json["peak_bytes"] = result.peak_bytes;
  json["lower_bound_bytes"] = result.lower_bound_bytes;
  json["gap"] = Gap(result.peak_bytes, result.lower_bound_bytes);
  nlohmann::ordered_json baselines = nlohmann::ordered_json::object();
  for (const BaselinePeak& baseline : result.baselines) {
    baselines[baseline.name] = {{"peak_bytes", baseline.peak_bytes}};
  }
  json["baselines"] = baselines;
  json["memory_limit_bytes"] = options.memory_limit_bytes;
  const std::optional<bool> fits = FitsDevice(options, result);
  json["fits"] = fits ? nlohmann::ordered_json(*fits) : nlohmann::ordered_json(nullptr);
  json["options"] = OptionsJson(options);
  nlohmann::ordered_json schedule = nlohmann::ordered_json::array();
  for (OpId op : result.schedule) schedule.push_back(graph.op(op).name);
  json["schedule"] = schedule;
  json["initial_bytes"] = result.simulation.initial_bytes;
  json["profile"] = result.simulation.step_bytes;
  json["peak_step"] = result.simulation.peak_step;
  json["parts"] = PartsJson(result);
  json["arena"] = ArenaJson(graph, result);
  json["arena_baselines"] = ArenaBaselinesJson(result);
  json["placement"] = PlacementJson(options, result);
  json["traffic"] = TrafficJson(result);
  json["stats"] = {{"states_expanded", result.stats.states_expanded},
                   {"states_stored", result.stats.states_stored},
                   {"schedule_time_ms", Milliseconds(result.stats.time)}};
  json["service"] = ServiceJson(result);
  json["rewrite"] =
      rewrite != nullptr ? RewriteJson(*rewrite) : nlohmann::ordered_json(nullptr);
  json["time_ms"] = Milliseconds(result.time);
  return json;
}

std::string CompileReportText(const std::string& model_path, const Graph& graph,
                              const CompileOptions& options, const CompileResult& result,
                              const RewriteSummary* rewrite) {
  std::string out;
  out += Row("model", model_path);
  out += Row("ops", absl::StrCat(graph.num_ops(), " (", graph.num_tensors(), " tensors)"));
  out += Row("scheduler", absl::StrCat(result.scheduler, " (schedule by ", result.algorithm,
                                       ", ", ScheduleStatusName(result.status), ")"));
  out += Row("peak", absl::StrCat(FormatBytes(result.peak_bytes), " (", result.peak_bytes, " B)",
                                  result.memory.io_outside_arena
                                      ? ", graph inputs and outputs not counted"
                                      : ""));
  out += Row("lower bound",
             absl::StrFormat("%s (%d B), gap %.1f%%", FormatBytes(result.lower_bound_bytes),
                             result.lower_bound_bytes,
                             100 * Gap(result.peak_bytes, result.lower_bound_bytes)));
  std::string baselines;
  for (const BaselinePeak& baseline : result.baselines) {
    absl::StrAppend(&baselines, baselines.empty() ? "" : ", ", baseline.name, " ",
                    FormatBytes(baseline.peak_bytes));
  }
  out += Row("baselines", baselines);
  if (options.memory_limit_bytes > 0) {
    bool fits = result.peak_bytes <= options.memory_limit_bytes;
    out += Row("memory limit", absl::StrCat(FormatBytes(options.memory_limit_bytes), ": ",
                                            fits ? "fits" : "DOES NOT FIT"));
  }
  out += Row("arena", absl::StrFormat("%s by %s (bound %s, gap %.1f%%); tflite %s",
                                      FormatBytes(result.arena.arena_bytes),
                                      result.arena.algorithm,
                                      FormatBytes(result.arena.lower_bound_bytes),
                                      100 * Gap(result.arena.arena_bytes,
                                                result.arena.lower_bound_bytes),
                                      FormatBytes(result.arena_baselines.empty()
                                                      ? 0
                                                      : result.arena_baselines[0].schedule_bytes)));
  for (const ArenaBaseline& baseline : result.arena_baselines) {
    if (baseline.name != "tflm") continue;
    // What TFLite Micro's own planner allocates on the device.
    out += Row("tflm arena", absl::StrCat(FormatBytes(baseline.model_order_bytes),
                                          " in model order, ",
                                          FormatBytes(baseline.schedule_bytes),
                                          " in this schedule's order"));
  }
  if (result.placement) out += PlacementText(*result.placement);
  if (result.traffic) {
    out += Row("traffic",
               absl::StrCat(absl::StrFormat("%s off-chip with %s on-chip",
                                            FormatBytes(result.traffic->total_bytes),
                                            FormatBytes(result.traffic->on_chip_bytes)),
                            result.model_order_traffic
                                ? absl::StrCat(" (model order ",
                                               FormatBytes(result.model_order_traffic->total_bytes),
                                               ")")
                                : std::string(" (tensors placed in off-chip pools)")));
  }
  if (!result.parts.empty()) out += Row("parts", absl::StrCat(result.parts.size()));
  if (result.part_stats) {
    const PartScheduleStats& stats = *result.part_stats;
    out += Row("service", absl::StrCat(stats.parts, " parts: ", stats.cache_hits, " cached, ",
                                       stats.cache_misses, " scheduled on ", stats.runners_used,
                                       " worker(s)"));
  }
  if (rewrite != nullptr) out += RewriteText(*rewrite);
  out += Row("time", absl::StrFormat("%.1f ms", Milliseconds(result.time)));
  return out;
}

nlohmann::ordered_json EstimateJson(const std::string& model_path,
                                    const CompileOptions& options,
                                    const EstimateResult& estimate) {
  nlohmann::ordered_json json = {
      {"model", model_path},
      {"ops", estimate.ops},
      {"model_order_peak_bytes", estimate.model_order_peak_bytes},
      {"greedy_peak_bytes", estimate.greedy_peak_bytes},
      {"lower_bound_bytes", estimate.lower_bound_bytes},
      {"cached_peak_bytes", estimate.cached.peak_bytes
                                ? nlohmann::ordered_json(*estimate.cached.peak_bytes)
                                : nlohmann::ordered_json(nullptr)},
      {"parts", estimate.cached.parts},
      {"cached_parts", estimate.cached.cached_parts},
      {"memory_limit_bytes", options.memory_limit_bytes}};
  // Fits for sure when some known order fits; surely not when the bound
  // does not; otherwise only a compile can tell.
  const int64_t best_known = std::min(
      estimate.greedy_peak_bytes,
      estimate.cached.peak_bytes.value_or(estimate.greedy_peak_bytes));
  if (options.memory_limit_bytes == 0) {
    json["fits"] = nullptr;
  } else if (best_known <= options.memory_limit_bytes) {
    json["fits"] = "yes";
  } else if (estimate.lower_bound_bytes > options.memory_limit_bytes) {
    json["fits"] = "no";
  } else {
    json["fits"] = "unknown";
  }
  return json;
}

std::string EstimateText(const std::string& model_path, const CompileOptions& options,
                         const EstimateResult& estimate) {
  nlohmann::ordered_json json = EstimateJson(model_path, options, estimate);
  std::string out;
  out += Row("model", model_path);
  out += Row("ops", absl::StrCat(estimate.ops));
  out += Row("model order", FormatBytes(estimate.model_order_peak_bytes));
  out += Row("greedy", FormatBytes(estimate.greedy_peak_bytes));
  out += Row("lower bound", FormatBytes(estimate.lower_bound_bytes));
  if (estimate.cached.parts > 0) {
    out += Row("cached", estimate.cached.peak_bytes
                             ? FormatBytes(*estimate.cached.peak_bytes)
                             : absl::StrCat(estimate.cached.cached_parts, " of ",
                                            estimate.cached.parts, " parts cached"));
  }
  if (!json["fits"].is_null()) out += Row("fits", json["fits"].get<std::string>());
  return out;
}

nlohmann::ordered_json InspectJson(const std::string& model_path, const Graph& graph,
                                   const MemoryModel& model) {
  std::map<std::string, int> op_types;
  for (const Op& op : graph.ops()) ++op_types[op.type];
  int64_t activation_bytes = 0, weight_bytes = 0;
  int weights = 0;
  for (const Tensor& tensor : graph.tensors()) {
    if (tensor.kind == TensorKind::kWeight) {
      ++weights;
      weight_bytes += tensor.bytes;
    } else {
      activation_bytes += tensor.bytes;
    }
  }
  nlohmann::ordered_json inputs = nlohmann::ordered_json::array();
  for (TensorId t : graph.inputs()) {
    inputs.push_back({{"name", graph.tensor(t).name}, {"dims", graph.tensor(t).dims},
                      {"bytes", graph.tensor(t).bytes}});
  }
  nlohmann::ordered_json outputs = nlohmann::ordered_json::array();
  for (TensorId t : graph.outputs()) {
    outputs.push_back({{"name", graph.tensor(t).name}, {"dims", graph.tensor(t).dims},
                       {"bytes", graph.tensor(t).bytes}});
  }
  return {{"model", model_path},
          {"name", graph.name()},
          {"ops", graph.num_ops()},
          {"tensors", graph.num_tensors()},
          {"weights", weights},
          {"weight_bytes", weight_bytes},
          {"activation_bytes_total", activation_bytes},
          {"lower_bound_bytes", MemoryLowerBound(model)},
          {"inputs", inputs},
          {"outputs", outputs},
          {"op_types", op_types}};
}

std::string InspectText(const std::string& model_path, const Graph& graph,
                        const MemoryModel& model) {
  nlohmann::ordered_json json = InspectJson(model_path, graph, model);
  std::string out;
  out += Row("model", model_path);
  out += Row("ops", absl::StrCat(graph.num_ops(), " (", graph.num_tensors(), " tensors, ",
                                 json["weights"].get<int>(), " weights)"));
  out += Row("activations", FormatBytes(json["activation_bytes_total"].get<int64_t>()) +
                                " in total");
  out += Row("weights", FormatBytes(json["weight_bytes"].get<int64_t>()));
  out += Row("lower bound", FormatBytes(MemoryLowerBound(model)));
  for (TensorId t : graph.inputs()) {
    out += Row("input", absl::StrCat(graph.tensor(t).name, " ",
                                     FormatBytes(graph.tensor(t).bytes)));
  }
  for (TensorId t : graph.outputs()) {
    out += Row("output", absl::StrCat(graph.tensor(t).name, " ",
                                      FormatBytes(graph.tensor(t).bytes)));
  }
  std::string types;
  for (const auto& [type, count] : json["op_types"].items()) {
    absl::StrAppend(&types, types.empty() ? "" : ", ", type, " ", count.get<int>());
  }
  out += Row("op types", types);
  return out;
}

}  // namespace ordo::cli
