#include "client/cli/args.h"

#include "core/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo::cli {
namespace {

using ::ordo::testing::StatusIs;
using ::testing::ElementsAre;
using ::testing::HasSubstr;

const ArgSpec kSpec{{"scheduler", "alignment"}, {"json"}};

TEST(ArgsTest, ParsesPositionalsValuesAndSwitches) {
  ORDO_ASSERT_OK_AND_ASSIGN(
      Args args, ParseArgs({"model.onnx", "--scheduler", "greedy", "--alignment=16", "--json"},
                           kSpec));
  EXPECT_THAT(args.positionals, ElementsAre("model.onnx"));
  EXPECT_EQ(args.Value("scheduler"), "greedy");
  EXPECT_EQ(args.Value("alignment"), "16");
  EXPECT_TRUE(args.Has("json"));
  EXPECT_FALSE(args.Value("missing").has_value());
}

TEST(ArgsTest, UnknownFlagAndMissingValueAreNamed) {
  EXPECT_THAT(ParseArgs({"--bogus"}, kSpec).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--bogus")));
  EXPECT_THAT(ParseArgs({"--scheduler"}, kSpec).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--scheduler needs")));
}

// An unknown flag's error says what the command takes instead.
TEST(ArgsTest, UnknownFlagSaysWhatTheCommandTakes) {
  EXPECT_THAT(ParseArgs({"--bogus"}, kSpec).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("unknown flag --bogus; this command takes --alignment, --json, "
                                 "--scheduler")));
  const ArgSpec dashed{{"time-limit"}, {}};
  EXPECT_THAT(ParseArgs({"--time_limit", "3s"}, dashed).status(),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("unknown flag --time_limit; did you mean --time-limit?")));
  EXPECT_THAT(ParseArgs({"--json"}, ArgSpec{}).status(),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("takes no flags")));
}

// A switch given a value (--json=true) is refused, not read as unknown.
TEST(ArgsTest, ASwitchTakesNoValue) {
  EXPECT_THAT(
      ParseArgs({"--json=true"}, kSpec).status(),
      StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("flag --json takes no value")));
}

TEST(ArgsTest, RepeatedFlagKeepsEveryValueInOrder) {
  ORDO_ASSERT_OK_AND_ASSIGN(
      Args args, ParseArgs({"--scheduler", "a", "--scheduler=b", "--alignment", "4"}, kSpec));
  EXPECT_THAT(args.Values("scheduler"), ElementsAre("a", "b"));
  EXPECT_EQ(args.Value("scheduler"), "b");
  EXPECT_THAT(args.Values("json"), ElementsAre());
}

}  // namespace
}  // namespace ordo::cli
