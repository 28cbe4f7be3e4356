#include "client/cli/files.h"

#include <sys/wait.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "absl/strings/str_cat.h"
#include "sys/child_process.h"

namespace ordo::cli {

absl::StatusOr<std::string> ReadFile(const std::string& path, int64_t max_bytes) {
  std::error_code error;
  if (!std::filesystem::is_regular_file(path, error)) {
    return absl::NotFoundError(absl::StrCat("cannot read \"", path, "\": not a file"));
  }
  const auto size = std::filesystem::file_size(path, error);
  if (error) {
    return absl::NotFoundError(absl::StrCat("cannot read \"", path, "\": ", error.message()));
  }
  if (static_cast<int64_t>(size) > max_bytes) {
    return absl::ResourceExhaustedError(
        absl::StrCat("\"", path, "\" is ", size, " bytes; the limit is ", max_bytes));
  }
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot open \"", path, "\""));
  std::ostringstream contents;
  contents << in.rdbuf();
  return contents.str();
}

absl::Status WriteFile(const std::string& path, const std::string& contents) {
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out.write(contents.data(), static_cast<std::streamsize>(contents.size()));
  out.close();
  if (!out) return absl::InvalidArgumentError(absl::StrCat("cannot write \"", path, "\""));
  return absl::OkStatus();
}

std::optional<int> RunProgram(const std::vector<std::string>& argv) {
  ChildProcess::Options options;
  options.search_path = true;
  options.stdout_mode = ChildProcess::StdoutMode::kInherit;
  absl::StatusOr<std::unique_ptr<ChildProcess>> child = ChildProcess::Start(argv, options);
  if (!child.ok()) return std::nullopt;
  const int status = (*child)->Wait();
  if (!WIFEXITED(status)) return -1;
  // Found on PATH but exec failed (not a program after all).
  if (WEXITSTATUS(status) == 127) return std::nullopt;
  return WEXITSTATUS(status);
}

}  // namespace ordo::cli
