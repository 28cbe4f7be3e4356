#include "bench/darts_candidates.h"

#include <algorithm>
#include <set>
#include <string>

#include "core/graph/graph_proto.h"
#include "core/memory/memory_model.h"
#include "core/memory/simulator.h"
#include "core/partition/hourglass_partitioner.h"
#include "core/schedule/scheduler_registry.h"
#include "core/testing/status_matchers.h"
#include "gtest/gtest.h"

namespace ordo::bench {
namespace {

TEST(DartsCandidateStreamTest, SameSeedSameStream) {
  DartsCandidateStream a({.seed = 7});
  DartsCandidateStream b({.seed = 7});
  for (int i = 0; i < 20; ++i) {
    EXPECT_EQ(a.Next().SerializeAsString(), b.Next().SerializeAsString());
  }
}

// Valid graphs of about 200 ops whose cells read two earlier cells, so the
// cell stack is not cut into one part per cell (the point of this stream);
// the best scheduler proves each optimal.
TEST(DartsCandidateStreamTest, CandidatesAreRealisticAndSchedulable) {
  DartsCandidateStream stream({.seed = 3});
  const SchedulerRegistry registry = BuiltinSchedulers();
  int two_input_candidates = 0;
  for (int i = 0; i < 6; ++i) {
    const v1::Graph proto = stream.Next();
    ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, GraphFromProto(proto));
    EXPECT_GT(graph.num_ops(), 120) << proto.name();
    EXPECT_LT(graph.num_ops(), 320) << proto.name();
    ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel model, BuildMemoryModel(graph, MemoryOptions{}));
    const Partition partition = HourglassPartitioner().Split(model);
    int32_t largest = 0;
    for (const Part& part : partition.parts) {
      largest = std::max(largest, static_cast<int32_t>(part.ops.size()));
    }
    // A cell that reads its input 0 (the cell two back) keeps two cells'
    // outputs live across its boundary, so no single tensor cuts there.
    const auto reads_input0 = [](const DartsCandidateStream::Cell& cell) {
      return std::any_of(cell.begin(), cell.end(), [](const auto& e) { return e.input == 0; });
    };
    const DartsCandidateStream::Genotype& g = stream.last_genotype();
    if (reads_input0(g.normal) && reads_input0(g.reduce)) {
      EXPECT_GT(largest, graph.num_ops() / 2) << "the cell stack should be one part";
      ++two_input_candidates;
    }
    ORDO_ASSERT_OK_AND_ASSIGN(auto best, registry.Create("best"));
    ORDO_ASSERT_OK_AND_ASSIGN(ScheduleResult result, best->Schedule(model, ScheduleLimits{}));
    ORDO_ASSERT_OK_AND_ASSIGN(int64_t peak, SimulatePeak(model, result.order));
    EXPECT_EQ(peak, result.peak_bytes);
    EXPECT_EQ(result.status, ScheduleStatus::kOptimal) << proto.name();
  }
  EXPECT_GT(two_input_candidates, 0);
}

// Evolution re-sends survivors and mutations undo each other: a stream has
// exact repeats, but mostly new candidates.
TEST(DartsCandidateStreamTest, StreamHasRepeatsAndMostlyNewCandidates) {
  DartsCandidateStream stream({.seed = 1});
  std::set<std::string> seen;
  int repeats = 0;
  const int n = 300;
  for (int i = 0; i < n; ++i) {
    v1::Graph graph = stream.Next();
    graph.clear_name();
    repeats += !seen.insert(graph.SerializeAsString()).second;
  }
  EXPECT_GT(repeats, 0);
  EXPECT_LT(repeats, n / 2);
}

TEST(DartsCandidateStreamTest, RenameGivesEveryCandidateItsOwnNames) {
  const DartsCandidateStream::Options options{.seed = 5};
  DartsCandidateStream stream(options);
  stream.Next();
  const DartsCandidateStream::Genotype g = stream.last_genotype();
  const v1::Graph a = DartsCandidateStream::Build(g, options, "k1");
  const v1::Graph b = DartsCandidateStream::Build(g, options, "k2");
  ASSERT_EQ(a.ops_size(), b.ops_size());
  EXPECT_NE(a.ops(0).name(), b.ops(0).name());
  EXPECT_EQ(a.ops(0).type(), b.ops(0).type());
}

}  // namespace
}  // namespace ordo::bench
