#include "core/parts/part_key.h"

#include "absl/strings/str_replace.h"
#include "core/memory/memory_model.h"
#include "core/testing/test_graph.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::TestGraph;

constexpr absl::string_view kCell = R"(
input x 64
op a Conv x -> y:128
op b Relu y -> r:128
op c Conv x -> z:64
op d Concat r z -> out:192
output out
)";

MemoryModel Model(absl::string_view text, MemoryOptions options = {}) {
  absl::StatusOr<MemoryModel> model = BuildMemoryModel(TestGraph(text), options);
  EXPECT_TRUE(model.ok()) << model.status();
  return *model;
}

TEST(PartKeyTest, InsensitiveToNames) {
  const std::string renamed = absl::StrReplaceAll(
      kCell, {{" x", " in0"}, {"y:", "t1:"}, {" y ", " t1 "}, {"op a", "op conv_1"},
              {"op d", "op cat"}, {" out", " result"}});
  ASSERT_NE(renamed, std::string(kCell));
  const PartKey a = CanonicalPartKey(Model(kCell), "best");
  const PartKey b = CanonicalPartKey(Model(renamed), "best");
  EXPECT_EQ(a.key, b.key);
  EXPECT_EQ(a.key.size(), 32u);
}

TEST(PartKeyTest, InsensitiveToUniformScaleAndReportsTheScale) {
  const std::string tripled = absl::StrReplaceAll(
      kCell, {{"x 64", "x 192"}, {":128", ":384"}, {":64", ":192"}, {":192\n", ":576\n"}});
  const PartKey a = CanonicalPartKey(Model(kCell), "best");
  const PartKey b = CanonicalPartKey(Model(tripled), "best");
  EXPECT_EQ(a.key, b.key);
  EXPECT_EQ(a.scale, 64);
  EXPECT_EQ(b.scale, 192);
}

TEST(PartKeyTest, SensitiveToSizesStructureOptionsAndScheduler) {
  const PartKey base = CanonicalPartKey(Model(kCell), "best");
  // One size changed (not uniformly).
  EXPECT_NE(base.key, CanonicalPartKey(Model(absl::StrReplaceAll(kCell, {{"z:64", "z:32"}})),
                                       "best").key);
  // One edge moved: d reads y instead of r.
  EXPECT_NE(base.key,
            CanonicalPartKey(Model(absl::StrReplaceAll(kCell, {{"Concat r z", "Concat y z"}})),
                             "best").key);
  // Options that change the problem.
  EXPECT_NE(base.key, CanonicalPartKey(Model(kCell, {.inplace = false}), "best").key);
  EXPECT_NE(base.key,
            CanonicalPartKey(Model(kCell, {.activation_element_bytes = 1}), "best").key);
  // Another algorithm's results are other entries.
  EXPECT_NE(base.key, CanonicalPartKey(Model(kCell), "dp").key);
}

// Keys become Redis keys ("<prefix><key>", server/cache): they must carry
// nothing a user wrote, whatever bytes the names or the scheduler string
// hold (glob characters, escapes, separators, invalid UTF-8).
TEST(PartKeyTest, KeyIsLowercaseHexWhateverBytesTheRequestHolds) {
  const std::string odd = absl::StrReplaceAll(
      kCell, {{" x", " \x1b[2J*?"}, {"y:", "\xff\xfe{}:"}, {" y ", " \xff\xfe{} "},
              {"op a", "op ordo\x01part\x7f"}, {" out", " \x03\x02[a-z]"}});
  ASSERT_NE(odd, std::string(kCell));
  const std::string scheduler("dp\n\0*\xff ordo:part:", 16);
  for (const PartKey& key : {CanonicalPartKey(Model(odd), "best"),
                             CanonicalPartKey(Model(odd), scheduler)}) {
    ASSERT_EQ(key.key.size(), 32u);
    for (char c : key.key) {
      EXPECT_TRUE((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f')) << key.key;
    }
  }
  // Names never reach the key at all.
  EXPECT_EQ(CanonicalPartKey(Model(odd), "best").key, CanonicalPartKey(Model(kCell), "best").key);
}

TEST(PartKeyTest, StableAcrossCalls) {
  // Keys are shared through Redis between processes: no per-process seed.
  EXPECT_EQ(CanonicalPartKey(Model(kCell), "best").key,
            CanonicalPartKey(Model(kCell), "best").key);
}

}  // namespace
}  // namespace ordo
