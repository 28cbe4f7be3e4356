#include "core/schedule/chain_symmetry.h"

#include <random>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/schedule/dp_scheduler.h"
#include "core/testing/schedule_checks.h"
#include "core/testing/status_matchers.h"
#include "core/testing/test_graph.h"
#include "core/testing/trials.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::BruteForceMinPeak;
using ::ordo::testing::ExpectValidSchedule;
using ::ordo::testing::SummedBranches;
using ::ordo::testing::TestModel;
using ::testing::IsEmpty;
using ::testing::SizeIs;

std::vector<std::pair<int32_t, int32_t>> Pairs(const std::vector<OrderEdge>& edges) {
  std::vector<std::pair<int32_t, int32_t>> pairs;
  pairs.reserve(edges.size());
  for (const OrderEdge& edge : edges) pairs.emplace_back(edge.before, edge.after);
  return pairs;
}

TEST(ChainSymmetryTest, IdenticalBranchesAreOrderedPositionByPosition) {
  // Ops: c0 r0 o0 c1 r1 o1 c2 r2 o2 join.
  const MemoryModel model = TestModel(SummedBranches(3));
  EXPECT_THAT(Pairs(InterchangeableChainEdges(model)),
              ::testing::ElementsAre(std::pair(0, 3), std::pair(1, 4), std::pair(2, 5),
                                     std::pair(3, 6), std::pair(4, 7), std::pair(5, 8)));
}

TEST(ChainSymmetryTest, BranchesThatDifferAreNotOrdered) {
  // Another size in one position.
  EXPECT_THAT(InterchangeableChainEdges(TestModel(R"(
    input x 4
    op a Conv x -> a1:10
    op b Conv a1 -> b1:1
    op c Conv x -> c1:10
    op d Conv c1 -> d1:2
    op j Concat b1 d1 -> y:3
    output y
  )")),
              IsEmpty());
  // Read by other ops at the end.
  EXPECT_THAT(InterchangeableChainEdges(TestModel(R"(
    input x 4
    op a Conv x -> a1:10
    op c Conv x -> c1:10
    op j Concat a1 c1 -> y:3
    op k Relu a1 -> z:10
    output y
    output z
  )")),
              IsEmpty());
  // Another input in the middle.
  EXPECT_THAT(InterchangeableChainEdges(TestModel(R"(
    input x 4
    input w 4
    op a Conv x -> a1:10
    op b Add a1 w -> b1:10
    op c Conv x -> c1:10
    op d Add c1 x -> d1:10
    op j Concat b1 d1 -> y:3
    output y
  )")),
              IsEmpty());
  // One branch's end is a graph output.
  EXPECT_THAT(InterchangeableChainEdges(TestModel(R"(
    input x 4
    op a Conv x -> a1:10
    op c Conv x -> c1:10
    op j Concat a1 c1 -> y:3
    output y
    output a1
  )")),
              IsEmpty());
}

// The exact search with the edges against brute force on `model`.
void ExpectOptimumKept(const MemoryModel& model) {
  ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult result, DpScheduler().Schedule(model, {}));
  ExpectValidSchedule(model, result);
  EXPECT_EQ(result.status, ScheduleStatus::kOptimal);
  EXPECT_EQ(result.peak_bytes, BruteForceMinPeak(model).peak_bytes);
}

// Chains that differ in one field of the signature only. Each pair, if
// ordered, would raise the optimum (a second read's brute force: 38 -> 40,
// 43 -> 44, 35 -> 54, 46 -> 48), so a signature without that field fails.
TEST(ChainSymmetryTest, ChainsDifferingInOneFieldAreNotOrdered) {
  const char* kCases[] = {
      // Which input the Add writes over: the shared one or the chain's.
      R"(
    input x 10
    input w 10
    op a0 Conv x -> a0:10
    op b0 Add w a0 -> b0:10
    op a1 Conv x -> a1:10
    op b1 Add a1 w -> b1:10
    op c0 Conv b0 -> c0:8
    op c1 Conv b1 -> c1:8
    op j Concat c0 c1 -> y:4
    output y
  )",
      // In place or not.
      R"(
    input x 4
    op a0 Conv x -> a0:20
    op b0 Conv a0 -> b0:20
    op c0 Conv b0 -> c0:3
    op a1 Conv x -> a1:20
    op b1 Relu a1 -> b1:20
    op c1 Conv b1 -> c1:3
    op j Concat c0 c1 -> y:12
    output y
  )",
      // An input of its own from another producer.
      R"(
    input x 10
    input g 20
    op s Split x -> s0:20 s9:4
    op a0 Conv s0 -> a0:1
    op a1 Conv g -> a1:1
    op b0 Conv a0 -> b0:2
    op b1 Conv a1 -> b1:2
    op j Concat b0 b1 -> y:3
    output y
    output s9
  )",
      // An input of its own that is also a graph output.
      R"(
    input x 10
    input g0 10
    input g1 10
    op r0 Relu g0 -> r0:10
    op a0 Conv r0 x -> a0:8
    op r1 Relu g1 -> r1:10
    op a1 Conv r1 x -> a1:8
    op j Concat a0 a1 -> y:4
    output y
    output g0
  )",
  };
  for (const char* text : kCases) {
    const MemoryModel model = TestModel(text);
    EXPECT_THAT(InterchangeableChainEdges(model), IsEmpty()) << text;
    ExpectOptimumKept(model);
  }
}

TEST(ChainSymmetryTest, AlikeChainsMayStillInterleave) {
  // The edges order the chains op by op, not one chain before the next:
  // both first ops run while x is live (102), which finishing a chain
  // first would not (151).
  const MemoryModel model = TestModel(R"(
    input x 100
    op a0 Conv x -> a0:1
    op b0 Conv a0 -> b0:50
    op c0 Conv b0 -> c0:1
    op a1 Conv x -> a1:1
    op b1 Conv a1 -> b1:50
    op c1 Conv b1 -> c1:1
    op j Concat c0 c1 -> y:1
    output y
  )");
  EXPECT_THAT(Pairs(InterchangeableChainEdges(model)),
              ::testing::ElementsAre(std::pair(0, 3), std::pair(1, 4), std::pair(2, 5)));
  ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult result, DpScheduler().Schedule(model, {}));
  EXPECT_EQ(result.peak_bytes, 102);
  ExpectOptimumKept(model);
}

TEST(ChainSymmetryTest, AnOpWritingOverOneEndOfAlikeChainsKeepsTheOptimum) {
  // j may write over b0 only; the swap would have it write over b1, of the
  // same size and readers.
  const MemoryModel model = TestModel(R"(
    input x 4
    op a0 Conv x -> a0:10
    op b0 Conv a0 -> b0:6
    op a1 Conv x -> a1:10
    op b1 Conv a1 -> b1:6
    op j Add b0 b1 -> y:6
    op k Conv b0 b1 -> z:1
    output y
    output z
  )");
  EXPECT_THAT(Pairs(InterchangeableChainEdges(model)),
              ::testing::ElementsAre(std::pair(0, 2), std::pair(1, 3)));
  ExpectOptimumKept(model);
}

TEST(ChainSymmetryTest, InputsOutsideTheArenaKeepTheOptimum) {
  const char* kText = R"(
    input x 4
    input g0 8
    input g1 8
    op r0 Relu g0 -> r0:8
    op a0 Conv r0 x -> a0:2
    op r1 Relu g1 -> r1:8
    op a1 Conv r1 x -> a1:2
    op j Concat a0 a1 -> y:4
    output y
  )";
  MemoryOptions options;
  options.io_outside_arena = true;
  const MemoryModel model = TestModel(kText, options);
  EXPECT_THAT(InterchangeableChainEdges(model), SizeIs(2));
  ExpectOptimumKept(model);
}

TEST(ChainSymmetryTest, InputsOfTheirOwnOfOneProducerAreInterchangeable) {
  // A Split's pieces, each read by one branch; in-place Relus over them.
  const MemoryModel model = TestModel(R"(
    input x 12
    op s Split x -> s0:4 s1:4 s2:4
    op a0 Relu s0 -> a0:4
    op b0 Conv a0 -> b0:2
    op a1 Relu s1 -> a1:4
    op b1 Conv a1 -> b1:2
    op a2 Relu s2 -> a2:4
    op b2 Conv a2 -> b2:2
    op j Concat b0 b1 b2 -> y:6
    output y
  )");
  EXPECT_THAT(InterchangeableChainEdges(model), SizeIs(4));
}

TEST(ChainSymmetryTest, EdgesAgainstTheIdOrderAreLeftOut) {
  // The second ops are declared in reverse: only the first ops are ordered.
  const MemoryModel model = TestModel(R"(
    input x 4
    op a0 Conv x -> a0:10
    op a1 Conv x -> a1:10
    op b1 Conv a1 -> b1:1
    op b0 Conv a0 -> b0:1
    op j Sum b0 b1 -> y:1
    output y
  )");
  EXPECT_THAT(Pairs(InterchangeableChainEdges(model)), ::testing::ElementsAre(std::pair(0, 1)));
}

// A random graph in which groups of identical chains hang off random
// tensors (shared or split into pieces of their own) and end in one join,
// or are read by the same later ops; random ops between. Small enough for
// brute force when `max_ops` is.
std::string RandomSymmetricGraph(std::mt19937_64& rng, int max_ops) {
  auto pick = [&rng](int n) { return static_cast<int>(rng() % n); };
  const char* kTypes[] = {"Conv", "Relu", "Add"};
  std::string text = absl::StrCat("input x ", 1 + pick(20), "\n");
  std::vector<std::string> tensors = {"x"};
  int ops = 0, names = 0;
  auto fresh = [&names] { return absl::StrCat("t", names++); };
  while (ops < max_ops) {
    const std::string& source = tensors[pick(static_cast<int>(tensors.size()))];
    if (pick(3) != 0 && ops + 3 <= max_ops) {
      const int copies = 2 + pick(2);
      const int length = 1 + pick(std::min(3, (max_ops - ops - 1) / copies + 1));
      if (ops + copies * length + 1 > max_ops + 1) continue;
      std::vector<std::string> types;
      std::vector<int> bytes;
      for (int i = 0; i < length; ++i) {
        types.push_back(kTypes[pick(3)]);
        bytes.push_back(1 + pick(20));
      }
      const bool own_inputs = pick(3) == 0;
      const std::string side = tensors[pick(static_cast<int>(tensors.size()))];
      std::vector<std::string> pieces;
      if (own_inputs) {
        std::string split = absl::StrCat("op s", names, " Split ", source, " ->");
        const int piece_bytes = 1 + pick(20);
        for (int c = 0; c < copies; ++c) {
          pieces.push_back(fresh());
          absl::StrAppend(&split, " ", pieces.back(), ":", piece_bytes);
        }
        absl::StrAppend(&text, split, "\n");
        ++ops;
      }
      std::vector<std::string> ends;
      // Now and then the last copy is a near copy: one output a byte larger
      // (or the shared input read first), which must not be ordered.
      const int changed = pick(3) == 0 ? pick(length) : -1;
      const bool side_first = pick(2) == 0;
      for (int c = 0; c < copies; ++c) {
        std::string in = own_inputs ? pieces[c] : source;
        for (int i = 0; i < length; ++i) {
          const std::string out = fresh();
          const bool near = c == copies - 1 && i == changed;
          // Add reads a second tensor: the side input, shared by the copies.
          std::string args = in;
          if (types[i] == "Add" && side != in) {
            args = side_first != near ? absl::StrCat(side, " ", in) : absl::StrCat(in, " ", side);
          }
          absl::StrAppend(&text, "op o", out, " ", types[i], " ", args, " -> ", out, ":",
                          bytes[i] + (near && types[i] != "Add" ? 1 : 0), "\n");
          ++ops;
          in = out;
        }
        ends.push_back(in);
      }
      if (pick(2) == 0) {
        std::string join = absl::StrCat("op j", names, " ", pick(2) == 0 ? "Sum" : "Concat");
        for (const std::string& end : ends) absl::StrAppend(&join, " ", end);
        const std::string out = fresh();
        absl::StrAppend(&text, join, " -> ", out, ":", 1 + pick(20), "\n");
        ++ops;
        tensors.push_back(out);
      } else {
        tensors.insert(tensors.end(), ends.begin(), ends.end());
      }
    } else {
      const std::string out = fresh();
      const std::string& other = tensors[pick(static_cast<int>(tensors.size()))];
      absl::StrAppend(&text, "op o", out, " ", kTypes[pick(3)], " ", source,
                      other == source ? "" : absl::StrCat(" ", other), " -> ", out, ":",
                      1 + pick(20), "\n");
      ++ops;
      tensors.push_back(out);
    }
  }
  // Tensors nobody reads become graph outputs, as in RandomDag.
  std::string outputs;
  for (const std::string& tensor : tensors) {
    if (text.find(absl::StrCat(" ", tensor, " ")) == std::string::npos &&
        text.find(absl::StrCat(" ", tensor, "\n")) == std::string::npos) {
      absl::StrAppend(&outputs, "output ", tensor, "\n");
    }
  }
  if (outputs.empty()) outputs = absl::StrCat("output ", tensors.back(), "\n");
  return absl::StrCat(text, outputs);
}

// The property that makes the edges safe: with them the exact search still
// proves the brute-force optimum, on graphs full of identical chains.
TEST(ChainSymmetryTest, TheExactSearchKeepsTheOptimumOnSmallGraphs) {
  std::mt19937_64 rng(31);
  int ordered = 0;
  for (int trial = 0; trial < ::ordo::testing::Trials(800); ++trial) {
    const std::string text = RandomSymmetricGraph(rng, 7 + static_cast<int>(rng() % 4));
    MemoryOptions options;
    options.inplace = trial % 4 != 0;
    const MemoryModel model = TestModel(text, options);
    if (!InterchangeableChainEdges(model).empty()) ++ordered;
    const int64_t expected = BruteForceMinPeak(model).peak_bytes;
    ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult dp, DpScheduler().Schedule(model, {}));
    ExpectValidSchedule(model, dp);
    ASSERT_EQ(dp.peak_bytes, expected) << text;
    ASSERT_EQ(dp.status, ScheduleStatus::kOptimal) << text;
  }
  EXPECT_GT(ordered, ::ordo::testing::Trials(800) / 2);  // not vacuous
}

// Too big for brute force: the search without the edges must prove the
// same optimum.
TEST(ChainSymmetryTest, ChangesNoOptimumOnMediumGraphs) {
  std::mt19937_64 rng(32);
  const DpScheduler plain(DpOptions{.break_symmetry = false});
  int searched = 0;  // both searches had to expand states
  for (int trial = 0; trial < ::ordo::testing::Trials(300); ++trial) {
    const std::string text = RandomSymmetricGraph(rng, 16 + static_cast<int>(rng() % 14));
    const MemoryModel model = TestModel(text);
    ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult with, DpScheduler().Schedule(model, {}));
    ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult without, plain.Schedule(model, {}));
    ExpectValidSchedule(model, with);
    ASSERT_EQ(with.status, ScheduleStatus::kOptimal);
    ASSERT_EQ(without.status, ScheduleStatus::kOptimal);
    ASSERT_EQ(with.peak_bytes, without.peak_bytes) << text;
    if (with.stats.states_expanded > 0) ++searched;
  }
  EXPECT_GT(searched, ::ordo::testing::Trials(300) / 2);
}

// What it is for: 48 identical branches are 4^48 sets of scheduled ops,
// and the peak (the last branch beside the others' results) is above the
// spec's bound, so nothing short of the search proves it.
TEST(ChainSymmetryTest, ProvesAFanOfIdenticalBranchesTheSearchCouldNot) {
  const MemoryModel model = TestModel(SummedBranches(48));
  ScheduleLimits limits;
  limits.max_state_bytes = 64 << 20;
  ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult with, DpScheduler().Schedule(model, limits));
  ExpectValidSchedule(model, with);
  EXPECT_EQ(with.status, ScheduleStatus::kOptimal);
  EXPECT_GT(with.peak_bytes, MemoryLowerBound(model));
  ORDO_ASSERT_OK_AND_ASSIGN(
      ScheduleResult without,
      DpScheduler(DpOptions{.break_symmetry = false}).Schedule(model, limits));
  EXPECT_NE(without.status, ScheduleStatus::kOptimal);
  EXPECT_EQ(without.peak_bytes, with.peak_bytes);
}

}  // namespace
}  // namespace ordo
