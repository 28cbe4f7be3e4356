#include "rpc/flag_names.h"

#include "absl/flags/parse.h"

namespace ordo::rpc {

std::vector<std::string> DashedFlagsToUnderscores(int argc, char** argv) {
  std::vector<std::string> args(argv, argv + argc);
  for (size_t i = 1; i < args.size(); ++i) {
    std::string& arg = args[i];
    if (arg == "--") break;  // the rest is positional
    if (arg.size() < 3 || arg.compare(0, 2, "--") != 0) continue;
    const size_t end = std::min(arg.find('='), arg.size());
    for (size_t c = 2; c < end; ++c) {
      if (arg[c] == '-') arg[c] = '_';
    }
  }
  return args;
}

void ParseDashedCommandLine(int argc, char** argv) {
  std::vector<std::string> args = DashedFlagsToUnderscores(argc, argv);
  std::vector<char*> pointers;
  for (std::string& arg : args) pointers.push_back(arg.data());
  absl::ParseCommandLine(static_cast<int>(pointers.size()), pointers.data());
}

}  // namespace ordo::rpc
