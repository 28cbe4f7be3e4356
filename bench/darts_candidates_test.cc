#include "bench/darts_candidates.h"

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

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

// Valid graphs of 120 to 320 ops whose cells read two earlier cells, so the
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

// A tensor as its type and dims: what its size, hence the schedule's
// memory, depends on.
std::string TensorShape(const v1::Tensor& tensor) {
  std::string shape = v1::DataType_Name(tensor.dtype());
  for (const int64_t d : tensor.dims()) shape += " " + std::to_string(d);
  return shape;
}

// `segment`'s ops, each as its type, attributes (in name order), inputs
// (written inside the segment: by offset; else "in" and its shape) and
// outputs' shapes: everything but names, which differ between candidates.
std::vector<std::string> SubgraphOf(const v1::Graph& graph,
                                    const DartsCandidateStream::Segment& segment) {
  std::map<std::string, const v1::Tensor*> tensors;
  for (const v1::Tensor& tensor : graph.tensors()) tensors[tensor.name()] = &tensor;
  const auto shape_of = [&](const std::string& name) {
    const auto it = tensors.find(name);
    return it == tensors.end() ? std::string("(no tensor)") : TensorShape(*it->second);
  };
  std::map<std::string, int32_t> offset_of_output;
  std::vector<std::string> ops;
  for (int32_t k = 0; k < segment.ops; ++k) {
    const v1::Op& op = graph.ops(segment.first_op + k);
    std::string line = op.type();
    const std::map<std::string, v1::AttributeValue> attributes(op.attributes().begin(),
                                                               op.attributes().end());
    for (const auto& [name, value] : attributes) {
      line += " " + name + "=" + value.ShortDebugString();
    }
    for (const std::string& input : op.inputs()) {
      const auto it = offset_of_output.find(input);
      line += it == offset_of_output.end() ? " in(" + shape_of(input) + ")"
                                           : " " + std::to_string(it->second);
    }
    for (const std::string& output : op.outputs()) {
      offset_of_output[output] = k;
      line += " -> " + shape_of(output);
    }
    ops.push_back(line);
  }
  return ops;
}

// Segments cover every op in order, and segments with equal keys are the
// same subgraph (op types, attributes, tensor shapes, and inputs from
// inside the segment at the same offsets), in one candidate or across
// candidates: what lets the stream's repeats be counted per cell.
TEST(DartsCandidateStreamTest, SegmentsCoverTheOpsAndEqualKeysAreEqualSubgraphs) {
  DartsCandidateStream stream({.rename = true, .seed = 2});
  std::map<std::string, std::vector<std::string>> subgraph_of_key;
  int keys_met_again = 0;
  for (int i = 0; i < 40; ++i) {
    const v1::Graph graph = stream.Next();
    int32_t next_op = 0;
    for (const DartsCandidateStream::Segment& segment : stream.last_segments()) {
      ASSERT_EQ(segment.first_op, next_op) << segment.key;
      ASSERT_GT(segment.ops, 0) << segment.key;
      next_op += segment.ops;
      const std::vector<std::string> subgraph = SubgraphOf(graph, segment);
      const auto [it, inserted] = subgraph_of_key.emplace(segment.key, subgraph);
      if (!inserted) {
        ++keys_met_again;
        EXPECT_EQ(it->second, subgraph) << segment.key;
      }
    }
    EXPECT_EQ(next_op, graph.ops_size());
  }
  EXPECT_GT(keys_met_again, 40);
}

// Six cells have no two cells of equal inputs; a deeper stack repeats its
// normal cells within one candidate, as DARTS' 20-cell networks do.
TEST(DartsCandidateStreamTest, DeepStacksRepeatCellsWithinACandidate) {
  const auto repeated_cells = [](int32_t cells) {
    DartsCandidateStream stream({.cells = cells, .seed = 4});
    stream.Next();
    std::set<std::string> keys;
    int repeated = 0;
    for (const auto& segment : stream.last_segments()) {
      repeated += segment.cell && !keys.insert(segment.key).second;
    }
    return repeated;
  };
  EXPECT_EQ(repeated_cells(6), 0);
  EXPECT_EQ(repeated_cells(20), 11);  // 3 + 4 + 4 in the three stages
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
