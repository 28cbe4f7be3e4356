#include "core/report/memory_svg.h"

#include <cstdlib>
#include <fstream>

#include "absl/strings/match.h"
#include "absl/strings/str_split.h"
#include "core/arena/arena_planner_registry.h"
#include "core/testing/status_matchers.h"
#include "core/testing/test_graph.h"
#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo {
namespace {

using ::ordo::testing::TestGraph;
using ::testing::EndsWith;
using ::testing::HasSubstr;
using ::testing::Not;
using ::testing::StartsWith;

class FixedClock final : public Clock {
 public:
  absl::Time Now() const override { return absl::UnixEpoch(); }
};

int Count(absl::string_view text, absl::string_view needle) {
  int count = 0;
  for (size_t at = text.find(needle); at != absl::string_view::npos;
       at = text.find(needle, at + 1)) {
    ++count;
  }
  return count;
}

class MemorySvgTest : public ::testing::Test {
 protected:
  void SetUp() override {
    // Two branches; running b's branch first halves nothing but moves the peak.
    graph_ = TestGraph(R"(
      input x 4096
      op a Conv x -> big:65536
      op b Conv x -> side<&>:1024
      op c Relu big -> r:65536
      op d Add r side<&> -> y:2048
      output y
    )");
    model_ = *BuildMemoryModel(graph_, {});
    model_order_ = *Simulate(model_, {0, 1, 2, 3});
    schedule_ = *Simulate(model_, {1, 0, 2, 3});
    ArenaOptions options;
    plan_ = *PlanArena(model_, schedule_, options, FixedClock());
  }

  std::string Svg(int64_t limit) const {
    MemorySvgOptions options;
    options.memory_limit_bytes = limit;
    return MemoryProfileSvg(graph_, model_order_, schedule_, plan_, options);
  }

  Graph graph_;
  MemoryModel model_;
  SimulationResult model_order_, schedule_;
  ArenaPlan plan_;
};

TEST_F(MemorySvgTest, DrawsBothFootprintsTheArenaAndALegend) {
  const std::string svg = Svg(0);
  EXPECT_THAT(svg, StartsWith("<svg xmlns=\"http://www.w3.org/2000/svg\""));
  EXPECT_THAT(svg, EndsWith("</svg>\n"));
  EXPECT_EQ(Count(svg, "<polyline class=\"footprint\""), 2);
  EXPECT_THAT(svg, HasSubstr("<title>model order</title>"));
  EXPECT_THAT(svg, HasSubstr("<title>ordo schedule</title>"));
  EXPECT_THAT(svg, HasSubstr("test: memory profile"));
  // Peaks are labelled: 4 KiB + 64 KiB + 1 KiB at the first step of ordo's
  // order vs model order's 4 + 64 + 1.
  EXPECT_THAT(svg, HasSubstr("peak "));
  EXPECT_EQ(Count(svg, "<rect class=\"tensor\""), static_cast<int>(plan_.tensors.size()));
  for (absl::string_view type : {"graph input", "Conv", "Relu", "Add"}) {
    EXPECT_THAT(svg, HasSubstr(absl::StrCat(">", type, "</text>"))) << type;
  }
  EXPECT_THAT(svg, HasSubstr("lower bound"));
  EXPECT_THAT(svg, Not(HasSubstr("limit ")));
}

TEST_F(MemorySvgTest, DrawsTheMemoryLimitAndEscapesNames) {
  const std::string svg = Svg(80 * 1024);
  EXPECT_THAT(svg, HasSubstr("limit 80 KiB"));
  EXPECT_THAT(svg, HasSubstr("side&lt;&amp;&gt;"));
  EXPECT_THAT(svg, Not(HasSubstr("side<&>")));
}

// A model's names may hold control bytes and invalid UTF-8, which no XML
// document may: they are drawn as escapes (rsvg-convert refused the
// picture, and ordo compile --out-dir exited 1).
TEST(MemorySvgNamesTest, ControlBytesAndInvalidUtf8AreEscaped) {
  GraphBuilder builder("g\x01");
  builder.AddTensorBytes("in\x01put", 64, TensorKind::kInput);
  builder.AddTensorBytes(std::string("nul\0\xff", 5), 64);
  builder.AddOp("op", "Relu", {"in\x01put"}, {std::string("nul\0\xff", 5)});
  builder.AddGraphInput("in\x01put");
  builder.AddGraphOutput(std::string("nul\0\xff", 5));
  ORDO_ASSERT_OK_AND_ASSIGN(Graph graph, std::move(builder).Build());
  ORDO_ASSERT_OK_AND_ASSIGN(MemoryModel model, BuildMemoryModel(graph, {}));
  ORDO_ASSERT_OK_AND_ASSIGN(SimulationResult simulation, Simulate(model, {0}));
  ORDO_ASSERT_OK_AND_ASSIGN(ArenaPlan plan, PlanArena(model, simulation, {}, FixedClock()));
  MemorySvgOptions options;
  options.title = "title\x02";
  const std::string svg = MemoryProfileSvg(graph, simulation, simulation, plan, options);
  for (const char c : svg) {
    const auto byte = static_cast<unsigned char>(c);
    EXPECT_TRUE(byte == '\n' || (byte >= 0x20 && byte < 0x7f)) << static_cast<int>(byte);
  }
  EXPECT_THAT(svg, HasSubstr("in\\x01put"));
  EXPECT_THAT(svg, HasSubstr("nul\\x00\\xff"));
  EXPECT_THAT(svg, HasSubstr("title\\x02"));
}

TEST_F(MemorySvgTest, IsWellFormedXml) {
  if (std::system("command -v xmllint > /dev/null 2>&1") != 0) {
    GTEST_SKIP() << "xmllint not installed";
  }
  const std::string path = ::testing::TempDir() + "/memory_profile.svg";
  std::ofstream(path) << Svg(80 * 1024);
  EXPECT_EQ(std::system(("xmllint --noout " + path).c_str()), 0);
}

TEST(FormatBytesTest, UsesBinaryUnitsWithoutTrailingZeros) {
  EXPECT_EQ(FormatBytes(0), "0 B");
  EXPECT_EQ(FormatBytes(512), "512 B");
  EXPECT_EQ(FormatBytes(1024), "1 KiB");
  EXPECT_EQ(FormatBytes(1536), "1.5 KiB");
  EXPECT_EQ(FormatBytes(6417408), "6.12 MiB");
  EXPECT_EQ(FormatBytes(int64_t{3} << 30), "3 GiB");
}

}  // namespace
}  // namespace ordo
