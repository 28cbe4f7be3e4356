#ifndef ORDO_BENCH_MODEL_FOLDER_H_
#define ORDO_BENCH_MODEL_FOLDER_H_

// What the model-table benches (ordo-arena-bench, ordo-pool-bench) share:
// a folder of .onnx models, filtered by name, read whole, and their command
// line (the folder, then --name=value flags).

#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace ordo::bench {

// One --name=value flag; `set` parses the value (false: a bad value).
struct BenchFlag {
  std::string name;
  std::function<bool(absl::string_view value)> set;
};

// A positional argument is the model folder (into `dir`); every other
// argument must be --name=value of one of `flags`. False on an unknown flag
// or a value its `set` refuses.
bool ParseBenchArgs(int argc, char** argv, std::string& dir, const std::vector<BenchFlag>& flags);

// Flags that set a string, a double or an int64 (SimpleAtod / SimpleAtoi).
BenchFlag StringFlag(std::string name, std::string& target);
BenchFlag DoubleFlag(std::string name, double& target);
BenchFlag Int64Flag(std::string name, int64_t& target);

// The whole file; NOT_FOUND naming it when it cannot be read.
absl::StatusOr<std::string> ReadFile(const std::filesystem::path& path);

// The .onnx files of `dir` whose stem contains `only`, sorted by name;
// NOT_FOUND naming the folder when it cannot be listed.
absl::StatusOr<std::vector<std::filesystem::path>> OnnxModelsIn(const std::string& dir,
                                                                 absl::string_view only);

}  // namespace ordo::bench

#endif  // ORDO_BENCH_MODEL_FOLDER_H_
