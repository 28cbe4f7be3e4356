// Big generated models through the `ordo` binary: a million ops (refused
// before parsing), a 10,000-wide fan-out, a 100,000-op chain through three
// schedulers (none may recurse per op), a 64 MiB attribute. Each finishes
// within a generous wall-clock bound; the measured times are printed for
// docs/testing.md. Label `scale`: the size is the point, so they run in the
// Release suite only (instrumented, they took 110 of the ASan suite's
// test-seconds); the same import and scheduling code runs under ASan+UBSan
// on small models in bad_inputs_test and the fuzzers.
#include <filesystem>
#include <iostream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ordo/v1/graph.pb.h"
#include "tests/cli/run_ordo.h"
#include "tests/data/hostile_inputs.h"

namespace {

using ::testing::HasSubstr;
using ::ordo::hostile_inputs::FanOutOnnx;
using ::ordo::hostile_inputs::HugeAttributeOnnx;
using ::ordo::hostile_inputs::ReluChainGraph;
using ::ordo::hostile_inputs::ReluChainOnnx;
using ::ordo::hostile_inputs::WriteTempFile;
using ::ordo::testing::ProcessResult;
using ::ordo::testing::RunOrdo;

void PrintTime(const std::string& what, const ProcessResult& run) {
  std::cout << "[ timing ] " << what << ": " << run.seconds << " s, exit " << run.exit_code << "\n";
}

TEST(BigInputsTest, MillionOpOnnxIsRefusedBeforeParsing) {
  const std::string path = WriteTempFile("million.onnx", ReluChainOnnx(1000000));
  ProcessResult run = RunOrdo(absl::StrCat("compile ", path));
  PrintTime("1,000,000-op ONNX refused", run);
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_THAT(run.out, HasSubstr("model has 1000000 nodes; the limit is 100000 ops"));
  // Counted on the wire (about 0.3 s with reading the 35 MB file; parsing
  // it first took 3 s and 440 MB).
  EXPECT_LT(run.seconds, 10);
  std::filesystem::remove(path);
}

TEST(BigInputsTest, MillionOpNativeGraphIsRefused) {
  const ordo::v1::Graph graph = ReluChainGraph(1000000);
  const std::string path = WriteTempFile("million.pb", graph.SerializeAsString());
  ProcessResult run = RunOrdo(absl::StrCat("compile ", path));
  PrintTime("1,000,000-op ordo.v1.Graph refused", run);
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_THAT(run.out, HasSubstr("graph has 1000000 ops; the limit is 100000"));
  EXPECT_LT(run.seconds, 10);
  std::filesystem::remove(path);
}

TEST(BigInputsTest, TenThousandWideFanOutSucceeds) {
  const std::string path = WriteTempFile("fanout.onnx", FanOutOnnx(10000));
  ProcessResult run = RunOrdo(absl::StrCat("compile ", path));
  PrintTime("10,000-wide fan-out compiled", run);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("10001 (10002 tensors)"));
  // All 10,000 branches are live before the Concat: 10,000 x 32 B + its output.
  EXPECT_THAT(run.out, HasSubstr("(640000 B)"));
  EXPECT_LT(run.seconds, 60);
  std::filesystem::remove(path);
}

TEST(BigInputsTest, HundredThousandOpChainSucceedsWithoutRecursion) {
  const std::string path = WriteTempFile("chain.onnx", ReluChainOnnx(100000));
  // Every scheduler walks the whole chain; none may recurse per op.
  for (const char* scheduler : {"best", "rpo", "hmcos"}) {
    ProcessResult run = RunOrdo(absl::StrCat("compile ", path, " --scheduler ", scheduler));
    PrintTime(absl::StrCat("100,000-op chain, --scheduler ", scheduler), run);
    ASSERT_EQ(run.exit_code, 0) << scheduler << "\n" << run.out;
    EXPECT_THAT(run.out, HasSubstr("100000 (100001 tensors)"));
    EXPECT_THAT(run.out, HasSubstr("peak          32 B"));
    EXPECT_LT(run.seconds, 60);
  }
  std::filesystem::remove(path);
}

TEST(BigInputsTest, HugeAttributeStringIsHarmless) {
  const std::string path = WriteTempFile("huge_attribute.onnx", HugeAttributeOnnx());
  ProcessResult run = RunOrdo(absl::StrCat("compile ", path));
  PrintTime("64 MiB attribute string", run);
  EXPECT_EQ(run.exit_code, 0) << run.out.substr(0, 2000);
  EXPECT_LT(run.out.size(), 4096u);
  EXPECT_LT(run.seconds, 30);
  std::filesystem::remove(path);
}

}  // namespace
