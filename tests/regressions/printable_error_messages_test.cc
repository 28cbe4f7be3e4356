// Regression: names with NUL, newlines, escape sequences or invalid UTF-8
// reached error messages raw, so `ordo compile` printed control bytes to the
// terminal and protobuf's JSON errors echoed invalid UTF-8 from the input.
// ImportModel now escapes every message (core/util/printable_text.h).
#include <string>

#include "core/compile/import_model.h"
#include "core/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::StatusIs;
using ::testing::HasSubstr;

bool Printable(absl::string_view text) {
  for (char c : text) {
    if (static_cast<unsigned char>(c) < 0x20 || static_cast<unsigned char>(c) >= 0x7f) {
      return false;
    }
  }
  return true;
}

TEST(PrintableErrorMessagesTest, OddBytesInANameAreEscaped) {
  // JSON may carry any code point; "\u0000", "\n" and ESC reach the name.
  const std::string json = R"({
    "tensors": [{"name": "x", "sizeBytes": 64}, {"name": "y", "sizeBytes": 64}],
    "ops": [{"name": "a", "type": "Add", "inputs": ["x", "gh\u0000st\n\u001b[2J"],
             "outputs": ["y"]}],
    "inputs": ["x"], "outputs": ["y"]})";
  absl::Status status = ImportModel(json, ModelFormat::kGraphJson).status();
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kInvalidArgument,
                               HasSubstr("reads tensor \"gh\\x00st\\n\\x1b[2J\"")));
  EXPECT_TRUE(Printable(status.message())) << status.message();
}

TEST(PrintableErrorMessagesTest, ProtobufJsonErrorsAreEscaped) {
  // protobuf's JSON parser quotes the input around an invalid UTF-8 byte.
  const std::string json = "{\"name\": \"bad\xff\xfe\nname\", \"ops\": []}";
  absl::Status status = ImportModel(json, ModelFormat::kGraphJson).status();
  EXPECT_THAT(status, StatusIs(absl::StatusCode::kInvalidArgument,
                               HasSubstr("not a valid ordo.v1.Graph JSON document")));
  EXPECT_TRUE(Printable(status.message())) << status.message();
}

}  // namespace
}  // namespace ordo
