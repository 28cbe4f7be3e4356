// Hostile inputs through the `ordo` binary as a user runs it: every file of
// tests/data/bad (scripts/make-bad-models; MANIFEST.txt names the text each
// error must contain), small generated cases (a 1 MiB name, --max-ops) and
// hostile flags. Bad input exits 2 with a printable one-line message naming
// the problem; valid input succeeds; nothing crashes or hangs. The big
// generated models are in big_inputs_test.cc.
#include <cstdlib>
#include <filesystem>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/testing/test_paths.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "tests/cli/run_ordo.h"
#include "tests/data/hostile_inputs.h"

namespace {

using ::testing::HasSubstr;
using ::ordo::hostile_inputs::BadDir;
using ::ordo::hostile_inputs::ManifestEntry;
using ::ordo::hostile_inputs::ReadManifest;
using ::ordo::hostile_inputs::ReluChainOnnx;
using ::ordo::hostile_inputs::TypedReluChainWithBrokenMetadata;
using ::ordo::hostile_inputs::UndefinedInputOnnx;
using ::ordo::hostile_inputs::WriteTempFile;
using ::ordo::testing::ProcessResult;
using ::ordo::testing::RunOrdo;

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

// --- Generated inputs -------------------------------------------------------

TEST(BadInputsTest, OverTheMaxOpsFlagIsRefused) {
  const std::string path = WriteTempFile("chain1000.onnx", ReluChainOnnx(1000));
  ProcessResult run = RunOrdo(absl::StrCat("compile ", path, " --max-ops 999"));
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_THAT(run.out, HasSubstr("model has 1000 nodes; the limit is 999 ops"));
  std::filesystem::remove(path);
}

TEST(BadInputsTest, HugeNameInAnErrorIsCut) {
  // An undefined input whose name is 1 MiB of odd bytes: the message names
  // it, escaped and cut to a few KiB rather than 4 MiB of escapes.
  const std::string path =
      WriteTempFile("huge_name.onnx", UndefinedInputOnnx(std::string(1 << 20, '\n')));
  ProcessResult run = RunOrdo(absl::StrCat("compile ", path));
  EXPECT_EQ(run.exit_code, 2);
  EXPECT_THAT(run.out, HasSubstr("reads tensor \"\\n\\n\\n"));
  EXPECT_LT(run.out.size(), 8192u);
  ExpectPrintable(run.out, "huge name");
  std::filesystem::remove(path);
}

// Bytes protobuf refuses only inside a field the importer skips: the
// compile runs, and a request for the reordered model (written from
// protobuf's parse) is refused, by CheckOnnxParses before the search.
TEST(BadInputsTest, AModelThatCannotBeWrittenBackIsRefusedWhenItsReorderIsAsked) {
  const std::string path =
      WriteTempFile("broken_metadata.onnx", TypedReluChainWithBrokenMetadata());
  const std::string out = path + ".out.onnx";
  EXPECT_EQ(RunOrdo(absl::StrCat("compile ", path)).exit_code, 0);
  ProcessResult emit = RunOrdo(absl::StrCat("compile ", path, " --emit-onnx ", out));
  EXPECT_EQ(emit.exit_code, 2) << emit.out;
  EXPECT_THAT(emit.out, HasSubstr("not a valid ONNX model"));
  EXPECT_FALSE(std::filesystem::exists(out));
  std::filesystem::remove(path);
}

// --- Hostile flags ----------------------------------------------------------

TEST(BadInputsTest, HostileFlagsExitTwoNamingTheFlag) {
  const std::string model = absl::StrCat(ordo::testing::ExampleModelsDir(), "/tiny_cell.onnx");
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"--time-limit -3s", "--time-limit: must not be negative"},
      {"--time-limit -0.5ms", "--time-limit: must not be negative"},
      {"--time-limit nan", "--time-limit"},
      {"--time-limit 1e400s", "--time-limit: not a duration"},
      {"--memory-limit 0", "--memory-limit"},
      {"--memory-limit 0B", "--memory-limit"},
      {"--memory-limit -1", "--memory-limit: not a byte size: \"-1\""},
      {"--memory-limit 99999999999GiB", "--memory-limit: byte size out of range"},
      {"--alignment 0", "--alignment: not a positive integer"},
      {"--alignment -8", "--alignment: not a positive integer"},
      {"--max-ops 0", "--max-ops: not a positive integer"},
      {"--max-ops -1", "--max-ops: not a positive integer"},
      {"--on-chip -1", "--on-chip: not a byte size"},
      {"--activation-dtype complex512", "--activation-dtype: unknown dtype"},
      {"--scheduler fastest", "--scheduler: unknown scheduler \"fastest\""},
      {"--arena tightest", "--arena: unknown arena planner \"tightest\""},
  };
  for (const auto& [flags, expected] : cases) {
    ProcessResult run = RunOrdo(absl::StrCat("compile ", model, " ", flags));
    EXPECT_EQ(run.exit_code, 2) << flags << "\n" << run.out;
    EXPECT_THAT(run.out, HasSubstr(expected)) << flags;
  }
}

TEST(BadInputsTest, ZeroTimeLimitStillGivesASchedule) {
  // No time is a legitimate request: the cheap heuristics need none.
  ProcessResult run = RunOrdo(absl::StrCat("compile ", ordo::testing::ExampleModelsDir(),
                                           "/tiny_cell.onnx --time-limit 0s"));
  EXPECT_EQ(run.exit_code, 0) << run.out;
}

// A crash of libonnx's shape inference is the model's fault: exit code 2
// with a message, not a crash. The model crashed libonnx 1.12 (the
// fuzzer's conv-of-a-flatten); the importer checks for it now, so libonnx's
// own schemas (ORDO_TEST_UNPATCHED_ONNX_SCHEMAS) bring the crash back.
TEST(BadInputsTest, AModelThatCrashesLibonnxExitsTwo) {
  const std::string model =
      absl::StrCat(ordo::testing::ExampleModelsDir(),
                   "/../../tests/fuzz/corpus/onnx_import_fuzzer/conv_of_a_flatten.onnx");
  ASSERT_TRUE(std::filesystem::exists(model)) << model;
  ASSERT_EQ(setenv("ORDO_TEST_UNPATCHED_ONNX_SCHEMAS", "1", 1), 0);
  const ProcessResult run = RunOrdo(absl::StrCat("compile ", model));
  ASSERT_EQ(unsetenv("ORDO_TEST_UNPATCHED_ONNX_SCHEMAS"), 0);
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_THAT(run.out, HasSubstr("ordo: ONNX shape inference crashed on this model"));
  // With the importer's checks the same model is refused as usual.
  const ProcessResult checked = RunOrdo(absl::StrCat("compile ", model));
  EXPECT_EQ(checked.exit_code, 2) << checked.out;
  EXPECT_THAT(checked.out, ::testing::Not(HasSubstr("crashed")));
}

}  // namespace
