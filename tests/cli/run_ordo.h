#ifndef ORDO_TESTS_CLI_RUN_ORDO_H_
#define ORDO_TESTS_CLI_RUN_ORDO_H_

// Runs the real `ordo` binary (ORDO_BINARY, set per test target by CMake)
// for the CLI tests: one definition of how they start it and read it.

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

inline ProcessResult RunOrdo(const std::string& args) {
  const std::string command = absl::StrCat(ORDO_BINARY, " ", args, " 2>&1");
  FILE* pipe = popen(command.c_str(), "r");
  std::string out;
  std::array<char, 4096> buffer;
  size_t n;
  while ((n = fread(buffer.data(), 1, buffer.size(), pipe)) > 0) out.append(buffer.data(), n);
  const int status = pclose(pipe);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : -1, out};
}

}  // namespace ordo::testing

#endif  // ORDO_TESTS_CLI_RUN_ORDO_H_
