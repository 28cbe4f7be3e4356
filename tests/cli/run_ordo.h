#ifndef ORDO_TESTS_CLI_RUN_ORDO_H_
#define ORDO_TESTS_CLI_RUN_ORDO_H_

// Runs the real `ordo` binary (ordo::testing::OrdoBinary())
// for the CLI and service tests: one definition of how they start it and
// read it.

#include <sys/wait.h>

#include <array>
#include <chrono>
#include <cstdio>
#include <string>

#include "absl/strings/str_cat.h"
#include "core/testing/test_paths.h"

namespace ordo::testing {

struct ProcessResult {
  int exit_code;    // 124 when it ran out of time, not 0-2 when it crashed
  std::string out;  // stdout and stderr together
  double seconds = 0;  // wall clock
};

// `with_stderr` false leaves stderr to the test's log (for output that is
// parsed, such as --json). `timeout` (absolute: a test may empty PATH) ends
// a hung run after 300 s, well before ctest's own limit, as a failure that
// names the command.
inline ProcessResult RunOrdo(const std::string& args, bool with_stderr = true) {
  const auto start = std::chrono::steady_clock::now();
  const std::string command = absl::StrCat("/usr/bin/timeout 300 ", ordo::testing::OrdoBinary(),
                                           " ", args, with_stderr ? " 2>&1" : "");
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return {-1, ""};
  std::string out;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
  const int status = pclose(pipe);
  const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out, elapsed.count()};
}

}  // namespace ordo::testing

#endif  // ORDO_TESTS_CLI_RUN_ORDO_H_
