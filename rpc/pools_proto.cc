#include "rpc/pools_proto.h"

#include <cmath>
#include <string>
#include <utility>

#include "absl/strings/str_cat.h"
#include "rpc/memory_model_proto.h"

namespace ordo::rpc {
namespace {

absl::StatusOr<double> BandwidthFromProto(const v1::MemoryPoolSpec& pool, const char* field,
                                          double value, double if_zero) {
  if (value < 0 || !std::isfinite(value)) {
    return absl::InvalidArgumentError(
        absl::StrCat("device.pools: memory pool \"", pool.name(), "\": ", field,
                     " must be a non-negative finite number (0 means the default), got ", value));
  }
  return value == 0 ? if_zero : value;
}

void PoolToProto(const MemoryPool& pool, v1::MemoryPoolSpec& out) {
  out.set_name(pool.name);
  out.set_capacity_bytes(pool.capacity_bytes);
  out.set_read_bytes_per_second(pool.read_bytes_per_second);
  out.set_write_bytes_per_second(pool.write_bytes_per_second);
  out.set_off_chip(pool.off_chip);
}

}  // namespace

absl::StatusOr<PoolOptions> PoolOptionsFromProto(const v1::DeviceSpec& device) {
  PoolOptions options;
  if (!device.preset().empty()) {
    if (!device.pools().empty()) {
      return absl::InvalidArgumentError(
          "device.preset and device.pools: give one or the other, not both");
    }
    absl::StatusOr<DevicePreset> preset = FindDevicePreset(device.preset());
    if (!preset.ok()) {
      return absl::InvalidArgumentError(
          absl::StrCat("device.preset: ", preset.status().message()));
    }
    options.pools = std::move(preset->pools);
  }
  for (const v1::MemoryPoolSpec& in : device.pools()) {
    MemoryPool& pool = options.pools.emplace_back();
    pool.name = in.name();
    pool.capacity_bytes = in.capacity_bytes();
    absl::StatusOr<double> read = BandwidthFromProto(in, "read_bytes_per_second",
                                                     in.read_bytes_per_second(),
                                                     kDefaultPoolBytesPerSecond);
    if (!read.ok()) return read.status();
    pool.read_bytes_per_second = *read;
    absl::StatusOr<double> write = BandwidthFromProto(in, "write_bytes_per_second",
                                                      in.write_bytes_per_second(), *read);
    if (!write.ok()) return write.status();
    pool.write_bytes_per_second = *write;
    pool.off_chip = in.off_chip();
  }
  options.pinned.insert(device.pinned_tensors().begin(), device.pinned_tensors().end());
  if (!options.pinned.empty() && !options.enabled()) {
    return absl::InvalidArgumentError(
        "device.pinned_tensors: needs memory pools (device.pools or device.preset)");
  }
  options.one_arena = device.one_arena();
  if (options.one_arena && !options.enabled()) {
    return absl::InvalidArgumentError(
        "device.one_arena: needs memory pools (device.pools or device.preset)");
  }
  switch (device.placement_effort()) {
    case v1::PLACEMENT_EFFORT_UNSPECIFIED:
    case v1::PLACEMENT_EFFORT_FAST:
      options.effort = PlacementEffort::kFast;
      break;
    case v1::PLACEMENT_EFFORT_THOROUGH:
      options.effort = PlacementEffort::kThorough;
      break;
    default:
      return absl::InvalidArgumentError(absl::StrCat(
          "device.placement_effort: unknown value ", device.placement_effort(),
          "; use PLACEMENT_EFFORT_FAST or PLACEMENT_EFFORT_THOROUGH"));
  }
  if (device.placement_effort() != v1::PLACEMENT_EFFORT_UNSPECIFIED && !options.enabled()) {
    return absl::InvalidArgumentError(
        "device.placement_effort: needs memory pools (device.pools or device.preset)");
  }
  if (absl::Status status = ValidatePoolOptions(options); !status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("device.pools: ", status.message()));
  }
  return options;
}

void PoolOptionsToProto(const PoolOptions& options, v1::DeviceSpec& device) {
  device.clear_pools();
  for (const MemoryPool& pool : options.pools) PoolToProto(pool, *device.add_pools());
  device.mutable_pinned_tensors()->clear();
  device.mutable_pinned_tensors()->insert(options.pinned.begin(), options.pinned.end());
  device.set_one_arena(options.one_arena);
  device.set_placement_effort(!options.enabled() ? v1::PLACEMENT_EFFORT_UNSPECIFIED
                              : options.effort == PlacementEffort::kThorough
                                  ? v1::PLACEMENT_EFFORT_THOROUGH
                                  : v1::PLACEMENT_EFFORT_FAST);
}

void DevicePresetsToProto(v1::GetInfoResponse& response) {
  for (const DevicePreset& preset : BuiltinDevicePresets()) {
    v1::DevicePresetInfo& out = *response.add_device_presets();
    out.set_name(preset.name);
    out.set_description(preset.description);
    for (const MemoryPool& pool : preset.pools) PoolToProto(pool, *out.add_pools());
  }
}

void PoolReportToProto(const PoolReport& report, v1::PoolPlacementReport& out) {
  const PoolEvaluation& evaluation = report.placement.evaluation;
  out.set_algorithm(report.placement.algorithm);
  out.set_fits(report.fits());
  out.set_overflow(report.overflow);
  out.set_overflow_bytes(evaluation.overflow_bytes);
  out.set_modelled_time_seconds(evaluation.modelled_seconds);
  out.set_lower_bound_seconds(report.lower_bound_seconds);
  for (const PoolUsage& pool : evaluation.pools) {
    v1::PoolUsageReport& usage = *out.add_pools();
    usage.set_name(pool.name);
    usage.set_capacity_bytes(pool.capacity_bytes);
    usage.set_used_bytes(pool.used_bytes);
    usage.set_tensors(pool.tensors);
    usage.set_modelled_time_seconds(pool.modelled_seconds);
  }
  for (const PoolBaseline& baseline : report.baselines) {
    v1::PoolBaselineReport& base = *out.add_baselines();
    base.set_name(baseline.name);
    base.set_fits(baseline.fits);
    base.set_modelled_time_seconds(baseline.modelled_seconds);
    base.set_overflow_bytes(baseline.overflow_bytes);
    base.set_arena_bytes(baseline.single_pool_bytes);
  }
  *out.mutable_time() = DurationToProto(report.time);
}

absl::StatusOr<PoolReport> PoolReportFromProto(const Graph& graph, const MemoryModel& model,
                                               const SimulationResult& simulation,
                                               int64_t alignment, const PoolOptions& options,
                                               const ArenaPlan& arena,
                                               const v1::PoolPlacementReport& in) {
  PoolReport report;
  absl::StatusOr<PoolPlacement> placement =
      RecheckPoolPlacement(graph, model, simulation, alignment, options, arena);
  if (!placement.ok()) {
    return absl::InvalidArgumentError(
        absl::StrCat("response: the server's placement ", placement.status().message()));
  }
  report.placement = *std::move(placement);
  report.placement.algorithm = in.algorithm();
  const double seconds = report.placement.evaluation.modelled_seconds;
  if (report.fits() != in.fits() ||
      std::abs(seconds - in.modelled_time_seconds()) > 1e-9 * std::max(seconds, 1e-12)) {
    return absl::InvalidArgumentError(absl::StrCat(
        "response: the server says the placement ", in.fits() ? "fits" : "does not fit",
        " with modelled time ", in.modelled_time_seconds(), " s; re-checking it here gives ",
        report.fits() ? "fits" : "does not fit", " with ", seconds, " s"));
  }
  report.lower_bound_seconds = in.lower_bound_seconds();
  report.overflow = in.overflow();
  for (const v1::PoolBaselineReport& baseline : in.baselines()) {
    report.baselines.push_back({baseline.name(), baseline.fits(),
                                baseline.modelled_time_seconds(), baseline.overflow_bytes(),
                                baseline.arena_bytes()});
  }
  report.pool_of_tensor.assign(model.num_tensors(), kNoId);
  report.offset_of_tensor.assign(model.num_tensors(), 0);
  for (const TensorPlacement& tensor : arena.tensors) {
    report.pool_of_tensor[tensor.tensor] = tensor.pool;
    report.offset_of_tensor[tensor.tensor] = tensor.offset;
  }
  report.time = DurationFromProto(in.time());
  return report;
}

}  // namespace ordo::rpc
