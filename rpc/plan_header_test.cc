// PlanHeader: the header stays valid C for any pool and model names, and
// stops a build whenever the compile says the plan does not fit. (The CLI
// test builds a real header with cc; the service test compares the served
// header with the CLI's.)

#include "rpc/plan_header.h"

#include <string>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo::rpc {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

// A compile of one 64-byte tensor "t" in the first of `pools`.
v1::CompileResponse WithPools(const std::vector<std::string>& pools) {
  v1::CompileResponse response;
  response.set_model_name("m");
  response.set_peak_bytes(64);
  response.add_schedule("op");
  response.mutable_arena()->set_planner("best");
  response.mutable_arena()->set_alignment_bytes(64);
  response.mutable_arena()->set_arena_bytes(64);
  v1::TensorPlacement& tensor = *response.mutable_arena()->add_tensors();
  tensor.set_tensor("t");
  tensor.set_size_bytes(64);
  tensor.set_pool(pools[0]);
  response.mutable_placement()->set_fits(true);
  for (const std::string& name : pools) {
    v1::PoolUsageReport& pool = *response.mutable_placement()->add_pools();
    pool.set_name(name);
    pool.set_used_bytes(&name == &pools[0] ? 64 : 0);
  }
  return response;
}

// Every macro the header #defines, each once.
void ExpectEachMacroOnce(const std::string& header) {
  absl::flat_hash_set<std::string> defined;
  for (absl::string_view line : absl::StrSplit(header, '\n')) {
    if (!absl::ConsumePrefix(&line, "#define ")) continue;
    const std::string macro(line.substr(0, line.find(' ')));
    EXPECT_TRUE(defined.insert(macro).second) << macro << " defined twice in\n" << header;
  }
}

TEST(PlanHeaderTest, APoolNamedCountKeepsThePoolCount) {
  const std::string header = PlanHeader(WithPools({"count", "other"}), "");
  EXPECT_THAT(header, HasSubstr("#define ORDO_POOL_COUNT 2\n"));
  ExpectEachMacroOnce(header);
}

TEST(PlanHeaderTest, AnIndexedMacroMeetsNoOtherPools) {
  // "b" and "B" both make ORDO_POOL_B; the third pool's ORDO_POOL_B_2 is
  // the first's name.
  ExpectEachMacroOnce(PlanHeader(WithPools({"b_2", "b", "B"}), ""));
  ExpectEachMacroOnce(PlanHeader(WithPools({"x", "X", "x_1", "x-1"}), ""));
}

// gcc and clang warn of "/*" within a comment (-Wcomment, in -Wall).
TEST(PlanHeaderTest, NoNameOpensACommentInAComment) {
  v1::CompileResponse response = WithPools({"p/*q*/", "r"});
  response.set_model_name("a/*b");
  const std::string header = PlanHeader(response, "dir/*/model.onnx");
  for (absl::string_view line : absl::StrSplit(header, '\n')) {
    if (!absl::ConsumePrefix(&line, "/*")) continue;
    EXPECT_THAT(line, Not(HasSubstr("/*"))) << line;
  }
  EXPECT_THAT(header, HasSubstr("{\"t\", ORDO_POOL_P__Q__, 0u, 64u}"));
}

// CompileResponse.fits also holds the peak against the memory limit, which
// a placement that fits its pools can exceed.
TEST(PlanHeaderTest, StopsTheBuildWhenTheCompileSaysItDoesNotFit) {
  v1::CompileResponse response = WithPools({"fast", "slow"});
  response.set_fits(false);
  response.mutable_device()->set_memory_capacity_bytes(32);
  const std::string header = PlanHeader(response, "");
  EXPECT_THAT(header, HasSubstr("#define ORDO_PLAN_FITS 0\n"));
  EXPECT_THAT(header, HasSubstr("#ifndef ORDO_PLAN_ALLOW_UNFIT\n#error \"ordo: this plan does not "
                                "fit the device: the peak takes 64 bytes of the 32"));
}

// Arena planner "none": the peak can be over the limit with an arena of 0
// bytes, and there are no offsets to use.
TEST(PlanHeaderTest, StopsTheBuildWithoutAnArena) {
  v1::CompileResponse response;
  response.set_model_name("m");
  response.set_peak_bytes(64);
  response.add_schedule("op");
  response.set_fits(false);
  response.mutable_device()->set_memory_capacity_bytes(32);
  std::string header = PlanHeader(response, "");
  EXPECT_THAT(header, HasSubstr("#define ORDO_PLAN_FITS 0\n"));
  response.clear_fits();
  response.mutable_device()->clear_memory_capacity_bytes();
  header = PlanHeader(response, "");
  EXPECT_THAT(header, HasSubstr("\n#error \"ordo: the compile planned no arena"));
  EXPECT_THAT(header, Not(HasSubstr("ORDO_PLAN_ALLOW_UNFIT\n#error \"ordo: the compile planned")));
}

// C89 compilers may refuse a string literal over 509 characters: a longer
// tensor or op name is cut to 500 bytes and marked.
TEST(PlanHeaderTest, LongNamesAreCutForC89) {
  v1::CompileResponse response = WithPools({"p"});
  const std::string long_name(5000, 'n');
  response.mutable_arena()->mutable_tensors(0)->set_tensor(long_name);
  response.set_schedule(0, long_name);
  const std::string header = PlanHeader(response, "");
  const std::string cut = absl::StrCat("\"", std::string(492, 'n'), "...(cut)\"");
  EXPECT_THAT(header, HasSubstr(absl::StrCat("{", cut, ", ORDO_POOL_P, 0u, 64u}")));
  EXPECT_THAT(header, HasSubstr(absl::StrCat("    ", cut, ",\n")));
  EXPECT_THAT(header, Not(HasSubstr(std::string(501, 'n'))));
}

// What the table leaves out is said where a firmware engineer reads it: a
// pool nothing is placed in (a zero-length buffer is no C), the model's
// inputs and outputs under io_outside_arena, and that a rewritten model's
// ops are not the file's.
TEST(PlanHeaderTest, SaysWhatTheTableLeavesOut) {
  v1::CompileResponse response = WithPools({"fast", "slow"});
  std::string header = PlanHeader(response, "");
  EXPECT_THAT(header, HasSubstr("/* pool \"slow\"; nothing placed here */"));
  EXPECT_THAT(header, HasSubstr("none for a pool of 0 bytes"));
  EXPECT_THAT(header, Not(HasSubstr("io_outside_arena")));
  EXPECT_THAT(header, Not(HasSubstr("rewritten model")));
  response.set_io_outside_arena(true);
  response.add_rewrites()->set_kind("fusion");
  header = PlanHeader(response, "");
  EXPECT_THAT(header, HasSubstr("not in ordo_tensors[]: they live in\n * buffers of their own"));
  EXPECT_THAT(header, HasSubstr("The ops and tensors are the rewritten model's"));
}

}  // namespace
}  // namespace ordo::rpc
