// Every export of the torchvision corpus (tests/data/exports, made by
// scripts/export-torch-corpus) compiles: static and dynamic batch, opset 13
// and the exporter's newest. The dynamic-batch export with --batch 1 is the
// static export (same ops, same optimal peak), and every returned schedule
// is re-simulated here, outside the pipeline. One test per model and opset.
#include <algorithm>
#include <filesystem>
#include <fstream>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "absl/strings/str_cat.h"
#include "core/compile/compile.h"
#include "core/memory/memory_model.h"
#include "core/memory/simulator.h"
#include "core/onnx/onnx_import.h"
#include "core/onnx/prepare_model.h"
#include "core/testing/status_matchers.h"
#include "core/testing/test_paths.h"
#include "core/util/clock.h"
#include "core/util/status_macros.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"

namespace ordo {
namespace {

// One model at one opset: "<model>_op<opset>", with a _static.onnx and a
// _dynamic.onnx file.
struct Export {
  std::string stem;
};

void PrintTo(const Export& e, std::ostream* os) { *os << e.stem; }

std::vector<Export> CorpusExports() {
  std::vector<Export> exports;
  std::error_code error;
  for (const auto& entry :
       std::filesystem::directory_iterator(ordo::testing::ExportsDir(), error)) {
    const std::string name = entry.path().filename().string();
    const std::string suffix = "_static.onnx";
    if (name.size() > suffix.size() &&
        name.compare(name.size() - suffix.size(), suffix.size(), suffix) == 0) {
      exports.push_back({name.substr(0, name.size() - suffix.size())});
    }
  }
  std::sort(exports.begin(), exports.end(),
            [](const Export& a, const Export& b) { return a.stem < b.stem; });
  // One placeholder that skips, so an absent corpus is said, not silent.
  if (exports.empty()) exports.push_back({""});
  return exports;
}

std::optional<std::string> ReadFile(const std::string& path) {
  std::ifstream file(path, std::ios::binary);
  if (!file) return std::nullopt;
  std::stringstream bytes;
  bytes << file.rdbuf();
  return bytes.str();
}

// Imports with --batch 1 (a no-op on the static export), compiles with the
// default scheduler, and checks the schedule with a simulator run of its own.
CompileResult CompileExport(const std::string& path) {
  std::optional<std::string> bytes = ReadFile(path);
  EXPECT_TRUE(bytes.has_value()) << path;
  absl::StatusOr<std::string> shaped = PreparedOnnxBytes(bytes.value_or(""), {.batch = 1});
  EXPECT_TRUE(shaped.ok()) << path << ": " << shaped.status();
  absl::StatusOr<Graph> graph = ImportOnnx(shaped.value_or(""));
  EXPECT_TRUE(graph.ok()) << path << ": " << graph.status();
  if (!graph.ok()) return {};
  RealClock clock;
  absl::StatusOr<CompileResult> result = Compile(*graph, {}, clock);
  EXPECT_TRUE(result.ok()) << path << ": " << result.status();
  if (!result.ok()) return {};
  absl::StatusOr<MemoryModel> model = BuildMemoryModel(*graph, result->memory);
  EXPECT_TRUE(model.ok()) << model.status();
  if (model.ok()) {
    absl::StatusOr<int64_t> peak = SimulatePeak(*model, result->schedule);
    EXPECT_TRUE(peak.ok()) << path << ": " << peak.status();
    EXPECT_EQ(peak.value_or(-1), result->peak_bytes) << path;
  }
  return *std::move(result);
}

class ExportCorpusTest : public ::testing::TestWithParam<Export> {};

TEST_P(ExportCorpusTest, CompilesAndDynamicBatchOneIsTheStaticExport) {
  if (GetParam().stem.empty()) {
    GTEST_SKIP() << "no exports in " << ordo::testing::ExportsDir()
                 << "; run scripts/export-torch-corpus to make them";
  }
  const std::string base = absl::StrCat(ordo::testing::ExportsDir(), "/", GetParam().stem);
  const CompileResult static_export = CompileExport(base + "_static.onnx");
  if (!std::filesystem::exists(base + "_dynamic.onnx")) return;
  const CompileResult dynamic_export = CompileExport(base + "_dynamic.onnx");
  EXPECT_EQ(dynamic_export.schedule.size(), static_export.schedule.size());
  EXPECT_EQ(dynamic_export.peak_bytes, static_export.peak_bytes);
  EXPECT_EQ(dynamic_export.status, static_export.status);
}

// The same model with its nodes listed last first (no longer topologically
// sorted, which ONNX requires and some hand edits and tools break) imports
// to the same graph: every tensor with the same dims. bench/onnx-sweep found
// shuffled exports crashing libonnx's shape inference or losing shapes.
TEST_P(ExportCorpusTest, NodesOutOfOrderImportAsTheSortedFile) {
  if (GetParam().stem.empty()) {
    GTEST_SKIP() << "no exports in " << ordo::testing::ExportsDir()
                 << "; run scripts/export-torch-corpus to make them";
  }
  const std::string path =
      absl::StrCat(ordo::testing::ExportsDir(), "/", GetParam().stem, "_static.onnx");
  std::optional<std::string> bytes = ReadFile(path);
  ASSERT_TRUE(bytes.has_value()) << path;
  onnx::ModelProto model;
  ASSERT_TRUE(model.ParseFromString(*bytes)) << path;
  auto& nodes = *model.mutable_graph()->mutable_node();
  std::reverse(nodes.begin(), nodes.end());
  ORDO_ASSERT_OK_AND_ASSIGN(Graph sorted, ImportOnnx(*bytes));
  ORDO_ASSERT_OK_AND_ASSIGN(Graph reversed, ImportOnnx(model.SerializeAsString()));
  ASSERT_EQ(reversed.num_ops(), sorted.num_ops());
  ASSERT_EQ(reversed.num_tensors(), sorted.num_tensors());
  for (TensorId t = 0; t < sorted.num_tensors(); ++t) {
    const Tensor& tensor = sorted.tensor(t);
    std::optional<TensorId> same = reversed.FindTensor(tensor.name);
    ASSERT_TRUE(same.has_value()) << tensor.name;
    EXPECT_EQ(reversed.tensor(*same).dims, tensor.dims) << tensor.name;
    EXPECT_EQ(reversed.tensor(*same).bytes, tensor.bytes) << tensor.name;
  }
}

// The export `stem`_dynamic.onnx with its input's H and W made symbolic,
// imported at `height` x `width` (bench/onnx-sweep with --input-shape).
absl::StatusOr<Graph> ImportAtSize(const std::string& stem, int64_t height, int64_t width) {
  std::optional<std::string> bytes =
      ReadFile(absl::StrCat(ordo::testing::ExportsDir(), "/", stem, "_dynamic.onnx"));
  if (!bytes) return absl::NotFoundError(stem);
  onnx::ModelProto model;
  if (!model.ParseFromString(*bytes)) return absl::InternalError(stem);
  onnx::ValueInfoProto& input = *model.mutable_graph()->mutable_input(0);
  auto& dims = *input.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim();
  dims[2].set_dim_param("height");
  dims[3].set_dim_param("width");
  ORDO_ASSIGN_OR_RETURN(std::string shaped,
                        PreparedOnnxBytes(model.SerializeAsString(),
                                          {.shapes = {{input.name(), {1, 3, height, width}}}}));
  return ImportOnnx(shaped);
}

// At a size the model cannot run at, the import refuses it; before, both
// imported with the shapes of the size they were exported at, a silently
// wrong plan: ViT's 13 tokens met a 50-token position embedding (a shape
// the folding's first round inferred outlived the dims becoming known), and
// MaxViT's window partition reshapes to a target fixed at export. At the
// export's own size both import as the static export.
TEST(ExportSizeTest, AnInputSizeTheModelCannotRunAtIsRefused) {
  const std::pair<const char*, const char*> refusals[] = {
      {"vit_b_32_op17", "(op_type:Add, node name: /encoder/Add): [ShapeInferenceError] "
                        "Incompatible dimensions"},
      {"maxvit_t_op17", "so the model cannot run at these input shapes"}};
  for (const auto& [stem, why] : refusals) {
    const std::string file = absl::StrCat(ordo::testing::ExportsDir(), "/", stem, "_dynamic.onnx");
    if (!std::filesystem::exists(file)) GTEST_SKIP() << file << " is absent";
    const absl::StatusOr<Graph> refused = ImportAtSize(stem, 97, 131);
    EXPECT_THAT(refused, ::ordo::testing::StatusIs(absl::StatusCode::kInvalidArgument,
                                                   ::testing::HasSubstr(why)))
        << stem;
    // One line, though strict inference reports every node after the first
    // failure too.
    EXPECT_EQ(refused.status().message().find('\n'), absl::string_view::npos) << stem;
    absl::StatusOr<Graph> exported_size = ImportAtSize(stem, 224, 224);
    ASSERT_TRUE(exported_size.ok()) << stem << ": " << exported_size.status();
    ORDO_ASSERT_OK_AND_ASSIGN(
        Graph static_export,
        ImportOnnx(ReadFile(absl::StrCat(ordo::testing::ExportsDir(), "/", stem, "_static.onnx"))
                       .value_or("")));
    EXPECT_EQ(exported_size->num_tensors(), static_export.num_tensors()) << stem;
  }
}

// A static export whose batch a tool or hand edit made symbolic still
// declares its graph output at batch 1; at --batch 2 that declaration is
// stale (bench/onnx-sweep: refused, naming the classifier's Gemm). It
// imports as the dynamic export does at batch 2: the same tensor dims.
TEST(ExportSizeTest, AStaticExportWhoseBatchWasMadeSymbolicImportsAtAnotherBatch) {
  for (const char* stem : {"resnet18_op13", "efficientnet_b0_op17"}) {
    const std::string file = absl::StrCat(ordo::testing::ExportsDir(), "/", stem, "_static.onnx");
    if (!std::filesystem::exists(file)) GTEST_SKIP() << file << " is absent";
    auto at_batch_two = [&](const std::string& path, bool make_symbolic) -> absl::StatusOr<Graph> {
      onnx::ModelProto model;
      if (!model.ParseFromString(ReadFile(path).value_or(""))) return absl::InternalError(path);
      onnx::ValueInfoProto& input = *model.mutable_graph()->mutable_input(0);
      auto& dims = *input.mutable_type()->mutable_tensor_type()->mutable_shape()->mutable_dim();
      if (make_symbolic) dims[0].set_dim_param("batch");
      ORDO_ASSIGN_OR_RETURN(std::string shaped,
                            PreparedOnnxBytes(model.SerializeAsString(), {.batch = 2}));
      return ImportOnnx(shaped);
    };
    absl::StatusOr<Graph> edited = at_batch_two(file, /*make_symbolic=*/true);
    ASSERT_TRUE(edited.ok()) << stem << ": " << edited.status();
    ORDO_ASSERT_OK_AND_ASSIGN(
        Graph dynamic,
        at_batch_two(absl::StrCat(ordo::testing::ExportsDir(), "/", stem, "_dynamic.onnx"), false));
    auto all_dims = [](const Graph& graph) {
      std::vector<std::vector<int64_t>> dims;
      for (TensorId t = 0; t < graph.num_tensors(); ++t) dims.push_back(graph.tensor(t).dims);
      std::sort(dims.begin(), dims.end());
      return dims;
    };
    EXPECT_EQ(all_dims(*edited), all_dims(dynamic)) << stem;
    EXPECT_EQ(edited->tensor(edited->outputs().front()).dims[0], 2) << stem;
  }
}

INSTANTIATE_TEST_SUITE_P(Corpus, ExportCorpusTest, ::testing::ValuesIn(CorpusExports()),
                         [](const ::testing::TestParamInfo<Export>& info) {
                           return info.param.stem.empty() ? std::string("NoCorpus")
                                                          : info.param.stem;
                         });

}  // namespace
}  // namespace ordo
