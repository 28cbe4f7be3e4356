#include "rpc/memory_model_proto.h"

#include <fstream>
#include <sstream>

#include "core/compile/import_model.h"
#include "core/partition/hourglass_partitioner.h"
#include "core/testing/status_matchers.h"
#include "core/testing/test_graph.h"
#include "core/testing/test_paths.h"
#include "gmock/gmock.h"
#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"

namespace ordo::rpc {
namespace {

using ::ordo::testing::StatusIs;
using ::ordo::testing::TestGraph;
using ::testing::HasSubstr;

void ExpectSameModel(const MemoryModel& a, const MemoryModel& b) {
  ASSERT_EQ(a.num_ops(), b.num_ops());
  ASSERT_EQ(a.num_tensors(), b.num_tensors());
  for (int32_t o = 0; o < a.num_ops(); ++o) {
    EXPECT_EQ(a.ops[o].inputs, b.ops[o].inputs) << "op " << o;
    EXPECT_EQ(a.ops[o].outputs, b.ops[o].outputs) << "op " << o;
    EXPECT_EQ(a.ops[o].inplace_input, b.ops[o].inplace_input) << "op " << o;
  }
  for (int32_t t = 0; t < a.num_tensors(); ++t) {
    EXPECT_EQ(a.tensors[t].bytes, b.tensors[t].bytes) << "tensor " << t;
    EXPECT_EQ(a.tensors[t].producer, b.tensors[t].producer) << "tensor " << t;
    EXPECT_EQ(a.tensors[t].consumers, b.tensors[t].consumers) << "tensor " << t;
    EXPECT_EQ(a.tensors[t].live_at_end, b.tensors[t].live_at_end) << "tensor " << t;
  }
  EXPECT_EQ(a.constant_bytes, b.constant_bytes);
  EXPECT_EQ(a.options.inplace, b.options.inplace);
  EXPECT_EQ(a.options.count_weights, b.options.count_weights);
  EXPECT_EQ(a.options.activation_element_bytes, b.options.activation_element_bytes);
}

MemoryModel SmallModel() {
  absl::StatusOr<MemoryModel> model = BuildMemoryModel(TestGraph(R"(
input x 64
weight w 10
op a Conv x w -> y:128
op b Relu y -> r:128
op c Conv x -> z:64
op d Concat r z -> out:192
output out
)"),
                                                       {.count_weights = true});
  EXPECT_TRUE(model.ok());
  return *model;
}

TEST(MemoryModelProtoTest, RoundTripsAGraphModel) {
  const MemoryModel model = SmallModel();
  ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel decoded, MemoryModelFromProto(MemoryModelToProto(model)));
  ExpectSameModel(model, decoded);
}

TEST(MemoryModelProtoTest, RoundTripsEveryPartOfAnExampleModel) {
  std::ifstream in(ordo::testing::ExampleModelsDir() + "/small_resnet.onnx", std::ios::binary);
  ASSERT_TRUE(in.good());
  std::stringstream bytes;
  bytes << in.rdbuf();
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportModel(bytes.str(), ModelFormat::kOnnx));
  ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel model, BuildMemoryModel(graph, {}));
  const Partition partition = HourglassPartitioner({.merge_up_to_ops = 4}).Split(model);
  ASSERT_GT(partition.parts.size(), 1u);
  for (const Part& part : partition.parts) {
    ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel decoded,
                              MemoryModelFromProto(MemoryModelToProto(part.model)));
    ExpectSameModel(part.model, decoded);
  }
}

TEST(MemoryModelProtoTest, RejectsMalformedModelsNamingTheCulprit) {
  const v1::MemoryModel good = MemoryModelToProto(SmallModel());
  struct Case {
    const char* name;
    std::function<void(v1::MemoryModel&)> corrupt;
    const char* message;
  };
  const std::vector<Case> cases = {
      {"input out of range", [](v1::MemoryModel& m) { m.mutable_ops(0)->set_inputs(0, 99); },
       "op 0: input out of range"},
      {"negative bytes", [](v1::MemoryModel& m) { m.mutable_tensors(0)->set_bytes(-1); },
       "bytes is negative"},
      {"overflow",
       [](v1::MemoryModel& m) {
         m.mutable_tensors(0)->set_bytes(INT64_MAX);
         m.mutable_tensors(2)->set_bytes(INT64_MAX);
       },
       "overflow"},
      {"producer mismatch", [](v1::MemoryModel& m) { m.mutable_tensors(2)->set_producer(3); },
       "producer"},
      {"consumer mismatch", [](v1::MemoryModel& m) { m.mutable_tensors(0)->clear_consumers(); },
       "consumers differ"},
      {"two writers",
       [](v1::MemoryModel& m) { m.mutable_ops(1)->set_outputs(0, m.ops(0).outputs(0)); },
       "more than one op"},
      {"in-place input not read",
       [](v1::MemoryModel& m) { m.mutable_ops(2)->set_inplace_input(2); },
       "not one of its inputs"},
      {"element bytes",
       [](v1::MemoryModel& m) { m.mutable_options()->set_activation_element_bytes(1000); },
       "activation_element_bytes"},
      {"negative duration of constants", [](v1::MemoryModel& m) { m.set_constant_bytes(-5); },
       "constant_bytes"},
  };
  for (const Case& c : cases) {
    v1::MemoryModel bad = good;
    c.corrupt(bad);
    EXPECT_THAT(MemoryModelFromProto(bad),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr(c.message)))
        << c.name;
  }
}

TEST(MemoryModelProtoTest, RejectsACycle) {
  // a: t0 -> t1, b: t1 -> t0 (t0 also produced, so nothing is ready).
  v1::MemoryModel m;
  for (int i = 0; i < 2; ++i) m.add_tensors()->set_bytes(4);
  auto* a = m.add_ops();
  a->add_inputs(0);
  a->add_outputs(1);
  a->set_inplace_input(-1);
  auto* b = m.add_ops();
  b->add_inputs(1);
  b->add_outputs(0);
  b->set_inplace_input(-1);
  m.mutable_tensors(0)->set_producer(1);
  m.mutable_tensors(0)->add_consumers(0);
  m.mutable_tensors(1)->set_producer(0);
  m.mutable_tensors(1)->add_consumers(1);
  EXPECT_THAT(MemoryModelFromProto(m),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("cycle")));
}

TEST(MemoryModelProtoTest, RejectsModelsOverTheLimits) {
  EXPECT_THAT(MemoryModelFromProto(MemoryModelToProto(SmallModel()), {.max_ops = 2}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("limit is 2")));
}

TEST(MemoryModelProtoTest, DurationsAreClamped) {
  google::protobuf::Duration d;
  d.set_seconds(-3);
  EXPECT_EQ(DurationFromProto(d), absl::ZeroDuration());
  EXPECT_EQ(DurationFromProto(DurationToProto(absl::Milliseconds(1500))), absl::Milliseconds(1500));
  EXPECT_EQ(DurationFromProto(DurationToProto(absl::Hours(25))), kMaxTimeLimit);
}

// Durations beyond protobuf's range (an infinite time limit) are encoded as
// its ends, which the JSON mapping accepts; the raw values would fail it.
TEST(MemoryModelProtoTest, DurationsBeyondProtobufsRangeSaturate) {
  for (const absl::Duration duration :
       {absl::InfiniteDuration(), absl::Seconds(1e12), -absl::InfiniteDuration()}) {
    const google::protobuf::Duration proto = DurationToProto(duration);
    const int64_t sign = duration > absl::ZeroDuration() ? 1 : -1;
    EXPECT_EQ(proto.seconds(), sign * 315'576'000'000) << duration;
    EXPECT_EQ(proto.nanos(), sign * 999'999'999) << duration;
    std::string json;
    EXPECT_TRUE(google::protobuf::util::MessageToJsonString(proto, &json).ok()) << duration;
  }
  EXPECT_EQ(DurationFromProto(DurationToProto(absl::InfiniteDuration())), kMaxTimeLimit);
}

}  // namespace
}  // namespace ordo::rpc
