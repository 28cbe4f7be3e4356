#include "rpc/flag_names.h"

#include <algorithm>
#include <iterator>
#include <optional>

#include "absl/flags/commandlineflag.h"
#include "absl/flags/parse.h"
#include "absl/flags/reflection.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_replace.h"

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

namespace {

// absl's built-in flags, parsed by absl itself.
bool IsAbslOwnFlag(absl::string_view name) {
  static constexpr absl::string_view kOwn[] = {
      "help",   "helpfull",  "helpshort", "helppackage", "version",    "only_check_args",
      "helpon", "helpmatch", "flagfile",  "fromenv",     "tryfromenv", "undefok"};
  return std::find(std::begin(kOwn), std::end(kOwn), name) != std::end(kOwn);
}

}  // namespace

absl::Status CheckCommandLine(const std::vector<std::string>& args) {
  for (size_t i = 1; i < args.size(); ++i) {
    absl::string_view arg = args[i];
    if (arg == "--") break;
    if (arg.size() < 2 || arg[0] != '-') continue;  // positional
    arg.remove_prefix(arg[1] == '-' ? 2 : 1);
    const size_t equals = arg.find('=');
    const absl::string_view name = arg.substr(0, equals);
    std::optional<absl::string_view> value;
    if (equals != absl::string_view::npos) value = arg.substr(equals + 1);
    // Shown dashed, as the docs spell them.
    const std::string shown = absl::StrReplaceAll(name, {{"_", "-"}});
    if (IsAbslOwnFlag(name)) continue;
    absl::CommandLineFlag* flag = absl::FindCommandLineFlag(name);
    if (flag == nullptr && !value && absl::StartsWith(name, "no")) {
      absl::CommandLineFlag* negated = absl::FindCommandLineFlag(name.substr(2));
      if (negated != nullptr && negated->IsOfType<bool>()) continue;  // --nochannelz
    }
    if (flag == nullptr) {
      return absl::InvalidArgumentError(
          absl::StrCat("unknown flag --", shown, " (--help lists them)"));
    }
    if (flag->IsOfType<bool>() && !value) continue;
    if (!value) {
      if (i + 1 >= args.size()) {
        return absl::InvalidArgumentError(absl::StrCat("flag --", shown, " needs a value"));
      }
      value = args[++i];
    }
    // Parsed into the flag, as absl's parser is about to do too.
    std::string error;
    if (!flag->ParseFrom(*value, &error)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--", shown, ": not a valid value: \"", *value, "\" (", error, ")"));
    }
  }
  return absl::OkStatus();
}

absl::Status ParseDashedCommandLine(int argc, char** argv) {
  std::vector<std::string> args = DashedFlagsToUnderscores(argc, argv);
  if (absl::Status status = CheckCommandLine(args); !status.ok()) return status;
  std::vector<char*> pointers;
  for (std::string& arg : args) pointers.push_back(arg.data());
  absl::ParseCommandLine(static_cast<int>(pointers.size()), pointers.data());
  return absl::OkStatus();
}

}  // namespace ordo::rpc
