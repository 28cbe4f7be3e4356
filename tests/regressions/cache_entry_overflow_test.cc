// Regression (found by tests/fuzz/cache_entry_fuzzer, UBSan: "signed integer
// overflow: 8083387866205908896 * 32"): a cache entry's peak in units was
// multiplied by the part's scale unchecked. Besides the undefined behaviour,
// a wrapped product can equal the real peak, so a corrupt entry with a
// bogus claim passed the re-check. The product is now overflow-checked.
#include <cstdint>
#include <optional>
#include <string>

#include "core/parts/schedule_by_parts.h"
#include "core/parts/part_key.h"
#include "core/cache/schedule_cache.h"
#include "core/memory/simulator.h"
#include "core/testing/test_graph.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::TestGraph;

class OneEntryCache final : public ScheduleCache {
 public:
  explicit OneEntryCache(CachedSchedule entry) : entry_(std::move(entry)) {}
  absl::StatusOr<std::optional<CachedSchedule>> Lookup(absl::string_view) override {
    return std::optional<CachedSchedule>(entry_);
  }
  absl::Status Insert(absl::string_view, const CachedSchedule&) override {
    return absl::OkStatus();
  }
  absl::string_view kind() const override { return "test"; }

 private:
  const CachedSchedule entry_;
};

TEST(CacheEntryOverflowTest, WrappingPeakClaimIsRejected) {
  absl::StatusOr<MemoryModel> model = BuildMemoryModel(TestGraph(R"(
    input x 32
    op a Relu x -> y:64
    output y
  )"),
                                                       {});
  ASSERT_TRUE(model.ok());
  PartScheduleOptions options;
  options.scheduler = "greedy";
  const PartKey key = CanonicalPartKey(*model, options.scheduler);
  ASSERT_GT(key.scale, 1);
  ASSERT_EQ(key.scale & (key.scale - 1), 0) << "the wrap below needs a power-of-two scale";
  absl::StatusOr<int64_t> peak = SimulatePeak(*model, {0});
  ASSERT_TRUE(peak.ok());

  // units * scale == peak + 2^64: wraps to exactly the real peak.
  const uint64_t wrap_units = (uint64_t{1} << 63) / static_cast<uint64_t>(key.scale) * 2;
  CachedSchedule entry;
  entry.order = {0};
  entry.peak_units = static_cast<int64_t>(static_cast<uint64_t>(*peak / key.scale) + wrap_units);
  ASSERT_GT(entry.peak_units, 0);
  entry.lower_bound_units = INT64_MAX;  // overflows too: claims nothing
  entry.status = ScheduleStatus::kOptimal;
  OneEntryCache cache(entry);
  EXPECT_EQ(LookupCachedPeak(*model, options, cache).cached_parts, 0);

  // The honest entry is still used, and a huge bound is capped at the peak.
  entry.peak_units = *peak / key.scale;
  OneEntryCache honest(entry);
  CachedPeak cached = LookupCachedPeak(*model, options, honest);
  EXPECT_EQ(cached.cached_parts, 1);
  EXPECT_EQ(cached.peak_bytes, *peak);
}

}  // namespace
}  // namespace ordo
