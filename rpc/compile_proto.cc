#include "rpc/compile_proto.h"

#include <numeric>
#include <string>
#include <utility>

#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/types/span.h"
#include "core/graph/dtype.h"
#include "core/graph/graph_proto.h"
#include "core/memory/simulator.h"
#include "core/onnx/onnx_import.h"
#include "core/util/status_macros.h"
#include "rpc/input_shapes_proto.h"
#include "rpc/memory_model_proto.h"
#include "rpc/pools_proto.h"

namespace ordo::rpc {
namespace {

constexpr absl::Duration kDefaultTimeLimit = absl::Seconds(10);

// The memory model only needs an activation's element size.
int ElementBytes(v1::DataType dtype) { return ElementSize(DataTypeFromProto(dtype)); }

// The inverse for clients: any type of that size stands for it.
v1::DataType DataTypeOfElementBytes(int bytes) {
  switch (bytes) {
    case 1: return v1::DATA_TYPE_INT8;
    case 2: return v1::DATA_TYPE_FLOAT16;
    case 4: return v1::DATA_TYPE_FLOAT32;
    case 8: return v1::DATA_TYPE_FLOAT64;
    default: return v1::DATA_TYPE_UNSPECIFIED;
  }
}

void TrafficToProto(const TrafficResult& traffic, v1::TrafficEstimate& out) {
  out.set_on_chip_bytes(traffic.on_chip_bytes);
  out.set_read_bytes(traffic.read_bytes);
  out.set_write_bytes(traffic.write_bytes);
  out.set_total_bytes(traffic.total_bytes);
  out.set_fixed_read_bytes(traffic.fixed_read_bytes);
  out.set_fixed_write_bytes(traffic.fixed_write_bytes);
  out.set_streamed_steps(traffic.streamed_steps);
  out.set_streamed_bytes(traffic.streamed_bytes);
  out.mutable_resident_bytes()->Add(traffic.resident_bytes.begin(), traffic.resident_bytes.end());
}

TrafficResult TrafficFromProto(const v1::TrafficEstimate& in) {
  TrafficResult traffic;
  traffic.on_chip_bytes = in.on_chip_bytes();
  traffic.read_bytes = in.read_bytes();
  traffic.write_bytes = in.write_bytes();
  traffic.total_bytes = in.total_bytes();
  traffic.fixed_read_bytes = in.fixed_read_bytes();
  traffic.fixed_write_bytes = in.fixed_write_bytes();
  traffic.streamed_steps = in.streamed_steps();
  traffic.streamed_bytes = in.streamed_bytes();
  traffic.resident_bytes.assign(in.resident_bytes().begin(), in.resident_bytes().end());
  return traffic;
}

// `placement`: the pools TensorPlacement::pool indexes; null for the one
// flat arena.
void ArenaToProto(const Graph& graph, const ArenaPlan& plan, const PoolReport* placement,
                  v1::ArenaPlan& arena) {
  arena.set_planner(plan.planner);
  arena.set_algorithm(plan.algorithm);
  arena.set_alignment_bytes(plan.alignment);
  arena.set_arena_bytes(plan.arena_bytes);
  arena.set_lower_bound_bytes(plan.lower_bound_bytes);
  arena.set_gap_bytes(plan.gap_bytes);
  arena.set_optimal(plan.optimal);
  for (const TensorPlacement& tensor : plan.tensors) {
    v1::TensorPlacement* out = arena.add_tensors();
    out->set_tensor(graph.tensor(tensor.tensor).name);
    out->set_offset_bytes(tensor.offset);
    out->set_size_bytes(tensor.size);
    out->set_first_step(tensor.first_step);
    out->set_last_step(tensor.last_step);
    if (placement != nullptr && tensor.pool != kNoId) {
      out->set_pool(placement->placement.evaluation.pools[tensor.pool].name);
    }
  }
}

absl::StatusOr<ArenaPlan> ArenaFromProto(const Graph& graph, const std::vector<MemoryPool>& pools,
                                         const v1::ArenaPlan& arena) {
  ArenaPlan plan;
  plan.planner = arena.planner();
  plan.algorithm = arena.algorithm();
  plan.alignment = arena.alignment_bytes();
  plan.arena_bytes = arena.arena_bytes();
  plan.lower_bound_bytes = arena.lower_bound_bytes();
  plan.gap_bytes = arena.gap_bytes();
  plan.optimal = arena.optimal();
  for (const v1::TensorPlacement& in : arena.tensors()) {
    std::optional<TensorId> tensor = graph.FindTensor(in.tensor());
    if (!tensor) {
      return absl::InvalidArgumentError(
          absl::StrCat("response: arena names unknown tensor \"", in.tensor(), "\""));
    }
    TensorPlacement& placement = plan.tensors.emplace_back();
    placement = {*tensor, in.offset_bytes(), in.size_bytes(), in.first_step(), in.last_step()};
    if (in.pool().empty()) continue;
    for (int32_t p = 0; p < static_cast<int32_t>(pools.size()); ++p) {
      if (pools[p].name == in.pool()) placement.pool = p;
    }
    if (placement.pool == kNoId) {
      return absl::InvalidArgumentError(absl::StrCat("response: tensor \"", in.tensor(),
                                                     "\" is placed in unknown memory pool \"",
                                                     in.pool(), "\""));
    }
  }
  return plan;
}

void PartsToProto(const CompileResult& result, v1::CompileResponse& response) {
  for (size_t p = 0; p < result.parts.size(); ++p) {
    const PartStats& part = result.parts[p];
    v1::PartStats* out = response.add_parts();
    out->set_ops(part.ops);
    out->set_peak_bytes(part.peak_bytes);
    out->set_lower_bound_bytes(part.lower_bound_bytes);
    out->set_status(ScheduleStatusToProto(part.status));
    out->set_algorithm(part.algorithm);
    out->set_states_expanded(part.states_expanded);
    *out->mutable_time() = DurationToProto(part.time);
    out->set_cached(p < result.part_cached.size() && result.part_cached[p]);
  }
}

void StatsToProto(const CompileResult& result, v1::CompileStats& out) {
  *out.mutable_time() = DurationToProto(result.time);
  *out.mutable_schedule_time() =
      DurationToProto(result.part_stats ? result.part_stats->time : result.stats.time);
  out.set_states_expanded(result.stats.states_expanded);
  out.set_states_stored(result.stats.states_stored);
  if (!result.part_stats) {
    out.set_parts(std::max<int32_t>(1, static_cast<int32_t>(result.parts.size())));
    return;
  }
  const PartScheduleStats& stats = *result.part_stats;
  out.set_parts(stats.parts);
  out.set_cache_hits(stats.cache_hits);
  out.set_cache_misses(stats.cache_misses);
  out.set_cache_errors(stats.cache_errors + stats.cache_rejected);
  out.set_workers_used(stats.runners_used);
  out.set_in_process_parts(stats.in_process_tasks);
  out.set_task_retries(stats.task_retries);
  out.set_worker_answers_rejected(stats.rejected_answers);
  out.set_fallback_parts(stats.fallback_parts);
  out.set_deduplicated_parts(stats.deduplicated_parts);
}

PartScheduleStats StatsFromProto(const v1::CompileStats& in) {
  PartScheduleStats stats;
  stats.parts = in.parts();
  stats.cache_hits = in.cache_hits();
  stats.cache_misses = in.cache_misses();
  stats.cache_errors = in.cache_errors();
  stats.runners_used = in.workers_used();
  stats.in_process_tasks = in.in_process_parts();
  stats.task_retries = in.task_retries();
  stats.rejected_answers = in.worker_answers_rejected();
  stats.fallback_parts = in.fallback_parts();
  stats.deduplicated_parts = in.deduplicated_parts();
  stats.time = DurationFromProto(in.schedule_time());
  return stats;
}

absl::StatusOr<std::vector<OpId>> ScheduleFromNames(
    const Graph& graph, const google::protobuf::RepeatedPtrField<std::string>& names) {
  std::vector<OpId> schedule;
  schedule.reserve(names.size());
  for (const std::string& name : names) {
    std::optional<OpId> op = graph.FindOp(name);
    if (!op) {
      return absl::InvalidArgumentError(
          absl::StrCat("response: schedule names unknown op \"", name, "\""));
    }
    schedule.push_back(*op);
  }
  return schedule;
}

// What the import told about how it read the model (Graph::notes), in a
// response's import_notes: Compile's and Estimate's by one rule.
template <typename Response>
void AddImportNotes(absl::Span<const std::string> notes, Response& response) {
  response.mutable_import_notes()->Add(notes.begin(), notes.end());
}

}  // namespace

absl::StatusOr<CompileOptions> CompileOptionsFromProto(const v1::CompileOptions& options,
                                                       const v1::DeviceSpec& device) {
  if (device.memory_capacity_bytes() < 0) {
    return absl::InvalidArgumentError("device.memory_capacity_bytes: must not be negative");
  }
  if (device.on_chip_bytes() < 0) {
    return absl::InvalidArgumentError("device.on_chip_bytes: must not be negative");
  }
  if (device.alignment_bytes() < 0) {
    return absl::InvalidArgumentError("device.alignment_bytes: must not be negative");
  }
  if (device.activation_dtype() != v1::DATA_TYPE_UNSPECIFIED &&
      ElementBytes(device.activation_dtype()) == 0) {
    return absl::InvalidArgumentError(
        absl::StrCat("device.activation_dtype: unknown value ", device.activation_dtype()));
  }
  CompileOptions out;
  out.memory.inplace = options.has_inplace() ? options.inplace() : true;
  out.memory.count_weights = options.count_weights();
  out.memory.io_outside_arena = options.io_outside_arena();
  out.memory.activation_element_bytes = ElementBytes(device.activation_dtype());
  out.scheduler = options.scheduler().empty() ? "best" : options.scheduler();
  out.arena_planner = options.arena_planner().empty() ? "best" : options.arena_planner();
  // Checked on the message: DurationFromProto maps what it cannot
  // represent (negative, bad nanos) to zero, which would turn a client's
  // mistake into a silent zero budget.
  const google::protobuf::Duration& limit = options.time_limit();
  if (limit.seconds() < 0 || limit.nanos() < 0) {
    return absl::InvalidArgumentError("options.time_limit: must not be negative");
  }
  if (limit.nanos() >= 1000000000) {
    return absl::InvalidArgumentError("options.time_limit: nanos must be below 10^9");
  }
  out.time_limit =
      options.has_time_limit() ? DurationFromProto(options.time_limit()) : kDefaultTimeLimit;
  out.memory_limit_bytes = device.memory_capacity_bytes();
  out.alignment = device.alignment_bytes() > 0 ? device.alignment_bytes() : 64;
  out.on_chip_bytes = device.on_chip_bytes();
  out.record_residency = options.record_residency();
  ORDO_ASSIGN_OR_RETURN(out.pools, PoolOptionsFromProto(device));
  return out;
}

void CompileOptionsToProto(const CompileOptions& options, v1::CompileOptions& proto,
                           v1::DeviceSpec& device) {
  proto.set_scheduler(options.scheduler);
  proto.set_arena_planner(options.arena_planner);
  *proto.mutable_time_limit() = DurationToProto(options.time_limit);
  proto.set_inplace(options.memory.inplace);
  proto.set_count_weights(options.memory.count_weights);
  proto.set_io_outside_arena(options.memory.io_outside_arena);
  proto.set_record_residency(options.record_residency);
  device.set_memory_capacity_bytes(options.memory_limit_bytes);
  device.set_on_chip_bytes(options.on_chip_bytes);
  device.set_alignment_bytes(options.alignment);
  device.set_activation_dtype(DataTypeOfElementBytes(options.memory.activation_element_bytes));
  PoolOptionsToProto(options.pools, device);
}

v1::CompileResponse CompileResultToProto(const Graph& graph, const CompileResult& result) {
  v1::CompileResponse response;
  response.set_model_name(graph.name());
  response.set_ops(graph.num_ops());
  response.set_tensors(graph.num_tensors());
  AddImportNotes(graph.notes(), response);
  for (OpId op : result.schedule) response.add_schedule(graph.op(op).name);
  response.set_peak_bytes(result.peak_bytes);
  response.set_lower_bound_bytes(result.lower_bound_bytes);
  response.set_status(ScheduleStatusToProto(result.status));
  response.set_io_outside_arena(result.memory.io_outside_arena);
  response.set_scheduler(result.scheduler);
  response.set_algorithm(result.algorithm);
  for (const BaselinePeak& baseline : result.baselines) {
    v1::BaselinePeak* out = response.add_baselines();
    out->set_name(baseline.name);
    out->set_peak_bytes(baseline.peak_bytes);
  }
  v1::MemoryProfile* profile = response.mutable_profile();
  profile->set_initial_bytes(result.simulation.initial_bytes);
  profile->mutable_step_bytes()->Add(result.simulation.step_bytes.begin(),
                                     result.simulation.step_bytes.end());
  profile->set_peak_step(result.simulation.peak_step);
  PartsToProto(result, response);
  const PoolReport* placement = result.placement ? &*result.placement : nullptr;
  if (!result.arena.planner.empty()) {
    ArenaToProto(graph, result.arena, placement, *response.mutable_arena());
  }
  if (result.placement) PoolReportToProto(*result.placement, *response.mutable_placement());
  for (const ArenaBaseline& baseline : result.arena_baselines) {
    v1::ArenaBaseline* out = response.add_arena_baselines();
    out->set_planner(baseline.name);
    out->set_schedule_arena_bytes(baseline.schedule_bytes);
    out->set_model_order_arena_bytes(baseline.model_order_bytes);
  }
  if (result.traffic) TrafficToProto(*result.traffic, *response.mutable_traffic());
  if (result.model_order_traffic) {
    TrafficToProto(*result.model_order_traffic, *response.mutable_model_order_traffic());
  }
  StatsToProto(result, *response.mutable_stats());
  return response;
}

v1::CompileResponse CompileResponseOf(const CompileRequest& request, const Graph& compiled_graph,
                                      const CompileResult& compiled,
                                      const std::optional<RewriteSummary>& rewrite) {
  v1::CompileResponse response = CompileResultToProto(compiled_graph, compiled);
  if (const std::optional<bool> fits = FitsDevice(request.options, compiled)) {
    response.set_fits(*fits);
  }
  const int64_t bound = compiled.lower_bound_bytes;
  response.set_gap(bound > 0 ? static_cast<double>(compiled.peak_bytes - bound) /
                                   static_cast<double>(bound)
                             : 0.0);
  v1::CompileOptions& options = *response.mutable_options();
  v1::DeviceSpec& device = *response.mutable_device();
  CompileOptionsToProto(request.options, options, device);
  RewriteCompileOptionsToProto(request.rewrite, options, device);
  InputShapesToProto(request.input_shapes, options);
  options.set_max_state_bytes(request.options.max_state_bytes);
  options.set_return_reordered_onnx(request.reordered_onnx);
  options.set_return_reordered_tflite(request.reordered_tflite);
  options.set_return_plan_header(request.plan_header);
  if (rewrite) RewriteSummaryToProto(*rewrite, response);
  return response;
}

absl::StatusOr<CompileResult> CompileResultFromProto(const Graph& graph,
                                                     const CompileOptions& options,
                                                     const v1::CompileResponse& response) {
  ORDO_ASSIGN_OR_RETURN(MemoryModel model, BuildMemoryModel(graph, options.memory));
  if (response.io_outside_arena() != options.memory.io_outside_arena) {
    return absl::InvalidArgumentError(absl::StrCat(
        "response: computed with io_outside_arena ", response.io_outside_arena() ? "on" : "off",
        ", asked for ", options.memory.io_outside_arena ? "on" : "off",
        " (a server that predates the option?)"));
  }
  CompileResult result;
  result.memory = options.memory;
  ORDO_ASSIGN_OR_RETURN(result.schedule, ScheduleFromNames(graph, response.schedule()));
  absl::StatusOr<SimulationResult> simulation = Simulate(model, result.schedule);
  if (!simulation.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("response: the server's schedule is not valid here: ",
                     simulation.status().message()));
  }
  if (simulation->peak_bytes != response.peak_bytes()) {
    return absl::InvalidArgumentError(
        absl::StrCat("response: the server says peak ", response.peak_bytes(),
                     "; simulating its schedule here gives ", simulation->peak_bytes));
  }
  result.simulation = *std::move(simulation);
  // The model order is op ids ascending (the importer keeps file order).
  std::vector<OpId> model_order(graph.num_ops());
  std::iota(model_order.begin(), model_order.end(), 0);
  ORDO_ASSIGN_OR_RETURN(result.model_order_simulation, Simulate(model, model_order));
  result.peak_bytes = response.peak_bytes();
  result.lower_bound_bytes = response.lower_bound_bytes();
  result.status = ScheduleStatusFromProto(response.status());
  result.scheduler = response.scheduler();
  result.algorithm = response.algorithm();
  for (const v1::BaselinePeak& baseline : response.baselines()) {
    result.baselines.push_back({baseline.name(), baseline.peak_bytes()});
  }
  result.stats.states_expanded = response.stats().states_expanded();
  result.stats.states_stored = response.stats().states_stored();
  result.stats.time = DurationFromProto(response.stats().schedule_time());
  for (const v1::PartStats& part : response.parts()) {
    result.parts.push_back({part.ops(), part.peak_bytes(), part.lower_bound_bytes(),
                            ScheduleStatusFromProto(part.status()), part.algorithm(),
                            part.states_expanded(), DurationFromProto(part.time())});
    result.part_cached.push_back(part.cached());
  }
  if (response.has_arena()) {
    ORDO_ASSIGN_OR_RETURN(result.arena,
                          ArenaFromProto(graph, options.pools.pools, response.arena()));
  }
  if (response.has_placement() != options.pools.enabled()) {
    return absl::InvalidArgumentError(
        options.pools.enabled()
            ? "response: no placement in the memory pools asked for (a server that predates "
              "DeviceSpec.pools?)"
            : "response: a placement in memory pools nobody asked for");
  }
  if (response.has_placement()) {
    ORDO_ASSIGN_OR_RETURN(result.placement,
                          PoolReportFromProto(graph, model, result.simulation, options.alignment,
                                              options.pools, result.arena,
                                              response.placement()));
  }
  for (const v1::ArenaBaseline& baseline : response.arena_baselines()) {
    result.arena_baselines.push_back({baseline.planner(), baseline.schedule_arena_bytes(),
                                      baseline.model_order_arena_bytes()});
  }
  if (response.has_traffic()) result.traffic = TrafficFromProto(response.traffic());
  if (response.has_model_order_traffic()) {
    result.model_order_traffic = TrafficFromProto(response.model_order_traffic());
  }
  result.part_stats = StatsFromProto(response.stats());
  result.time = DurationFromProto(response.stats().time());
  return result;
}

namespace {

v1::AppliedRewrite AppliedRewriteToProto(const AppliedRewrite& applied) {
  v1::AppliedRewrite out;
  out.set_kind(applied.kind);
  out.set_description(applied.description);
  out.set_peak_before_bytes(applied.peak_before_bytes);
  out.set_peak_after_bytes(applied.peak_after_bytes);
  out.set_extra_macs(applied.extra_macs);
  out.set_extra_ops(applied.extra_ops);
  out.set_concat(applied.concat);
  for (const std::string& conv : applied.convs) out.add_convs(conv);
  return out;
}

AppliedRewrite AppliedRewriteFromProto(const v1::AppliedRewrite& in) {
  AppliedRewrite applied;
  applied.kind = in.kind();
  applied.description = in.description();
  applied.peak_before_bytes = in.peak_before_bytes();
  applied.peak_after_bytes = in.peak_after_bytes();
  applied.extra_macs = in.extra_macs();
  applied.extra_ops = in.extra_ops();
  applied.concat = in.concat();
  applied.convs.assign(in.convs().begin(), in.convs().end());
  return applied;
}

RewriteSummary RewriteSummaryFromProto(const v1::CompileResponse& response) {
  const v1::RewriteSummary& in = response.rewrite();
  RewriteSummary summary;
  summary.mode = in.mode();
  summary.fit_fallback = in.fit_fallback();
  summary.tensor_larger_than_every_pool = in.tensor_larger_than_every_pool();
  summary.fallback_from_peak_bytes = in.fallback_from_peak_bytes();
  for (const v1::AppliedRewrite& applied : response.rewrites()) {
    summary.rewrites.push_back(AppliedRewriteFromProto(applied));
  }
  summary.original_peak_bytes = in.original_peak_bytes();
  summary.original_macs = in.original_macs();
  summary.rewritten_macs = in.rewritten_macs();
  summary.original_ops = in.original_ops();
  summary.rewritten_ops = in.rewritten_ops();
  summary.latency_overhead = in.latency_overhead();
  summary.weights_carried = in.weights_carried();
  summary.note = in.note();
  summary.fit_mode = in.has_fits();
  summary.fits = in.fits();
  summary.bottleneck_tensors.assign(in.bottleneck_tensors().begin(),
                                    in.bottleneck_tensors().end());
  summary.sites_found = in.sites_found();
  summary.sites_skipped = in.sites_skipped();
  summary.schedules_run = in.schedules_run();
  summary.time_limit_hit = in.time_limit_hit();
  summary.time = DurationFromProto(in.time());
  summary.rewritten_model = response.rewritten_onnx_model();
  for (const v1::ParetoPoint& in_point : response.pareto()) {
    ParetoPoint& point = summary.pareto.emplace_back();
    point.peak_bytes = in_point.peak_bytes();
    point.latency_overhead = in_point.latency_overhead();
    point.mac_overhead = in_point.mac_overhead();
    point.rewrites.assign(in_point.rewrites().begin(), in_point.rewrites().end());
  }
  return summary;
}

}  // namespace

absl::StatusOr<RewriteCompileOptions> RewriteCompileOptionsFromProto(
    const v1::CompileOptions& options, const v1::DeviceSpec& device) {
  RewriteCompileOptions rewrite;
  if (!options.rewrite().empty()) {
    if (absl::Status status = SetRewriteMode(options.rewrite(), rewrite); !status.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("options.rewrite: ", status.message()));
    }
  }
  if (options.has_max_latency_overhead()) {
    rewrite.max_latency_overhead = options.max_latency_overhead();
  }
  rewrite.beam_width = options.beam_width();
  rewrite.pareto = options.pareto();
  rewrite.fusion = !options.disable_fusion();
  if (device.macs_per_second() != 0) rewrite.latency.macs_per_second = device.macs_per_second();
  if (device.has_op_overhead_seconds()) {
    rewrite.latency.op_overhead_seconds = device.op_overhead_seconds();
  }
  rewrite.time_limit =
      options.has_time_limit() ? DurationFromProto(options.time_limit()) : kDefaultTimeLimit;
  if (absl::Status status = CheckRewriteCompileOptions(rewrite); !status.ok()) {
    // The core names the field; say where it lives in the request.
    const bool in_options = absl::StartsWith(status.message(), "max_latency_overhead") ||
                            absl::StartsWith(status.message(), "beam_width") ||
                            absl::StartsWith(status.message(), "rewrite time limit");
    return absl::InvalidArgumentError(
        absl::StrCat(in_options ? "options." : "device.", status.message()));
  }
  return rewrite;
}

void RewriteCompileOptionsToProto(const RewriteCompileOptions& rewrite,
                                  v1::CompileOptions& options, v1::DeviceSpec& device) {
  options.set_rewrite(RewriteModeNameOf(rewrite));
  options.set_max_latency_overhead(rewrite.max_latency_overhead);
  options.set_beam_width(rewrite.beam_width);
  options.set_pareto(rewrite.pareto);
  options.set_disable_fusion(!rewrite.fusion);
  device.set_macs_per_second(rewrite.latency.macs_per_second);
  device.set_op_overhead_seconds(rewrite.latency.op_overhead_seconds);
}

void RewriteSummaryToProto(const RewriteSummary& summary, v1::CompileResponse& response) {
  v1::RewriteSummary& out = *response.mutable_rewrite();
  out.set_mode(summary.mode);
  out.set_fit_fallback(summary.fit_fallback);
  out.set_tensor_larger_than_every_pool(summary.tensor_larger_than_every_pool);
  out.set_fallback_from_peak_bytes(summary.fallback_from_peak_bytes);
  out.set_original_peak_bytes(summary.original_peak_bytes);
  out.set_original_macs(summary.original_macs);
  out.set_rewritten_macs(summary.rewritten_macs);
  out.set_original_ops(summary.original_ops);
  out.set_rewritten_ops(summary.rewritten_ops);
  out.set_latency_overhead(summary.latency_overhead);
  out.set_weights_carried(summary.weights_carried);
  out.set_note(summary.note);
  if (summary.fit_mode) out.set_fits(summary.fits);
  for (const std::string& tensor : summary.bottleneck_tensors) out.add_bottleneck_tensors(tensor);
  out.set_sites_found(summary.sites_found);
  out.set_sites_skipped(summary.sites_skipped);
  out.set_schedules_run(summary.schedules_run);
  out.set_time_limit_hit(summary.time_limit_hit);
  *out.mutable_time() = DurationToProto(summary.time);
  for (const AppliedRewrite& applied : summary.rewrites) {
    *response.add_rewrites() = AppliedRewriteToProto(applied);
  }
  response.set_rewritten_onnx_model(summary.rewritten_model);
  for (const ParetoPoint& point : summary.pareto) {
    v1::ParetoPoint& p = *response.add_pareto();
    p.set_peak_bytes(point.peak_bytes);
    p.set_latency_overhead(point.latency_overhead);
    p.set_mac_overhead(point.mac_overhead);
    for (const std::string& rewrite : point.rewrites) p.add_rewrites(rewrite);
  }
}

absl::StatusOr<RewriteCompileResult> RewriteCompileResultFromProto(
    const Graph& original, const CompileOptions& options, const GraphLimits& limits,
    const v1::CompileResponse& response) {
  RewriteCompileResult result;
  if (response.rewritten_onnx_model().empty()) {
    result.graph = original;
  } else {
    absl::StatusOr<Graph> rewritten = ImportOnnx(response.rewritten_onnx_model(), limits);
    if (!rewritten.ok()) {
      return absl::InvalidArgumentError(absl::StrCat(
          "response: the rewritten model does not import: ", rewritten.status().message()));
    }
    if (absl::Status same = CheckSameInterface(original, *rewritten); !same.ok()) {
      return absl::InvalidArgumentError(absl::StrCat("response: ", same.message()));
    }
    result.graph = *std::move(rewritten);
  }
  ORDO_ASSIGN_OR_RETURN(result.compile, CompileResultFromProto(result.graph, options, response));
  if (response.has_rewrite()) {
    result.rewrite = RewriteSummaryFromProto(response);
    // Whether it fits is the client's own judgement of the re-checked
    // compile (the peak, the re-derived placement), not the server's word.
    if (result.rewrite->fit_mode &&
        result.rewrite->fits != FitsDevice(options, result.compile).value_or(false)) {
      return absl::InvalidArgumentError(absl::StrCat(
          "response: rewrite.fits is ", result.rewrite->fits ? "true" : "false",
          " but the returned schedule and placement say otherwise"));
    }
  }
  return result;
}

v1::EstimateResponse EstimateResultToProto(const EstimateResult& estimate) {
  v1::EstimateResponse response;
  response.set_ops(estimate.ops);
  response.set_model_order_peak_bytes(estimate.model_order_peak_bytes);
  response.set_greedy_peak_bytes(estimate.greedy_peak_bytes);
  response.set_lower_bound_bytes(estimate.lower_bound_bytes);
  response.set_parts(estimate.cached.parts);
  response.set_cached_parts(estimate.cached.cached_parts);
  if (estimate.cached.peak_bytes) response.set_cached_peak_bytes(*estimate.cached.peak_bytes);
  response.mutable_fit()->set_memory_limit_bytes(estimate.memory_limit_bytes);
  response.mutable_fit()->set_verdict(
      estimate.fits == EstimateFit::kYes       ? v1::EstimateFit::VERDICT_FITS
      : estimate.fits == EstimateFit::kNo      ? v1::EstimateFit::VERDICT_DOES_NOT_FIT
      : estimate.fits == EstimateFit::kUnknown ? v1::EstimateFit::VERDICT_UNKNOWN
                                               : v1::EstimateFit::VERDICT_UNSPECIFIED);
  response.mutable_fit()->set_pools_reason(estimate.pools_reason);
  AddImportNotes(estimate.import_notes, response);
  return response;
}

EstimateResult EstimateResultFromProto(const v1::EstimateResponse& response) {
  EstimateResult estimate;
  estimate.ops = response.ops();
  estimate.model_order_peak_bytes = response.model_order_peak_bytes();
  estimate.greedy_peak_bytes = response.greedy_peak_bytes();
  estimate.lower_bound_bytes = response.lower_bound_bytes();
  estimate.cached.parts = response.parts();
  estimate.cached.cached_parts = response.cached_parts();
  if (response.has_cached_peak_bytes()) estimate.cached.peak_bytes = response.cached_peak_bytes();
  estimate.memory_limit_bytes = response.fit().memory_limit_bytes();
  switch (response.fit().verdict()) {
    case v1::EstimateFit::VERDICT_FITS: estimate.fits = EstimateFit::kYes; break;
    case v1::EstimateFit::VERDICT_DOES_NOT_FIT: estimate.fits = EstimateFit::kNo; break;
    case v1::EstimateFit::VERDICT_UNKNOWN: estimate.fits = EstimateFit::kUnknown; break;
    default: estimate.fits = EstimateFit::kNoLimit; break;
  }
  estimate.pools_reason = response.fit().pools_reason();
  estimate.import_notes.assign(response.import_notes().begin(), response.import_notes().end());
  return estimate;
}

namespace {

// What every request with a model shares: the format and the options.
template <typename Request>
absl::StatusOr<CompileRequest> RequestWithModel(const Request& request) {
  CompileRequest compile;
  switch (request.model_case()) {
    case Request::kOnnxModel:
      compile.format = ModelFormat::kOnnx;
      break;
    case Request::kTfliteModel:
      compile.format = ModelFormat::kTflite;
      break;
    case Request::kGraph:
      compile.format = ModelFormat::kGraphProto;
      break;
    default:
      return absl::InvalidArgumentError(
          "request has no model (set onnx_model, tflite_model or graph)");
  }
  ORDO_ASSIGN_OR_RETURN(compile.options,
                        CompileOptionsFromProto(request.options(), request.device()));
  compile.input_shapes = InputShapesFromProto(request.options());
  return compile;
}

}  // namespace

absl::StatusOr<CompileRequest> CompileRequestFromProto(const v1::CompileRequest& request) {
  ORDO_ASSIGN_OR_RETURN(CompileRequest compile, RequestWithModel(request));
  ORDO_ASSIGN_OR_RETURN(compile.rewrite,
                        RewriteCompileOptionsFromProto(request.options(), request.device()));
  compile.reordered_onnx = request.options().return_reordered_onnx();
  compile.reordered_tflite = request.options().return_reordered_tflite();
  compile.plan_header = request.options().return_plan_header();
  return compile;
}

absl::StatusOr<CompileRequest> CompileRequestFromProto(const v1::EstimateRequest& request) {
  ORDO_ASSIGN_OR_RETURN(CompileRequest compile, RequestWithModel(request));
  // Estimate rewrites nothing, but its options are Compile's: a value
  // Compile refuses (an unknown rewrite mode, a NaN rate) is refused here
  // too, not passed silently by the call meant to check a request cheaply.
  ORDO_ASSIGN_OR_RETURN(compile.rewrite,
                        RewriteCompileOptionsFromProto(request.options(), request.device()));
  return compile;
}

}  // namespace ordo::rpc
