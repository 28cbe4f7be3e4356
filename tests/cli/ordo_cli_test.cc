// The `ordo` binary as a user runs it: real process, real files, exit codes.
#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace {

using ::testing::HasSubstr;

struct ProcessResult {
  int exit_code;
  std::string out;  // stdout and stderr together
};

ProcessResult RunOrdo(const std::string& args) {
  std::string command = absl::StrCat(ORDO_BINARY, " ", args, " 2>&1");
  FILE* pipe = popen(command.c_str(), "r");
  std::string out;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
  int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

std::string Example(const std::string& name) {
  return absl::StrCat(ORDO_EXAMPLE_MODELS_DIR, "/", name);
}

std::filesystem::path TempPath(const std::string& name) {
  return std::filesystem::temp_directory_path() /
         absl::StrCat("ordo_cli_test_", getpid(), "_", name);
}

std::string WriteTemp(const std::string& name, const std::string& contents) {
  std::filesystem::path path = TempPath(name);
  std::ofstream(path, std::ios::binary) << contents;
  return path.string();
}

TEST(OrdoCliTest, CompileJsonOnEveryExampleModel) {
  int models = 0;
  for (const auto& entry : std::filesystem::directory_iterator(ORDO_EXAMPLE_MODELS_DIR)) {
    if (entry.path().extension() != ".onnx") continue;
    ++models;
    ProcessResult run = RunOrdo(absl::StrCat("compile ", entry.path().string(), " --json"));
    ASSERT_EQ(run.exit_code, 0) << run.out;
    nlohmann::json report = nlohmann::json::parse(run.out);
    EXPECT_GT(report["ops"].get<int>(), 0);
    EXPECT_GE(report["peak_bytes"].get<int64_t>(), report["lower_bound_bytes"].get<int64_t>());
    EXPECT_EQ(report["schedule"].size(), report["ops"].get<size_t>());
    EXPECT_EQ(report["profile"].size(), report["ops"].get<size_t>());
    for (const char* baseline : {"model_order", "kahn", "rpo"}) {
      EXPECT_GE(report["baselines"][baseline]["peak_bytes"].get<int64_t>(),
                report["peak_bytes"].get<int64_t>())
          << baseline;
    }
  }
  EXPECT_GE(models, 2);
}

TEST(OrdoCliTest, HumanSummaryAndMemoryLimit) {
  ProcessResult run = RunOrdo(absl::StrCat("compile ", Example("small_resnet.onnx"),
                                 " --memory-limit 1B --scheduler greedy"));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  EXPECT_THAT(run.out, HasSubstr("DOES NOT FIT"));
  EXPECT_THAT(run.out, HasSubstr("model_order"));
}

TEST(OrdoCliTest, EmitOnnxReloadsWithTheSamePeak) {
  std::string out = TempPath("reordered.onnx").string();
  ProcessResult first = RunOrdo(absl::StrCat("compile ", Example("tiny_cell.onnx"),
                                   " --json --emit-onnx ", out));
  ASSERT_EQ(first.exit_code, 0) << first.out;
  // The emitted file runs the chosen schedule in file order.
  ProcessResult again = RunOrdo(absl::StrCat("compile ", out, " --json --scheduler model"));
  ASSERT_EQ(again.exit_code, 0) << again.out;
  nlohmann::json a = nlohmann::json::parse(first.out);
  nlohmann::json b = nlohmann::json::parse(again.out);
  EXPECT_EQ(a["peak_bytes"], b["peak_bytes"]);
  EXPECT_EQ(a["schedule"], b["schedule"]);
  std::filesystem::remove(out);
}

TEST(OrdoCliTest, BadInputExitsTwoWithAMessage) {
  std::string garbage = WriteTemp("garbage.onnx", "this is not a model \xff\xfe");
  std::string truncated;
  {
    std::ifstream in(Example("small_resnet.onnx"), std::ios::binary);
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    truncated = WriteTemp("truncated.onnx", bytes.substr(0, bytes.size() / 2));
  }
  std::string bad_json = WriteTemp("bad.json", R"({"ops": [{"name": "a", "type": "Relu",
      "inputs": ["ghost"], "outputs": ["y"]}], "tensors": [{"name": "y", "sizeBytes": 4}]})");
  for (const std::string& args :
       {absl::StrCat("compile ", garbage), absl::StrCat("compile ", truncated),
        absl::StrCat("compile ", bad_json), std::string("compile /no/such/model.onnx"),
        absl::StrCat("compile ", Example("tiny_cell.onnx"), " --scheduler nope"),
        absl::StrCat("compile ", Example("tiny_cell.onnx"), " --memory-limit lots"),
        absl::StrCat("compile ", Example("tiny_cell.onnx"), " --bogus"),
        absl::StrCat("compile ", Example("tiny_cell.onnx"), " --time-limit -3s"),
        absl::StrCat("compile ", Example("tiny_cell.onnx"), " --max-ops 3"),
        absl::StrCat("compile ", ORDO_SOURCE_DIR, "/tests/data/bad/activation_total_overflows.onnx"),
        std::string("frobnicate"), std::string("")}) {
    ProcessResult run = RunOrdo(args);
    EXPECT_EQ(run.exit_code, 2) << args << "\n" << run.out;
    EXPECT_FALSE(run.out.empty()) << args;
  }
  EXPECT_THAT(RunOrdo(absl::StrCat("compile ", bad_json)).out, HasSubstr("ghost"));
  for (const std::string& path : {garbage, truncated, bad_json}) std::filesystem::remove(path);
}

TEST(OrdoCliTest, ArenaTrafficAndOutDir) {
  std::filesystem::path dir = TempPath("out");
  ProcessResult run = RunOrdo(absl::StrCat("compile ", Example("tiny_cell.onnx"),
                                           " --json --on-chip 64KiB --arena tflite --out-dir ",
                                           dir.string()));
  ASSERT_EQ(run.exit_code, 0) << run.out;
  nlohmann::json report = nlohmann::json::parse(run.out);
  EXPECT_EQ(report["arena"]["planner"], "tflite");
  EXPECT_GE(report["arena"]["bytes"].get<int64_t>(),
            report["arena"]["lower_bound_bytes"].get<int64_t>());
  EXPECT_GE(report["arena_baselines"]["tflite"]["model_order_bytes"].get<int64_t>(), 0);
  EXPECT_EQ(report["traffic"]["on_chip_bytes"], 64 * 1024);
  EXPECT_EQ(report["traffic"]["total_bytes"].get<int64_t>(),
            report["traffic"]["read_bytes"].get<int64_t>() +
                report["traffic"]["write_bytes"].get<int64_t>());
  for (const char* file : {"schedule.json", "arena.json", "memory.svg"}) {
    EXPECT_TRUE(std::filesystem::exists(dir / file)) << file;
  }
  std::ifstream svg(dir / "memory.svg");
  std::string head(5, ' ');
  svg.read(head.data(), 5);
  EXPECT_EQ(head, "<svg ");
  EXPECT_EQ(RunOrdo(absl::StrCat("compile ", Example("tiny_cell.onnx"), " --arena nope")).exit_code,
            2);
  std::filesystem::remove_all(dir);
}

TEST(OrdoCliTest, InspectAndSchedulers) {
  ProcessResult inspect = RunOrdo(absl::StrCat("inspect ", Example("tiny_cell.onnx"), " --json"));
  ASSERT_EQ(inspect.exit_code, 0) << inspect.out;
  EXPECT_GT(nlohmann::json::parse(inspect.out)["ops"].get<int>(), 0);
  ProcessResult schedulers = RunOrdo("schedulers");
  EXPECT_EQ(schedulers.exit_code, 0);
  EXPECT_THAT(schedulers.out, HasSubstr("greedy"));
}

}  // namespace
