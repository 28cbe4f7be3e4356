// ordo-load: a closed-loop load generator for ordo-server. Keeps
// --concurrency calls in flight (one blocking stub call per client thread,
// all on one channel), each thread sending its next request as soon as the
// previous one returns, until --requests calls were started or --duration
// passed, whichever comes first. Prints requests/s, latency percentiles,
// errors by status code and what the server said about its cache; --json
// writes the same as one object.
//
// Modes:
//   cached  the same request every time, after one untimed warm-up call, so
//           every timed call finds every part in the cache;
//   cold    the same request every time against a server whose cache is
//           off (--spawn passes --cache-mb=0; with --server that is the
//           caller's job, and the report shows the hits it saw);
//   nas     a stream of NAS-like candidates (bench/nas_candidates.h), each
//           sent once, in order; the report's part hit rate is what caching
//           buys such a stream. A best case: every cell is its own part.
//   darts   the realistic NAS stream (bench/darts_candidates.h): DARTS-space
//           candidates of a regularised-evolution search, cells reading the
//           two previous cells, survivors re-sent; the report also counts
//           whole-request hits (response cache) and single-flight shares.
//
// --spawn starts its own ordo-server on a free loopback port (port 0, read
// back from its `listening on` line) and stops it with SIGTERM at the end.
// Loopback only; bounded in count and in time.

#include <atomic>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_set.h"
#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_split.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/cache_ceiling.h"
#include "bench/darts_candidates.h"
#include "bench/latency_summary.h"
#include "bench/nas_candidates.h"
#include "core/graph/canonical_graph.h"
#include "core/graph/graph_proto.h"
#include "core/testing/test_paths.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "nlohmann/json.hpp"
#include "ordo/v1/compiler_service.grpc.pb.h"
#include "rpc/flag_names.h"
#include "rpc/grpc_status.h"
#include "sys/child_process.h"

ABSL_FLAG(std::string, server, "", "HOST:PORT of a running ordo-server (loopback)");
ABSL_FLAG(bool, spawn, false, "start an ordo-server on a free loopback port, stop it at the end");
ABSL_FLAG(int, local_workers, -1,
          "with --spawn: the server's --local-workers (-1: its default, one per core)");
ABSL_FLAG(std::string, server_flags, "",
          "with --spawn: more ordo-server flags, space separated (e.g. --cache-mb=0)");
ABSL_FLAG(std::string, server_binary, ordo::testing::ServerBinary(),
          "with --spawn: the ordo-server");
ABSL_FLAG(std::string, model, "", "ONNX model, or ordo.v1.Graph as .pb/.json (cached, cold)");
ABSL_FLAG(int, concurrency, 1, "calls in flight");
ABSL_FLAG(double, duration, 10, "stop starting calls after this many seconds");
ABSL_FLAG(int64_t, requests, 1000, "stop after this many calls (nas: candidates)");
ABSL_FLAG(std::string, method, "compile",
          "compile|estimate|info (GetInfo: the RPC floor, no model work)");
ABSL_FLAG(std::string, mode, "cached", "cached|cold|nas|darts");
ABSL_FLAG(std::string, scheduler, "", "CompileOptions.scheduler (empty: the server's best)");
ABSL_FLAG(std::string, arena_planner, "", "CompileOptions.arena_planner (none: skip)");
ABSL_FLAG(int64_t, alignment, 0,
          "DeviceSpec.alignment_bytes (0: the server's default; negative is refused "
          "before the import, which measures the cost of receiving the request)");
ABSL_FLAG(double, time_limit, 0, "CompileOptions.time_limit in seconds (0: unset)");
ABSL_FLAG(double, deadline, 60, "deadline of each call, seconds");
ABSL_FLAG(int, warmup, -1, "untimed calls first (default: 1 in cached mode, else 0)");
ABSL_FLAG(int, nas_cell_types, 32, "nas: cells in the pool candidates draw from");
ABSL_FLAG(int, nas_blocks, 16, "nas: blocks per cell (3 ops each)");
ABSL_FLAG(int, nas_cells, 6, "nas: cells per candidate");
ABSL_FLAG(uint64_t, seed, 1, "nas, darts: seed of the candidate stream");
ABSL_FLAG(int, darts_cells, 6, "darts: cells per candidate (reductions at 1/3 and 2/3)");
ABSL_FLAG(int, darts_population, 16, "darts: population of the evolutionary search");
ABSL_FLAG(double, darts_resend, 0.1, "darts: probability of re-sending a survivor");
ABSL_FLAG(bool, darts_rename, false,
          "darts: give every candidate its own tensor names (a re-export by another tool)");
ABSL_FLAG(std::string, json, "", "also write the results as JSON to this file");
ABSL_FLAG(std::string, write_graphs, "",
          "nas, darts: also write every candidate as DIR/candidate<i>.pb (ordo.v1.Graph), "
          "so the CLI can reproduce it");
ABSL_FLAG(std::string, answers_dir, "",
          "write every OK Compile answer as DIR/answer<i>.json without what differs from "
          "run to run (stats, parts' times and cache flags), so two servers' answers to one "
          "stream can be diffed");
ABSL_FLAG(std::string, dump_response, "",
          "write the last OK response as JSON (protobuf mapping) to this file");
ABSL_FLAG(std::string, label, "", "a name for this run in the output");

namespace ordo::bench {
namespace {

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

// What one call returned.
struct CallRecord {
  int64_t index = 0;  // into the workload's stream
  absl::Duration latency;
  grpc::StatusCode code = grpc::StatusCode::OK;
  // From CompileResponse.stats (zero for Estimate).
  int32_t parts = 0;
  int32_t cache_hits = 0;
  int32_t cache_misses = 0;
  bool response_cached = false;
  bool single_flight_shared = false;
  absl::Duration server_time;
  absl::Duration server_schedule_time;  // stats.schedule_time
  // darts: the response's parts with their ops seen in earlier candidates
  // (empty for other modes and repeated candidates).
  std::vector<PartTiming> part_timings;
  // The response as JSON, only when --dump-response asks for it.
  std::string response_json;
  // Why --answers_dir did not get this call's answer (OK: it did, or was
  // not asked).
  absl::Status write_error;
};

// Requests to send, by index: one fixed request, or the NAS stream.
struct Workload {
  std::vector<v1::CompileRequest> compiles;
  std::vector<v1::EstimateRequest> estimates;
  bool info = false;  // GetInfo calls
  bool fixed = true;  // every index sends element 0
  // darts: whether candidate i's graph was sent before it up to names (the
  // server's name-free whole-request identity, CanonicalizeGraph), i.e. what
  // a perfect whole-request cache could answer.
  std::vector<bool> repeats_earlier;
  // darts: each candidate's cells, stem and head by identity, and how
  // often each kind of repeat occurs (bench/cache_ceiling.h).
  std::vector<StreamCandidate> segments;
  RepeatKinds repeat_kinds;
  // darts: per candidate, the names of its ops that lie in a segment an
  // earlier candidate held (empty for repeated candidates).
  std::vector<absl::flat_hash_set<std::string>> seen_ops;
};

// The names of the ops of `graph` in the segments `seen` marks.
absl::flat_hash_set<std::string> SeenOpNames(
    const v1::Graph& graph, absl::Span<const DartsCandidateStream::Segment> segments,
    const std::vector<bool>& seen) {
  absl::flat_hash_set<std::string> names;
  for (size_t s = 0; s < seen.size() && s < segments.size(); ++s) {
    if (!seen[s]) continue;
    for (int32_t k = 0; k < segments[s].ops; ++k) {
      names.insert(graph.ops(segments[s].first_op + k).name());
    }
  }
  return names;
}

absl::Status SetModel(const std::string& path, v1::CompileRequest& request) {
  if (path.empty()) return absl::InvalidArgumentError("--model is required in this mode");
  absl::StatusOr<std::string> bytes = ReadFile(path);
  if (!bytes.ok()) return bytes.status();
  if (absl::EndsWith(path, ".pb")) {
    if (!request.mutable_graph()->ParseFromString(*bytes)) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": not an ordo.v1.Graph"));
    }
  } else if (absl::EndsWith(path, ".json")) {
    if (!google::protobuf::util::JsonStringToMessage(*bytes, request.mutable_graph()).ok()) {
      return absl::InvalidArgumentError(absl::StrCat(path, ": not an ordo.v1.Graph as JSON"));
    }
  } else {
    request.set_onnx_model(*std::move(bytes));
  }
  return absl::OkStatus();
}

absl::StatusOr<Workload> BuildWorkload(const std::string& mode, const std::string& method,
                                       int64_t requests) {
  v1::CompileRequest base;
  v1::CompileOptions& options = *base.mutable_options();
  options.set_scheduler(absl::GetFlag(FLAGS_scheduler));
  options.set_arena_planner(absl::GetFlag(FLAGS_arena_planner));
  if (const double limit = absl::GetFlag(FLAGS_time_limit); limit > 0) {
    const absl::Duration d = absl::Seconds(limit);
    options.mutable_time_limit()->set_seconds(absl::ToInt64Seconds(d));
    options.mutable_time_limit()->set_nanos(
        static_cast<int32_t>(absl::ToInt64Nanoseconds(d % absl::Seconds(1))));
  }
  base.mutable_device()->set_alignment_bytes(absl::GetFlag(FLAGS_alignment));
  Workload workload;
  std::vector<v1::CompileRequest> compiles;
  if (method == "info") {
    // No model: GetInfo measures the transport and the per-call wrapper.
  } else if (mode == "cached" || mode == "cold") {
    if (absl::Status s = SetModel(absl::GetFlag(FLAGS_model), base); !s.ok()) return s;
    compiles.push_back(base);
  } else if (mode == "nas") {
    workload.fixed = false;
    NasCandidateStream stream({.cell_types = absl::GetFlag(FLAGS_nas_cell_types),
                               .blocks = absl::GetFlag(FLAGS_nas_blocks),
                               .cells = absl::GetFlag(FLAGS_nas_cells),
                               .seed = absl::GetFlag(FLAGS_seed)});
    for (int64_t i = 0; i < requests; ++i) {
      v1::CompileRequest& request = compiles.emplace_back(base);
      *request.mutable_graph() = stream.Next();
    }
  } else if (mode == "darts") {
    workload.fixed = false;
    DartsCandidateStream stream({.cells = absl::GetFlag(FLAGS_darts_cells),
                                 .population = absl::GetFlag(FLAGS_darts_population),
                                 .resend_probability = absl::GetFlag(FLAGS_darts_resend),
                                 .rename = absl::GetFlag(FLAGS_darts_rename),
                                 .seed = absl::GetFlag(FLAGS_seed)});
    absl::flat_hash_set<std::string> seen;
    std::vector<std::vector<DartsCandidateStream::Segment>> segments;
    for (int64_t i = 0; i < requests; ++i) {
      v1::CompileRequest& request = compiles.emplace_back(base);
      *request.mutable_graph() = stream.Next();
      absl::StatusOr<Graph> graph = GraphFromProto(request.graph());
      if (!graph.ok()) return graph.status();
      const bool repeat = !seen.insert(CanonicalizeGraph(*graph).form).second;
      workload.repeats_earlier.push_back(repeat);
      StreamCandidate& candidate = workload.segments.emplace_back();
      candidate.repeat = repeat;
      for (const DartsCandidateStream::Segment& segment : stream.last_segments()) {
        candidate.segments.push_back({segment.key, segment.ops, segment.cell});
      }
      segments.push_back(stream.last_segments());
    }
    workload.repeat_kinds = RepeatKindsOf(workload.segments);
    for (size_t i = 0; i < compiles.size(); ++i) {
      workload.seen_ops.push_back(
          SeenOpNames(compiles[i].graph(), segments[i], workload.repeat_kinds.seen_before[i]));
    }
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unknown --mode=", mode));
  }
  if (method == "compile") {
    workload.compiles = std::move(compiles);
  } else if (method == "estimate") {
    for (const v1::CompileRequest& c : compiles) {
      v1::EstimateRequest& e = workload.estimates.emplace_back();
      if (c.has_graph()) {
        *e.mutable_graph() = c.graph();
      } else {
        e.set_onnx_model(c.onnx_model());
      }
      *e.mutable_options() = c.options();
      *e.mutable_device() = c.device();
    }
  } else if (method == "info") {
    workload.info = true;
  } else {
    return absl::InvalidArgumentError(absl::StrCat("unknown --method=", method));
  }
  return workload;
}

absl::Duration DurationOf(const google::protobuf::Duration& d) {
  return absl::Seconds(d.seconds()) + absl::Nanoseconds(d.nanos());
}

// The response's parts (each a run of its schedule, in order) with their
// scheduling time and how many of their ops are in `seen`.
std::vector<PartTiming> PartTimingsOf(const v1::CompileResponse& response,
                                      const absl::flat_hash_set<std::string>& seen) {
  std::vector<PartTiming> parts;
  int32_t next = 0;
  for (const v1::PartStats& part : response.parts()) {
    PartTiming& timing = parts.emplace_back();
    timing.time = DurationOf(part.time());
    timing.ops = part.ops();
    for (int32_t k = 0; k < part.ops() && next < response.schedule_size(); ++k, ++next) {
      timing.seen_ops += seen.contains(response.schedule(next));
    }
  }
  return parts;
}

// `path` holds `text` and a newline; an error names the file.
absl::Status WriteText(const std::string& path, const std::string& text) {
  std::ofstream file(path);
  file << text << "\n";
  file.close();
  if (!file) return absl::UnavailableError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

// `response` without what two runs of one request may differ in (timings,
// where parts came from), as JSON in `path`.
absl::Status WriteAnswer(v1::CompileResponse response, const std::string& path) {
  response.clear_stats();
  for (v1::PartStats& part : *response.mutable_parts()) {
    part.clear_time();
    part.clear_cached();
    part.clear_states_expanded();
  }
  std::string json;
  if (const auto converted = google::protobuf::util::MessageToJsonString(response, &json);
      !converted.ok()) {
    return absl::InternalError(
        absl::StrCat("answer for ", path, " as JSON: ", converted.ToString()));
  }
  return WriteText(path, json);
}

CallRecord Call(v1::Compiler::Stub& stub, const Workload& workload, int64_t index,
                absl::Duration deadline) {
  const size_t i = workload.fixed ? 0 : static_cast<size_t>(index);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + deadline));
  CallRecord record;
  record.index = index;
  const absl::Time start = absl::Now();
  if (workload.info) {
    v1::GetInfoResponse response;
    const grpc::Status status = stub.GetInfo(&context, v1::GetInfoRequest(), &response);
    record.latency = absl::Now() - start;
    record.code = status.error_code();
  } else if (!workload.compiles.empty()) {
    v1::CompileResponse response;
    const grpc::Status status = stub.Compile(&context, workload.compiles[i], &response);
    record.latency = absl::Now() - start;
    record.code = status.error_code();
    const v1::CompileStats& stats = response.stats();
    record.parts = stats.parts();
    record.cache_hits = stats.cache_hits();
    record.cache_misses = stats.cache_misses();
    record.response_cached = stats.response_cached();
    record.single_flight_shared = stats.single_flight_shared();
    record.server_time = DurationOf(stats.time());
    record.server_schedule_time = DurationOf(stats.schedule_time());
    if (status.ok() && i < workload.seen_ops.size() && !workload.repeats_earlier[i]) {
      record.part_timings = PartTimingsOf(response, workload.seen_ops[i]);
    }
    if (const std::string dir = absl::GetFlag(FLAGS_answers_dir); status.ok() && !dir.empty()) {
      record.write_error = WriteAnswer(response, absl::StrCat(dir, "/answer", index, ".json"));
    }
    if (status.ok() && !absl::GetFlag(FLAGS_dump_response).empty()) {
      response.clear_reordered_onnx_model();
      (void)google::protobuf::util::MessageToJsonString(response, &record.response_json);
    }
  } else {
    v1::EstimateResponse response;
    const grpc::Status status = stub.Estimate(&context, workload.estimates[i], &response);
    record.latency = absl::Now() - start;
    record.code = status.error_code();
    record.parts = response.parts();
    record.cache_hits = response.cached_parts();
    record.cache_misses = response.parts() - response.cached_parts();
  }
  return record;
}

double Ms(absl::Duration d) { return absl::ToDoubleMilliseconds(d); }

constexpr const char* kRepeatKindNames[kRepeatKinds] = {"repeated_candidate", "within_candidate",
                                                        "across_candidates", "new"};

void PrintRepeatKinds(const RepeatKinds& kinds) {
  const auto row = [](const char* what, const RepeatCounts& counts) {
    std::printf("  %-10s", what);
    for (int k = 0; k < kRepeatKinds; ++k) {
      std::printf("  %s %lld", kRepeatKindNames[k], static_cast<long long>(counts.by_kind[k]));
    }
    std::printf("  (of %lld)\n", static_cast<long long>(counts.total()));
  };
  std::printf("  repeats by kind: candidates %lld, repeated %lld\n",
              static_cast<long long>(kinds.candidates),
              static_cast<long long>(kinds.repeated_candidates));
  row("cells", kinds.cells);
  row("cell ops", kinds.cell_ops);
  row("stem+head", kinds.other_ops);
}

nlohmann::ordered_json RepeatKindsJson(const RepeatKinds& kinds) {
  nlohmann::ordered_json out;
  out["candidates"] = kinds.candidates;
  out["repeated_candidates"] = kinds.repeated_candidates;
  for (const auto& [name, counts] : {std::pair{"cells", &kinds.cells},
                                     std::pair{"cell_ops", &kinds.cell_ops},
                                     std::pair{"stem_head_ops", &kinds.other_ops}}) {
    for (int k = 0; k < kRepeatKinds; ++k) out[name][kRepeatKindNames[k]] = counts->by_kind[k];
  }
  return out;
}

// A failure of the run as ordo-load's exit code, after its message: 2 for
// bad flags (INVALID_ARGUMENT), 1 for anything else.
int Fail(const absl::Status& status) {
  std::fprintf(stderr, "ordo-load: %s\n", std::string(status.message()).c_str());
  return absl::IsInvalidArgument(status) ? 2 : 1;
}

// --write_graphs: every candidate's graph as an ordo.v1.Graph file.
absl::Status WriteGraphs(const Workload& workload, const std::string& dir) {
  for (size_t i = 0; i < workload.compiles.size(); ++i) {
    const std::string path = absl::StrCat(dir, "/candidate", i, ".pb");
    if (!(std::ofstream(path, std::ios::binary)
          << workload.compiles[i].graph().SerializeAsString())) {
      return absl::InvalidArgumentError(absl::StrCat("cannot write ", path));
    }
  }
  return absl::OkStatus();
}

// The server the calls go to: --server, or one started here (--spawn).
struct Target {
  std::unique_ptr<ChildProcess> spawned;
  std::vector<std::string> server_argv;  // of the spawned server
  std::string address;
};

absl::StatusOr<Target> StartTarget(const std::string& mode, int concurrency) {
  Target target;
  target.address = absl::GetFlag(FLAGS_server);
  if (absl::GetFlag(FLAGS_spawn)) {
    std::vector<std::string>& argv = target.server_argv;
    argv = {absl::GetFlag(FLAGS_server_binary), "--listen=127.0.0.1:0", "--metrics-port=0",
            "--log-level=warning",
            // Calls beyond the limit would fail RESOURCE_EXHAUSTED.
            absl::StrCat("--max-concurrent=", std::max(8, concurrency))};
    if (absl::GetFlag(FLAGS_local_workers) >= 0) {
      argv.push_back(absl::StrCat("--local-workers=", absl::GetFlag(FLAGS_local_workers)));
    }
    if (mode == "cold") argv.push_back("--cache-mb=0");
    for (absl::string_view flag :
         absl::StrSplit(absl::GetFlag(FLAGS_server_flags), ' ', absl::SkipWhitespace())) {
      argv.emplace_back(flag);
    }
    absl::StatusOr<std::unique_ptr<ChildProcess>> started =
        ChildProcess::StartListening(argv, ChildProcess::Options{});
    if (!started.ok()) return absl::UnavailableError(started.status().ToString());
    target.spawned = *std::move(started);
    target.address = target.spawned->address();
  }
  if (target.address.empty()) {
    return absl::InvalidArgumentError("give --server=HOST:PORT or --spawn");
  }
  if (!absl::StartsWith(target.address, "127.") &&
      !absl::StartsWith(target.address, "localhost:") &&
      !absl::StartsWith(target.address, "[::1]:")) {
    return absl::InvalidArgumentError(
        absl::StrCat("loopback servers only (got ", target.address, ")"));
  }
  return target;
}

// What the timed calls returned, in no particular order.
struct Calls {
  std::vector<CallRecord> records;
  absl::Duration elapsed;
};

// The untimed warm-up calls, then the timed ones from `concurrency`
// threads until --requests were started or --duration passed.
absl::StatusOr<Calls> SendCalls(v1::Compiler::Stub& stub, const Workload& workload,
                                const std::string& mode, int concurrency, int64_t max_requests) {
  const absl::Duration duration = absl::Seconds(absl::GetFlag(FLAGS_duration));
  const absl::Duration deadline = absl::Seconds(absl::GetFlag(FLAGS_deadline));
  int warmup = absl::GetFlag(FLAGS_warmup);
  if (warmup < 0) warmup = mode == "cached" ? 1 : 0;
  for (int i = 0; i < warmup; ++i) {
    // In nas mode the warm-up sends the first candidates, and the timed
    // stream starts after them.
    const CallRecord r = Call(stub, workload, std::min<int64_t>(i, max_requests - 1), deadline);
    if (r.code != grpc::StatusCode::OK) {
      return absl::UnavailableError(
          absl::StrCat("warm-up call failed: ", rpc::GrpcCodeName(r.code)));
    }
  }
  const int64_t first_index = workload.fixed ? 0 : std::min<int64_t>(warmup, max_requests);

  std::atomic<int64_t> next{first_index};
  absl::Mutex mu;
  Calls calls;
  calls.records.reserve(static_cast<size_t>(max_requests));
  const absl::Time start = absl::Now();
  const absl::Time stop = start + duration;
  std::vector<std::thread> threads;
  for (int t = 0; t < concurrency; ++t) {
    threads.emplace_back([&] {
      std::vector<CallRecord> mine;
      while (absl::Now() < stop) {
        const int64_t index = next.fetch_add(1);
        if (index >= max_requests) break;
        mine.push_back(Call(stub, workload, index, deadline));
      }
      absl::MutexLock lock(&mu);
      calls.records.insert(calls.records.end(), mine.begin(), mine.end());
    });
  }
  for (std::thread& thread : threads) thread.join();
  calls.elapsed = absl::Now() - start;
  return calls;
}

// --answers_dir and --dump_response: the files the calls were to write.
absl::Status CheckWrittenAnswers(const std::vector<CallRecord>& records) {
  for (const CallRecord& r : records) {
    if (!r.write_error.ok()) return r.write_error;
  }
  const std::string path = absl::GetFlag(FLAGS_dump_response);
  if (path.empty()) return absl::OkStatus();
  for (auto r = records.rbegin(); r != records.rend(); ++r) {
    if (!r->response_json.empty()) return WriteText(path, r->response_json);
  }
  return absl::OkStatus();
}

// What a run's calls add up to.
struct Tally {
  int64_t calls = 0;
  double seconds = 0;
  double requests_per_second = 0;
  LatencySummary latency, server, failed, whole_hit, computed;
  std::map<std::string, int64_t> codes;
  int64_t parts = 0, hits = 0, misses = 0, whole_hits = 0, shared = 0;
  double hit_rate = 0;
  // darts at concurrency 1: the ceilings, with scheduling time
  // proportional to ops and growing as `exponent` fitted to the largest
  // parts (0: nothing to fit, and no fitted ceiling).
  CacheCeiling ceiling, fitted_ceiling;
  double exponent = 0;
  std::vector<OpsBin> bins;
};

// The window ceilings of `served` (darts, concurrency 1).
void AddCeilings(const std::vector<const CallRecord*>& served, const Workload& workload,
                 const std::vector<SizedTime>& largest_parts, Tally& tally) {
  tally.exponent = OpsExponent(largest_parts);
  const auto served_with = [&](double time_exponent) {
    std::vector<ServedCall> calls;
    for (const CallRecord* r : served) {
      calls.push_back({r->latency, r->server_schedule_time,
                       workload.repeats_earlier[static_cast<size_t>(r->index)],
                       FreeScheduleShare(r->part_timings, time_exponent)});
    }
    return calls;
  };
  tally.ceiling = CacheCeilingOf(served_with(1));
  if (tally.exponent > 0) tally.fitted_ceiling = CacheCeilingOf(served_with(tally.exponent));
}

Tally TallyOf(const Calls& calls, const Workload& workload, int concurrency) {
  Tally tally;
  std::vector<absl::Duration> ok_latencies, server_times, error_latencies;
  // Split by whether the server answered from its response cache.
  std::vector<absl::Duration> whole_hit_latencies, computed_latencies;
  std::vector<const CallRecord*> served_records;  // darts: OK calls
  std::vector<SizedTime> largest_parts;           // of computed first sends
  for (const CallRecord& r : calls.records) {
    ++tally.codes[rpc::GrpcCodeName(r.code)];
    if (r.code != grpc::StatusCode::OK) {
      error_latencies.push_back(r.latency);
      continue;
    }
    ok_latencies.push_back(r.latency);
    server_times.push_back(r.server_time);
    tally.parts += r.parts;
    tally.hits += r.cache_hits;
    tally.misses += r.cache_misses;
    tally.whole_hits += r.response_cached;
    (r.response_cached ? whole_hit_latencies : computed_latencies).push_back(r.latency);
    tally.shared += r.single_flight_shared;
    if (!workload.repeats_earlier.empty()) served_records.push_back(&r);
    const auto largest = std::max_element(
        r.part_timings.begin(), r.part_timings.end(),
        [](const PartTiming& a, const PartTiming& b) { return a.ops < b.ops; });
    if (largest != r.part_timings.end() && !r.response_cached &&
        largest->time > absl::ZeroDuration()) {
      largest_parts.push_back({largest->ops, largest->time});
    }
  }
  // Only at concurrency 1 is the stream's time the sum of its latencies.
  if (concurrency == 1) AddCeilings(served_records, workload, largest_parts, tally);
  tally.bins = ScheduleTimeByOps(largest_parts);
  tally.calls = static_cast<int64_t>(calls.records.size());
  tally.seconds = absl::ToDoubleSeconds(calls.elapsed);
  tally.requests_per_second = static_cast<double>(tally.calls) / tally.seconds;
  tally.latency = Summarize(ok_latencies);
  tally.server = Summarize(server_times);
  tally.failed = Summarize(error_latencies);
  tally.whole_hit = Summarize(whole_hit_latencies);
  tally.computed = Summarize(computed_latencies);
  const int64_t lookups = tally.hits + tally.misses;
  tally.hit_rate = lookups > 0 ? static_cast<double>(tally.hits) / lookups : 0;
  return tally;
}

void PrintCeilings(const Tally& tally) {
  const CacheCeiling& ceiling = tally.ceiling;
  if (ceiling.calls == 0) return;
  std::printf(
      "  cache ceiling  repeated candidates %lld of %lld; scheduling %.1f%% of the latency of "
      "the others; a perfect cache: at most %.2fx this run\n",
      static_cast<long long>(ceiling.repeats), static_cast<long long>(ceiling.calls),
      100 * ceiling.schedule_share, ceiling.speedup);
  std::printf(
      "  window ceiling  scheduling of cells seen in an earlier candidate %.1f%% of the latency "
      "of the others; a perfect cross-request cell cache: at most %.2fx this run\n",
      100 * ceiling.free_schedule_share, ceiling.window_speedup);
  // No exponent was fitted (too few timed parts): there is no such line.
  if (tally.exponent <= 0) return;
  std::printf(
      "  window ceiling, time ~ ops^%.2f (fitted below)  %.1f%% of the latency of the others; "
      "at most %.2fx this run\n",
      tally.exponent, 100 * tally.fitted_ceiling.free_schedule_share,
      tally.fitted_ceiling.window_speedup);
}

void PrintBins(const std::vector<OpsBin>& bins) {
  for (const OpsBin& bin : bins) {
    std::printf("  largest part %d-%d ops  %lld candidates  median %.3f ms, %.2f us per op\n",
                bin.min_ops, bin.max_ops, static_cast<long long>(bin.count), bin.median_ms,
                bin.median_us_per_op);
  }
}

void PrintTally(const Tally& t, const std::string& label, const std::string& method,
                const std::string& mode, int concurrency, const std::string& address,
                const Workload& workload) {
  std::printf("%s: %lld calls in %.2f s, concurrency %d, server %s\n", label.c_str(),
              static_cast<long long>(t.calls), t.seconds, concurrency, address.c_str());
  std::printf("  requests/s %.1f\n", t.requests_per_second);
  std::printf("  latency ms  mean %.3f  p50 %.3f  p90 %.3f  p99 %.3f  max %.3f\n",
              Ms(t.latency.mean), Ms(t.latency.p50), Ms(t.latency.p90), Ms(t.latency.p99),
              Ms(t.latency.max));
  if (method == "compile") {
    std::printf("  server-side ms (stats.time)  mean %.3f  p50 %.3f  p99 %.3f\n", Ms(t.server.mean),
                Ms(t.server.p50), Ms(t.server.p99));
  }
  std::printf("  parts %lld  cache hits %lld  misses %lld  part hit rate %.1f%%\n",
              static_cast<long long>(t.parts), static_cast<long long>(t.hits),
              static_cast<long long>(t.misses), 100 * t.hit_rate);
  if (method == "compile") {
    std::printf("  whole-request hits %lld  single-flight shares %lld\n",
                static_cast<long long>(t.whole_hits), static_cast<long long>(t.shared));
    std::printf("  latency ms  whole-request hits p50 %.3f p99 %.3f; others p50 %.3f p99 %.3f\n",
                Ms(t.whole_hit.p50), Ms(t.whole_hit.p99), Ms(t.computed.p50), Ms(t.computed.p99));
  }
  PrintCeilings(t);
  if (!workload.segments.empty()) PrintRepeatKinds(workload.repeat_kinds);
  PrintBins(t.bins);
  if (mode == "cold" && t.hits > 0) {
    std::fprintf(stderr,
                 "ordo-load: warning: the cold run saw %lld cache hits; start the server "
                 "with --cache-mb=0\n",
                 static_cast<long long>(t.hits));
  }
  std::string code_line;
  for (const auto& [code, count] : t.codes) absl::StrAppend(&code_line, " ", code, "=", count);
  std::printf("  status%s\n", code_line.c_str());
  if (t.failed.count > 0) {
    std::printf("  failed calls' latency ms  p50 %.3f  p99 %.3f  max %.3f\n", Ms(t.failed.p50),
                Ms(t.failed.p99), Ms(t.failed.max));
  }
}

nlohmann::ordered_json CeilingJson(const Tally& t) {
  nlohmann::ordered_json out = {{"repeated_candidates", t.ceiling.repeats},
                                {"schedule_share", t.ceiling.schedule_share},
                                {"speedup", t.ceiling.speedup},
                                {"free_schedule_share", t.ceiling.free_schedule_share},
                                {"window_speedup", t.ceiling.window_speedup},
                                {"ops_exponent", t.exponent}};
  if (t.exponent > 0) {
    out["fitted_free_schedule_share"] = t.fitted_ceiling.free_schedule_share;
    out["fitted_window_speedup"] = t.fitted_ceiling.window_speedup;
  }
  return out;
}

nlohmann::ordered_json TallyJson(const Tally& t, const std::string& label,
                                 const std::string& method, const std::string& mode,
                                 int concurrency, const Target& target, const Workload& workload) {
  nlohmann::ordered_json out;
  out["label"] = label;
  out["method"] = method;
  out["mode"] = mode;
  out["model"] = absl::GetFlag(FLAGS_model);
  out["server"] = target.spawned ? nlohmann::ordered_json(target.server_argv)
                                 : nlohmann::ordered_json(target.address);
  out["concurrency"] = concurrency;
  out["calls"] = t.calls;
  out["seconds"] = t.seconds;
  out["requests_per_second"] = t.requests_per_second;
  out["latency_ms"] = {{"mean", Ms(t.latency.mean)},
                       {"p50", Ms(t.latency.p50)},
                       {"p90", Ms(t.latency.p90)},
                       {"p99", Ms(t.latency.p99)},
                       {"max", Ms(t.latency.max)}};
  out["server_time_ms"] = {
      {"mean", Ms(t.server.mean)}, {"p50", Ms(t.server.p50)}, {"p99", Ms(t.server.p99)}};
  out["error_latency_ms"] = {
      {"p50", Ms(t.failed.p50)}, {"p99", Ms(t.failed.p99)}, {"max", Ms(t.failed.max)}};
  out["parts"] = t.parts;
  out["cache_hits"] = t.hits;
  out["cache_misses"] = t.misses;
  out["part_hit_rate"] = t.hit_rate;
  out["whole_request_hits"] = t.whole_hits;
  out["single_flight_shares"] = t.shared;
  out["latency_ms_whole_request_hits"] = {{"p50", Ms(t.whole_hit.p50)},
                                          {"p99", Ms(t.whole_hit.p99)}};
  out["latency_ms_others"] = {{"p50", Ms(t.computed.p50)}, {"p99", Ms(t.computed.p99)}};
  if (t.ceiling.calls > 0) out["cache_ceiling"] = CeilingJson(t);
  if (!workload.segments.empty()) out["repeat_kinds"] = RepeatKindsJson(workload.repeat_kinds);
  for (const OpsBin& bin : t.bins) {
    out["largest_part_time_by_ops"].push_back({{"min_ops", bin.min_ops},
                                               {"max_ops", bin.max_ops},
                                               {"candidates", bin.count},
                                               {"median_ms", bin.median_ms},
                                               {"median_us_per_op", bin.median_us_per_op}});
  }
  out["status"] = t.codes;
  return out;
}

int Run() {
  const std::string mode = absl::GetFlag(FLAGS_mode);
  const std::string method = absl::GetFlag(FLAGS_method);
  const int concurrency = std::max(1, absl::GetFlag(FLAGS_concurrency));
  const int64_t max_requests = std::max<int64_t>(1, absl::GetFlag(FLAGS_requests));

  absl::StatusOr<Workload> workload = BuildWorkload(mode, method, max_requests);
  if (!workload.ok()) return Fail(absl::InvalidArgumentError(workload.status().ToString()));
  if (const std::string dir = absl::GetFlag(FLAGS_write_graphs); !dir.empty()) {
    if (const absl::Status written = WriteGraphs(*workload, dir); !written.ok()) {
      return Fail(written);
    }
  }
  absl::StatusOr<Target> target = StartTarget(mode, concurrency);
  if (!target.ok()) return Fail(target.status());

  grpc::ChannelArguments channel_args;
  channel_args.SetMaxReceiveMessageSize(256 << 20);
  channel_args.SetMaxSendMessageSize(256 << 20);
  std::shared_ptr<grpc::Channel> channel =
      grpc::CreateCustomChannel(target->address, grpc::InsecureChannelCredentials(), channel_args);
  std::unique_ptr<v1::Compiler::Stub> stub = v1::Compiler::NewStub(channel);
  if (!channel->WaitForConnected(absl::ToChronoTime(absl::Now() + absl::Seconds(10)))) {
    return Fail(absl::UnavailableError(absl::StrCat("cannot connect to ", target->address)));
  }
  absl::StatusOr<Calls> calls = SendCalls(*stub, *workload, mode, concurrency, max_requests);
  if (!calls.ok()) return Fail(calls.status());
  const absl::Status answers_written = CheckWrittenAnswers(calls->records);

  const Tally tally = TallyOf(*calls, *workload, concurrency);
  const std::string label = absl::GetFlag(FLAGS_label).empty() ? absl::StrCat(method, "/", mode)
                                                               : absl::GetFlag(FLAGS_label);
  PrintTally(tally, label, method, mode, concurrency, target->address, *workload);
  if (!answers_written.ok()) return Fail(answers_written);
  if (const std::string path = absl::GetFlag(FLAGS_json); !path.empty()) {
    const absl::Status written = WriteText(
        path, TallyJson(tally, label, method, mode, concurrency, *target, *workload).dump(2));
    if (!written.ok()) return Fail(written);
  }
  // Idle connections hold the server's graceful shutdown: close ours first.
  stub.reset();
  channel.reset();
  target->spawned.reset();
  return tally.codes.size() == 1 && tally.codes.count("OK") ? 0 : 1;
}

}  // namespace
}  // namespace ordo::bench

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "ordo-load (--server=HOST:PORT | --spawn) --mode=cached|cold|nas [--model=FILE] ...");
  if (const absl::Status parsed = ordo::rpc::ParseDashedCommandLine(argc, argv); !parsed.ok()) {
    std::fprintf(stderr, "%s: %s\n", "ordo-load", std::string(parsed.message()).c_str());
    return 2;
  }
  return ordo::bench::Run();
}
