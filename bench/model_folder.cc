#include "bench/model_folder.h"

#include <algorithm>
#include <fstream>
#include <sstream>
#include <system_error>

#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/match.h"
#include "absl/strings/str_split.h"

namespace ordo::bench {

bool ParseBenchArgs(int argc, char** argv, std::string& dir, const std::vector<BenchFlag>& flags) {
  for (int i = 1; i < argc; ++i) {
    const std::vector<std::string> kv = absl::StrSplit(argv[i], absl::MaxSplits('=', 1));
    if (kv[0].rfind("--", 0) != 0) {
      dir = kv[0];
      continue;
    }
    const std::string value = kv.size() > 1 ? kv[1] : "";
    auto flag = std::find_if(flags.begin(), flags.end(),
                             [&](const BenchFlag& f) { return kv[0] == "--" + f.name; });
    if (flag == flags.end() || !flag->set(value)) return false;
  }
  return true;
}

BenchFlag StringFlag(std::string name, std::string& target) {
  return {std::move(name), [&target](absl::string_view value) {
            target = std::string(value);
            return true;
          }};
}

BenchFlag DoubleFlag(std::string name, double& target) {
  return {std::move(name),
          [&target](absl::string_view value) { return absl::SimpleAtod(value, &target); }};
}

BenchFlag Int64Flag(std::string name, int64_t& target) {
  return {std::move(name),
          [&target](absl::string_view value) { return absl::SimpleAtoi(value, &target); }};
}

absl::StatusOr<std::string> ReadFile(const std::filesystem::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path.string()));
  std::stringstream buffer;
  buffer << in.rdbuf();
  return buffer.str();
}

absl::StatusOr<std::vector<std::filesystem::path>> OnnxModelsIn(const std::string& dir,
                                                                 absl::string_view only) {
  std::vector<std::filesystem::path> files;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator(dir, error)) {
    if (entry.path().extension() != ".onnx") continue;
    if (!absl::StrContains(entry.path().stem().string(), only)) continue;
    files.push_back(entry.path());
  }
  if (error) return absl::NotFoundError(absl::StrCat("cannot list ", dir, ": ", error.message()));
  std::sort(files.begin(), files.end());
  return files;
}

}  // namespace ordo::bench
