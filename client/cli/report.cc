#include "client/cli/report.h"

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "core/memory/simulator.h"
#include "core/report/memory_svg.h"
#include "core/util/check.h"
#include "google/protobuf/util/json_util.h"
#include "rpc/compile_proto.h"
#include "rpc/pools_proto.h"

namespace ordo::cli {
namespace {

double Gap(int64_t peak, int64_t bound) {
  return bound > 0 ? static_cast<double>(peak - bound) / static_cast<double>(bound) : 0.0;
}

double Milliseconds(absl::Duration d) { return absl::ToDoubleMilliseconds(d); }

std::string Row(absl::string_view label, absl::string_view value) {
  return absl::StrFormat("%-13s %s\n", label, value);
}

std::string RewriteText(const RewriteSummary& summary) {
  std::string out;
  if (summary.fit_fallback) {
    const std::string why =
        summary.tensor_larger_than_every_pool
            ? "a tensor is larger than every pool (see the note)"
            : absl::StrCat("peak ", FormatBytes(summary.fallback_from_peak_bytes), " did not fit");
    out += Row("rewrite", absl::StrCat(why, ": rewrote with --rewrite all (fit mode)"));
  }
  out += Row(summary.fit_fallback ? "" : "rewrite",
             absl::StrFormat("%s: %d rewrite(s) kept, peak %s before rewriting; "
                             "%+d MACs, %+d ops, latency %+.1f%%",
                             summary.mode, summary.rewrites.size(),
                             FormatBytes(summary.original_peak_bytes),
                             summary.rewritten_macs - summary.original_macs,
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

}  // namespace

namespace {

// Protobuf's JSON mapping with every field present, under the proto's names.
std::string ProtoJson(const google::protobuf::Message& message) {
  google::protobuf::util::JsonPrintOptions options;
  options.add_whitespace = true;
  options.always_print_primitive_fields = true;
  options.preserve_proto_field_names = true;
  std::string json;
  // Only fails on messages that cannot be mapped (an Any without a type
  // resolver, an out-of-range Duration); ours never are (DurationToProto
  // saturates).
  ORDO_CHECK(google::protobuf::util::MessageToJsonString(message, &json, options).ok());
  return json;
}

}  // namespace

std::string DevicePresetsJson() {
  v1::GetInfoResponse info;
  rpc::DevicePresetsToProto(info);
  std::vector<std::string> presets;
  for (const v1::DevicePresetInfo& preset : info.device_presets()) {
    presets.push_back(ProtoJson(preset));
  }
  return absl::StrCat("{\"device_presets\": [", absl::StrJoin(presets, ",\n"), "]}\n");
}

std::string CompileResponseJson(v1::CompileResponse response, const std::string& model_path) {
  response.set_model_path(model_path);
  response.clear_rewritten_onnx_model();
  response.clear_reordered_onnx_model();
  response.clear_reordered_tflite_model();
  return ProtoJson(response);
}

std::string ArenaJson(const v1::CompileResponse& response) { return ProtoJson(response.arena()); }

std::string EstimateJson(const std::string& model_path, const EstimateResult& estimate) {
  v1::EstimateResponse response = rpc::EstimateResultToProto(estimate);
  response.set_model_path(model_path);
  return ProtoJson(response);
}

std::string CompileReportText(const std::string& model_path, const Graph& graph,
                              const CompileOptions& options, const CompileResult& result,
                              const RewriteSummary* rewrite) {
  std::string out;
  out += Row("model", model_path);
  out += Row("ops", absl::StrCat(graph.num_ops(), " (", graph.num_tensors(), " tensors)"));
  for (const std::string& note : graph.notes()) out += Row("note", note);
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
                                       stats.parts - stats.cache_hits, " scheduled (",
                                       stats.in_process_tasks, " in process, on ",
                                       stats.runners_used, " worker(s))"));
  }
  if (rewrite != nullptr) out += RewriteText(*rewrite);
  out += Row("time", absl::StrFormat("%.1f ms", Milliseconds(result.time)));
  return out;
}

std::string EstimateText(const std::string& model_path, const EstimateResult& estimate) {
  std::string out;
  out += Row("model", model_path);
  out += Row("ops", absl::StrCat(estimate.ops));
  for (const std::string& note : estimate.import_notes) out += Row("note", note);
  out += Row("model order", FormatBytes(estimate.model_order_peak_bytes));
  out += Row("greedy", FormatBytes(estimate.greedy_peak_bytes));
  out += Row("lower bound", FormatBytes(estimate.lower_bound_bytes));
  if (estimate.cached.parts > 0) {
    out += Row("cached", estimate.cached.peak_bytes
                             ? FormatBytes(*estimate.cached.peak_bytes)
                             : absl::StrCat(estimate.cached.cached_parts, " of ",
                                            estimate.cached.parts, " parts cached"));
  }
  switch (estimate.fits) {
    case EstimateFit::kYes: out += Row("fits", "yes"); break;
    case EstimateFit::kNo: out += Row("fits", "no"); break;
    case EstimateFit::kUnknown: out += Row("fits", "unknown"); break;
    case EstimateFit::kNoLimit: break;
  }
  if (!estimate.pools_reason.empty()) out += Row("pools", estimate.pools_reason);
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
          {"op_types", op_types},
          {"notes", std::vector<std::string>(graph.notes().begin(), graph.notes().end())}};
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
  for (const std::string& note : graph.notes()) out += Row("note", note);
  return out;
}

}  // namespace ordo::cli
