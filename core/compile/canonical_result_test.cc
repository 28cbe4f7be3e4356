#include "core/compile/canonical_result.h"

#include "core/arena/arena_plan.h"
#include "core/testing/status_matchers.h"
#include "core/testing/test_graph.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::StatusIs;
using ::ordo::testing::TestGraph;
using ::testing::HasSubstr;

// The same network twice, as two exporters might write it: other names,
// weights declared in another order.
constexpr char kExportA[] = R"(
  input x 64
  weight w1 16
  weight w2 16
  op conv1 Conv x w1 -> a:128
  op conv2 Conv x w2 -> b:32
  op relu Relu a -> c:128
  op add Add c b -> d:128
  op head Conv d -> y:16
  output y
)";
constexpr char kExportB[] = R"(
  input in.0 64
  weight p.b 16
  weight p.a 16
  op m/0 Conv in.0 p.a -> t0:128
  op m/1 Conv in.0 p.b -> t1:32
  op m/2 Relu t0 -> t2:128
  op m/3 Add t2 t1 -> t3:128
  op m/4 Conv t3 -> out:16
  output out
)";

TEST(CanonicalResultTest, AResultOfOneExportServesTheOtherRecheckedOnIt) {
  const Graph a = TestGraph(kExportA);
  const Graph b = TestGraph(kExportB);
  const CanonicalGraph canonical_a = CanonicalizeGraph(a);
  const CanonicalGraph canonical_b = CanonicalizeGraph(b);
  ASSERT_EQ(canonical_a.form, canonical_b.form);
  const RealClock clock;
  CompileOptions options;
  options.alignment = 16;
  options.on_chip_bytes = 100;
  ORDO_ASSERT_OK_AND_ASSIGN(const CompileResult compiled, Compile(a, options, clock));
  ASSERT_TRUE(CanBeCanonicalized(compiled));
  const CompileResult stored = CanonicalizeResult(compiled, canonical_a);

  ORDO_ASSERT_OK_AND_ASSIGN(const CompileResult served,
                            ResultForGraph(stored, b, canonical_b, options));
  EXPECT_EQ(served.schedule, compiled.schedule);
  EXPECT_EQ(served.peak_bytes, compiled.peak_bytes);
  EXPECT_EQ(served.simulation.step_bytes, compiled.simulation.step_bytes);
  EXPECT_EQ(served.arena.arena_bytes, compiled.arena.arena_bytes);
  ASSERT_EQ(served.arena.tensors.size(), compiled.arena.tensors.size());
  for (size_t i = 0; i < served.arena.tensors.size(); ++i) {
    // Same offsets, on the twin tensor of b.
    const TensorPlacement& in_b = served.arena.tensors[i];
    const auto twin = std::find_if(
        compiled.arena.tensors.begin(), compiled.arena.tensors.end(),
        [&](const TensorPlacement& in_a) {
          return canonical_a.canonical_of_tensor[in_a.tensor] ==
                 canonical_b.canonical_of_tensor[in_b.tensor];
        });
    ASSERT_NE(twin, compiled.arena.tensors.end());
    EXPECT_EQ(in_b.offset, twin->offset) << b.tensor(in_b.tensor).name;
  }
  const MemoryModel model_b = *BuildMemoryModel(b, options.memory);
  ORDO_EXPECT_OK(VerifyArena(model_b, served.simulation, served.arena));
  ASSERT_TRUE(served.traffic.has_value());
  EXPECT_EQ(served.traffic->total_bytes, compiled.traffic->total_bytes);
}

TEST(CanonicalResultTest, AStoredResultThatDoesNotHoldIsRefused) {
  const Graph a = TestGraph(kExportA);
  const CanonicalGraph canonical = CanonicalizeGraph(a);
  const RealClock clock;
  ORDO_ASSERT_OK_AND_ASSIGN(const CompileResult compiled, Compile(a, {}, clock));
  CompileResult wrong_peak = CanonicalizeResult(compiled, canonical);
  wrong_peak.peak_bytes -= 1;
  EXPECT_THAT(ResultForGraph(wrong_peak, a, canonical, {}),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("the simulator says")));
  CompileResult wrong_order = CanonicalizeResult(compiled, canonical);
  std::reverse(wrong_order.schedule.begin(), wrong_order.schedule.end());
  EXPECT_THAT(ResultForGraph(wrong_order, a, canonical, {}),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("not valid here")));
  CompileResult overlapping = CanonicalizeResult(compiled, canonical);
  for (TensorPlacement& placement : overlapping.arena.tensors) placement.offset = 0;
  EXPECT_THAT(ResultForGraph(overlapping, a, canonical, {}),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("arena")));
  MemoryOptions other_rules;
  other_rules.inplace = false;
  CompileOptions options;
  options.memory = other_rules;
  EXPECT_THAT(ResultForGraph(CanonicalizeResult(compiled, canonical), a, canonical, options),
              StatusIs(absl::StatusCode::kInternal, HasSubstr("memory rules")));
}

}  // namespace
}  // namespace ordo
