#include "client/cli/commands.h"

#include <cmath>
#include <filesystem>
#include <optional>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/time/time.h"
#include "client/cli/args.h"
#include "client/cli/byte_size.h"
#include "client/cli/files.h"
#include "client/cli/report.h"
#include "client/lib/ordo_client.h"
#include "core/compile/compile.h"
#include "core/compile/import_model.h"
#include "core/graph/dtype.h"
#include "core/report/memory_svg.h"
#include "core/onnx/onnx_import.h"
#include "core/schedule/scheduler_registry.h"
#include "core/util/status_macros.h"
#include "rpc/compile_proto.h"

namespace ordo::cli {
namespace {

constexpr char kUsage[] =
    "usage:\n"
    "  ordo compile MODEL [--scheduler NAME] [--memory-limit BYTES|KiB|MiB]\n"
    "               [--time-limit 10s] [--alignment N] [--no-inplace] [--count-weights]\n"
    "               [--activation-dtype int8|float16|...] [--json] [--emit-onnx OUT.onnx]\n"
    "               [--arena tflite|tflm|greedy-by-size|greedy-by-breadth|best]\n"
    "               [--on-chip BYTES] [--out-dir DIR] [--server HOST:PORT]\n"
    "  ordo estimate MODEL [--memory-limit BYTES] [--server HOST:PORT] [--json] ...\n"
    "  ordo inspect MODEL [--json]\n"
    "  ordo health --server HOST:PORT [--service NAME]\n"
    "  ordo schedulers\n"
    "With --server, the work is done by ordo-server (same flags, same output).\n"
    "MODEL is .onnx, or ordo.v1.Graph as .json (protobuf JSON) or .pb (binary).\n"
    "Exit codes: 0 ok, 2 bad input, 1 internal error (or server unreachable);\n"
    "ordo health: 0 serving, 1 not serving or unreachable.\n";

int ExitCodeFor(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kResourceExhausted:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
      return kExitBadInput;
    default:
      return kExitInternal;
  }
}

int Fail(const absl::Status& status, std::ostream& err) {
  err << "ordo: " << status.message() << "\n";
  return ExitCodeFor(status);
}

// A failed call names the server; codes keep their meaning (the server
// says INVALID_ARGUMENT for a bad model, so exit code 2 as in local mode).
absl::Status ServerError(const std::string& server, const absl::Status& status) {
  if (absl::IsUnavailable(status) || absl::IsDeadlineExceeded(status)) {
    return absl::Status(status.code(),
                        absl::StrCat("server ", server, ": ", status.message()));
  }
  return status;
}

const ArgSpec& CompileSpec() {
  static const ArgSpec kSpec{
      {"scheduler", "memory-limit", "time-limit", "alignment", "activation-dtype",
       "emit-onnx", "max-ops", "arena", "on-chip", "out-dir", "server"},
      {"no-inplace", "count-weights", "json"}};
  return kSpec;
}

absl::StatusOr<absl::Duration> ParseTimeLimit(const std::string& text) {
  absl::Duration duration;
  double seconds;
  if (absl::SimpleAtod(text, &seconds)) {
    // NaN would become an infinite duration: a typo, not "no limit".
    if (std::isnan(seconds)) {
      return absl::InvalidArgumentError(
          absl::StrCat("--time-limit: not a duration: \"", text, "\" (e.g. 10s, 500ms)"));
    }
    duration = absl::Seconds(seconds);
  } else if (!absl::ParseDuration(text, &duration)) {
    return absl::InvalidArgumentError(
        absl::StrCat("--time-limit: not a duration: \"", text, "\" (e.g. 10s, 500ms)"));
  }
  if (duration < absl::ZeroDuration()) {
    return absl::InvalidArgumentError("--time-limit: must not be negative");
  }
  return duration;
}

absl::StatusOr<CompileOptions> CompileOptionsFromArgs(const Args& args) {
  CompileOptions options;
  options.scheduler = args.Value("scheduler").value_or("best");
  options.memory.inplace = !args.Has("no-inplace");
  options.memory.count_weights = args.Has("count-weights");
  if (auto limit = args.Value("memory-limit")) {
    ORDO_ASSIGN_OR_RETURN(options.memory_limit_bytes, ParseByteSize(*limit));
    // CompileOptions reads 0 as "no limit"; a user asking for 0 bytes
    // asked for something else.
    if (options.memory_limit_bytes == 0) {
      return absl::InvalidArgumentError(
          "--memory-limit: must be positive (leave it out for no limit)");
    }
  }
  options.arena_planner = args.Value("arena").value_or("best");
  if (auto on_chip = args.Value("on-chip")) {
    ORDO_ASSIGN_OR_RETURN(options.on_chip_bytes, ParseByteSize(*on_chip));
  }
  options.record_residency = options.on_chip_bytes > 0;
  if (auto limit = args.Value("time-limit")) {
    ORDO_ASSIGN_OR_RETURN(options.time_limit, ParseTimeLimit(*limit));
  }
  if (auto alignment = args.Value("alignment")) {
    if (!absl::SimpleAtoi(*alignment, &options.alignment) || options.alignment <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--alignment: not a positive integer: \"", *alignment, "\""));
    }
  }
  if (auto dtype = args.Value("activation-dtype")) {
    std::optional<DataType> parsed = ParseDataType(*dtype);
    if (!parsed) {
      return absl::InvalidArgumentError(
          absl::StrCat("--activation-dtype: unknown dtype \"", *dtype, "\""));
    }
    options.memory.activation_element_bytes = ElementSize(*parsed);
  }
  return options;
}

struct LoadedModel {
  std::string path;
  std::string bytes;
  Graph graph;
};

absl::StatusOr<LoadedModel> LoadModel(const Args& args) {
  if (args.positionals.size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected one MODEL argument, got ", args.positionals.size()));
  }
  LoadedModel loaded;
  loaded.path = args.positionals[0];
  GraphLimits limits;
  if (auto max_ops = args.Value("max-ops")) {
    if (!absl::SimpleAtoi(*max_ops, &limits.max_ops) || limits.max_ops <= 0) {
      return absl::InvalidArgumentError("--max-ops: not a positive integer");
    }
  }
  ORDO_ASSIGN_OR_RETURN(loaded.bytes, ReadFile(loaded.path));
  absl::StatusOr<Graph> graph =
      ImportModel(loaded.bytes, ModelFormatFromPath(loaded.path), limits);
  if (!graph.ok()) {
    return absl::Status(graph.status().code(),
                        absl::StrCat(loaded.path, ": ", graph.status().message()));
  }
  loaded.graph = *std::move(graph);
  return loaded;
}

absl::Status EmitOnnx(const LoadedModel& model, const CompileResult& result,
                      const std::string& out_path) {
  if (ModelFormatFromPath(model.path) != ModelFormat::kOnnx) {
    return absl::InvalidArgumentError("--emit-onnx needs an ONNX input model");
  }
  ORDO_ASSIGN_OR_RETURN(std::string bytes,
                        ReorderOnnxNodes(model.bytes, model.graph, result.schedule));
  return WriteFile(out_path, bytes);
}

// schedule.json, arena.json and memory.svg (plus memory.png when
// rsvg-convert, Debian package librsvg2-bin, is installed) in `dir`.
absl::Status WriteReportFiles(const std::string& dir, const std::string& model_path,
                              const Graph& graph, const CompileOptions& options,
                              const CompileResult& result) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    return absl::InvalidArgumentError(
        absl::StrCat("--out-dir: cannot create \"", dir, "\": ", error.message()));
  }
  ORDO_RETURN_IF_ERROR(WriteFile(
      dir + "/schedule.json",
      CompileReportJson(model_path, graph, options, result).dump(2) + "\n"));
  ORDO_RETURN_IF_ERROR(
      WriteFile(dir + "/arena.json", ArenaJson(graph, result).dump(2) + "\n"));
  MemorySvgOptions svg;
  svg.title = absl::StrCat(std::filesystem::path(model_path).filename().string(),
                           ": memory profile");
  svg.memory_limit_bytes = options.memory_limit_bytes;
  const std::string svg_path = dir + "/memory.svg";
  ORDO_RETURN_IF_ERROR(WriteFile(
      svg_path, MemoryProfileSvg(graph, result.model_order_simulation, result.simulation,
                                 result.arena, svg)));
  // The PNG is a convenience: without the tool, the SVG is the picture.
  std::optional<int> exit_code = RunProgram(
      {"rsvg-convert", "-o", dir + "/memory.png", svg_path});
  if (exit_code.has_value() && *exit_code != 0) {
    return absl::InternalError("rsvg-convert failed to draw memory.png");
  }
  return absl::OkStatus();
}

// The client's deadline: the server's search budget plus room for import,
// layout and the network.
client::OrdoClient::Options ClientOptions(const CompileOptions& options) {
  client::OrdoClient::Options client_options;
  client_options.timeout = options.time_limit + absl::Seconds(60);
  return client_options;
}

// Remote mode: the server compiles; the result comes back as a
// CompileResult for the local copy of the model (re-simulated here, so a
// wrong answer cannot pass). --emit-onnx then reorders the local copy.
absl::StatusOr<CompileResult> CompileRemotely(const std::string& server, const LoadedModel& model,
                                              const CompileOptions& options) {
  v1::CompileRequest request;
  ORDO_RETURN_IF_ERROR(
      client::SetRequestModel(model.bytes, ModelFormatFromPath(model.path), request));
  rpc::CompileOptionsToProto(options, *request.mutable_options(), *request.mutable_device());
  const client::OrdoClient client(server, ClientOptions(options));
  absl::StatusOr<v1::CompileResponse> response = client.Compile(request);
  if (!response.ok()) return ServerError(server, response.status());
  return rpc::CompileResultFromProto(model.graph, options, *response);
}

int RunCompile(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  absl::StatusOr<Args> args = ParseArgs(argv, CompileSpec());
  if (!args.ok()) return Fail(args.status(), err);
  absl::StatusOr<CompileOptions> options = CompileOptionsFromArgs(*args);
  if (!options.ok()) return Fail(options.status(), err);
  absl::StatusOr<LoadedModel> model = LoadModel(*args);
  if (!model.ok()) return Fail(model.status(), err);
  const std::optional<std::string> emit = args->Value("emit-onnx");
  if (emit && ModelFormatFromPath(model->path) != ModelFormat::kOnnx) {
    return Fail(absl::InvalidArgumentError("--emit-onnx needs an ONNX input model"), err);
  }
  RealClock clock;
  const std::optional<std::string> server = args->Value("server");
  absl::StatusOr<CompileResult> result = server
                                             ? CompileRemotely(*server, *model, *options)
                                             : Compile(model->graph, *options, clock);
  if (!result.ok()) return Fail(result.status(), err);
  if (emit) {
    if (absl::Status status = EmitOnnx(*model, *result, *emit); !status.ok()) {
      return Fail(status, err);
    }
  }
  if (auto dir = args->Value("out-dir")) {
    if (absl::Status status = WriteReportFiles(*dir, model->path, model->graph, *options, *result);
        !status.ok()) {
      return Fail(status, err);
    }
  }
  if (args->Has("json")) {
    out << CompileReportJson(model->path, model->graph, *options, *result).dump(2) << "\n";
  } else {
    out << CompileReportText(model->path, model->graph, *options, *result);
  }
  return kExitOk;
}

int RunEstimate(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  absl::StatusOr<Args> args = ParseArgs(
      argv, {{"memory-limit", "activation-dtype", "max-ops", "server", "scheduler"},
             {"no-inplace", "count-weights", "json"}});
  if (!args.ok()) return Fail(args.status(), err);
  absl::StatusOr<CompileOptions> options = CompileOptionsFromArgs(*args);
  if (!options.ok()) return Fail(options.status(), err);
  absl::StatusOr<LoadedModel> model = LoadModel(*args);
  if (!model.ok()) return Fail(model.status(), err);
  absl::StatusOr<EstimateResult> estimate;
  if (auto server = args->Value("server")) {
    v1::EstimateRequest request;
    if (absl::Status status = client::SetRequestModel(
            model->bytes, ModelFormatFromPath(model->path), request);
        !status.ok()) {
      return Fail(status, err);
    }
    rpc::CompileOptionsToProto(*options, *request.mutable_options(), *request.mutable_device());
    absl::StatusOr<v1::EstimateResponse> response =
        client::OrdoClient(*server, ClientOptions(*options)).Estimate(request);
    if (!response.ok()) return Fail(ServerError(*server, response.status()), err);
    estimate = rpc::EstimateResultFromProto(*response);
  } else {
    estimate = Estimate(model->graph, *options, nullptr);
  }
  if (!estimate.ok()) return Fail(estimate.status(), err);
  if (args->Has("json")) {
    out << EstimateJson(model->path, *options, *estimate).dump(2) << "\n";
  } else {
    out << EstimateText(model->path, *options, *estimate);
  }
  return kExitOk;
}

// Exit 0 when the server's health service answers SERVING (what container
// health checks and probes need), 1 otherwise.
int RunHealth(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  absl::StatusOr<Args> args = ParseArgs(argv, {{"server", "service", "timeout"}, {}});
  if (!args.ok()) return Fail(args.status(), err);
  const std::optional<std::string> server = args->Value("server");
  if (!server || !args->positionals.empty()) {
    return Fail(absl::InvalidArgumentError("usage: ordo health --server HOST:PORT"), err);
  }
  client::OrdoClient::Options options;
  options.timeout = absl::Seconds(5);
  if (auto timeout = args->Value("timeout")) {
    absl::StatusOr<absl::Duration> parsed = ParseTimeLimit(*timeout);
    if (!parsed.ok()) return Fail(parsed.status(), err);
    options.timeout = *parsed;
  }
  options.retry = false;
  const std::string service = args->Value("service").value_or("");
  absl::StatusOr<bool> serving = client::OrdoClient(*server, options).Serving(service);
  if (!serving.ok()) {
    err << "ordo: " << *server << ": " << serving.status().message() << "\n";
    return kExitInternal;
  }
  out << (*serving ? "SERVING" : "NOT_SERVING") << "\n";
  return *serving ? kExitOk : kExitInternal;
}

int RunInspect(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  absl::StatusOr<Args> args = ParseArgs(argv, {{"max-ops"}, {"json", "no-inplace"}});
  if (!args.ok()) return Fail(args.status(), err);
  absl::StatusOr<LoadedModel> model = LoadModel(*args);
  if (!model.ok()) return Fail(model.status(), err);
  absl::StatusOr<MemoryModel> memory =
      BuildMemoryModel(model->graph, {.inplace = !args->Has("no-inplace")});
  if (!memory.ok()) return Fail(memory.status(), err);
  if (args->Has("json")) {
    out << InspectJson(model->path, model->graph, *memory).dump(2) << "\n";
  } else {
    out << InspectText(model->path, model->graph, *memory);
  }
  return kExitOk;
}

int RunSchedulers(std::ostream& out) {
  const SchedulerRegistry registry = BuiltinSchedulers();
  for (const SchedulerInfo& info : registry.schedulers()) {
    out << info.name << "\t" << (info.exact ? "exact" : "heuristic") << "\t"
        << info.description << "\n";
  }
  return kExitOk;
}

}  // namespace

int RunOrdo(const std::vector<std::string>& args, std::ostream& out, std::ostream& err) {
  if (args.empty() || args[0] == "--help" || args[0] == "-h" || args[0] == "help") {
    (args.empty() ? err : out) << kUsage;
    return args.empty() ? kExitBadInput : kExitOk;
  }
  const std::vector<std::string> rest(args.begin() + 1, args.end());
  if (args[0] == "compile") return RunCompile(rest, out, err);
  if (args[0] == "inspect") return RunInspect(rest, out, err);
  if (args[0] == "estimate") return RunEstimate(rest, out, err);
  if (args[0] == "health") return RunHealth(rest, out, err);
  if (args[0] == "schedulers") return RunSchedulers(out);
  err << "ordo: unknown command \"" << args[0] << "\"\n" << kUsage;
  return kExitBadInput;
}

}  // namespace ordo::cli
