// core/ is the product library: it must not know about RPC, caches or
// metrics (STYLE.md "The shape"). This test fails the build's test run when a
// file in core/ includes one of them.
#include <filesystem>
#include <fstream>
#include <string>

#include "core/testing/test_paths.h"
#include "gtest/gtest.h"

namespace {

TEST(CoreLayeringTest, CoreIncludesNoRpcCacheOrMetricsHeaders) {
  const std::filesystem::path core = std::filesystem::path(ordo::testing::SourceDir()) / "core";
  ASSERT_TRUE(std::filesystem::is_directory(core));
  int files = 0;
  for (const auto& entry : std::filesystem::recursive_directory_iterator(core)) {
    const std::string ext = entry.path().extension().string();
    if (ext != ".h" && ext != ".cc") continue;
    ++files;
    std::ifstream in(entry.path());
    std::string line;
    int number = 0;
    while (std::getline(in, line)) {
      ++number;
      if (line.rfind("#include", 0) != 0) continue;
      for (const char* forbidden : {"grpcpp/", "grpc/", "hiredis/", "prometheus/",
                                    "sys/socket.h", "server/", "workers/", "client/"}) {
        EXPECT_EQ(line.find(forbidden), std::string::npos)
            << entry.path() << ":" << number << " includes " << forbidden;
      }
    }
  }
  EXPECT_GT(files, 10);
}

}  // namespace
