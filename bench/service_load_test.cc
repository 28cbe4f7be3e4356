// ordo-load as a real process against the ordo-server it spawns: each mode
// finishes within its bounds and reports what the server's cache did.

#include <sys/wait.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/testing/test_paths.h"
#include "gtest/gtest.h"
#include "nlohmann/json.hpp"

namespace ordo::bench {
namespace {

// Runs ordo-load with `flags` and --json; the parsed JSON, null on failure.
nlohmann::json RunLoad(const std::string& flags) {
  const std::filesystem::path json =
      std::filesystem::path(::testing::TempDir()) /
      absl::StrCat("ordo_load_", ::testing::UnitTest::GetInstance()->current_test_info()->name(),
                   ".json");
  const std::string command =
      absl::StrCat(ordo::testing::LoadBinary(), " --spawn --local-workers=0 ", flags,
                   " --json=", json.string(), " >/dev/null 2>&1");
  const int status = std::system(command.c_str());
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0) << command;
  std::ifstream in(json);
  if (!in) return nullptr;
  return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
}

TEST(ServiceLoadTest, CachedModeHitsEveryPart) {
  const nlohmann::json out =
      RunLoad(absl::StrCat("--mode=cached --model=", ordo::testing::ExampleModelsDir(),
                           "/small_resnet.onnx --concurrency=2 --requests=20 --duration=30"));
  ASSERT_TRUE(out.is_object());
  EXPECT_EQ(out["calls"], 20);
  EXPECT_EQ(out["status"]["OK"], 20);
  EXPECT_GT(out["parts"].get<int>(), 0);
  EXPECT_EQ(out["cache_hits"], out["parts"]);
  EXPECT_GT(out["latency_ms"]["p99"].get<double>(), 0);
}

TEST(ServiceLoadTest, ColdModeMissesEveryPart) {
  const nlohmann::json out =
      RunLoad(absl::StrCat("--mode=cold --model=", ordo::testing::ExampleModelsDir(),
                           "/small_resnet.onnx --requests=3 --duration=30"));
  ASSERT_TRUE(out.is_object());
  EXPECT_EQ(out["status"]["OK"], 3);
  EXPECT_EQ(out["cache_hits"], 0);
}

TEST(ServiceLoadTest, NasStreamSharesCells) {
  // Two cell types in six positions: from the second candidate on, most
  // parts are cached.
  const nlohmann::json out = RunLoad(
      "--mode=nas --nas-cell-types=2 --nas-blocks=4 --requests=6 --duration=60 "
      "--local-workers=1");  // the last flag wins
  ASSERT_TRUE(out.is_object());
  EXPECT_EQ(out["status"]["OK"], 6);
  EXPECT_GT(out["part_hit_rate"].get<double>(), 0.5);
}

TEST(ServiceLoadTest, DartsStreamReportsWhatAPerfectCacheCouldDo) {
  // Half the candidates re-send a survivor of a population of 4: repeats
  // occur, and every first send spends some of its time scheduling.
  const nlohmann::json out = RunLoad(
      "--mode=darts --requests=24 --darts_population=4 --darts_resend=0.5 --duration=60 "
      "--server_flags=--cache-mb=0");
  ASSERT_TRUE(out.is_object());
  EXPECT_EQ(out["status"]["OK"], 24);
  const nlohmann::json& ceiling = out["cache_ceiling"];
  ASSERT_TRUE(ceiling.is_object());
  EXPECT_GT(ceiling["repeated_candidates"].get<int>(), 0);
  EXPECT_LT(ceiling["repeated_candidates"].get<int>(), 24);
  EXPECT_GT(ceiling["schedule_share"].get<double>(), 0);
  EXPECT_LT(ceiling["schedule_share"].get<double>(), 1);
  EXPECT_GT(ceiling["speedup"].get<double>(), 1);
  // The window ceiling frees less: only cells an earlier candidate held.
  // Some are held (the population mutates one or two edges), so some
  // scheduling is freed: a share of 0 would mean no op name of a computed
  // answer matched the ops seen before, and the window ceiling would be 1
  // for that reason alone.
  EXPECT_GT(ceiling["free_schedule_share"].get<double>(), 0);
  EXPECT_LE(ceiling["free_schedule_share"].get<double>(),
            ceiling["schedule_share"].get<double>());
  EXPECT_GE(ceiling["window_speedup"].get<double>(), 1);
  EXPECT_LE(ceiling["window_speedup"].get<double>(), ceiling["speedup"].get<double>());
  // Every cell of the stream is counted once, under one kind; repeated
  // candidates are the ceiling's repeats.
  const nlohmann::json& kinds = out["repeat_kinds"];
  ASSERT_TRUE(kinds.is_object());
  EXPECT_EQ(kinds["candidates"], 24);
  EXPECT_EQ(kinds["repeated_candidates"], ceiling["repeated_candidates"]);
  int cells = 0;
  for (const auto& [kind, count] : kinds["cells"].items()) cells += count.get<int>();
  EXPECT_EQ(cells, 24 * 6);
  EXPECT_EQ(kinds["cells"]["repeated_candidate"], 6 * kinds["repeated_candidates"].get<int>());
  // A population of 4 mutating one or two edges: most cells recur.
  EXPECT_GT(kinds["cells"]["across_candidates"].get<int>(), 0);
  EXPECT_FALSE(out["largest_part_time_by_ops"].empty());
}

// One candidate has no sizes to fit an exponent to: no fitted ceiling is
// reported, rather than one computed with time ~ ops^0.
TEST(ServiceLoadTest, NoFittedCeilingWithoutAnExponent) {
  const nlohmann::json out =
      RunLoad("--mode=darts --requests=1 --duration=60 --server_flags=--cache-mb=0");
  ASSERT_TRUE(out.is_object());
  const nlohmann::json& ceiling = out["cache_ceiling"];
  ASSERT_TRUE(ceiling.is_object());
  EXPECT_EQ(ceiling["ops_exponent"].get<double>(), 0);
  EXPECT_FALSE(ceiling.contains("fitted_window_speedup"));
  EXPECT_TRUE(ceiling.contains("window_speedup"));
}

// --answers_dir is for diffing two servers' answers: a missing answer
// file fails the run, naming it, rather than leaving a diff that passes.
TEST(ServiceLoadTest, AnAnswerItCannotWriteFailsTheRun) {
  const std::filesystem::path dir = std::filesystem::path(::testing::TempDir()) / "no_such_dir";
  const std::filesystem::path err = std::filesystem::path(::testing::TempDir()) / "ordo_load.err";
  std::filesystem::remove_all(dir);
  const std::string command = absl::StrCat(
      ordo::testing::LoadBinary(), " --spawn --local-workers=0 --mode=darts --requests=2",
      " --answers_dir=", dir.string(), " >/dev/null 2>", err.string());
  const int status = std::system(command.c_str());
  ASSERT_TRUE(WIFEXITED(status)) << command;
  EXPECT_EQ(WEXITSTATUS(status), 1) << command;
  std::ifstream in(err);
  const std::string message((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  EXPECT_NE(message.find(absl::StrCat("cannot write ", dir.string(), "/answer")), std::string::npos)
      << message;
}

TEST(ServiceLoadTest, StopsAtDuration) {
  const nlohmann::json out =
      RunLoad("--method=info --concurrency=2 --requests=100000000 --duration=0.5");
  ASSERT_TRUE(out.is_object());
  EXPECT_LT(out["seconds"].get<double>(), 5.0);
  EXPECT_GT(out["calls"].get<int>(), 0);
}

}  // namespace
}  // namespace ordo::bench
