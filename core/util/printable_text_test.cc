#include "core/util/printable_text.h"

#include <string>

#include "gtest/gtest.h"

namespace ordo {
namespace {

using namespace std::string_literals;

TEST(PrintableTextTest, PrintableTextIsUnchanged) {
  EXPECT_EQ(PrintableText("op \"conv3\" (Conv): ok ~"), "op \"conv3\" (Conv): ok ~");
  // Valid UTF-8 names stay readable: é, 层, 😀.
  EXPECT_EQ(PrintableText("caf\xc3\xa9 \xe5\xb1\x82 \xf0\x9f\x98\x80"),
            "caf\xc3\xa9 \xe5\xb1\x82 \xf0\x9f\x98\x80");
}

TEST(PrintableTextTest, ControlBytesAreEscaped) {
  EXPECT_EQ(PrintableText("a\0b\nc\rd\te\x1b[31m\x7f"s), "a\\x00b\\nc\\rd\\te\\x1b[31m\\x7f");
}

TEST(PrintableTextTest, InvalidUtf8IsEscapedBytewise) {
  EXPECT_EQ(PrintableText("\xff\xfe"), "\\xff\\xfe");
  EXPECT_EQ(PrintableText("\xc3"), "\\xc3");                             // truncated sequence
  EXPECT_EQ(PrintableText("\xc0\xaf"), "\\xc0\\xaf");                    // overlong '/'
  EXPECT_EQ(PrintableText("\xed\xa0\x80"), "\\xed\\xa0\\x80");           // surrogate
  EXPECT_EQ(PrintableText("\xf4\x90\x80\x80"), "\\xf4\\x90\\x80\\x80");  // > U+10FFFF
  EXPECT_EQ(PrintableText("\xc2\x85"), "\\xc2\\x85");                    // C1 control NEL
}

TEST(PrintableTextTest, LongTextIsCut) {
  const std::string cut = PrintableText(std::string(10000, 'a'), 100);
  EXPECT_EQ(cut, std::string(100, 'a') + "...");
  EXPECT_EQ(PrintableText(std::string(100, 'a'), 100), std::string(100, 'a'));
}

TEST(PrintableTextTest, StatusKeepsItsCode) {
  const absl::Status status = WithPrintableMessage(absl::InvalidArgumentError("tensor \"a\nb\""));
  EXPECT_EQ(status.code(), absl::StatusCode::kInvalidArgument);
  EXPECT_EQ(status.message(), "tensor \"a\\nb\"");
  EXPECT_TRUE(WithPrintableMessage(absl::OkStatus()).ok());
}

}  // namespace
}  // namespace ordo
