// libFuzzer target: a corrupt or hostile schedule-cache entry. The bytes are
// an ordo.v1.CachedPartSchedule as stored in Redis; they are decoded the way
// RedisScheduleCache::Lookup decodes them and served for every part of a
// fixed model, so the re-check in core/parts/schedule_by_parts.cc
// (CheckEntry: length, permutation, dependencies, re-simulated peak) sees
// arbitrary orders, peaks, bounds, statuses and durations. The entry must
// never make ScheduleByParts fail or return an invalid schedule.
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <string>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "core/parts/schedule_by_parts.h"
#include "core/parts/part_runner.h"
#include "core/cache/schedule_cache.h"
#include "core/memory/simulator.h"
#include "core/testing/test_graph.h"
#include "ordo/v1/schedule.pb.h"
#include "rpc/memory_model_proto.h"
#include "tests/fuzz/fuzz_graph_checks.h"

namespace {

// Serves one decoded entry under every key; drops inserts.
class OneEntryCache final : public ordo::ScheduleCache {
 public:
  explicit OneEntryCache(ordo::CachedSchedule entry) : entry_(std::move(entry)) {}
  absl::StatusOr<std::optional<ordo::CachedSchedule>> Lookup(absl::string_view) override {
    return std::optional<ordo::CachedSchedule>(entry_);
  }
  absl::Status Insert(absl::string_view, const ordo::CachedSchedule&) override {
    return absl::OkStatus();
  }
  absl::string_view kind() const override { return "fuzz"; }

 private:
  const ordo::CachedSchedule entry_;
};

}  // namespace

extern "C" int LLVMFuzzerInitialize(int* /*argc*/, char*** /*argv*/) {
  ordo::fuzz::QuietProtobufLogs();
  return 0;
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Three parts with merge_up_to_ops = 1: a 1-op stem and two 3-op cells.
  static const ordo::MemoryModel* const model =
      new ordo::MemoryModel(ordo::testing::TestModel(ordo::testing::kTwoCellsGraph));

  // RedisScheduleCache::Lookup's decoding, minus the key comparison (the
  // fuzzer cannot guess canonical keys; a wrong key only means a miss).
  ordo::v1::CachedPartSchedule proto;
  if (!proto.ParseFromArray(data, static_cast<int>(size)) || proto.peak_units() < 0) return 0;
  ordo::CachedSchedule entry;
  entry.order.assign(proto.order().begin(), proto.order().end());
  entry.peak_units = proto.peak_units();
  entry.lower_bound_units = proto.lower_bound_units();
  entry.status = ordo::rpc::ScheduleStatusFromProto(proto.status());
  entry.algorithm = proto.algorithm();
  entry.time_limit = ordo::rpc::DurationFromProto(proto.time_limit());
  OneEntryCache cache(std::move(entry));

  ordo::PartScheduleOptions options;
  options.scheduler = "greedy";
  options.time_limit = absl::Seconds(1);
  options.partition.merge_up_to_ops = 1;
  ordo::LookupCachedPeak(*model, options, cache);

  ordo::ThreadPartRunner runner(1);
  absl::StatusOr<ordo::PartScheduleResult> result =
      ordo::ScheduleByParts(*model, options, ordo::ScheduleLimits{}, runner, &cache);
  if (!result.ok()) {
    std::fprintf(stderr, "ScheduleByParts failed: %s\n", result.status().ToString().c_str());
    std::abort();
  }
  absl::StatusOr<int64_t> peak = ordo::SimulatePeak(*model, result->schedule.order);
  if (!peak.ok() || *peak != result->schedule.peak_bytes ||
      result->schedule.lower_bound_bytes > result->schedule.peak_bytes) {
    std::fprintf(stderr, "ScheduleByParts returned an unchecked schedule\n");
    std::abort();
  }
  return 0;
}
