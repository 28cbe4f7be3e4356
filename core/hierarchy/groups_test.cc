#include "core/hierarchy/groups.h"

#include <algorithm>
#include <vector>

#include "core/hierarchy/hierarchical_graph.h"
#include "core/memory/memory_model.h"
#include "core/testing/test_graph.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::TestGraph;

// Three NASNet-like cells: each reads the previous cell's output (prev)
// and the one before (prev-prev), widens it and concatenates.
constexpr char kThreeCells[] = R"(
    input x 10
    op stem Conv x -> s:10
    op stem2 Conv s -> s2:10
    # cell 1 (prev = s2, prev-prev = s)
    op p1 Conv s2 -> p1:10
    op q1 Conv s -> q1:10
    op a1 Add p1 q1 -> a1:10
    op b1 Conv s2 -> b1:10
    op cat1 Concat a1 b1 -> c1:40
    # cell 2 (prev = c1, prev-prev = s2)
    op p2 Conv c1 -> p2:5
    op r2 Conv p2 -> r2:5
    op q2 Conv s2 -> q2:5
    op a2 Add r2 q2 -> a2:5
    op b2 Conv c1 -> b2:5
    op cat2 Concat a2 b2 -> c2:40
    # cell 3 (prev = c2, prev-prev = c1)
    op p3 Conv c2 -> p3:5
    op q3 Conv c1 -> q3:5
    op a3 Add p3 q3 -> a3:5
    op cat3 Concat a3 p3 -> c3:10
    op head Conv c3 -> y:1
    output y
)";

std::vector<std::vector<int32_t>> GroupOps(const HierarchicalGraph& graph) {
  std::vector<std::vector<int32_t>> groups;
  for (int32_t g = 0; g < graph.num_groups(); ++g) {
    std::vector<int32_t> ops;
    for (int32_t s : graph.group(g)) {
      for (int32_t op : graph.sequence(s)) ops.push_back(op);
    }
    std::sort(ops.begin(), ops.end());
    groups.push_back(ops);
  }
  return groups;
}

TEST(GroupsTest, CellsAreTheRegionsTheirJoinsPostDominate) {
  MemoryModel model = *BuildMemoryModel(TestGraph(kThreeCells), {});
  HierarchyOptions options;
  options.groups.dominator_groups = false;
  options.groups.max_group_sequences = 8;
  const HierarchicalGraph capped = HierarchicalGraph::Build(model, options);
  // Sequences: cat2 + p3 (c2 dies into the smaller p3) and cat3 + head;
  // every other op alone. Latest join first: cat3's region is everything
  // after the stem (c1 and c2 are read only inside it, and no op but the
  // stem is on every path to it), 14 sequences: over the cap of 8, so not
  // a cell. Then cat2: ops 7-13 (c1 is also read by cell 3: not
  // post-dominated, the region stops there). Then cat1: ops 2-6 (s2 is
  // read by cell 2 too).
  EXPECT_THAT(GroupOps(capped),
              ::testing::UnorderedElementsAre(std::vector<int32_t>{7, 8, 9, 10, 11, 12, 13},
                                              std::vector<int32_t>{2, 3, 4, 5, 6}));
  for (int32_t g = 0; g < capped.num_groups(); ++g) EXPECT_TRUE(capped.is_cell(g));
  // Uncapped, cat3 takes its whole region, the other joins included.
  options.groups.max_group_sequences = 40;
  const HierarchicalGraph uncapped = HierarchicalGraph::Build(model, options);
  EXPECT_THAT(GroupOps(uncapped), ::testing::ElementsAre(std::vector<int32_t>{
                                      1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17}));
}

// Cell 1's output c1 (40 bytes) dominates p2, r2, b2 and q3. The
// predecessor-closed set {cat1, p2, r2, b2, q3} has boundary r2 + b2 + q3 =
// 15 < 40, the least (adding a2 would need q2, outside the dominated set),
// so {p2, r2, b2, q3} becomes a group, taken out of cell 2: the part of the
// next cells that shrinks c1, run as a block right after it.
TEST(GroupsTest, DominatorGroupTakesTheMinimalBoundarySetAfterACellOutput) {
  MemoryModel model = *BuildMemoryModel(TestGraph(kThreeCells), {});
  HierarchyOptions options;
  options.groups.max_group_sequences = 8;
  const HierarchicalGraph graph = HierarchicalGraph::Build(model, options);
  std::vector<std::vector<int32_t>> groups = GroupOps(graph);
  EXPECT_THAT(groups, ::testing::Contains(std::vector<int32_t>{7, 8, 11, 14}));
  EXPECT_THAT(groups, ::testing::Contains(std::vector<int32_t>{2, 3, 4, 5, 6}));
  EXPECT_THAT(groups, ::testing::Contains(std::vector<int32_t>{9, 10, 12, 13}));
}

TEST(GroupsTest, DisassemblyFreesTheSequences) {
  MemoryModel model = *BuildMemoryModel(TestGraph(kThreeCells), {});
  HierarchyOptions options;
  options.groups.max_group_sequences = 8;
  HierarchicalGraph graph = HierarchicalGraph::Build(model, options);
  const int32_t s = graph.sequence_of_op(3);  // q1, in cell 1
  const int32_t g = graph.group_of_sequence(s);
  ASSERT_NE(g, kNoId);
  const int32_t assembled = graph.num_assembled_groups();
  graph.Disassemble(g);
  EXPECT_EQ(graph.group_of_sequence(s), kNoId);
  EXPECT_EQ(graph.num_assembled_groups(), assembled - 1);
}

// A group must be convex: {a, c} with b between them outside would need b
// both before and after the block.
TEST(GroupsTest, NoGroupLeavesAPathOutAndBackIn) {
  MemoryModel model = *BuildMemoryModel(TestGraph(R"(
    input x 1
    op a Conv x -> a:1
    op b Conv a -> b:1
    op c Add a b -> c:1
    op d Add c x -> d:1
    output d
  )"),
                                        {});
  const HierarchicalGraph graph = HierarchicalGraph::Build(model, {});
  for (int32_t g = 0; g < graph.num_groups(); ++g) {
    const std::vector<int32_t>& members = graph.group(g);
    for (int32_t s : members) {
      for (int32_t w : graph.sequence_graph().successors(s)) {
        if (std::find(members.begin(), members.end(), w) != members.end()) continue;
        for (int32_t back : graph.sequence_graph().successors(w)) {
          EXPECT_EQ(std::find(members.begin(), members.end(), back), members.end());
        }
      }
    }
  }
}

}  // namespace
}  // namespace ordo
