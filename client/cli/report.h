#ifndef ORDO_CLIENT_CLI_REPORT_H_
#define ORDO_CLIENT_CLI_REPORT_H_

#include <string>

#include "core/compile/compile.h"
#include "core/compile/rewrite_compile.h"
#include "core/graph/graph.h"
#include "nlohmann/json.hpp"
#include "ordo/v1/compiler_service.pb.h"

namespace ordo::cli {

// `ordo compile --json` and --out-dir's schedule.json: the API's
// CompileResponse in protobuf's JSON mapping (the proto's field names,
// every field printed, int64 as strings, enums by name), with `model_path`
// set and without the model files (they go to their own paths). One schema
// for CLI and API: docs/cli.md.
std::string CompileResponseJson(v1::CompileResponse response, const std::string& model_path);

// `arena.json` of --out-dir: the response's `arena` in the same mapping.
std::string ArenaJson(const v1::CompileResponse& response);

// The short aligned summary `ordo compile` prints.
std::string CompileReportText(const std::string& model_path, const Graph& graph,
                              const CompileOptions& options, const CompileResult& result,
                              const RewriteSummary* rewrite = nullptr);

// `ordo devices --json`: {"device_presets": [...]}, GetInfoResponse's field
// of that name (rpc's DevicePresetsToProto) in the same mapping.
std::string DevicePresetsJson();

// `ordo estimate --json`: the API's EstimateResponse (rpc's
// EstimateResultToProto) in protobuf's JSON mapping, with `model_path`.
std::string EstimateJson(const std::string& model_path, const EstimateResult& estimate);
// `ordo estimate`: the figures that need no search, and whether the model
// fits the memory limit ("yes", "no" or "unknown"; no row without a limit).
std::string EstimateText(const std::string& model_path, const EstimateResult& estimate);

// `ordo inspect`: what the graph is made of.
nlohmann::ordered_json InspectJson(const std::string& model_path, const Graph& graph,
                                   const MemoryModel& model);
std::string InspectText(const std::string& model_path, const Graph& graph,
                        const MemoryModel& model);

}  // namespace ordo::cli

#endif  // ORDO_CLIENT_CLI_REPORT_H_
