#include "core/compile/compile_request.h"

#include "core/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::StatusIs;
using ::testing::AllOf;
using ::testing::HasSubstr;

CompileRequest RequestOf(ModelFormat format) {
  CompileRequest request;
  request.format = format;
  return request;
}

TEST(CompileRequestTest, PlainRequestsOfEveryFormatAreValid) {
  for (ModelFormat format : {ModelFormat::kOnnx, ModelFormat::kGraphProto, ModelFormat::kGraphJson,
                             ModelFormat::kTflite}) {
    ORDO_EXPECT_OK(RequestOf(format).Validate());
  }
}

TEST(CompileRequestTest, RewritingNeedsOnnxAndNamesTheField) {
  CompileRequest request = RequestOf(ModelFormat::kGraphJson);
  request.rewrite.mode = RewriteMode::kPartition;
  EXPECT_THAT(
      request.Validate(),
      StatusIs(absl::StatusCode::kInvalidArgument,
               AllOf(HasSubstr("options.rewrite \"partition\""), HasSubstr("needs an ONNX model"),
                     HasSubstr("(onnx_model)"), HasSubstr("a native ordo.v1.Graph"),
                     HasSubstr("compile its ONNX export with options.rewrite"),
                     HasSubstr("\"auto\" compiles a model of any format as it is"))));
  request.format = ModelFormat::kOnnx;
  ORDO_EXPECT_OK(request.Validate());
}

TEST(CompileRequestTest, AParetoFrontAloneIsARewrite) {
  CompileRequest request = RequestOf(ModelFormat::kTflite);
  request.rewrite.pareto = true;
  EXPECT_EQ(RewriteModeToRun(request.rewrite), RewriteMode::kAll);
  EXPECT_THAT(request.Validate(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("Pareto front"), HasSubstr("a TFLite model"))));
}

TEST(CompileRequestTest, AutoWithoutOnnxCompilesAsIs) {
  CompileRequest request = RequestOf(ModelFormat::kGraphProto);
  ORDO_ASSERT_OK(SetRewriteMode("auto", request.rewrite));
  request.options.memory_limit_bytes = 1;
  ORDO_EXPECT_OK(request.Validate());
}

TEST(CompileRequestTest, ErrorsUseTheCallersNames) {
  CompileRequest request = RequestOf(ModelFormat::kTflite);
  request.names.model = "net.tflite";
  request.names.rewrite = "--rewrite";
  request.names.onnx_model = ".onnx";
  request.rewrite.mode = RewriteMode::kIdentity;
  EXPECT_THAT(request.Validate(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       AllOf(HasSubstr("--rewrite \"identity\""), HasSubstr("(.onnx)"),
                             HasSubstr("net.tflite is a TFLite model"))));
}

TEST(CompileRequestTest, InputShapesNeedOnnx) {
  CompileRequest request = RequestOf(ModelFormat::kGraphProto);
  request.input_shapes.batch = 2;
  EXPECT_THAT(request.Validate(), StatusIs(absl::StatusCode::kInvalidArgument,
                                           AllOf(HasSubstr("options.input_shapes / options.dim_params / options.batch"),
                                                 HasSubstr("shapes are static"))));
  EXPECT_THAT(CheckInputShapesApply(ModelFormat::kTflite, request.input_shapes, request.names),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("a TFLite model")));
  ORDO_EXPECT_OK(CheckInputShapesApply(ModelFormat::kOnnx, request.input_shapes, request.names));
  ORDO_EXPECT_OK(CheckInputShapesApply(ModelFormat::kTflite, InputShapes(), request.names));
}

TEST(CompileRequestTest, ReorderedModelsNeedTheirFormat) {
  CompileRequest onnx = RequestOf(ModelFormat::kTflite);
  onnx.reordered_onnx = true;
  EXPECT_THAT(onnx.Validate(), StatusIs(absl::StatusCode::kInvalidArgument,
                                        AllOf(HasSubstr("options.return_reordered_onnx"),
                                              HasSubstr("needs an ONNX input model"))));
  CompileRequest tflite = RequestOf(ModelFormat::kOnnx);
  tflite.reordered_tflite = true;
  EXPECT_THAT(tflite.Validate(), StatusIs(absl::StatusCode::kInvalidArgument,
                                          AllOf(HasSubstr("options.return_reordered_tflite"),
                                                HasSubstr("(tflite_model)"))));
  tflite.format = ModelFormat::kTflite;
  ORDO_EXPECT_OK(tflite.Validate());
  tflite.options.arena_planner = kNoArenaPlanner;
  EXPECT_THAT(tflite.Validate(), StatusIs(absl::StatusCode::kInvalidArgument,
                                          AllOf(HasSubstr("needs an arena plan"),
                                                HasSubstr("options.arena_planner"))));
}

TEST(CompileRequestTest, BadRewriteOptionsAreRejected) {
  CompileRequest request = RequestOf(ModelFormat::kOnnx);
  request.rewrite.beam_width = kMaxRewriteBeamWidth + 1;
  EXPECT_THAT(request.Validate(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("beam_width")));
}

}  // namespace
}  // namespace ordo
