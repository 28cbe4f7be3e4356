// Hostile inputs through the `ordo` binary as a user runs it: every file of
// tests/data/bad (scripts/make-bad-models; MANIFEST.txt names the text each
// error must contain), the big cases generated here (a million ops, a
// 10,000-wide fan-out, a 100,000-op chain, a 64 MiB attribute, a 1 MiB
// name), and hostile flags. Bad input exits 2 with a printable one-line
// message naming the problem; valid input succeeds; nothing crashes or
// hangs, and the big cases finish within generous wall-clock bounds (the
// measured times are printed for docs/testing.md).
#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <vector>

#include "absl/strings/str_cat.h"
#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "ordo/v1/graph.pb.h"
#include "tests/data/hostile_inputs.h"

namespace {

using ::testing::HasSubstr;
using ::ordo::hostile_inputs::BadDir;
using ::ordo::hostile_inputs::FanOutOnnx;
using ::ordo::hostile_inputs::HugeAttributeOnnx;
using ::ordo::hostile_inputs::ManifestEntry;
using ::ordo::hostile_inputs::ReadManifest;
using ::ordo::hostile_inputs::ReluChainGraph;
using ::ordo::hostile_inputs::ReluChainOnnx;
using ::ordo::hostile_inputs::UndefinedInputOnnx;

struct ProcessResult {
  int exit_code;    // -1 when killed by a signal (a crash)
  std::string out;  // stdout and stderr together
  double seconds;   // wall clock
};

ProcessResult RunOrdo(const std::string& args) {
  const auto start = std::chrono::steady_clock::now();
  // `timeout` turns a hang into exit code 124 instead of a stuck test.
  std::string command = absl::StrCat("timeout 120 ", ORDO_BINARY, " ", args, " 2>&1");
  FILE* pipe = popen(command.c_str(), "r");
  std::string out;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
  int status = pclose(pipe);
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out, elapsed.count()};
}


std::filesystem::path TempPath(const std::string& name) {
  return std::filesystem::temp_directory_path() /
         absl::StrCat("ordo_bad_inputs_test_", getpid(), "_", name);
}

std::string WriteTemp(const std::string& name, const std::string& contents) {
  std::filesystem::path path = TempPath(name);
  std::ofstream(path, std::ios::binary) << contents;
  return path.string();
}

// Printable: ASCII 0x20..0x7e plus the line feeds between lines; the
// importers escape everything else (core/util/printable_text.h). protobuf's
// own log lines (e.g. on invalid UTF-8 in a binary message) are printable
// too.
void ExpectPrintable(const std::string& out, const std::string& context) {
  for (size_t i = 0; i < out.size(); ++i) {
    const unsigned char c = static_cast<unsigned char>(out[i]);
    ASSERT_TRUE((c >= 0x20 && c < 0x7f) || c == '\n')
        << context << ": byte " << i << " is 0x" << std::hex << static_cast<int>(c) << " in\n"
        << out;
  }
}

void PrintTime(const std::string& what, const ProcessResult& run) {
  std::cout << "[ timing ] " << what << ": " << run.seconds << " s, exit " << run.exit_code << "\n";
}

// --- The committed corpus ---------------------------------------------------

TEST(BadInputsTest, EveryCorpusFileIsListedInTheManifest) {
  std::vector<ManifestEntry> entries = ReadManifest();
  ASSERT_GE(entries.size(), 30u) << "tests/data/bad/MANIFEST.txt missing or short";
  for (const auto& file : std::filesystem::directory_iterator(BadDir())) {
    const std::string name = file.path().filename().string();
    if (name == "MANIFEST.txt") continue;
    bool listed = false;
    for (const ManifestEntry& entry : entries) listed = listed || entry.file == name;
    EXPECT_TRUE(listed) << name << " is not in MANIFEST.txt (run scripts/make-bad-models)";
  }
}

TEST(BadInputsTest, EveryCorpusFileExitsTwoNamingTheProblem) {
  for (const ManifestEntry& entry : ReadManifest()) {
    SCOPED_TRACE(entry.file);
    ProcessResult run = RunOrdo(absl::StrCat("compile ", BadDir(), "/", entry.file));
    EXPECT_EQ(run.exit_code, 2) << run.out;
    EXPECT_THAT(run.out, HasSubstr(entry.expected));
    ExpectPrintable(run.out, entry.file);
    EXPECT_LT(run.seconds, 30) << "slow refusal";
    // inspect imports the same way and must refuse the same way.
    ProcessResult inspect = RunOrdo(absl::StrCat("inspect ", BadDir(), "/", entry.file));
    if (entry.file != "activation_total_overflows.onnx") {  // a Compile-time check
      EXPECT_EQ(inspect.exit_code, 2) << inspect.out;
      ExpectPrintable(inspect.out, entry.file);
    }
  }
}

// --- Big inputs, generated --------------------------------------------------

TEST(BadInputsTest, MillionOpOnnxIsRefusedBeforeParsing) {
  const std::string path = WriteTemp("million.onnx", ReluChainOnnx(1000000));
  ProcessResult run = RunOrdo(absl::StrCat("compile ", path));
  PrintTime("1,000,000-op ONNX refused", run);
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_THAT(run.out, HasSubstr("model has 1000000 nodes; the limit is 100000 ops"));
  // Counted on the wire (about 0.3 s with reading the 35 MB file; parsing
  // it first took 3 s and 440 MB).
  EXPECT_LT(run.seconds, 10);
  std::filesystem::remove(path);
}

TEST(BadInputsTest, MillionOpNativeGraphIsRefused) {
  const ordo::v1::Graph graph = ReluChainGraph(1000000);
  const std::string path = WriteTemp("million.pb", graph.SerializeAsString());
  ProcessResult run = RunOrdo(absl::StrCat("compile ", path));
  PrintTime("1,000,000-op ordo.v1.Graph refused", run);
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_THAT(run.out, HasSubstr("graph has 1000000 ops; the limit is 100000"));
  EXPECT_LT(run.seconds, 10);
  std::filesystem::remove(path);
}

TEST(BadInputsTest, OverTheMaxOpsFlagIsRefused) {
  const std::string path = WriteTemp("chain1000.onnx", ReluChainOnnx(1000));
  ProcessResult run = RunOrdo(absl::StrCat("compile ", path, " --max-ops 999"));
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_THAT(run.out, HasSubstr("model has 1000 nodes; the limit is 999 ops"));
  std::filesystem::remove(path);
}

TEST(BadInputsTest, TenThousandWideFanOutSucceeds) {
  const std::string path = WriteTemp("fanout.onnx", FanOutOnnx(10000));
  ProcessResult run = RunOrdo(absl::StrCat("compile ", path));
  PrintTime("10,000-wide fan-out compiled", run);
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("10001 (10002 tensors)"));
  // All 10,000 branches are live before the Concat: 10,000 x 32 B + its output.
  EXPECT_THAT(run.out, HasSubstr("(640000 B)"));
  EXPECT_LT(run.seconds, 60);
  std::filesystem::remove(path);
}

TEST(BadInputsTest, HundredThousandOpChainSucceedsWithoutRecursion) {
  const std::string path = WriteTemp("chain.onnx", ReluChainOnnx(100000));
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

TEST(BadInputsTest, HugeAttributeStringIsHarmless) {
  const std::string path = WriteTemp("huge_attribute.onnx", HugeAttributeOnnx());
  ProcessResult run = RunOrdo(absl::StrCat("compile ", path));
  PrintTime("64 MiB attribute string", run);
  EXPECT_EQ(run.exit_code, 0) << run.out.substr(0, 2000);
  EXPECT_LT(run.out.size(), 4096u);
  EXPECT_LT(run.seconds, 30);
  std::filesystem::remove(path);
}

TEST(BadInputsTest, HugeNameInAnErrorIsCut) {
  // An undefined input whose name is 1 MiB of odd bytes: the message names
  // it, escaped and cut to a few KiB rather than 4 MiB of escapes.
  const std::string path =
      WriteTemp("huge_name.onnx", UndefinedInputOnnx(std::string(1 << 20, '\n')));
  ProcessResult run = RunOrdo(absl::StrCat("compile ", path));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.out, HasSubstr("reads tensor \"\\n\\n\\n"));
  EXPECT_LT(run.out.size(), 8192u);
  ExpectPrintable(run.out, "huge name");
  std::filesystem::remove(path);
}

// --- Hostile flags ----------------------------------------------------------

TEST(BadInputsTest, HostileFlagsExitTwoNamingTheFlag) {
  const std::string model = absl::StrCat(ORDO_EXAMPLE_MODELS_DIR, "/tiny_cell.onnx");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--time-limit -3s", "--time-limit: must not be negative"},
      {"--time-limit -0.5ms", "--time-limit: must not be negative"},
      {"--time-limit nan", "--time-limit"},
      {"--time-limit 1e400s", "--time-limit: not a duration"},
      {"--memory-limit 0", "--memory-limit"},
      {"--memory-limit 0B", "--memory-limit"},
      {"--memory-limit -1", "not a byte size: \"-1\""},
      {"--memory-limit 99999999999GiB", "byte size out of range"},
      {"--alignment 0", "--alignment: not a positive integer"},
      {"--alignment -8", "--alignment: not a positive integer"},
      {"--max-ops 0", "--max-ops: not a positive integer"},
      {"--max-ops -1", "--max-ops: not a positive integer"},
      {"--on-chip -1", "not a byte size"},
      {"--activation-dtype complex512", "--activation-dtype: unknown dtype"},
  };
  for (const auto& [flags, expected] : cases) {
    ProcessResult run = RunOrdo(absl::StrCat("compile ", model, " ", flags));
    EXPECT_EQ(run.exit_code, 2) << flags << "\n" << run.out;
    EXPECT_THAT(run.out, HasSubstr(expected)) << flags;
  }
}

TEST(BadInputsTest, ZeroTimeLimitStillGivesASchedule) {
  // No time is a legitimate request: the cheap heuristics need none.
  ProcessResult run =
      RunOrdo(absl::StrCat("compile ", ORDO_EXAMPLE_MODELS_DIR, "/tiny_cell.onnx --time-limit 0s"));
  EXPECT_EQ(run.exit_code, 0) << run.out;
}

}  // namespace
