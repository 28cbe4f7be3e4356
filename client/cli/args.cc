#include "client/cli/args.h"

#include <set>

#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"

namespace ordo::cli {

std::optional<std::string> Args::Value(const std::string& name) const {
  auto it = values.find(name);
  if (it == values.end()) return std::nullopt;
  return it->second;
}

std::vector<std::string> Args::Values(const std::string& name) const {
  auto it = all_values.find(name);
  return it == all_values.end() ? std::vector<std::string>() : it->second;
}

namespace {

// Names what the command does take: the same flag with dashes for
// underscores (gRPC's and gflags' habit), else every flag it knows.
absl::Status UnknownFlag(const std::string& name, const ArgSpec& spec) {
  const std::string message = absl::StrCat("unknown flag --", name);
  const std::string dashed = absl::StrReplaceAll(name, {{"_", "-"}});
  if (dashed != name &&
      (spec.value_flags.count(dashed) > 0 || spec.switch_flags.count(dashed) > 0)) {
    return absl::InvalidArgumentError(absl::StrCat(message, "; did you mean --", dashed, "?"));
  }
  std::set<std::string> known(spec.value_flags.begin(), spec.value_flags.end());
  known.insert(spec.switch_flags.begin(), spec.switch_flags.end());
  if (known.empty())
    return absl::InvalidArgumentError(absl::StrCat(message, "; this command takes no flags"));
  return absl::InvalidArgumentError(
      absl::StrCat(message, "; this command takes ",
                   absl::StrJoin(known, ", ", [](std::string* out, const std::string& flag) {
                     absl::StrAppend(out, "--", flag);
                   })));
}

}  // namespace

absl::StatusOr<Args> ParseArgs(const std::vector<std::string>& argv, const ArgSpec& spec) {
  Args args;
  for (size_t i = 0; i < argv.size(); ++i) {
    const std::string& arg = argv[i];
    if (arg.size() < 2 || arg.compare(0, 2, "--") != 0) {
      args.positionals.push_back(arg);
      continue;
    }
    std::string name = arg.substr(2);
    std::optional<std::string> value;
    if (size_t eq = name.find('='); eq != std::string::npos) {
      value = name.substr(eq + 1);
      name = name.substr(0, eq);
    }
    if (spec.switch_flags.count(name) > 0) {
      if (value) {
        return absl::InvalidArgumentError(absl::StrCat("flag --", name, " takes no value"));
      }
      args.switches.insert(name);
    } else if (spec.value_flags.count(name) > 0) {
      if (!value) {
        if (i + 1 >= argv.size()) {
          return absl::InvalidArgumentError(absl::StrCat("flag --", name, " needs a value"));
        }
        value = argv[++i];
      }
      args.values[name] = *value;
      args.all_values[name].push_back(*value);
    } else {
      return UnknownFlag(name, spec);
    }
  }
  return args;
}

}  // namespace ordo::cli
