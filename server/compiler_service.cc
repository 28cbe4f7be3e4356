#include "server/compiler_service.h"

#include <algorithm>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/arena/arena_planner_registry.h"
#include "core/cache/cached_part_scheduler.h"
#include "core/cache/part_key.h"
#include "core/compile/import_model.h"
#include "core/graph/graph_proto.h"
#include "core/memory/simulator.h"
#include "core/onnx/onnx_import.h"
#include "core/schedule/baseline_schedulers.h"
#include "core/schedule/scheduler_registry.h"
#include "core/traffic/traffic.h"
#include "core/util/status_macros.h"
#include "rpc/grpc_status.h"
#include "rpc/log.h"
#include "rpc/memory_model_proto.h"

namespace ordo::server {
namespace {

constexpr absl::string_view kVersion = "0.1.0";
constexpr absl::Duration kDefaultTimeLimit = absl::Seconds(10);

int ElementBytes(v1::DataType dtype) {
  switch (dtype) {
    case v1::DATA_TYPE_INT8: case v1::DATA_TYPE_UINT8: case v1::DATA_TYPE_BOOL: return 1;
    case v1::DATA_TYPE_FLOAT16: case v1::DATA_TYPE_BFLOAT16: case v1::DATA_TYPE_INT16:
    case v1::DATA_TYPE_UINT16: return 2;
    case v1::DATA_TYPE_FLOAT32: case v1::DATA_TYPE_INT32: case v1::DATA_TYPE_UINT32: return 4;
    case v1::DATA_TYPE_INT64: case v1::DATA_TYPE_UINT64: case v1::DATA_TYPE_FLOAT64: return 8;
    default: return 0;
  }
}

// Import -> Validate: the request's model as a Graph, within the limits.
template <typename Request>
absl::StatusOr<Graph> ImportRequestModel(const Request& request, const CompilerLimits& limits) {
  GraphLimits graph_limits;
  graph_limits.max_ops = limits.max_ops;
  switch (request.model_case()) {
    case Request::kOnnxModel:
      return ImportModel(request.onnx_model(), ModelFormat::kOnnx, graph_limits);
    case Request::kGraph:
      if (request.graph().ops_size() > limits.max_ops) {
        return absl::ResourceExhaustedError(absl::StrCat(
            "graph has ", request.graph().ops_size(), " ops; this server's limit is ",
            limits.max_ops));
      }
      return GraphFromProto(request.graph(), graph_limits);
    default:
      return absl::InvalidArgumentError("request has no model (set onnx_model or graph)");
  }
}

MemoryOptions MemoryOptionsOf(const v1::CompileOptions& options, const v1::DeviceSpec& device) {
  MemoryOptions memory;
  memory.inplace = options.has_inplace() ? options.inplace() : true;
  memory.count_weights = options.count_weights();
  memory.activation_element_bytes = ElementBytes(device.activation_dtype());
  return memory;
}

absl::Status ValidateDevice(const v1::DeviceSpec& device) {
  if (device.memory_capacity_bytes() < 0 || device.on_chip_bytes() < 0 ||
      device.alignment_bytes() < 0) {
    return absl::InvalidArgumentError("device: byte counts must be non-negative");
  }
  if (device.activation_dtype() != v1::DATA_TYPE_UNSPECIFIED &&
      ElementBytes(device.activation_dtype()) == 0) {
    return absl::InvalidArgumentError("device: unknown activation_dtype");
  }
  return absl::OkStatus();
}

// RAII slot of the concurrent-compile limit.
class CompileSlot {
 public:
  CompileSlot(std::atomic<int32_t>& running, int32_t limit) : running_(running) {
    acquired_ = running_.fetch_add(1) < limit;
    if (!acquired_) running_.fetch_sub(1);
  }
  ~CompileSlot() {
    if (acquired_) running_.fetch_sub(1);
  }
  bool acquired() const { return acquired_; }

 private:
  std::atomic<int32_t>& running_;
  bool acquired_;
};

v1::CompileProgress Progress(v1::CompileStage stage, absl::Duration elapsed, int32_t parts,
                             int32_t done) {
  v1::CompileProgress progress;
  progress.set_stage(stage);
  *progress.mutable_elapsed() = rpc::DurationToProto(elapsed);
  progress.set_parts_total(parts);
  progress.set_parts_done(done);
  return progress;
}

}  // namespace

absl::Status CompilerService::RunCompile(
    const rpc::CallInfo& call, const v1::CompileRequest& request, v1::CompileResponse& response,
    const std::function<void(const v1::CompileProgress&)>& on_progress) {
  const Clock& clock = *deps_.clock;
  const absl::Time start = clock.Now();
  CompileSlot slot(compiles_running_, limits_.max_concurrent_compiles);
  if (!slot.acquired()) {
    return absl::ResourceExhaustedError(absl::StrCat(
        "server busy: ", limits_.max_concurrent_compiles, " compiles running (the limit)"));
  }
  const absl::Time deadline =
      call.deadline == absl::InfiniteFuture()
          ? start + limits_.default_deadline
          : std::min(call.deadline, start + limits_.max_deadline);
  auto report = [&](v1::CompileStage stage, int32_t parts, int32_t done) {
    if (on_progress) on_progress(Progress(stage, clock.Now() - start, parts, done));
  };

  // Validate everything cheap before any work.
  const v1::CompileOptions& options = request.options();
  const v1::DeviceSpec& device = request.device();
  ORDO_RETURN_IF_ERROR(ValidateDevice(device));
  const std::string scheduler = options.scheduler().empty() ? "best" : options.scheduler();
  const SchedulerRegistry schedulers = BuiltinSchedulers();
  ORDO_RETURN_IF_ERROR(schedulers.Create(scheduler).status());
  const std::string planner =
      options.arena_planner().empty() ? std::string(kDefaultArenaPlanner) : options.arena_planner();
  if (planner != "none") ORDO_RETURN_IF_ERROR(BuiltinArenaPlanners().Create(planner).status());
  if (options.return_reordered_onnx() && request.model_case() != v1::CompileRequest::kOnnxModel) {
    return absl::InvalidArgumentError("return_reordered_onnx needs an ONNX model");
  }

  ORDO_ASSIGN_OR_RETURN(Graph graph, ImportRequestModel(request, limits_));
  ORDO_ASSIGN_OR_RETURN(MemoryModel model, BuildMemoryModel(graph, MemoryOptionsOf(options, device)));
  report(v1::COMPILE_STAGE_IMPORTED, 0, 0);

  // Budget: the search ends early enough for verify, arena and traffic.
  const absl::Duration remaining = deadline - clock.Now();
  const absl::Duration reserve = std::max(remaining / 5, absl::Milliseconds(100));
  const absl::Duration requested =
      options.has_time_limit() ? rpc::DurationFromProto(options.time_limit()) : kDefaultTimeLimit;
  const absl::Duration time_limit = std::min(requested, remaining - reserve);
  ScheduleLimits limits;
  limits.clock = &clock;
  limits.deadline = clock.Now() + std::max(time_limit, absl::ZeroDuration());
  limits.cancelled = call.cancelled.get();

  // Baselines: linear, and a schedule exists even if the search gets no time.
  for (const Baseline& baseline : ReportedBaselines()) {
    ORDO_ASSIGN_OR_RETURN(auto s, schedulers.Create(baseline.scheduler_name));
    ScheduleLimits unlimited = limits;
    unlimited.deadline = absl::InfiniteFuture();
    ORDO_ASSIGN_OR_RETURN(ScheduleResult r, s->Schedule(model, unlimited));
    v1::BaselinePeak* out = response.add_baselines();
    out->set_name(baseline.report_name);
    out->set_peak_bytes(r.peak_bytes);
  }

  PartScheduleOptions part_options;
  part_options.scheduler = scheduler;
  part_options.time_limit = std::max(time_limit, absl::ZeroDuration());
  part_options.request_id = call.request_id;
  part_options.on_progress = [&](int32_t parts, int32_t done) {
    report(done == parts ? v1::COMPILE_STAGE_SCHEDULED : v1::COMPILE_STAGE_PARTITIONED, parts,
           done);
  };
  absl::StatusOr<PartScheduleResult> scheduled =
      ScheduleByParts(model, part_options, limits, *deps_.runner, deps_.cache);
  if (!scheduled.ok()) {
    if (absl::IsCancelled(scheduled.status()) && clock.Now() >= deadline) {
      return absl::DeadlineExceededError("deadline passed before a schedule existed");
    }
    return scheduled.status();
  }
  const PartScheduleStats& stats = scheduled->stats;
  if (rpc::ServiceMetrics* metrics = deps_.env.metrics; metrics != nullptr) {
    metrics->AddCacheLookups("hit", stats.cache_hits);
    metrics->AddCacheLookups("miss", stats.cache_misses - stats.cache_errors -
                                         stats.cache_rejected);
    metrics->AddCacheLookups("error", stats.cache_errors);
    metrics->AddCacheLookups("rejected", stats.cache_rejected);
  }

  // Verify: the simulator is the only authority on the whole schedule.
  const ScheduleResult& schedule = scheduled->schedule;
  absl::StatusOr<SimulationResult> simulation = Simulate(model, schedule.order);
  if (!simulation.ok() || simulation->peak_bytes != schedule.peak_bytes) {
    return absl::InternalError("combined schedule failed verification");
  }

  response.set_model_name(graph.name());
  response.set_ops(graph.num_ops());
  response.set_tensors(graph.num_tensors());
  for (int32_t op : schedule.order) response.add_schedule(graph.op(op).name);
  response.set_peak_bytes(schedule.peak_bytes);
  response.set_lower_bound_bytes(schedule.lower_bound_bytes);
  response.set_status(rpc::ScheduleStatusToProto(schedule.status));
  response.set_scheduler(scheduler);
  response.set_algorithm(schedule.algorithm);
  if (device.memory_capacity_bytes() > 0) {
    response.set_fits(schedule.peak_bytes <= device.memory_capacity_bytes());
  }
  v1::MemoryProfile* profile = response.mutable_profile();
  profile->set_initial_bytes(simulation->initial_bytes);
  profile->mutable_step_bytes()->Add(simulation->step_bytes.begin(), simulation->step_bytes.end());
  profile->set_peak_step(simulation->peak_step);
  for (size_t p = 0; p < schedule.parts.size(); ++p) {
    const PartStats& part = schedule.parts[p];
    v1::PartStats* out = response.add_parts();
    out->set_ops(part.ops);
    out->set_peak_bytes(part.peak_bytes);
    out->set_lower_bound_bytes(part.lower_bound_bytes);
    out->set_status(rpc::ScheduleStatusToProto(part.status));
    out->set_algorithm(part.algorithm);
    out->set_states_expanded(part.states_expanded);
    *out->mutable_time() = rpc::DurationToProto(part.time);
    out->set_cached(p < scheduled->part_cached.size() && scheduled->part_cached[p]);
  }

  if (planner != "none") {
    ArenaOptions arena_options;
    arena_options.planner = planner;
    arena_options.alignment = device.alignment_bytes() > 0 ? device.alignment_bytes() : 64;
    arena_options.time_limit =
        std::clamp((deadline - clock.Now()) / 2, absl::ZeroDuration(), absl::Seconds(2));
    ORDO_ASSIGN_OR_RETURN(ArenaPlan plan, PlanArena(model, *simulation, arena_options, clock));
    v1::ArenaPlan* arena = response.mutable_arena();
    arena->set_planner(plan.planner);
    arena->set_algorithm(plan.algorithm);
    arena->set_alignment_bytes(plan.alignment);
    arena->set_arena_bytes(plan.arena_bytes);
    arena->set_lower_bound_bytes(plan.lower_bound_bytes);
    arena->set_gap_bytes(plan.gap_bytes);
    arena->set_optimal(plan.optimal);
    for (const TensorPlacement& placement : plan.tensors) {
      v1::TensorPlacement* out = arena->add_tensors();
      out->set_tensor(graph.tensor(placement.tensor).name);
      out->set_offset_bytes(placement.offset);
      out->set_size_bytes(placement.size);
      out->set_first_step(placement.first_step);
      out->set_last_step(placement.last_step);
    }
  }
  if (device.on_chip_bytes() > 0) {
    ORDO_ASSIGN_OR_RETURN(TrafficResult traffic,
                          EstimateTraffic(model, schedule.order, {device.on_chip_bytes()}));
    v1::TrafficEstimate* out = response.mutable_traffic();
    out->set_on_chip_bytes(traffic.on_chip_bytes);
    out->set_read_bytes(traffic.read_bytes);
    out->set_write_bytes(traffic.write_bytes);
    out->set_total_bytes(traffic.total_bytes);
    out->set_fixed_read_bytes(traffic.fixed_read_bytes);
    out->set_fixed_write_bytes(traffic.fixed_write_bytes);
    out->set_streamed_steps(traffic.streamed_steps);
    out->set_streamed_bytes(traffic.streamed_bytes);
  }
  if (options.return_reordered_onnx()) {
    ORDO_ASSIGN_OR_RETURN(*response.mutable_reordered_onnx_model(),
                          ReorderOnnxNodes(request.onnx_model(), graph, schedule.order));
  }

  v1::CompileStats* out = response.mutable_stats();
  *out->mutable_schedule_time() = rpc::DurationToProto(stats.time);
  out->set_parts(stats.parts);
  out->set_cache_hits(stats.cache_hits);
  out->set_cache_misses(stats.cache_misses);
  out->set_cache_errors(stats.cache_errors + stats.cache_rejected);
  out->set_workers_used(static_cast<int32_t>(stats.runners_used));
  out->set_task_retries(stats.task_retries);
  out->set_fallback_parts(stats.fallback_parts);
  out->set_states_expanded(schedule.stats.states_expanded);
  out->set_states_stored(schedule.stats.states_stored);
  *out->mutable_time() = rpc::DurationToProto(clock.Now() - start);
  report(v1::COMPILE_STAGE_FINISHED, stats.parts, stats.parts);
  rpc::Log(rpc::LogLevel::kInfo, call.request_id,
           absl::StrCat("compiled ", graph.num_ops(), " ops: peak ", schedule.peak_bytes, " (",
                        ScheduleStatusName(schedule.status), "), ", stats.parts, " parts, ",
                        stats.cache_hits, " cached, ", stats.fallback_parts, " fallback"));
  return absl::OkStatus();
}

absl::Status CompilerService::RunEstimate(const v1::EstimateRequest& request,
                                          v1::EstimateResponse& response) {
  ORDO_RETURN_IF_ERROR(ValidateDevice(request.device()));
  ORDO_ASSIGN_OR_RETURN(Graph graph, ImportRequestModel(request, limits_));
  ORDO_ASSIGN_OR_RETURN(MemoryModel model,
                        BuildMemoryModel(graph, MemoryOptionsOf(request.options(), request.device())));
  const SchedulerRegistry schedulers = BuiltinSchedulers();
  ScheduleLimits limits;
  limits.clock = deps_.clock;
  for (const char* name : {"model", "greedy"}) {
    ORDO_ASSIGN_OR_RETURN(auto scheduler, schedulers.Create(name));
    ORDO_ASSIGN_OR_RETURN(ScheduleResult result, scheduler->Schedule(model, limits));
    if (absl::string_view(name) == "greedy") {
      response.set_greedy_peak_bytes(result.peak_bytes);
    } else {
      response.set_model_order_peak_bytes(result.peak_bytes);
    }
  }
  response.set_ops(graph.num_ops());
  response.set_lower_bound_bytes(MemoryLowerBound(model));
  if (deps_.cache != nullptr) {
    PartScheduleOptions options;
    options.scheduler =
        request.options().scheduler().empty() ? "best" : request.options().scheduler();
    options.time_limit = absl::ZeroDuration();  // any entry that verifies
    const CachedPeak cached = LookupCachedPeak(model, options, *deps_.cache);
    response.set_parts(cached.parts);
    response.set_cached_parts(cached.cached_parts);
    if (cached.peak_bytes) response.set_cached_peak_bytes(*cached.peak_bytes);
  }
  return absl::OkStatus();
}

void CompilerService::FillInfo(v1::GetInfoResponse& response) const {
  response.set_version(std::string(kVersion));
  response.set_algorithm_version(std::string(kPartAlgorithmVersion));
  const SchedulerRegistry schedulers = BuiltinSchedulers();
  for (const SchedulerInfo& info : schedulers.schedulers()) {
    v1::AlgorithmInfo* out = response.add_schedulers();
    out->set_name(info.name);
    out->set_description(info.description);
    out->set_exact(info.exact);
  }
  const ArenaPlannerRegistry planners = BuiltinArenaPlanners();
  for (const ArenaPlannerInfo& info : planners.planners()) {
    v1::AlgorithmInfo* out = response.add_arena_planners();
    out->set_name(info.name);
    out->set_description(info.description);
  }
  v1::ServerLimits* limits = response.mutable_limits();
  limits->set_max_message_bytes(limits_.max_message_bytes);
  limits->set_max_ops(limits_.max_ops);
  limits->set_max_concurrent_compiles(limits_.max_concurrent_compiles);
  *limits->mutable_default_deadline() = rpc::DurationToProto(limits_.default_deadline);
  *limits->mutable_max_deadline() = rpc::DurationToProto(limits_.max_deadline);
  if (deps_.workers != nullptr) {
    for (const WorkerEndpoint& worker : deps_.workers->Workers()) {
      v1::WorkerInfo* out = response.add_workers();
      out->set_address(worker.address);
      out->set_healthy(worker.healthy);
      out->set_restarts(worker.restarts);
    }
  }
  response.set_cache(deps_.cache != nullptr ? std::string(deps_.cache->kind()) : "none");
}

grpc::ServerUnaryReactor* CompilerService::Compile(grpc::CallbackServerContext* context,
                                                   const v1::CompileRequest* request,
                                                   v1::CompileResponse* response) {
  return rpc::ServeUnary(context, "Compile", deps_.env,
                         [this, request, response](const rpc::CallInfo& call) {
                           return RunCompile(call, *request, *response, {});
                         });
}

grpc::ServerUnaryReactor* CompilerService::Estimate(grpc::CallbackServerContext* context,
                                                    const v1::EstimateRequest* request,
                                                    v1::EstimateResponse* response) {
  return rpc::ServeUnary(context, "Estimate", deps_.env,
                         [this, request, response](const rpc::CallInfo&) {
                           return RunEstimate(*request, *response);
                         });
}

grpc::ServerUnaryReactor* CompilerService::GetInfo(grpc::CallbackServerContext* context,
                                                   const v1::GetInfoRequest*,
                                                   v1::GetInfoResponse* response) {
  return rpc::ServeUnary(context, "GetInfo", deps_.env, [this, response](const rpc::CallInfo&) {
    FillInfo(*response);
    return absl::OkStatus();
  });
}

namespace {

// CompileStream: runs the compile on the work queue collecting its progress
// events, then writes them and the result in order (one write in flight at
// a time, as the callback API requires) and finishes.
class CompileStreamReactor final : public grpc::ServerWriteReactor<v1::CompileEvent> {
 public:
  CompileStreamReactor(CompilerService* service, grpc::CallbackServerContext* context,
                       const v1::CompileRequest* request, rpc::CallEnvironment env)
      : env_(env), call_(rpc::MakeCallInfo(context, "CompileStream")), start_(absl::Now()) {
    if (env_.metrics != nullptr) env_.metrics->inflight_requests().Increment();
    env_.queue->Schedule([this, service, request] {
      v1::CompileResponse response;
      status_ = service->RunCompile(call_, *request, response,
                                    [this](const v1::CompileProgress& progress) {
                                      *events_.emplace_back().mutable_progress() = progress;
                                    });
      if (status_.ok()) *events_.emplace_back().mutable_result() = std::move(response);
      else events_.clear();
      NextWrite();
    });
  }
  void OnWriteDone(bool ok) override {
    if (!ok) {
      status_ = absl::CancelledError("client stopped reading");
      events_.clear();
    }
    NextWrite();
  }
  void OnCancel() override { call_.cancelled->store(true); }
  void OnDone() override {
    rpc::RecordCallEnd(env_, call_, status_, absl::Now() - start_);
    if (env_.metrics != nullptr) env_.metrics->inflight_requests().Decrement();
    delete this;
  }

 private:
  void NextWrite() {
    if (next_ < events_.size()) {
      StartWrite(&events_[next_++]);
    } else {
      Finish(rpc::ToGrpcStatus(status_));
    }
  }

  const rpc::CallEnvironment env_;
  rpc::CallInfo call_;
  const absl::Time start_;
  absl::Status status_;
  // Filled by the queue thread before the first write; then only read.
  std::vector<v1::CompileEvent> events_;
  size_t next_ = 0;
};

}  // namespace

grpc::ServerWriteReactor<v1::CompileEvent>* CompilerService::CompileStream(
    grpc::CallbackServerContext* context, const v1::CompileRequest* request) {
  return new CompileStreamReactor(this, context, request, deps_.env);
}

}  // namespace ordo::server
