#ifndef ORDO_CLIENT_CLI_REPORT_H_
#define ORDO_CLIENT_CLI_REPORT_H_

#include <string>

#include "core/compile/compile.h"
#include "core/compile/rewrite_compile.h"
#include "core/graph/graph.h"
#include "nlohmann/json.hpp"

namespace ordo::cli {

// The JSON object `ordo compile --json` prints (docs/cli.md documents the fields).
// `graph` is the graph `result` scheduled (the rewritten one after
// rewriting); `rewrite`, when not null, adds the "rewrite" object.
nlohmann::ordered_json CompileReportJson(const std::string& model_path, const Graph& graph,
                                         const CompileOptions& options,
                                         const CompileResult& result,
                                         const RewriteSummary* rewrite = nullptr);

// `arena.json` of --out-dir: the layout with tensor names.
nlohmann::ordered_json ArenaJson(const Graph& graph, const CompileResult& result);

// The short aligned summary `ordo compile` prints.
std::string CompileReportText(const std::string& model_path, const Graph& graph,
                              const CompileOptions& options, const CompileResult& result,
                              const RewriteSummary* rewrite = nullptr);

// `ordo estimate`: the figures that need no search, and whether the model
// fits the memory limit ("yes", "no" or "unknown"; null without a limit).
nlohmann::ordered_json EstimateJson(const std::string& model_path,
                                    const CompileOptions& options,
                                    const EstimateResult& estimate);
std::string EstimateText(const std::string& model_path, const CompileOptions& options,
                         const EstimateResult& estimate);

// `ordo inspect`: what the graph is made of.
nlohmann::ordered_json InspectJson(const std::string& model_path, const Graph& graph,
                                   const MemoryModel& model);
std::string InspectText(const std::string& model_path, const Graph& graph,
                        const MemoryModel& model);

}  // namespace ordo::cli

#endif  // ORDO_CLIENT_CLI_REPORT_H_
