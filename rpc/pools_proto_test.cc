// DeviceSpec.pools <-> PoolOptions and CompileResponse.placement <->
// PoolReport: a round trip keeps the placement, and a tampered placement is
// refused by the client's re-check.

#include "rpc/pools_proto.h"

#include <limits>

#include "core/compile/compile.h"
#include "core/testing/status_matchers.h"
#include "core/testing/test_graph.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rpc/compile_proto.h"

namespace ordo::rpc {
namespace {

using ::ordo::testing::StatusIs;
using ::ordo::testing::TestGraph;
using ::testing::HasSubstr;

using ::ordo::testing::kTwoBranchesGraph;

CompileOptions WithPools() {
  CompileOptions options;
  options.pools.pools = {{"fast", 128, 8e9, 8e9}, {"slow", 1024, 1e8, 5e7}};
  options.pools.pinned = {{"y", "slow"}};
  return options;
}

TEST(PoolsProtoTest, OptionsRoundTripAndZeroBandwidthsMeanTheDefaults) {
  v1::DeviceSpec device;
  PoolOptionsToProto(WithPools().pools, device);
  ORDO_ASSERT_OK_AND_ASSIGN(PoolOptions back, PoolOptionsFromProto(device));
  ASSERT_EQ(back.pools.size(), 2u);
  EXPECT_EQ(back.pools[1].name, "slow");
  EXPECT_EQ(back.pools[1].write_bytes_per_second, 5e7);
  EXPECT_EQ(back.pinned.at("y"), "slow");
  EXPECT_FALSE(back.one_arena);
  PoolOptions one_arena = WithPools().pools;
  one_arena.one_arena = true;
  v1::DeviceSpec tflm;
  PoolOptionsToProto(one_arena, tflm);
  EXPECT_TRUE(tflm.one_arena());
  ORDO_ASSERT_OK_AND_ASSIGN(PoolOptions tflm_back, PoolOptionsFromProto(tflm));
  EXPECT_TRUE(tflm_back.one_arena);
  v1::DeviceSpec no_pools;
  no_pools.set_one_arena(true);
  EXPECT_THAT(PoolOptionsFromProto(no_pools),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("device.one_arena: needs memory pools")));
  // The effort: fast by default and when unspecified, thorough when asked;
  // an unknown value or an effort without pools names the field.
  EXPECT_EQ(back.effort, PlacementEffort::kFast);
  EXPECT_EQ(device.placement_effort(), v1::PLACEMENT_EFFORT_FAST);
  v1::DeviceSpec effort = device;
  effort.set_placement_effort(v1::PLACEMENT_EFFORT_UNSPECIFIED);
  ORDO_ASSERT_OK_AND_ASSIGN(PoolOptions unspecified, PoolOptionsFromProto(effort));
  EXPECT_EQ(unspecified.effort, PlacementEffort::kFast);
  PoolOptions thorough = WithPools().pools;
  thorough.effort = PlacementEffort::kThorough;
  PoolOptionsToProto(thorough, effort);
  EXPECT_EQ(effort.placement_effort(), v1::PLACEMENT_EFFORT_THOROUGH);
  ORDO_ASSERT_OK_AND_ASSIGN(PoolOptions thorough_back, PoolOptionsFromProto(effort));
  EXPECT_EQ(thorough_back.effort, PlacementEffort::kThorough);
  effort.set_placement_effort(static_cast<v1::PlacementEffort>(7));
  EXPECT_THAT(PoolOptionsFromProto(effort),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("device.placement_effort: unknown value 7")));
  v1::DeviceSpec effort_without_pools;
  effort_without_pools.set_placement_effort(v1::PLACEMENT_EFFORT_THOROUGH);
  EXPECT_THAT(PoolOptionsFromProto(effort_without_pools),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("device.placement_effort: needs memory pools")));
  device.mutable_pools(1)->set_read_bytes_per_second(0);
  device.mutable_pools(1)->set_write_bytes_per_second(0);
  ORDO_ASSERT_OK_AND_ASSIGN(back, PoolOptionsFromProto(device));
  EXPECT_EQ(back.pools[1].read_bytes_per_second, kDefaultPoolBytesPerSecond);
  EXPECT_EQ(back.pools[1].write_bytes_per_second, kDefaultPoolBytesPerSecond);
  device.mutable_pools(0)->set_write_bytes_per_second(std::numeric_limits<double>::infinity());
  EXPECT_THAT(PoolOptionsFromProto(device),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("memory pool \"fast\": write_bytes_per_second")));
}

TEST(PoolsProtoTest, PlacementRoundTripsAndATamperedOneIsRefused) {
  const Graph g = TestGraph(kTwoBranchesGraph);
  const CompileOptions options = WithPools();
  RealClock clock;
  ORDO_ASSERT_OK_AND_ASSIGN(CompileResult result, Compile(g, options, clock));
  ASSERT_TRUE(result.placement.has_value());
  v1::CompileResponse response = CompileResultToProto(g, result);
  ASSERT_TRUE(response.has_placement());
  for (const v1::TensorPlacement& tensor : response.arena().tensors()) {
    EXPECT_FALSE(tensor.pool().empty()) << tensor.tensor();
    if (tensor.tensor() == "y") {
      EXPECT_EQ(tensor.pool(), "slow");
    }
  }
  ORDO_ASSERT_OK_AND_ASSIGN(CompileResult back, CompileResultFromProto(g, options, response));
  ASSERT_TRUE(back.placement.has_value());
  EXPECT_EQ(back.placement->placement.evaluation.modelled_seconds,
            result.placement->placement.evaluation.modelled_seconds);
  EXPECT_EQ(back.placement->placement.assignment.pool,
            result.placement->placement.assignment.pool);
  ASSERT_EQ(back.placement->baselines.size(), 4u);
  EXPECT_EQ(back.placement->baselines[3].name, "one_arena");
  EXPECT_EQ(back.placement->baselines[3].single_pool_bytes,
            result.placement->baselines[3].single_pool_bytes);

  // Every tensor at offset 0 of its pool: co-live tensors overlap.
  v1::CompileResponse overlapping = response;
  for (v1::TensorPlacement& tensor : *overlapping.mutable_arena()->mutable_tensors()) {
    tensor.set_offset_bytes(0);
  }
  EXPECT_THAT(CompileResultFromProto(g, options, overlapping),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("response:")));
  v1::CompileResponse cheaper = response;
  cheaper.mutable_placement()->set_modelled_time_seconds(
      response.placement().modelled_time_seconds() / 2);
  EXPECT_THAT(CompileResultFromProto(g, options, cheaper),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("re-checking it here")));
  v1::CompileResponse unknown = response;
  unknown.mutable_arena()->mutable_tensors(0)->set_pool("dram");
  EXPECT_THAT(CompileResultFromProto(g, options, unknown),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unknown memory pool \"dram\"")));
  v1::CompileResponse flat = response;
  flat.clear_placement();
  EXPECT_THAT(CompileResultFromProto(g, options, flat),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("predates")));
}

}  // namespace
}  // namespace ordo::rpc
