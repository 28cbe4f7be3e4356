#ifndef ORDO_TESTS_CLI_RUN_ORDO_H_
#define ORDO_TESTS_CLI_RUN_ORDO_H_

// Runs the real `ordo` binary (ORDO_BINARY, set per test target by CMake)
// for the CLI and service tests: one definition of how they start it and
// read it.

#include <sys/wait.h>

#include <array>
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"

namespace ordo::testing {

struct ProcessResult {
  int exit_code;
  std::string out;  // stdout and stderr together
};

// `with_stderr` false leaves stderr to the test's log (for output that is
// parsed, such as --json).
inline ProcessResult RunOrdo(const std::string& args, bool with_stderr = true) {
  const std::string command = absl::StrCat(ORDO_BINARY, " ", args, with_stderr ? " 2>&1" : "");
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {-1, ""};
  std::string out;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

}  // namespace ordo::testing

#endif  // ORDO_TESTS_CLI_RUN_ORDO_H_
