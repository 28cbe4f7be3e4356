// What the import notes about a model, through a real ordo-server: a
// TFLite dynamic batch (shape_signature -1), planned at its `shape`, is
// told in CompileResponse.import_notes and EstimateResponse.import_notes,
// and `ordo estimate --server` prints the server's note as local mode does.

#include <filesystem>
#include <fstream>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/tflite/tflite_test_model.h"
#include "tests/cli/run_ordo.h"
#include "tests/service/service_harness.h"

namespace ordo {
namespace {

using namespace ::ordo::testing_service;  // NOLINT: the harness is the test's vocabulary
using ::ordo::testing::ProcessResult;
using ::ordo::testing::RunOrdo;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

TEST(ImportNotesServiceTest, CompileAndEstimateCarryTheImportsNotes) {
  const std::string bytes = ordo::testing::DynamicBatchTfliteModel();
  const std::string note = ordo::testing::kDynamicBatchTfliteNote;
  Server server({"--local-workers=1"});
  ASSERT_TRUE(server.started());

  v1::CompileRequest compile;
  compile.set_tflite_model(bytes);
  v1::CompileResponse compiled;
  grpc::Status status = server.Compile(compile, compiled);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_THAT(compiled.import_notes(), ElementsAre(note));

  v1::EstimateRequest estimate;
  estimate.set_tflite_model(bytes);
  v1::EstimateResponse estimated;
  grpc::ClientContext context;
  status = server.compiler().Estimate(&context, estimate, &estimated);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_THAT(estimated.import_notes(), ElementsAre(note));

  const std::string model = ::testing::TempDir() + "/served_dynamic_batch.tflite";
  std::ofstream(model, std::ios::binary) << bytes;
  ProcessResult served = RunOrdo(absl::StrCat("estimate ", model, " --server ", server.address()));
  ASSERT_EQ(served.exit_code, 0) << served.out;
  EXPECT_THAT(served.out, HasSubstr(absl::StrCat("\nnote          ", note, "\n")));
  std::filesystem::remove(model);
}

}  // namespace
}  // namespace ordo
