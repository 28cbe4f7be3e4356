#include "bench/nas_candidates.h"

#include <map>
#include <string>

#include "core/parts/part_key.h"
#include "core/graph/graph_proto.h"
#include "core/memory/memory_model.h"
#include "core/partition/hourglass_partitioner.h"
#include "core/testing/status_matchers.h"
#include "gtest/gtest.h"

namespace ordo::bench {
namespace {

TEST(NasCandidateStreamTest, SameSeedSameStream) {
  NasCandidateStream a({.seed = 7});
  NasCandidateStream b({.seed = 7});
  for (int i = 0; i < 3; ++i) {
    EXPECT_EQ(a.Next().SerializeAsString(), b.Next().SerializeAsString());
  }
}

// The property the NAS benchmark relies on: a pool cell has one canonical
// part key wherever it sits in whichever candidate.
TEST(NasCandidateStreamTest, SamePoolCellSamePartKey) {
  NasCandidateStream stream({.cell_types = 3, .blocks = 6, .cells = 5, .seed = 3});
  std::map<int32_t, std::string> key_of_type;
  int shared = 0;
  for (int candidate = 0; candidate < 4; ++candidate) {
    const v1::Graph proto = stream.Next();
    ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, GraphFromProto(proto));
    ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel model, BuildMemoryModel(graph, MemoryOptions{}));
    const Partition partition = HourglassPartitioner().Split(model);
    // Cell c ends with op "c<c>_out"; key the part that ends there.
    std::map<std::string, std::string> key_ending_at;
    for (const Part& part : partition.parts) {
      key_ending_at[graph.op(part.ops.back()).name] = CanonicalPartKey(part.model, "best").key;
    }
    for (size_t c = 0; c < stream.last_cells().size(); ++c) {
      const std::string out = "c" + std::to_string(c) + "_out";
      // The last cell may be merged with the one-op head (merge_up_to_ops).
      if (!key_ending_at.count(out)) continue;
      auto [it, inserted] = key_of_type.try_emplace(stream.last_cells()[c], key_ending_at[out]);
      if (!inserted) {
        EXPECT_EQ(it->second, key_ending_at[out]) << "cell type " << stream.last_cells()[c];
        ++shared;
      }
    }
  }
  EXPECT_GT(shared, 0);
}

}  // namespace
}  // namespace ordo::bench
