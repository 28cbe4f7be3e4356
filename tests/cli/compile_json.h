#ifndef ORDO_TESTS_CLI_COMPILE_JSON_H_
#define ORDO_TESTS_CLI_COMPILE_JSON_H_

#include <string>

#include "google/protobuf/util/json_util.h"
#include "gtest/gtest.h"
#include "ordo/v1/compiler_service.pb.h"

namespace ordo {

// `ordo compile --json` (or schedule.json) read as what it is: the API's
// CompileResponse in protobuf's JSON mapping. Unknown fields fail the
// parse, so a test fails when the CLI's JSON and the proto drift apart.
inline v1::CompileResponse ParseCompileJson(const std::string& json) {
  v1::CompileResponse response;
  const auto status = google::protobuf::util::JsonStringToMessage(json, &response);
  EXPECT_TRUE(status.ok()) << status.ToString() << "\n" << json.substr(0, 2000);
  return response;
}

// `ordo estimate --json`: the API's EstimateResponse, read the same way.
inline v1::EstimateResponse ParseEstimateJson(const std::string& json) {
  v1::EstimateResponse response;
  const auto status = google::protobuf::util::JsonStringToMessage(json, &response);
  EXPECT_TRUE(status.ok()) << status.ToString() << "\n" << json.substr(0, 2000);
  return response;
}

}  // namespace ordo

#endif  // ORDO_TESTS_CLI_COMPILE_JSON_H_
