// Hostile inputs through the `ordo` binary as a user runs it: every file of
// tests/data/bad (scripts/make-bad-models; MANIFEST.txt names the text each
// error must contain), the big cases generated here (a million ops, a
// 10,000-wide fan-out, a 100,000-op chain, a 64 MiB attribute, a 1 MiB
// name), and hostile flags. Bad input exits 2 with a printable one-line
// message naming the problem; valid input succeeds; nothing crashes or
// hangs, and the big cases finish within generous wall-clock bounds (the
// measured times are printed for the README).
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
#include "absl/strings/str_split.h"
#include "absl/strings/string_view.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"
#include "ordo/v1/graph.pb.h"

namespace {

using ::testing::HasSubstr;

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

std::string BadDir() { return absl::StrCat(ORDO_SOURCE_DIR, "/tests/data/bad"); }

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

// --- Generated ONNX models --------------------------------------------------

onnx::ValueInfoProto FloatInfo(const std::string& name, std::vector<int64_t> dims) {
  onnx::ValueInfoProto info;
  info.set_name(name);
  auto* tensor = info.mutable_type()->mutable_tensor_type();
  tensor->set_elem_type(onnx::TensorProto::FLOAT);
  for (int64_t d : dims) tensor->mutable_shape()->add_dim()->set_dim_value(d);
  return info;
}

onnx::ModelProto EmptyModel() {
  onnx::ModelProto model;
  model.set_ir_version(7);
  model.add_opset_import()->set_version(13);
  model.mutable_graph()->set_name("generated");
  *model.mutable_graph()->add_input() = FloatInfo("x", {1, 8});
  return model;
}

onnx::NodeProto* AddNode(onnx::GraphProto& graph, const std::string& type,
                         std::vector<std::string> inputs, const std::string& output) {
  onnx::NodeProto* node = graph.add_node();
  node->set_op_type(type);
  node->set_name(output);
  for (std::string& input : inputs) node->add_input(std::move(input));
  node->add_output(output);
  return node;
}

// x -> Relu -> Relu -> ... (n ops) -> y.
std::string ReluChain(int32_t n) {
  onnx::ModelProto model = EmptyModel();
  onnx::GraphProto& graph = *model.mutable_graph();
  std::string previous = "x";
  for (int32_t i = 0; i < n; ++i) {
    const std::string output = i + 1 == n ? "y" : absl::StrCat("t", i);
    AddNode(graph, "Relu", {previous}, output);
    previous = output;
  }
  *graph.add_output() = FloatInfo("y", {1, 8});
  return model.SerializeAsString();
}

// x feeds `width` Relus, all joined by one Concat.
std::string FanOut(int32_t width) {
  onnx::ModelProto model = EmptyModel();
  onnx::GraphProto& graph = *model.mutable_graph();
  std::vector<std::string> branches;
  for (int32_t i = 0; i < width; ++i) {
    branches.push_back(absl::StrCat("b", i));
    AddNode(graph, "Relu", {"x"}, branches.back());
  }
  onnx::NodeProto* concat = AddNode(graph, "Concat", branches, "y");
  onnx::AttributeProto* axis = concat->add_attribute();
  axis->set_name("axis");
  axis->set_type(onnx::AttributeProto::INT);
  axis->set_i(1);
  *graph.add_output() = FloatInfo("y", {1, 8 * width});
  return model.SerializeAsString();
}

// --- The committed corpus ---------------------------------------------------

struct ManifestEntry {
  std::string file;
  std::string expected;
};

std::vector<ManifestEntry> ReadManifest() {
  std::ifstream in(BadDir() + "/MANIFEST.txt");
  std::vector<ManifestEntry> entries;
  std::string line;
  while (std::getline(in, line)) {
    if (line.empty() || line[0] == '#') continue;
    std::vector<std::string> fields = absl::StrSplit(line, absl::MaxSplits('\t', 1));
    if (fields.size() == 2) entries.push_back({fields[0], fields[1]});
  }
  return entries;
}

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
  const std::string path = WriteTemp("million.onnx", ReluChain(1000000));
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
  ordo::v1::Graph graph;
  graph.add_tensors()->set_name("x");
  graph.mutable_tensors(0)->set_size_bytes(4);
  std::string previous = "x";
  for (int32_t i = 0; i < 1000000; ++i) {
    ordo::v1::Op* op = graph.add_ops();
    op->set_name(absl::StrCat("o", i));
    op->set_type("Relu");
    op->add_inputs(previous);
    previous = absl::StrCat("t", i);
    op->add_outputs(previous);
  }
  const std::string path = WriteTemp("million.pb", graph.SerializeAsString());
  ProcessResult run = RunOrdo(absl::StrCat("compile ", path));
  PrintTime("1,000,000-op ordo.v1.Graph refused", run);
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_THAT(run.out, HasSubstr("graph has 1000000 ops; the limit is 100000"));
  EXPECT_LT(run.seconds, 10);
  std::filesystem::remove(path);
}

TEST(BadInputsTest, OverTheMaxOpsFlagIsRefused) {
  const std::string path = WriteTemp("chain1000.onnx", ReluChain(1000));
  ProcessResult run = RunOrdo(absl::StrCat("compile ", path, " --max-ops 999"));
  EXPECT_EQ(run.exit_code, 2) << run.out;
  EXPECT_THAT(run.out, HasSubstr("model has 1000 nodes; the limit is 999 ops"));
  std::filesystem::remove(path);
}

TEST(BadInputsTest, TenThousandWideFanOutSucceeds) {
  const std::string path = WriteTemp("fanout.onnx", FanOut(10000));
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
  const std::string path = WriteTemp("chain.onnx", ReluChain(100000));
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
  onnx::ModelProto model = EmptyModel();
  onnx::NodeProto* node = AddNode(*model.mutable_graph(), "Relu", {"x"}, "y");
  onnx::AttributeProto* note = node->add_attribute();
  note->set_name("note");
  note->set_type(onnx::AttributeProto::STRING);
  note->set_s(std::string(64 << 20, 'A'));
  *model.mutable_graph()->add_output() = FloatInfo("y", {1, 8});
  const std::string path = WriteTemp("huge_attribute.onnx", model.SerializeAsString());
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
  onnx::ModelProto model = EmptyModel();
  std::string name(1 << 20, '\n');
  AddNode(*model.mutable_graph(), "Add", {"x", name}, "y");
  *model.mutable_graph()->add_output() = FloatInfo("y", {1, 8});
  const std::string path = WriteTemp("huge_name.onnx", model.SerializeAsString());
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
