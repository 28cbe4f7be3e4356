#include "client/cli/commands.h"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <optional>
#include <tuple>

#include "absl/status/status.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_replace.h"
#include "absl/time/time.h"
#include "client/cli/args.h"
#include "client/cli/byte_size.h"
#include "client/cli/files.h"
#include "client/cli/pool_flags.h"
#include "client/cli/report.h"
#include "client/lib/ordo_client.h"
#include "core/compile/compile.h"
#include "core/compile/compile_request.h"
#include "core/compile/import_model.h"
#include "core/compile/rewrite_compile.h"
#include "core/graph/dtype.h"
#include "core/onnx/input_shapes.h"
#include "core/onnx/onnx_import.h"
#include "core/onnx/prepare_model.h"
#include "core/pools/device_presets.h"
#include "core/report/memory_svg.h"
#include "core/schedule/scheduler_registry.h"
#include "core/tflite/tflite_export.h"
#include "core/util/status_macros.h"
#include "rpc/compile_proto.h"
#include "rpc/input_shapes_proto.h"
#include "rpc/memory_model_proto.h"
#include "rpc/plan_header.h"

namespace ordo::cli {
namespace {

constexpr char kUsage[] =
    "usage:\n"
    "  ordo compile MODEL [--scheduler NAME] [--memory-limit BYTES|KiB|MiB]\n"
    "               [--time-limit 10s] [--alignment N] [--no-inplace] [--count-weights]\n"
    "               [--io-outside-arena]\n"
    "               [--activation-dtype int8|float16|...] [--json] [--emit-onnx OUT.onnx]\n"
    "               [--arena tflite|tflm|greedy-by-size|greedy-by-breadth|best]\n"
    "               [--on-chip BYTES] [--out-dir DIR] [--server HOST:PORT]\n"
    "               [--rewrite none|identity|partition|all|auto]\n"
    "               [--max-latency-overhead 0.05] [--rewritten-model OUT.onnx]\n"
    "               [--beam-width 1..16] [--pareto] [--no-fusion]\n"
    "               [--emit-tflite OUT.tflite]\n"
    "               [--macs-per-second 1e9] [--op-overhead-seconds 2e-5]\n"
    "               [--input-shape NAME=1x3x224x224]... [--dim-param NAME=N]... [--batch N]\n"
    "               [--device NAME | --pool NAME:CAPACITY[:READ_BW[:WRITE_BW]][:off-chip] ...]\n"
    "               [--pin TENSOR:POOL ...] [--one-arena] [--placement-effort fast|thorough]\n"
    "  ordo estimate MODEL [--memory-limit BYTES] [--device NAME | --pool ...] [--one-arena]\n"
    "               [--server HOST:PORT] [--json] ...\n"
    "  ordo inspect MODEL [--json] [--input-shape NAME=DIMS]... [--dim-param NAME=N]...\n"
    "               [--batch N]\n"
    "  ordo health --server HOST:PORT [--service NAME]\n"
    "--server calls also take [--tls-ca CA.pem] [--tls-cert C.pem --tls-key K.pem]\n"
    "  (TLS; a client certificate for mutual TLS) and [--auth-token-file FILE]\n"
    "  (bearer token: the file's first line).\n"
    "  ordo schedulers\n"
    "  ordo devices [--json]  (the --device presets and their memory pools; --json:\n"
    "               GetInfo's device_presets)\n"
    "With --server, the work is done by ordo-server (same flags, same output).\n"
    "MODEL is .onnx, .tflite (TensorFlow Lite), or ordo.v1.Graph as .json\n"
    "  (protobuf JSON) or .pb (binary).\n"
    "--emit-tflite (TFLite input): the model with operators in the schedule's\n"
    "  order and ordo's arena as TFLite Micro's offline plan (docs/tflite.md).\n"
    "--rewrite (ONNX only) rewrites the model to lower its peak; without it,\n"
    "--memory-limit means auto: when the schedule does not fit, rewrite with all.\n"
    "--io-outside-arena: graph inputs and outputs live in buffers of their own;\n"
    "  they are not counted in the peak and not placed in the arena.\n"
    "--pareto: also report the (peak, latency overhead) points the rewrite\n"
    "  search found (default --rewrite all).\n"
    "--pool (repeatable): a memory bank; capacity as for --memory-limit,\n"
    "  bandwidths in bytes/s, plain or SI (1.6GB/s); default 1GB/s, write = read.\n"
    "  Tensors are placed across the pools for the least modelled memory time;\n"
    "  --pin keeps a tensor in one pool. --device NAME uses a preset's pools.\n"
    "  Tensors placed in off-chip pools are the off-chip traffic (not --on-chip).\n"
    "--one-arena (with pools): the runtime plans one arena (TFLite Micro); it\n"
    "  goes whole into the fastest pool that holds it. Implied by --emit-tflite.\n"
    "--placement-effort (with pools): fast (default; the schedule's own order,\n"
    "  four greedy placements, a fraction of a millisecond; thorough when it does\n"
    "  not fit) or thorough (six candidate orders and the full placer).\n"
    "--no-fusion: rewrite without patch-wise fusion of layer chains (fused\n"
    "  stages are ai.ordo nodes; without it the model keeps standard ops).\n"
    "--beam-width N: states the partition search keeps per round (default 1,\n"
    "  greedy; each round then costs about N times the schedules).\n"
    "--input-shape NAME=DIMS (repeatable) gives every dim of ONNX graph input\n"
    "  NAME; --dim-param NAME=N (repeatable) sets every symbolic input dim\n"
    "  named NAME to N; --batch N sets the symbolic batch dim of the other\n"
    "  inputs to N (the dim named like \"batch\", else dim 0). Dynamic\n"
    "  exports: compile one shape (compile, estimate, inspect).\n"
    "Exit codes: 0 ok, 2 bad input, 1 internal error (or server unreachable),\n"
    "3 rewritten in fit mode and still over --memory-limit;\n"
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

CompileRequestNames CliNames(const std::string& path);

// A server's refusal names the API's fields (options.rewrite); the user
// wrote flags (--rewrite): the request's names, field by field. (The model's
// names are left alone: "onnx_model" and its kin are words of the message.)
std::string InFlagNames(absl::string_view message) {
  const CompileRequestNames api;
  const CompileRequestNames cli = CliNames("");
  std::vector<std::pair<std::string, std::string>> renames;
  for (std::string CompileRequestNames::*name :
       {&CompileRequestNames::rewrite, &CompileRequestNames::input_shapes,
        &CompileRequestNames::reordered_onnx, &CompileRequestNames::reordered_tflite,
        &CompileRequestNames::scheduler, &CompileRequestNames::arena_planner,
        &CompileRequestNames::io_outside_arena}) {
    renames.emplace_back(api.*name, cli.*name);
  }
  return absl::StrReplaceAll(message, renames);
}

// A failed call names the server; codes keep their meaning (the server
// says INVALID_ARGUMENT for a bad model, so exit code 2 as in local mode),
// and its refusals read in the CLI's flags.
absl::Status ServerError(const std::string& server, const absl::Status& status) {
  if (absl::IsUnavailable(status) || absl::IsDeadlineExceeded(status)) {
    return absl::Status(status.code(),
                        absl::StrCat("server ", server, ": ", status.message()));
  }
  return absl::Status(status.code(), InFlagNames(status.message()));
}

// How --server is reached: --tls-ca, --tls-cert, --tls-key, --auth-token-file.
absl::StatusOr<rpc::ClientSecurity> SecurityFromArgs(const Args& args) {
  rpc::ClientSecurityOptions files;
  files.tls_ca_file = args.Value("tls-ca").value_or("");
  files.tls_cert_file = args.Value("tls-cert").value_or("");
  files.tls_key_file = args.Value("tls-key").value_or("");
  files.auth_token_file = args.Value("auth-token-file").value_or("");
  return rpc::LoadClientSecurity(files);
}

const ArgSpec& CompileSpec() {
  // Grouped by feature, one line each (clang-format would put one per line).
  // clang-format off
  static const ArgSpec kSpec{
      {"scheduler", "memory-limit", "time-limit", "alignment", "activation-dtype",
       "emit-onnx", "emit-tflite", "max-ops", "arena", "on-chip", "out-dir", "server",
       "rewrite", "max-latency-overhead", "beam-width", "rewritten-model",
       "macs-per-second", "op-overhead-seconds",
       "tls-ca", "tls-cert", "tls-key", "auth-token-file",
       "input-shape", "dim-param", "batch",
       "pool", "device", "pin", "placement-effort"},
      {"no-inplace", "count-weights", "io-outside-arena", "pareto", "no-fusion", "json",
       "one-arena"}};
  // clang-format on
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
  options.memory.io_outside_arena = args.Has("io-outside-arena");
  if (auto limit = args.Value("memory-limit")) {
    ORDO_ASSIGN_OR_RETURN(options.memory_limit_bytes, ParseByteSizeFlag("--memory-limit", *limit));
    // CompileOptions reads 0 as "no limit"; a user asking for 0 bytes
    // asked for something else.
    if (options.memory_limit_bytes == 0) {
      return absl::InvalidArgumentError(
          "--memory-limit: must be positive (leave it out for no limit)");
    }
  }
  options.arena_planner = args.Value("arena").value_or("best");
  if (auto on_chip = args.Value("on-chip")) {
    ORDO_ASSIGN_OR_RETURN(options.on_chip_bytes, ParseByteSizeFlag("--on-chip", *on_chip));
  }
  // With pools the residency is set below, when a pool is off the chip.
  if (auto limit = args.Value("time-limit")) {
    // Longer limits (inf included) are taken as the service takes them.
    ORDO_ASSIGN_OR_RETURN(const absl::Duration parsed, ParseTimeLimit(*limit));
    options.time_limit = std::min(parsed, rpc::kMaxTimeLimit);
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
  const std::optional<std::string> device = args.Value("device");
  ORDO_ASSIGN_OR_RETURN(options.pools,
                        PoolOptionsFromFlags(device ? &*device : nullptr, args.Values("pool"),
                                             args.Values("pin")));
  if (args.Has("one-arena")) {
    if (!options.pools.enabled()) {
      return absl::InvalidArgumentError("--one-arena needs memory pools (--pool or --device)");
    }
    options.pools.one_arena = true;
  }
  if (auto effort = args.Value("placement-effort")) {
    if (!options.pools.enabled()) {
      return absl::InvalidArgumentError(
          "--placement-effort needs memory pools (--pool or --device)");
    }
    const std::optional<PlacementEffort> parsed = ParsePlacementEffort(*effort);
    if (!parsed) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--placement-effort: unknown effort \"", *effort, "\"; use fast or thorough"));
    }
    options.pools.effort = *parsed;
  }
  // Whenever there is off-chip traffic to report, so is what stays on chip.
  options.record_residency =
      options.on_chip_bytes > 0 ||
      std::any_of(options.pools.pools.begin(), options.pools.pools.end(),
                  [](const MemoryPool& pool) { return pool.off_chip; });
  return options;
}

// --input-shape NAME=DIMS, --dim-param NAME=N (both repeatable) and --batch N.
absl::StatusOr<InputShapes> InputShapesFromArgs(const Args& args) {
  InputShapes shapes;
  for (const std::string& flag : args.Values("input-shape")) {
    const size_t eq = flag.rfind('=');
    if (eq == std::string::npos || eq == 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--input-shape ", flag, ": write NAME=DIMS, e.g. --input-shape input=1x3x224x224"));
    }
    const std::string name = flag.substr(0, eq);
    ORDO_ASSIGN_OR_RETURN(std::vector<int64_t> dims,
                          ParseDims(absl::string_view(flag).substr(eq + 1),
                                    absl::StrCat("--input-shape ", flag)));
    if (!shapes.shapes.emplace(name, std::move(dims)).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("--input-shape: graph input \"", name, "\" is given twice"));
    }
  }
  for (const std::string& flag : args.Values("dim-param")) {
    const size_t eq = flag.rfind('=');
    int64_t value = 0;
    if (eq == std::string::npos || eq == 0 ||
        !absl::SimpleAtoi(absl::string_view(flag).substr(eq + 1), &value) || value <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--dim-param ", flag,
                       ": write NAME=N with N a positive integer, e.g. --dim-param sequence=128"));
    }
    const std::string name = flag.substr(0, eq);
    if (!shapes.dim_params.emplace(name, value).second) {
      return absl::InvalidArgumentError(
          absl::StrCat("--dim-param: dim \"", name, "\" is given twice"));
    }
  }
  if (auto batch = args.Value("batch")) {
    if (!absl::SimpleAtoi(*batch, &shapes.batch) || shapes.batch <= 0) {
      return absl::InvalidArgumentError(
          absl::StrCat("--batch: not a positive integer: \"", *batch, "\""));
    }
  }
  return shapes;
}

struct LoadedModel {
  std::string path;
  std::string file_bytes;  // as read
  std::string bytes;       // as compiled: file_bytes prepared (PrepareOnnxModel)
  InputShapes input_shapes;
  ModelFormat format = ModelFormat::kOnnx;
  Graph graph;
  GraphLimits limits;
};

// What the compile request's errors call its parts: flags, and the model by
// its path.
CompileRequestNames CliNames(const std::string& path) {
  CompileRequestNames names;
  names.model = path;
  names.onnx_model = "an .onnx file";
  names.tflite_model = "a .tflite file";
  names.rewrite = "--rewrite";
  names.input_shapes = "--input-shape/--dim-param/--batch";
  names.reordered_onnx = "--emit-onnx";
  names.reordered_tflite = "--emit-tflite";
  names.scheduler = "--scheduler";
  names.arena_planner = "--arena";
  names.io_outside_arena = "--io-outside-arena";
  return names;
}

// The model file read and its format known; not imported yet.
absl::StatusOr<LoadedModel> ReadModel(const Args& args) {
  if (args.positionals.size() != 1) {
    return absl::InvalidArgumentError(
        absl::StrCat("expected one MODEL argument, got ", args.positionals.size()));
  }
  LoadedModel loaded;
  loaded.path = args.positionals[0];
  GraphLimits& limits = loaded.limits;
  if (auto max_ops = args.Value("max-ops")) {
    if (!absl::SimpleAtoi(*max_ops, &limits.max_ops) || limits.max_ops <= 0) {
      return absl::InvalidArgumentError("--max-ops: not a positive integer");
    }
  }
  ORDO_ASSIGN_OR_RETURN(loaded.input_shapes, InputShapesFromArgs(args));
  ORDO_ASSIGN_OR_RETURN(loaded.file_bytes, ReadFile(loaded.path));
  loaded.bytes = loaded.file_bytes;
  loaded.format = ModelFormatOf(loaded.path, loaded.file_bytes);
  return loaded;
}

// The read model's input shapes applied and its graph imported.
absl::Status ImportReadModel(LoadedModel& loaded) {
  absl::StatusOr<Graph> graph = [&]() -> absl::StatusOr<Graph> {
    if (loaded.format == ModelFormat::kOnnx) {
      ORDO_ASSIGN_OR_RETURN(
          std::optional<std::string> prepared,
          PrepareOnnxModel(loaded.file_bytes, loaded.input_shapes, loaded.limits.max_ops));
      if (prepared) loaded.bytes = *std::move(prepared);
    }
    return ImportModel(loaded.bytes, loaded.format, loaded.limits);
  }();
  if (!graph.ok()) {
    return absl::Status(graph.status().code(),
                        absl::StrCat(loaded.path, ": ", graph.status().message()));
  }
  loaded.graph = *std::move(graph);
  return absl::OkStatus();
}

// ReadModel, then ImportReadModel, for commands that only import.
absl::StatusOr<LoadedModel> LoadModel(const Args& args) {
  ORDO_ASSIGN_OR_RETURN(LoadedModel loaded, ReadModel(args));
  ORDO_RETURN_IF_ERROR(
      CheckInputShapesApply(loaded.format, loaded.input_shapes, CliNames(loaded.path)));
  ORDO_RETURN_IF_ERROR(ImportReadModel(loaded));
  return loaded;
}

// The model the schedule is for, nodes in its order: the rewritten model
// when rewrites were kept, else the input model reordered.
absl::Status EmitOnnx(const LoadedModel& model, const RewriteCompileResult& result,
                      const std::string& out_path) {
  if (result.rewrite && !result.rewrite->rewritten_model.empty()) {
    return WriteFile(out_path, result.rewrite->rewritten_model);
  }
  ORDO_ASSIGN_OR_RETURN(std::string bytes,
                        ReorderOnnxNodes(model.bytes, model.graph, result.compile.schedule));
  return WriteFile(out_path, bytes);
}

// The TFLite model in schedule order with ordo's arena as TFLM's offline
// plan.
absl::Status EmitTflite(const LoadedModel& model, const CompileResult& result,
                        const std::string& out_path) {
  ORDO_ASSIGN_OR_RETURN(std::string bytes, ReorderTfliteModel(model.bytes, model.graph,
                                                              result.schedule, result.arena));
  return WriteFile(out_path, bytes);
}

// --rewrite (default: auto with --memory-limit, else none),
// --max-latency-overhead, --beam-width; the search's budget is --time-limit.
absl::StatusOr<RewriteCompileOptions> RewriteOptionsFromArgs(const Args& args,
                                                             const CompileOptions& options) {
  RewriteCompileOptions rewrite;
  const std::string mode =
      args.Value("rewrite").value_or(args.Has("pareto")         ? "all"
                                     : args.Value("memory-limit") ? "auto"
                                                                  : "none");
  if (absl::Status status = SetRewriteMode(mode, rewrite); !status.ok()) {
    return absl::InvalidArgumentError(absl::StrCat("--rewrite: ", status.message()));
  }
  if (auto overhead = args.Value("max-latency-overhead")) {
    if (!absl::SimpleAtod(*overhead, &rewrite.max_latency_overhead) ||
        !std::isfinite(rewrite.max_latency_overhead) || rewrite.max_latency_overhead < 0) {
      return absl::InvalidArgumentError(absl::StrCat(
          "--max-latency-overhead: not a non-negative fraction: \"", *overhead,
          "\" (e.g. 0.05 for 5%)"));
    }
  }
  if (auto width = args.Value("beam-width")) {
    if (!absl::SimpleAtoi(*width, &rewrite.beam_width) || rewrite.beam_width < 1 ||
        rewrite.beam_width > kMaxRewriteBeamWidth) {
      return absl::InvalidArgumentError(absl::StrCat("--beam-width: not a whole number from 1 to ",
                                                     kMaxRewriteBeamWidth, ": \"", *width, "\""));
    }
  }
  // The device's latency model: what partitioning's overhead is measured in.
  for (const auto& [flag, value, least, most] :
       {std::tuple{"macs-per-second", &rewrite.latency.macs_per_second, kMinMacsPerSecond,
                   kMaxMacsPerSecond},
        std::tuple{"op-overhead-seconds", &rewrite.latency.op_overhead_seconds, 0.0,
                   kMaxOpOverheadSeconds}}) {
    const std::optional<std::string> text = args.Value(flag);
    if (!text) continue;
    // Written so that NaN fails too.
    if (!absl::SimpleAtod(*text, value) || !(*value >= least && *value <= most)) {
      return absl::InvalidArgumentError(absl::StrCat("--", flag, ": not a number from ", least,
                                                     " to ", most, ": \"", *text, "\""));
    }
  }
  rewrite.time_limit = options.time_limit;
  rewrite.pareto = args.Has("pareto");
  rewrite.fusion = !args.Has("no-fusion");
  return rewrite;
}

// With pools, the picture draws the pools one above the other, each as
// tall as it is used, so tensors of different pools never share a band.
ArenaPlan StackedPools(const CompileResult& result) {
  ArenaPlan plan = result.arena;
  if (!result.placement) return plan;
  std::vector<int64_t> base;
  int64_t next = 0;
  for (const PoolUsage& pool : result.placement->placement.evaluation.pools) {
    base.push_back(next);
    next += pool.used_bytes;
  }
  for (TensorPlacement& tensor : plan.tensors) {
    if (tensor.pool != kNoId) tensor.offset += base[tensor.pool];
  }
  plan.arena_bytes = next;
  return plan;
}

// schedule.json, arena.json, plan.h and memory.svg (plus memory.png when
// rsvg-convert, Debian package librsvg2-bin, is installed) in `dir`.
absl::Status WriteReportFiles(const std::string& dir, const std::string& model_path,
                              const Graph& graph, const CompileOptions& options,
                              const CompileResult& result, const v1::CompileResponse& response) {
  std::error_code error;
  std::filesystem::create_directories(dir, error);
  if (error) {
    return absl::InvalidArgumentError(
        absl::StrCat("--out-dir: cannot create \"", dir, "\": ", error.message()));
  }
  ORDO_RETURN_IF_ERROR(
      WriteFile(dir + "/schedule.json", CompileResponseJson(response, model_path)));
  ORDO_RETURN_IF_ERROR(WriteFile(dir + "/arena.json", ArenaJson(response)));
  ORDO_RETURN_IF_ERROR(WriteFile(dir + "/plan.h", rpc::PlanHeader(response, model_path)));
  MemorySvgOptions svg;
  svg.title = absl::StrCat(std::filesystem::path(model_path).filename().string(),
                           ": memory profile");
  svg.memory_limit_bytes = options.memory_limit_bytes;
  const std::string svg_path = dir + "/memory.svg";
  ORDO_RETURN_IF_ERROR(WriteFile(
      svg_path, MemoryProfileSvg(graph, result.model_order_simulation, result.simulation,
                                 StackedPools(result), svg)));
  // The PNG is a convenience: without the tool, the SVG is the picture.
  std::optional<int> exit_code = RunProgram(
      {"rsvg-convert", "-o", dir + "/memory.png", svg_path});
  if (exit_code.has_value() && *exit_code != 0) {
    return absl::InternalError("rsvg-convert failed to draw memory.png");
  }
  return absl::OkStatus();
}

// The client's deadline: the server's search budget plus room for import,
// layout and the network; rewriting has up to three stages of that budget.
client::OrdoClient::Options ClientOptions(const CompileOptions& options,
                                          const rpc::ClientSecurity& security, int stages = 1) {
  client::OrdoClient::Options client_options;
  client_options.security = security;
  client_options.timeout = options.time_limit * stages + absl::Seconds(60);
  return client_options;
}

// A compile's result and the API's response describing it (what --json
// prints): the server's in remote mode, rpc::CompileResponseOf's in local
// mode, the builder the server uses too.
struct CompileAnswer {
  RewriteCompileResult result;
  v1::CompileResponse response;
};

// Remote mode: the server compiles (and rewrites); the result comes back
// for the local copy of the model, or for the rewritten model the server
// returned after checking it reads and writes what the local copy does. The
// schedule is re-simulated here either way, so a wrong answer cannot pass.
absl::StatusOr<CompileAnswer> CompileRemotely(const std::string& server, const LoadedModel& model,
                                              const CompileRequest& compile,
                                              const rpc::ClientSecurity& security) {
  const CompileOptions& options = compile.options;
  const RewriteCompileOptions& rewrite = compile.rewrite;
  v1::CompileRequest request;
  ORDO_RETURN_IF_ERROR(
      client::SetRequestModel(model.file_bytes, model.format, request));
  rpc::CompileOptionsToProto(options, *request.mutable_options(), *request.mutable_device());
  rpc::InputShapesToProto(model.input_shapes, *request.mutable_options());
  rpc::RewriteCompileOptionsToProto(rewrite, *request.mutable_options(),
                                    *request.mutable_device());
  const bool rewriting = rewrite.mode != RewriteMode::kNone || rewrite.fit_fallback;
  const client::OrdoClient client(server, ClientOptions(options, security, rewriting ? 3 : 1));
  absl::StatusOr<v1::CompileResponse> response = client.Compile(request);
  if (!response.ok()) return ServerError(server, response.status());
  ORDO_ASSIGN_OR_RETURN(
      RewriteCompileResult result,
      rpc::RewriteCompileResultFromProto(model.graph, options, model.limits, *response));
  // What --json prints comes from the re-checked result, as in local mode,
  // not from the server's fields: only the service's own figures are its.
  v1::CompileResponse printed =
      rpc::CompileResponseOf(compile, result.graph, result.compile, result.rewrite);
  *printed.mutable_stats() = response->stats();
  return CompileAnswer{std::move(result), std::move(printed)};
}

absl::StatusOr<CompileAnswer> CompileLocally(const LoadedModel& model,
                                             const CompileRequest& request) {
  RealClock clock;
  ORDO_ASSIGN_OR_RETURN(
      RewriteCompileResult result,
      CompileWithRewrite(request, model.bytes, model.graph, CompileServices(), clock));
  v1::CompileResponse response =
      rpc::CompileResponseOf(request, result.graph, result.compile, result.rewrite);
  return CompileAnswer{std::move(result), std::move(response)};
}

// Fit mode ran and the result still does not fit: the message says which
// pool overflows and by how much (with pools) and names what is live at
// the peak.
absl::Status DoesNotFit(const CompileOptions& options, const RewriteCompileResult& result) {
  const RewriteSummary& summary = *result.rewrite;
  std::vector<std::string> shown(
      summary.bottleneck_tensors.begin(),
      summary.bottleneck_tensors.begin() +
          std::min<size_t>(summary.bottleneck_tensors.size(), 8));
  const std::optional<PoolReport>& placement = result.compile.placement;
  const std::string what =
      placement && !placement->fits()
          ? absl::StrCat("the placement does not fit the memory pools (", placement->overflow,
                         ")")
          : absl::StrCat("peak ", FormatBytes(result.compile.peak_bytes), " (",
                         result.compile.peak_bytes, " B) does not fit --memory-limit ",
                         FormatBytes(options.memory_limit_bytes));
  return absl::ResourceExhaustedError(absl::StrCat(
      what, " even after ", summary.rewrites.size(), " rewrite(s) (--rewrite ", summary.mode,
      "); bottleneck tensors live at the peak: ", absl::StrJoin(shown, ", "),
      shown.size() < summary.bottleneck_tensors.size() ? ", ..." : ""));
}

int RunCompile(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  absl::StatusOr<Args> args = ParseArgs(argv, CompileSpec());
  if (!args.ok()) return Fail(args.status(), err);
  absl::StatusOr<CompileOptions> options = CompileOptionsFromArgs(*args);
  if (!options.ok()) return Fail(options.status(), err);
  absl::StatusOr<LoadedModel> model = ReadModel(*args);
  if (!model.ok()) return Fail(model.status(), err);
  absl::StatusOr<RewriteCompileOptions> rewrite = RewriteOptionsFromArgs(*args, *options);
  if (!rewrite.ok()) return Fail(rewrite.status(), err);
  const std::optional<std::string> emit = args->Value("emit-onnx");
  const std::optional<std::string> rewritten_path = args->Value("rewritten-model");
  CompileRequest request;
  request.format = model->format;
  request.options = *options;
  request.rewrite = *std::move(rewrite);
  request.input_shapes = model->input_shapes;
  request.reordered_onnx = emit || rewritten_path;
  request.reordered_tflite = args->Value("emit-tflite").has_value();
  request.names = CliNames(model->path);
  if (!emit) request.names.reordered_onnx = "--rewritten-model";
  if (absl::Status valid = request.Validate(); !valid.ok()) return Fail(valid, err);
  // Before the request goes anywhere: in remote mode the file is written
  // here, so the server must place one arena without being asked for it.
  ImplyOneArena(request);
  if (absl::Status imported = ImportReadModel(*model); !imported.ok()) return Fail(imported, err);
  if (request.reordered_onnx) {
    if (absl::Status parses = CheckOnnxParses(model->bytes); !parses.ok()) {
      return Fail(parses, err);
    }
  }
  const std::optional<std::string> server = args->Value("server");
  absl::StatusOr<rpc::ClientSecurity> security = SecurityFromArgs(*args);
  if (!security.ok()) return Fail(security.status(), err);
  absl::StatusOr<CompileAnswer> answer = server
                                             ? CompileRemotely(*server, *model, request, *security)
                                             : CompileLocally(*model, request);
  if (!answer.ok()) return Fail(answer.status(), err);
  const RewriteCompileResult* result = &answer->result;
  for (const std::optional<std::string>& path : {emit, rewritten_path}) {
    if (!path) continue;
    if (absl::Status status = EmitOnnx(*model, *result, *path); !status.ok()) {
      return Fail(status, err);
    }
  }
  if (auto path = args->Value("emit-tflite")) {
    if (absl::Status status = EmitTflite(*model, result->compile, *path); !status.ok()) {
      return Fail(status, err);
    }
  }
  const RewriteSummary* summary = result->rewrite ? &*result->rewrite : nullptr;
  if (auto dir = args->Value("out-dir")) {
    if (absl::Status status = WriteReportFiles(*dir, model->path, result->graph, *options,
                                               result->compile, answer->response);
        !status.ok()) {
      return Fail(status, err);
    }
  }
  if (args->Has("json")) {
    out << CompileResponseJson(answer->response, model->path);
  } else {
    out << CompileReportText(model->path, result->graph, *options, result->compile, summary);
  }
  if (summary != nullptr && summary->fit_mode && !summary->fits) {
    err << "ordo: " << DoesNotFit(*options, *result).message() << "\n";
    return kExitDoesNotFit;
  }
  return kExitOk;
}

int RunEstimate(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  absl::StatusOr<Args> args = ParseArgs(
      argv,
      {{"memory-limit", "activation-dtype", "max-ops", "server", "scheduler", "tls-ca", "tls-cert",
        "tls-key", "auth-token-file", "input-shape", "dim-param", "batch", "pool", "device", "pin"},
       {"no-inplace", "count-weights", "io-outside-arena", "json", "one-arena"}});
  if (!args.ok()) return Fail(args.status(), err);
  absl::StatusOr<CompileOptions> options = CompileOptionsFromArgs(*args);
  if (!options.ok()) return Fail(options.status(), err);
  absl::StatusOr<LoadedModel> model = LoadModel(*args);
  if (!model.ok()) return Fail(model.status(), err);
  absl::StatusOr<EstimateResult> estimate;
  if (auto server = args->Value("server")) {
    absl::StatusOr<rpc::ClientSecurity> security = SecurityFromArgs(*args);
    if (!security.ok()) return Fail(security.status(), err);
    v1::EstimateRequest request;
    if (absl::Status status = client::SetRequestModel(
            model->file_bytes, model->format, request);
        !status.ok()) {
      return Fail(status, err);
    }
    rpc::CompileOptionsToProto(*options, *request.mutable_options(), *request.mutable_device());
    rpc::InputShapesToProto(model->input_shapes, *request.mutable_options());
    absl::StatusOr<v1::EstimateResponse> response =
        client::OrdoClient(*server, ClientOptions(*options, *security)).Estimate(request);
    if (!response.ok()) return Fail(ServerError(*server, response.status()), err);
    estimate = rpc::EstimateResultFromProto(*response);
  } else {
    estimate = Estimate(model->graph, *options, nullptr);
    if (!estimate.ok()) estimate = WithTheFix(estimate.status(), *options, CliNames(model->path));
  }
  if (!estimate.ok()) return Fail(estimate.status(), err);
  if (args->Has("json")) {
    out << EstimateJson(model->path, *estimate);
  } else {
    out << EstimateText(model->path, *estimate);
  }
  return kExitOk;
}

// Exit 0 when the server's health service answers SERVING (what container
// health checks and probes need), 1 otherwise.
int RunHealth(const std::vector<std::string>& argv, std::ostream& out, std::ostream& err) {
  absl::StatusOr<Args> args = ParseArgs(
      argv, {{"server", "service", "timeout", "tls-ca", "tls-cert", "tls-key", "auth-token-file"},
             {}});
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
  absl::StatusOr<rpc::ClientSecurity> security = SecurityFromArgs(*args);
  if (!security.ok()) return Fail(security.status(), err);
  options.security = *std::move(security);
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
  absl::StatusOr<Args> args =
      ParseArgs(argv, {{"max-ops", "input-shape", "dim-param", "batch"}, {"json", "no-inplace"}});
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
  const SchedulerRegistry& registry = BuiltinSchedulers();
  for (const SchedulerInfo& info : registry.schedulers()) {
    out << info.name << "\t" << (info.exact ? "exact" : "heuristic") << "\t"
        << info.description << "\n";
  }
  return kExitOk;
}

int RunDevices(std::ostream& out) {
  for (const DevicePreset& preset : BuiltinDevicePresets()) {
    out << preset.name << "\t" << preset.description << "\n";
    for (const MemoryPool& pool : preset.pools) {
      out << "\t--pool " << pool.name << ":" << pool.capacity_bytes / 1024 << "KiB:"
          << pool.read_bytes_per_second / 1e9 << "GB/s:" << pool.write_bytes_per_second / 1e9
          << "GB/s" << (pool.off_chip ? ":off-chip" : "") << "\n";
    }
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
  if (args[0] == "devices" && rest.size() == 1 && rest[0] == "--json") {
    out << DevicePresetsJson();
    return kExitOk;
  }
  if ((args[0] == "schedulers" || args[0] == "devices") && !rest.empty()) {
    err << "ordo " << args[0] << ": takes no arguments"
        << (args[0] == "devices" ? " but --json" : "") << ", got \"" << rest[0] << "\"\n";
    return kExitBadInput;
  }
  if (args[0] == "schedulers") return RunSchedulers(out);
  if (args[0] == "devices") return RunDevices(out);
  err << "ordo: unknown command \"" << args[0] << "\"\n" << kUsage;
  return kExitBadInput;
}

}  // namespace ordo::cli
