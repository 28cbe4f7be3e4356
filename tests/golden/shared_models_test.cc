// Checks the import of every benchmark model in ORDO_SHARED_MODELS_DIR
// against its README table: the number of ops after constant folding and the
// peak of the file's node order under the default memory-model rules must
// match exactly (a reference simulator reproduces every README number, so a
// mismatch is an import bug). Skips when the folder is not there.

#include <algorithm>
#include <cstdint>
#include <fstream>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "core/memory/memory_model.h"
#include "core/memory/simulator.h"
#include "core/onnx/onnx_import.h"
#include "core/testing/status_matchers.h"
#include "core/testing/test_paths.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

// One row of the README table.
struct GoldenModel {
  std::string name;
  int32_t ops = 0;
  int64_t model_order_peak = 0;
};

// Names the parameter in test output (and so in ctest's test names).
void PrintTo(const GoldenModel& model, std::ostream* os) {
  *os << (model.name.empty() ? "<no README>" : model.name);
}

std::optional<std::string> ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return std::nullopt;
  std::stringstream contents;
  contents << file.rdbuf();
  return contents.str();
}

std::vector<std::string> Cells(absl::string_view line) {
  std::vector<std::string> cells;
  for (absl::string_view cell : absl::StrSplit(line, '|')) {
    cells.emplace_back(absl::StripAsciiWhitespace(cell));
  }
  // "| a | b |" splits into "", "a", "b", "".
  if (cells.size() >= 2) cells = {cells.begin() + 1, cells.end() - 1};
  return cells;
}

int ColumnOf(const std::vector<std::string>& header, absl::string_view title) {
  for (size_t i = 0; i < header.size(); ++i) {
    if (header[i] == title) return static_cast<int>(i);
  }
  return -1;
}

// The rows of the first table whose header has "model", "ops" and
// "model order" columns.
std::vector<GoldenModel> ParseReadme(const std::string& readme) {
  std::vector<GoldenModel> rows;
  int name_col = -1, ops_col = -1, peak_col = -1;
  for (absl::string_view line : absl::StrSplit(readme, '\n')) {
    line = absl::StripAsciiWhitespace(line);
    if (!absl::StartsWith(line, "|")) continue;
    std::vector<std::string> cells = Cells(line);
    if (name_col < 0) {
      name_col = ColumnOf(cells, "model");
      ops_col = ColumnOf(cells, "ops");
      peak_col = ColumnOf(cells, "model order");
      if (ops_col < 0 || peak_col < 0) name_col = -1;
      continue;
    }
    GoldenModel row;
    const int needed = std::max({name_col, ops_col, peak_col});
    if (static_cast<int>(cells.size()) <= needed || !absl::SimpleAtoi(cells[ops_col], &row.ops) ||
        !absl::SimpleAtoi(cells[peak_col], &row.model_order_peak)) {
      continue;  // the |---| separator
    }
    row.name = cells[name_col];
    rows.push_back(row);
  }
  return rows;
}

std::string ModelsDir() { return ordo::testing::SharedModelsDir(); }

// Evaluated when the tests are registered; an empty name marks "no README".
std::vector<GoldenModel> GoldenModels() {
  std::optional<std::string> readme = ReadFile(ModelsDir() + "/README.md");
  std::vector<GoldenModel> rows = readme ? ParseReadme(*readme) : std::vector<GoldenModel>{};
  if (rows.empty()) rows.push_back(GoldenModel{});
  return rows;
}

class SharedModelsTest : public ::testing::TestWithParam<GoldenModel> {};

TEST_P(SharedModelsTest, OpsAndModelOrderPeakMatchReadme) {
  const GoldenModel& golden = GetParam();
  if (golden.name.empty()) {
    GTEST_SKIP() << "../shared/models not found; skipping golden model checks (" << ModelsDir()
                 << "/README.md has no model table)";
  }
  std::optional<std::string> bytes = ReadFile(ModelsDir() + "/" + golden.name + ".onnx");
  ASSERT_TRUE(bytes.has_value()) << "missing " << golden.name << ".onnx";
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, ImportOnnx(*bytes));
  EXPECT_EQ(graph.num_ops(), golden.ops);
  ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel model, BuildMemoryModel(graph, MemoryOptions{}));
  std::vector<int32_t> order(graph.num_ops());
  for (int32_t i = 0; i < graph.num_ops(); ++i) order[i] = i;
  ORDO_ASSERT_OK_AND_ASSIGN(int64_t peak, SimulatePeak(model, order));
  EXPECT_EQ(peak, golden.model_order_peak);
}

std::string ModelName(const ::testing::TestParamInfo<GoldenModel>& info) {
  if (info.param.name.empty()) return "NoSharedModels";
  std::string name = info.param.name;
  for (char& c : name) {
    if (!absl::ascii_isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(Readme, SharedModelsTest, ::testing::ValuesIn(GoldenModels()), ModelName);

}  // namespace
}  // namespace ordo
