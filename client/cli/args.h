#ifndef ORDO_CLIENT_CLI_ARGS_H_
#define ORDO_CLIENT_CLI_ARGS_H_

#include <map>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "absl/status/statusor.h"

namespace ordo::cli {

// Parsed command line of one subcommand: positionals and --flags.
struct Args {
  std::vector<std::string> positionals;
  std::map<std::string, std::string> values;  // --name VALUE / --name=VALUE (the last)
  std::map<std::string, std::vector<std::string>> all_values;  // every one, in order
  std::set<std::string> switches;             // --name

  std::optional<std::string> Value(const std::string& name) const;
  // Every value of a repeatable flag (--input-shape a=.. --input-shape b=..).
  std::vector<std::string> Values(const std::string& name) const;
  bool Has(const std::string& name) const { return switches.count(name) > 0; }
};

// What a subcommand accepts: flags that take a value and bare switches.
struct ArgSpec {
  std::set<std::string> value_flags;
  std::set<std::string> switch_flags;
};

// INVALID_ARGUMENT naming the flag on an unknown flag or a missing value.
absl::StatusOr<Args> ParseArgs(const std::vector<std::string>& argv, const ArgSpec& spec);

}  // namespace ordo::cli

#endif  // ORDO_CLIENT_CLI_ARGS_H_
