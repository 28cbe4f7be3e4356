// The `ordo` command: a thin main over client/cli.
#include <iostream>
#include <string>
#include <vector>

#include "client/cli/commands.h"

int main(int argc, char** argv) {
  std::vector<std::string> args(argv + 1, argv + argc);
  return ordo::cli::RunOrdo(args, std::cout, std::cerr);
}
