#include "core/util/wire_field_count.h"

#include <string>

#include "absl/strings/escaping.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

std::string Bytes(absl::string_view hex) { return absl::HexStringToBytes(hex); }

// Hand-encoded, one field per group: field 1 varint 150, field 3 "ab",
// field 3 "", field 5 fixed32, field 3 "x", field 2 fixed64.
std::string Message() {
  return Bytes(
      "089601"
      "1a026162"
      "1a00"
      "2d01020304"
      "1a0178"
      "110102030405060708");
}

TEST(WireFieldCountTest, CountsTopLevelOccurrences) {
  EXPECT_EQ(CountWireField(Message(), 3), 3);
  EXPECT_EQ(CountWireField(Message(), 4), 0);
  EXPECT_EQ(CountWireField("", 3), 0);
}

TEST(WireFieldCountTest, CountsInsideEveryOccurrenceOfTheOuterField) {
  // field 7 { field 1 "a", field 1 "b" }, field 7 { field 1 "c" }, field 1 "d".
  const std::string model = Bytes(
      "3a06"
      "0a0161"
      "0a0162"
      "3a03"
      "0a0163"
      "0a0164");
  EXPECT_EQ(CountNestedWireField(model, 7, 1), 3);
}

// Groups are read as protobuf reads them: skipped whole, inner fields
// uncounted.
TEST(WireFieldCountTest, GroupsAreSkippedWhole) {
  // group 1 { field 3 "a" }, field 3 "b".
  EXPECT_EQ(CountWireField(Bytes("0b1a01610c1a0162"), 3), 1);
  EXPECT_EQ(CountWireField(Bytes("0b1a0161141a0162"), 3), std::nullopt);  // ends group 2
}

TEST(WireFieldCountTest, BytesThatDoNotScanGiveNullopt) {
  EXPECT_EQ(CountWireField(Bytes("1a056162"), 3), std::nullopt);  // length past the end
  EXPECT_EQ(CountWireField(Bytes("08ff"), 3), std::nullopt);      // unterminated varint
  EXPECT_EQ(CountWireField(Bytes("0b"), 3), std::nullopt);        // group never ended
  EXPECT_EQ(CountWireField(Bytes("1101"), 3), std::nullopt);      // short fixed64
  EXPECT_EQ(CountNestedWireField(Bytes("3a020a05"), 7, 1), std::nullopt);
  EXPECT_EQ(CountWireField(std::string(11, '\xff'), 3), std::nullopt);  // varint > 64 bits
}

}  // namespace
}  // namespace ordo
