// The services' flag checks (rpc/flag_names.h, rpc/service_main.h): what
// absl's parser would exit 1 on, and the ranges it would take silently.
#include <string>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/time/time.h"
#include "core/testing/status_matchers.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"
#include "rpc/flag_names.h"
#include "rpc/service_main.h"

ABSL_FLAG(int, test_port, 0, "a port");
ABSL_FLAG(bool, test_switch, false, "a switch");
ABSL_FLAG(absl::Duration, test_deadline, absl::Seconds(1), "a duration");

namespace ordo::rpc {
namespace {

using ::ordo::testing::StatusIs;
using ::testing::HasSubstr;

absl::Status Check(std::vector<std::string> args) {
  args.insert(args.begin(), "program");
  return CheckCommandLine(args);
}

TEST(CheckCommandLineTest, TakesWhatAbslWouldParse) {
  ORDO_EXPECT_OK(Check({"--test_port=8", "--test_port", "9", "-test_port=7", "--test_switch",
                        "--notest_switch", "--test_switch=false", "--test_deadline=250ms",
                        "positional", "--", "--anything-after"}));
  ORDO_EXPECT_OK(Check({"--help"}));  // absl's own
}

TEST(CheckCommandLineTest, RefusesWhatAbslWouldExitOneOnNamingTheFlagDashed) {
  EXPECT_THAT(Check({"--bogus_flag"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("unknown flag --bogus-flag")));
  EXPECT_THAT(Check({"--test_port"}), StatusIs(absl::StatusCode::kInvalidArgument,
                                               HasSubstr("flag --test-port needs a value")));
  EXPECT_THAT(Check({"--test_port=eight"}),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--test-port: not a valid value: \"eight\"")));
  EXPECT_THAT(Check({"--test_switch=maybe"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--test-switch")));
  EXPECT_THAT(Check({"--test_deadline", "soon"}),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--test-deadline")));
  EXPECT_THAT(Check({"--notest_port"}), StatusIs(absl::StatusCode::kInvalidArgument,
                                                 HasSubstr("unknown flag --notest-port")));
}

TEST(ServiceFlagRangesTest, ListenPortsAndRanges) {
  ORDO_EXPECT_OK(CheckListenFlag("--listen", "127.0.0.1:0"));
  ORDO_EXPECT_OK(CheckListenFlag("--listen", "[::]:65535"));
  ORDO_EXPECT_OK(CheckListenFlag("--listen", "unix:/tmp/ordo.sock"));
  for (const char* bad : {"127.0.0.1:99999", "127.0.0.1:-1", "localhost", "host:http", ""}) {
    EXPECT_THAT(CheckListenFlag("--listen", bad),
                StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--listen: \"")))
        << bad;
  }
  ORDO_EXPECT_OK(CheckFlagRange("--cache-mb", 0, 0, 10));
  EXPECT_THAT(CheckFlagRange("--cache-mb", -1, 0, 10),
              StatusIs(absl::StatusCode::kInvalidArgument,
                       HasSubstr("--cache-mb: must be from 0 to 10, got -1")));
  EXPECT_THAT(CheckFlagPositive("--max-deadline", absl::ZeroDuration()),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--max-deadline")));
  ORDO_EXPECT_OK(CheckFlagPositive("--max-deadline", absl::Seconds(1)));
  ORDO_EXPECT_OK(CheckSharedServiceFlags("127.0.0.1:0", 0, 1024));
  EXPECT_THAT(CheckSharedServiceFlags("127.0.0.1:0", 0, 0),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--max-state-mb")));
  EXPECT_THAT(CheckSharedServiceFlags("127.0.0.1:0", 65536, 1024),
              StatusIs(absl::StatusCode::kInvalidArgument, HasSubstr("--metrics-port")));
}

}  // namespace
}  // namespace ordo::rpc
