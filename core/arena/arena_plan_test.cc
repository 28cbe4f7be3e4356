#include "core/arena/arena_plan.h"

#include "core/testing/status_matchers.h"
#include "core/testing/test_graph.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::IsOk;
using ::ordo::testing::StatusIs;
using ::ordo::testing::TestGraph;
using ::testing::HasSubstr;

class VerifyArenaTest : public ::testing::Test {
 protected:
  // x -> a -> t -> b(Relu, in place) -> r -> c -> y, plus a side tensor s
  // alive with t.
  void SetUp() override {
    graph_ = TestGraph(R"(
      input x 64
      op a Conv x -> t:128 s:64
      op b Relu t -> r:128
      op c Conv r s -> y:64
      output y
    )");
    model_ = *BuildMemoryModel(graph_, {});
    simulation_ = *Simulate(model_, {0, 1, 2});
    ASSERT_EQ(simulation_.inplace_source[Id("r")], Id("t"));
  }

  int32_t Id(absl::string_view name) const { return *graph_.FindTensor(name); }

  // A valid layout: x@0, t@64 (r shares it), s@192, y@0.
  ArenaPlan ValidPlan() const {
    ArenaProblem problem = *BuildArenaProblem(model_, simulation_, 64);
    std::vector<int64_t> offsets(problem.blocks.size());
    offsets[problem.block_of_tensor[Id("x")]] = 0;
    offsets[problem.block_of_tensor[Id("t")]] = 64;
    offsets[problem.block_of_tensor[Id("s")]] = 192;
    offsets[problem.block_of_tensor[Id("y")]] = 0;
    return MakeArenaPlan(problem, simulation_, offsets);
  }

  TensorPlacement& Placement(ArenaPlan& plan, absl::string_view name) const {
    for (TensorPlacement& p : plan.tensors) {
      if (p.tensor == Id(name)) return p;
    }
    ADD_FAILURE() << "no placement for " << name;
    return plan.tensors[0];
  }

  Graph graph_;
  MemoryModel model_;
  SimulationResult simulation_;
};

TEST_F(VerifyArenaTest, AcceptsAValidPlanAndFillsTotals) {
  ArenaPlan plan = ValidPlan();
  EXPECT_THAT(VerifyArena(model_, simulation_, plan), IsOk());
  EXPECT_EQ(plan.tensors.size(), 5u);
  EXPECT_EQ(plan.arena_bytes, 256);
  // Step 0: x + t + s = 256; step 1: t/r + s = 192; step 2: r + s + y = 256.
  EXPECT_EQ(plan.lower_bound_bytes, 256);
  EXPECT_EQ(plan.gap_bytes, 0);
  EXPECT_TRUE(plan.optimal);
  EXPECT_EQ(Placement(plan, "r").offset, 64);
  EXPECT_EQ(Placement(plan, "r").first_step, 1);
}

TEST_F(VerifyArenaTest, RejectsOverlapOfCoLiveTensors) {
  ArenaPlan plan = ValidPlan();
  Placement(plan, "s").offset = 128;  // inside t's block at step 0
  plan.arena_bytes = 256;
  EXPECT_THAT(VerifyArena(model_, simulation_, plan),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("overlaps")));
}

TEST_F(VerifyArenaTest, AllowsReuseAcrossDisjointLifetimes) {
  ArenaPlan plan = ValidPlan();
  // y is born at step 2, x died after step 0: sharing offset 0 is fine (the
  // valid plan already does it); moving y onto s is not.
  EXPECT_THAT(VerifyArena(model_, simulation_, plan), IsOk());
  Placement(plan, "y").offset = 192;
  EXPECT_THAT(VerifyArena(model_, simulation_, plan),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("overlaps")));
}

TEST_F(VerifyArenaTest, RequiresInplacePairsToCoincide) {
  ArenaPlan plan = ValidPlan();
  Placement(plan, "r").offset = 256;
  plan.arena_bytes = 384;
  plan.gap_bytes = 128;
  EXPECT_THAT(VerifyArena(model_, simulation_, plan),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("does not coincide")));
}

TEST_F(VerifyArenaTest, RejectsUnalignedMissingAndMiscountedPlans) {
  ArenaPlan unaligned = ValidPlan();
  Placement(unaligned, "s").offset = 200;
  EXPECT_THAT(VerifyArena(model_, simulation_, unaligned),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("multiple of 64")));

  ArenaPlan missing = ValidPlan();
  missing.tensors.pop_back();
  EXPECT_THAT(VerifyArena(model_, simulation_, missing),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("not placed")));

  ArenaPlan wrong_size = ValidPlan();
  Placement(wrong_size, "x").size = 32;
  EXPECT_THAT(VerifyArena(model_, simulation_, wrong_size),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("size should be 64")));

  ArenaPlan wrong_total = ValidPlan();
  wrong_total.arena_bytes = 512;
  EXPECT_THAT(VerifyArena(model_, simulation_, wrong_total),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("arena_bytes")));

  ArenaPlan wrong_interval = ValidPlan();
  Placement(wrong_interval, "s").last_step = 1;
  EXPECT_THAT(VerifyArena(model_, simulation_, wrong_interval),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("live interval")));
}

TEST_F(VerifyArenaTest, DrawsOneRowPerStepWithoutFalseOverlaps) {
  const std::string picture = DrawArenaAscii(ValidPlan(), 8);
  // 256 bytes over 8 columns: 32 bytes a column. Tensors by id: x=0, t=1,
  // s=2, r=3, y=4.
  EXPECT_EQ(picture,
            "in:\t00...... 64\n"
            "0:\t00111122 256\n"
            "1:\t..333322 192\n"
            "2:\t44333322 256\n");
}

}  // namespace
}  // namespace ordo
