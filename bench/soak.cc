// ordo-soak: a soak run of the whole service (issue 8, "Load and soak").
//
// Starts a real redis-server, and an ordo-server that supervises --workers
// ordo-worker processes (or, with --remote-workers, is given them as
// --workers) and caches parts in that Redis, all on loopback ports picked
// at run time. For --seconds, --clients threads (each with its
// own channel) send a mix of
//   cold    fresh NAS-like candidates (random cells, random activation
//           shapes), so their parts and the whole request miss every cache;
//   cached  repeats of a fixed set (the example ONNX models and two fixed
//           candidates), each sent once before the clock starts;
//   bad     requests that must fail with their documented code: garbage and
//           truncated ONNX, a cycle, an undefined input, a negative device
//           memory (INVALID_ARGUMENT), more ops than --max-ops and a message
//           over --max-message-mb (RESOURCE_EXHAUSTED).
// Every --kill-interval one worker is sent SIGKILL (the server's supervisor
// restarts it; remote ones are restarted here on the same port). Every OK response is re-validated
// against the client's own copy of the model (rpc::CompileResultFromProto: the schedule is a
// topological order of ITS graph and core's simulator gives the reported
// peak), exactly as `ordo compile --server` does.
//
// Fails (exit 1) on any wrong answer, any unexpected status, or any process
// exit it did not cause (front, Redis, or a worker it did not kill); exit 2
// on bad flags or a set-up failure. Prints counts by kind and code, p50/p99
// latency per kind and the front's RSS at start, after warm-up (just before
// the first kill) and at the end; --json writes the same. Bounded: clients
// stop starting calls at --seconds; each call has --deadline.

#include <signal.h>
#include <sys/wait.h>

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <fstream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "absl/flags/flag.h"
#include "absl/flags/usage.h"
#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/synchronization/mutex.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "bench/latency_summary.h"
#include "bench/nas_candidates.h"
#include "core/compile/import_model.h"
#include "core/graph/graph_proto.h"
#include "core/testing/test_paths.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "nlohmann/json.hpp"
#include "ordo/v1/compiler_service.grpc.pb.h"
#include "rpc/compile_proto.h"
#include "rpc/flag_names.h"
#include "rpc/grpc_status.h"
#include "sys/child_process.h"

ABSL_FLAG(double, seconds, 600, "how long clients send requests");
ABSL_FLAG(int, clients, 4, "concurrent clients, each with its own channel");
ABSL_FLAG(int, workers, 2, "ordo-worker processes");
ABSL_FLAG(bool, remote_workers, false,
          "run the workers here and give them to the server as --workers (restarting a "
          "killed one on its port), instead of the server's supervised --local-workers");
ABSL_FLAG(double, kill_interval, 0,
          "seconds between worker kills (0: SECONDS/6, at least 5 and at most 60)");
ABSL_FLAG(double, time_limit, 2, "CompileOptions.time_limit of every compile, seconds");
ABSL_FLAG(double, deadline, 60, "deadline of every call, seconds");
ABSL_FLAG(uint64_t, seed, 1, "seed of the request mix");
ABSL_FLAG(std::string, server_binary, ordo::testing::ServerBinary(), "the ordo-server");
ABSL_FLAG(std::string, worker_binary, ordo::testing::WorkerBinary(), "the ordo-worker");
ABSL_FLAG(std::string, redis_binary, "/usr/bin/redis-server", "the redis-server");
ABSL_FLAG(std::string, models_dir, ordo::testing::ExampleModelsDir(),
          "ONNX models of the cached repeats (small_resnet.onnx, tiny_cell.onnx, ...)");
ABSL_FLAG(std::string, log, "/dev/null", "append the server's and Redis's stderr to this file");
ABSL_FLAG(std::string, json, "", "also write the results as JSON to this file");

namespace ordo::bench {
namespace {

// The server's limits, low enough that over-limit requests stay cheap.
constexpr int64_t kMaxOps = 5000;
constexpr int64_t kMaxMessageMb = 4;

enum class Kind { kCold, kCached, kBad };
constexpr const char* kKindNames[] = {"cold", "cached", "bad"};

// One request and what must come back.
struct Probe {
  Kind kind;
  std::string name;  // the bad case, or the cached model
  v1::CompileRequest request;
  // OK: re-validate against `graph` (the client's copy); else the code and
  // a piece of the message the server must return.
  grpc::StatusCode expected = grpc::StatusCode::OK;
  std::string expected_message;
  std::shared_ptr<const Graph> graph;
};

// What one call returned and how it was judged.
struct Outcome {
  Kind kind;
  std::string name;
  grpc::StatusCode code;
  absl::Duration latency;
  bool wrong = false;       // OK, but the answer does not hold up
  bool unexpected = false;  // a status other than the one expected
  std::string detail;
  // From CompileResponse.stats of an OK call: where the parts came from.
  int32_t parts = 0, cache_hits = 0, task_retries = 0, fallback_parts = 0;
  bool response_cached = false;
};

absl::StatusOr<std::string> ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

void SetOptions(v1::CompileRequest& request, absl::Duration time_limit) {
  google::protobuf::Duration& limit = *request.mutable_options()->mutable_time_limit();
  limit.set_seconds(absl::ToInt64Seconds(time_limit));
  limit.set_nanos(static_cast<int32_t>(absl::ToInt64Nanoseconds(time_limit % absl::Seconds(1))));
}

// A graph probe whose model the client imports itself for re-validation.
absl::StatusOr<Probe> GraphProbe(Kind kind, std::string name, v1::Graph graph,
                                 absl::Duration time_limit) {
  Probe probe{kind, std::move(name), {}, grpc::StatusCode::OK, "", nullptr};
  absl::StatusOr<Graph> own = GraphFromProto(graph);
  if (!own.ok()) return own.status();
  probe.graph = std::make_shared<const Graph>(*std::move(own));
  *probe.request.mutable_graph() = std::move(graph);
  SetOptions(probe.request, time_limit);
  return probe;
}

// A fresh candidate: its own pool of random cells with a random activation
// shape, so neither its parts nor the whole request were seen before.
v1::Graph ColdCandidate(std::mt19937_64& rng) {
  std::uniform_int_distribution<int32_t> blocks(3, 7);
  std::uniform_int_distribution<int64_t> channels(8, 64);
  std::uniform_int_distribution<int64_t> size(4, 24);
  NasCandidateStream stream({.cell_types = 4,
                             .blocks = blocks(rng),
                             .cells = 6,
                             .channels = channels(rng),
                             .size = size(rng),
                             .seed = rng()});
  return stream.Next();
}

// A small graph from (name, inputs, output) triples; 16-byte tensors.
v1::Graph TinyGraph(
    const std::vector<std::tuple<std::string, std::vector<std::string>, std::string>>& ops,
    const std::string& input, const std::string& output) {
  v1::Graph graph;
  graph.set_name("bad");
  std::set<std::string> tensors = {input, output};
  for (const auto& [name, inputs, out] : ops) {
    v1::Op* op = graph.add_ops();
    op->set_name(name);
    op->set_type("Relu");
    for (const std::string& in : inputs) {
      op->add_inputs(in);
      tensors.insert(in);
    }
    op->add_outputs(out);
    tensors.insert(out);
  }
  for (const std::string& name : tensors) {
    v1::Tensor* tensor = graph.add_tensors();
    tensor->set_name(name);
    tensor->set_size_bytes(16);
  }
  graph.add_inputs(input);
  graph.add_outputs(output);
  return graph;
}

// The fixed requests: cached repeats and bad cases. Built once, shared
// read-only by every client.
struct ProbeSet {
  std::vector<Probe> cached;
  std::vector<Probe> bad;
};

absl::StatusOr<ProbeSet> BuildProbeSet(const std::string& models_dir, absl::Duration time_limit) {
  ProbeSet set;
  std::string small_resnet;
  for (const char* model : {"small_resnet", "tiny_cell", "shape_subgraph"}) {
    const std::string path = absl::StrCat(models_dir, "/", model, ".onnx");
    absl::StatusOr<std::string> bytes = ReadFile(path);
    if (!bytes.ok()) return bytes.status();
    absl::StatusOr<Graph> graph = ImportModel(*bytes, ModelFormat::kOnnx);
    if (!graph.ok()) return graph.status();
    Probe& probe = set.cached.emplace_back();
    probe.kind = Kind::kCached;
    probe.name = model;
    probe.graph = std::make_shared<const Graph>(*std::move(graph));
    probe.request.set_onnx_model(*bytes);
    SetOptions(probe.request, time_limit);
    if (small_resnet.empty()) small_resnet = *std::move(bytes);
  }
  for (uint64_t seed : {11, 12}) {
    NasCandidateStream stream({.seed = seed});
    absl::StatusOr<Probe> probe =
        GraphProbe(Kind::kCached, absl::StrCat("nas", seed), stream.Next(), time_limit);
    if (!probe.ok()) return probe.status();
    set.cached.push_back(*std::move(probe));
  }

  auto bad = [&](std::string name, grpc::StatusCode code, std::string message) -> Probe& {
    Probe& probe = set.bad.emplace_back();
    probe.kind = Kind::kBad;
    probe.name = std::move(name);
    probe.expected = code;
    probe.expected_message = std::move(message);
    SetOptions(probe.request, time_limit);
    return probe;
  };
  std::mt19937_64 rng(7);
  std::string garbage(1000, '\0');
  for (char& c : garbage) c = static_cast<char>(rng());
  bad("garbage_onnx", grpc::StatusCode::INVALID_ARGUMENT, "ONNX").request.set_onnx_model(garbage);
  bad("truncated_onnx", grpc::StatusCode::INVALID_ARGUMENT, "ONNX")
      .request.set_onnx_model(small_resnet.substr(0, small_resnet.size() / 2 + 1));
  *bad("cycle", grpc::StatusCode::INVALID_ARGUMENT, "cycle through op").request.mutable_graph() =
      TinyGraph({{"a", {"x", "t2"}, "t1"}, {"b", {"t1"}, "t2"}, {"c", {"t2"}, "y"}}, "x", "y");
  // "ghost" is read but neither declared nor produced (a declared tensor
  // nobody produces would be a weight).
  v1::Graph& undefined =
      *bad("undefined_input", grpc::StatusCode::INVALID_ARGUMENT, "ghost").request.mutable_graph();
  undefined = TinyGraph({{"a", {"x"}, "y"}}, "x", "y");
  undefined.mutable_ops(0)->add_inputs("ghost");
  v1::Graph& chain =
      *bad("too_many_ops", grpc::StatusCode::RESOURCE_EXHAUSTED, "limit").request.mutable_graph();
  std::vector<std::tuple<std::string, std::vector<std::string>, std::string>> ops;
  for (int64_t i = 0; i <= kMaxOps; ++i) {
    ops.push_back({absl::StrCat("op", i), {absl::StrCat("t", i)}, absl::StrCat("t", i + 1)});
  }
  chain = TinyGraph(ops, "t0", absl::StrCat("t", kMaxOps + 1));
  bad("too_large_message", grpc::StatusCode::RESOURCE_EXHAUSTED, "larger than max")
      .request.set_onnx_model(std::string((kMaxMessageMb << 20) + 1024, 'x'));
  Probe& negative = bad("negative_device_memory", grpc::StatusCode::INVALID_ARGUMENT,
                        "device.memory_capacity_bytes");
  *negative.request.mutable_graph() = NasCandidateStream({.seed = 13}).Next();
  negative.request.mutable_device()->set_memory_capacity_bytes(-1);
  return set;
}

// Sends `probe` and judges the answer.
Outcome Send(v1::Compiler::Stub& stub, const Probe& probe, absl::Duration deadline) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + deadline));
  v1::CompileResponse response;
  const absl::Time start = absl::Now();
  const grpc::Status status = stub.Compile(&context, probe.request, &response);
  Outcome outcome{probe.kind, probe.name, status.error_code(), absl::Now() - start};
  if (status.error_code() != probe.expected) {
    outcome.unexpected = true;
    outcome.detail =
        absl::StrCat(kKindNames[static_cast<int>(probe.kind)], " ", probe.name, ": expected ",
                     rpc::GrpcCodeName(probe.expected), ", got ",
                     rpc::GrpcCodeName(status.error_code()), " ", status.error_message());
  } else if (!status.ok()) {
    // The right code must come with a message naming the problem.
    if (!absl::StrContains(status.error_message(), probe.expected_message)) {
      outcome.unexpected = true;
      outcome.detail = absl::StrCat("bad ", probe.name, ": message \"", status.error_message(),
                                    "\" lacks \"", probe.expected_message, "\"");
    }
  } else {
    const v1::CompileStats& stats = response.stats();
    outcome.parts = stats.parts();
    outcome.cache_hits = stats.cache_hits();
    outcome.task_retries = stats.task_retries();
    outcome.fallback_parts = stats.fallback_parts();
    outcome.response_cached = stats.response_cached();
    // rpc::CompileResultFromProto trusts nothing: names resolve in the
    // client's graph, the schedule is a topological order of it, and the
    // simulator's peak equals the server's.
    absl::StatusOr<CompileOptions> options =
        rpc::CompileOptionsFromProto(probe.request.options(), probe.request.device());
    absl::Status valid = options.status();
    if (valid.ok()) valid = rpc::CompileResultFromProto(*probe.graph, *options, response).status();
    if (valid.ok() && response.ops() != probe.graph->num_ops()) {
      valid = absl::InternalError(
          absl::StrCat("response has ", response.ops(), " ops, model ", probe.graph->num_ops()));
    }
    if (!valid.ok()) {
      outcome.wrong = true;
      outcome.detail = absl::StrCat(kKindNames[static_cast<int>(probe.kind)], " ", probe.name, ": ",
                                    valid.message());
    }
  }
  return outcome;
}

// The run's shared state: what the clients recorded.
class Recorder {
 public:
  void Add(std::vector<Outcome> outcomes) {
    absl::MutexLock lock(&mu_);
    for (Outcome& o : outcomes) outcomes_.push_back(std::move(o));
  }
  void Count(const Outcome& o) {
    calls_.fetch_add(1);
    if (o.wrong) wrong_.fetch_add(1);
    if (o.unexpected) unexpected_.fetch_add(1);
  }
  int64_t calls() const { return calls_.load(); }
  int64_t wrong() const { return wrong_.load(); }
  int64_t unexpected() const { return unexpected_.load(); }
  std::vector<Outcome> Take() {
    absl::MutexLock lock(&mu_);
    return std::move(outcomes_);
  }

 private:
  absl::Mutex mu_;
  std::vector<Outcome> outcomes_ ABSL_GUARDED_BY(mu_);
  std::atomic<int64_t> calls_{0}, wrong_{0}, unexpected_{0};
};

// One client: its own channel; until `stop`, a cold candidate 40% of the
// time, a cached repeat 45%, a bad request 15%.
void RunClient(const std::string& address, int index, const ProbeSet& probes, absl::Time stop,
               Recorder& recorder) {
  grpc::ChannelArguments args;
  args.SetMaxSendMessageSize(64 << 20);  // so the over-size request reaches the server
  args.SetMaxReceiveMessageSize(64 << 20);
  args.SetInt("ordo.soak.client", index);  // a channel (and connection) of its own
  args.SetInt(GRPC_ARG_USE_LOCAL_SUBCHANNEL_POOL, 1);
  std::shared_ptr<grpc::Channel> channel =
      grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args);
  std::unique_ptr<v1::Compiler::Stub> stub = v1::Compiler::NewStub(channel);
  std::mt19937_64 rng(absl::GetFlag(FLAGS_seed) * 1000 + index);
  const absl::Duration time_limit = absl::Seconds(absl::GetFlag(FLAGS_time_limit));
  const absl::Duration deadline = absl::Seconds(absl::GetFlag(FLAGS_deadline));
  std::vector<Outcome> outcomes;
  while (absl::Now() < stop) {
    const int dice = std::uniform_int_distribution<int>(0, 99)(rng);
    Outcome outcome;
    if (dice < 40) {
      absl::StatusOr<Probe> cold =
          GraphProbe(Kind::kCold, "candidate", ColdCandidate(rng), time_limit);
      if (!cold.ok()) {  // a generator bug, not the server's
        outcome = {Kind::kCold,
                   "candidate",
                   grpc::StatusCode::OK,
                   absl::ZeroDuration(),
                   false,
                   true,
                   absl::StrCat("cold candidate does not import: ", cold.status().message())};
      } else {
        outcome = Send(*stub, *cold, deadline);
      }
    } else if (dice < 85) {
      outcome = Send(*stub, probes.cached[rng() % probes.cached.size()], deadline);
    } else {
      outcome = Send(*stub, probes.bad[rng() % probes.bad.size()], deadline);
    }
    // The first few problems as they happen; all are counted.
    if (!outcome.detail.empty() && recorder.wrong() + recorder.unexpected() < 10) {
      std::fprintf(stderr, "ordo-soak: %s\n", outcome.detail.c_str());
    }
    recorder.Count(outcome);
    outcomes.push_back(std::move(outcome));
  }
  recorder.Add(std::move(outcomes));
}

// The workers under test, watched by polling (call Poll every ~100 ms): a
// worker that exits without having been killed here is a crash.
class WorkerFleet {
 public:
  virtual ~WorkerFleet() = default;
  // Notes exits and restarts.
  virtual void Poll() = 0;
  // SIGKILLs the `n`-th running worker (round robin); false when none runs.
  virtual bool KillOne(int n) = 0;
  virtual size_t live() const = 0;
  int64_t kills() const { return kills_; }
  int64_t restarts() const { return restarts_; }
  int64_t unexpected_exits() const { return unexpected_exits_; }

 protected:
  void NoteUnexpectedExit(pid_t pid, const std::string& how) {
    ++unexpected_exits_;
    std::fprintf(stderr, "ordo-soak: worker %d exited without being killed (%s)\n", pid,
                 how.c_str());
  }
  int64_t kills_ = 0, restarts_ = 0, unexpected_exits_ = 0;
};

// Local workers: the front's children, restarted by its supervisor. Seen
// through /proc (their exit status belongs to the front).
class SupervisedWorkers final : public WorkerFleet {
 public:
  explicit SupervisedWorkers(pid_t front) : front_(front) {}
  void Poll() override {
    const std::vector<pid_t> now = ChildPids(front_);
    const std::set<pid_t> current(now.begin(), now.end());
    for (pid_t pid : live_) {
      if (!current.count(pid) && !killed_.count(pid)) NoteUnexpectedExit(pid, "gone");
    }
    if (!first_) {
      for (pid_t pid : current) restarts_ += !live_.count(pid);
    }
    first_ = false;
    live_ = current;
  }
  bool KillOne(int n) override {
    if (live_.empty()) return false;
    auto it = live_.begin();
    std::advance(it, n % live_.size());
    killed_.insert(*it);
    kill(*it, SIGKILL);
    ++kills_;
    return true;
  }
  size_t live() const override { return live_.size(); }

 private:
  const pid_t front_;
  bool first_ = true;
  std::set<pid_t> live_, killed_;
};

// Remote workers (--remote-workers): ordo-worker processes this program
// runs on fixed loopback ports and gives the front as --workers, restarting
// an exited one on the same port, as an orchestrator would.
class RemoteWorkers final : public WorkerFleet {
 public:
  static absl::StatusOr<std::unique_ptr<RemoteWorkers>> Start(int count,
                                                              const ChildProcess::Options& io) {
    std::unique_ptr<RemoteWorkers> fleet(new RemoteWorkers(io));
    for (int i = 0; i < count; ++i) {
      Slot& slot = fleet->slots_.emplace_back();
      slot.port = FreeLoopbackPort();
      if (absl::Status s = fleet->Spawn(slot); !s.ok()) return s;
    }
    return fleet;
  }
  // host:port,... for the front's --workers.
  std::string Addresses() const {
    std::vector<std::string> addresses;
    for (const Slot& slot : slots_) addresses.push_back(absl::StrCat("127.0.0.1:", slot.port));
    return absl::StrJoin(addresses, ",");
  }
  void Poll() override {
    for (Slot& slot : slots_) {
      if (slot.process != nullptr) {
        const std::optional<int> status = slot.process->Poll();
        if (!status) continue;
        if (!slot.killed) NoteUnexpectedExit(slot.process->pid(), DescribeWaitStatus(*status));
        slot.process.reset();
      }
      if (Spawn(slot).ok()) ++restarts_;
    }
  }
  bool KillOne(int n) override {
    std::vector<Slot*> running;
    for (Slot& slot : slots_) {
      if (slot.process != nullptr) running.push_back(&slot);
    }
    if (running.empty()) return false;
    Slot& slot = *running[n % running.size()];
    slot.killed = true;
    kill(slot.process->pid(), SIGKILL);
    ++kills_;
    return true;
  }
  size_t live() const override {
    size_t n = 0;
    for (const Slot& slot : slots_) n += slot.process != nullptr;
    return n;
  }

 private:
  struct Slot {
    int port = 0;
    std::unique_ptr<ChildProcess> process;
    bool killed = false;
  };
  explicit RemoteWorkers(ChildProcess::Options io) : io_(std::move(io)) {}
  absl::Status Spawn(Slot& slot) {
    absl::StatusOr<std::unique_ptr<ChildProcess>> process = ChildProcess::StartListening(
        {absl::GetFlag(FLAGS_worker_binary), absl::StrCat("--listen=127.0.0.1:", slot.port),
         "--log-level=warning"},
        io_, absl::Seconds(10));
    if (!process.ok()) return process.status();
    slot.process = *std::move(process);
    slot.killed = false;
    return absl::OkStatus();
  }
  const ChildProcess::Options io_;
  std::vector<Slot> slots_;
};

double Mb(int64_t bytes) { return bytes / 1048576.0; }
double Ms(absl::Duration d) { return absl::ToDoubleMilliseconds(d); }

struct Processes {
  std::unique_ptr<ChildProcess> redis;
  std::unique_ptr<RemoteWorkers> remote_workers;  // with --remote-workers
  std::unique_ptr<ChildProcess> server;
  int redis_port = 0;
};

absl::StatusOr<Processes> StartProcesses(int clients) {
  Processes p;
  ChildProcess::Options options;
  options.stderr_path = absl::GetFlag(FLAGS_log);
  p.redis_port = FreeLoopbackPort();
  options.stdout_mode = ChildProcess::StdoutMode::kDiscard;  // Redis logs to stdout
  absl::StatusOr<std::unique_ptr<ChildProcess>> redis = ChildProcess::Start(
      {absl::GetFlag(FLAGS_redis_binary), "--bind", "127.0.0.1", "--port",
       absl::StrCat(p.redis_port), "--save", "", "--appendonly", "no", "--maxmemory", "256mb",
       "--maxmemory-policy", "allkeys-lru", "--loglevel", "warning"},
      options);
  if (!redis.ok()) return redis.status();
  p.redis = *std::move(redis);
  const absl::Time redis_deadline = absl::Now() + absl::Seconds(10);
  while (!LoopbackPortOpen(p.redis_port)) {
    if (p.redis->Poll() || absl::Now() > redis_deadline) {
      return absl::UnavailableError("redis-server did not start");
    }
    absl::SleepFor(absl::Milliseconds(20));  // poll interval while it binds
  }
  options.stdout_mode = ChildProcess::StdoutMode::kPipe;
  std::vector<std::string> argv = {
      absl::GetFlag(FLAGS_server_binary), "--listen=127.0.0.1:0", "--metrics-port=0",
      "--log-level=warning", absl::StrCat("--redis=redis://127.0.0.1:", p.redis_port, "/0"),
      absl::StrCat("--max-ops=", kMaxOps), absl::StrCat("--max-message-mb=", kMaxMessageMb),
      // Every client has one call in flight: none may be refused as busy.
      absl::StrCat("--max-concurrent=", std::max(8, clients))};
  if (absl::GetFlag(FLAGS_remote_workers)) {
    absl::StatusOr<std::unique_ptr<RemoteWorkers>> workers =
        RemoteWorkers::Start(absl::GetFlag(FLAGS_workers), options);
    if (!workers.ok()) return workers.status();
    p.remote_workers = *std::move(workers);
    argv.push_back(absl::StrCat("--workers=", p.remote_workers->Addresses()));
  } else {
    argv.push_back(absl::StrCat("--local-workers=", absl::GetFlag(FLAGS_workers)));
    argv.push_back(absl::StrCat("--worker-binary=", absl::GetFlag(FLAGS_worker_binary)));
  }
  absl::StatusOr<std::unique_ptr<ChildProcess>> server =
      ChildProcess::StartListening(std::move(argv), options);
  if (!server.ok()) return server.status();
  p.server = *std::move(server);
  return p;
}

// Sends every cached probe once (they must all pass) so the timed repeats
// find them cached.
absl::Status WarmUp(const std::string& address, const ProbeSet& probes) {
  grpc::ChannelArguments args;
  args.SetMaxReceiveMessageSize(64 << 20);
  std::unique_ptr<v1::Compiler::Stub> stub = v1::Compiler::NewStub(
      grpc::CreateCustomChannel(address, grpc::InsecureChannelCredentials(), args));
  for (const Probe& probe : probes.cached) {
    const Outcome outcome = Send(*stub, probe, absl::Seconds(absl::GetFlag(FLAGS_deadline)));
    if (outcome.wrong || outcome.unexpected) {
      return absl::InternalError(absl::StrCat("warm-up: ", outcome.detail));
    }
  }
  return absl::OkStatus();
}

struct KindReport {
  int64_t calls = 0, ok = 0;
  int64_t parts = 0, part_hits = 0, responses_cached = 0;
  std::map<std::string, int64_t> codes;
  LatencySummary latency;
};

// Everything the run measured; printed and written as JSON.
struct SoakReport {
  double seconds = 0;
  int clients = 0;
  double kill_every = 0;
  int64_t requests = 0;
  std::map<std::string, KindReport> kinds;
  std::map<std::string, int64_t> errors, bad_cases;
  std::vector<std::string> problems;  // the first 20
  int64_t wrong = 0, unexpected = 0, task_retries = 0, fallback_parts = 0;
  int64_t kills = 0, restarts = 0, unexpected_worker_exits = 0;
  size_t workers_at_end = 0;
  std::string front_exit, redis_exit;  // empty: ran and stopped cleanly
  int64_t rss_start = -1, rss_warm = -1, rss_end = -1;
  std::vector<std::pair<double, int64_t>> rss_at_kills;  // (t seconds, bytes)

  int64_t crashes() const {
    return unexpected_worker_exits + !front_exit.empty() + !redis_exit.empty();
  }
  bool pass() const {
    return wrong == 0 && unexpected == 0 && crashes() == 0 &&
           workers_at_end == static_cast<size_t>(absl::GetFlag(FLAGS_workers));
  }
};

// Adds the clients' outcomes to `report`.
void Tally(const std::vector<Outcome>& outcomes, SoakReport& report) {
  report.requests = static_cast<int64_t>(outcomes.size());
  std::map<std::string, std::vector<absl::Duration>> latencies;
  for (const Outcome& o : outcomes) {
    const std::string kind = kKindNames[static_cast<int>(o.kind)];
    const std::string code = rpc::GrpcCodeName(o.code);
    KindReport& k = report.kinds[kind];
    ++k.calls;
    k.ok += o.code == grpc::StatusCode::OK;
    k.parts += o.parts;
    k.part_hits += o.cache_hits;
    k.responses_cached += o.response_cached;
    ++k.codes[code];
    latencies[kind].push_back(o.latency);
    if (o.code != grpc::StatusCode::OK) ++report.errors[code];
    if (o.kind == Kind::kBad) ++report.bad_cases[absl::StrCat(o.name, " ", code)];
    report.task_retries += o.task_retries;
    report.fallback_parts += o.fallback_parts;
    report.wrong += o.wrong;
    report.unexpected += o.unexpected;
    if (!o.detail.empty() && report.problems.size() < 20) report.problems.push_back(o.detail);
  }
  for (auto& [kind, samples] : latencies) {
    report.kinds[kind].latency = Summarize(std::move(samples));
  }
}

void Print(const SoakReport& r) {
  auto ll = [](int64_t n) { return static_cast<long long>(n); };
  std::printf("requests: %lld in %.1f s (%.1f/s)\n", ll(r.requests), r.seconds,
              r.requests / r.seconds);
  for (const auto& [kind, k] : r.kinds) {
    std::printf(
        "  %-6s %6lld calls, %6lld OK   latency ms p50 %8.2f  p99 %8.2f  max %8.2f"
        "   parts %lld, cached %lld, whole response cached %lld\n",
        kind.c_str(), ll(k.calls), ll(k.ok), Ms(k.latency.p50), Ms(k.latency.p99),
        Ms(k.latency.max), ll(k.parts), ll(k.part_hits), ll(k.responses_cached));
  }
  std::printf("worker task retries %lld, parts run in the front (fallback) %lld\n",
              ll(r.task_retries), ll(r.fallback_parts));
  std::printf("errors by code:");
  for (const auto& [code, n] : r.errors) std::printf(" %s=%lld", code.c_str(), ll(n));
  std::printf("\nbad requests by case:\n");
  for (const auto& [name, n] : r.bad_cases) std::printf("  %-40s %lld\n", name.c_str(), ll(n));
  std::printf("wrong answers: %lld\nunexpected errors: %lld\n", ll(r.wrong), ll(r.unexpected));
  std::printf("worker kills: %lld, restarts seen: %lld, workers at end: %zu/%d\n", ll(r.kills),
              ll(r.restarts), r.workers_at_end, absl::GetFlag(FLAGS_workers));
  std::printf("crashes (not caused by the soak): %lld (workers %lld, front: %s, redis: %s)\n",
              ll(r.crashes()), ll(r.unexpected_worker_exits),
              r.front_exit.empty() ? "ok, exited 0 on SIGTERM" : r.front_exit.c_str(),
              r.redis_exit.empty() ? "ok" : r.redis_exit.c_str());
  std::printf(
      "front RSS MB: start %.1f, after warm-up %.1f, end %.1f, growth after warm-up "
      "%+.1f (%+.1f%%)\n",
      Mb(r.rss_start), Mb(r.rss_warm), Mb(r.rss_end), Mb(r.rss_end - r.rss_warm),
      r.rss_warm > 0 ? 100.0 * (r.rss_end - r.rss_warm) / r.rss_warm : 0.0);
  for (const std::string& p : r.problems) std::printf("  problem: %s\n", p.c_str());
  std::printf("%s\n", r.pass() ? "PASS" : "FAIL");
}

absl::Status WriteJson(const SoakReport& r, const std::string& path) {
  nlohmann::ordered_json out;
  out["seconds"] = r.seconds;
  out["clients"] = r.clients;
  out["workers"] = absl::GetFlag(FLAGS_workers);
  out["remote_workers"] = absl::GetFlag(FLAGS_remote_workers);
  out["kill_interval_seconds"] = r.kill_every;
  out["requests"] = r.requests;
  for (const auto& [kind, k] : r.kinds) {
    out["requests_by_kind"][kind] = k.calls;
    out["latency_ms"][kind] = {
        {"p50", Ms(k.latency.p50)}, {"p99", Ms(k.latency.p99)}, {"max", Ms(k.latency.max)}};
    out["status_by_kind"][kind] = k.codes;
    out["parts_by_kind"][kind] = {
        {"parts", k.parts}, {"cache_hits", k.part_hits}, {"responses_cached", k.responses_cached}};
  }
  out["worker_task_retries"] = r.task_retries;
  out["fallback_parts"] = r.fallback_parts;
  out["errors_by_code"] = r.errors;
  out["bad_requests_by_case"] = r.bad_cases;
  out["wrong_answers"] = r.wrong;
  out["unexpected_errors"] = r.unexpected;
  out["problems"] = r.problems;
  out["worker_kills"] = r.kills;
  out["worker_restarts"] = r.restarts;
  out["workers_at_end"] = r.workers_at_end;
  out["crashes"] = {{"total", r.crashes()},
                    {"workers_not_killed_by_soak", r.unexpected_worker_exits},
                    {"front", r.front_exit},
                    {"redis", r.redis_exit}};
  out["front_rss_bytes"] = {{"start", r.rss_start},
                            {"after_warmup", r.rss_warm},
                            {"end", r.rss_end},
                            {"growth_after_warmup", r.rss_end - r.rss_warm}};
  nlohmann::ordered_json series = nlohmann::ordered_json::array();
  for (const auto& [t, rss] : r.rss_at_kills) series.push_back({{"t", t}, {"rss_bytes", rss}});
  out["front_rss_at_kills"] = series;
  out["pass"] = r.pass();
  std::ofstream file(path);
  file << out.dump(2) << "\n";
  if (!file) return absl::UnavailableError(absl::StrCat("cannot write ", path));
  return absl::OkStatus();
}

// The main thread's part of the run, until `stop`: watches the processes
// every 100 ms and kills a worker every `report.kill_every` seconds; the
// front's RSS "after warm-up" is taken just before the first kill.
void WatchAndKill(Processes& processes, WorkerFleet& workers, const Recorder& recorder,
                  absl::Time start, absl::Time stop, SoakReport& report) {
  absl::Time next_kill = start + absl::Seconds(report.kill_every);
  int kill_index = 0;
  while (absl::Now() < stop) {
    absl::SleepFor(absl::Milliseconds(100));  // watch interval
    workers.Poll();
    if (std::optional<int> s = processes.server->Poll()) {
      report.front_exit = DescribeWaitStatus(*s);
    }
    if (std::optional<int> s = processes.redis->Poll()) report.redis_exit = DescribeWaitStatus(*s);
    if (!report.front_exit.empty() || !report.redis_exit.empty()) return;
    // No kill in the last second: its restart would not be seen.
    if (absl::Now() < next_kill || absl::Now() + absl::Seconds(1) > stop) continue;
    const int64_t rss = ResidentBytes(processes.server->pid());
    if (report.rss_warm < 0) report.rss_warm = rss;
    const double t = absl::ToDoubleSeconds(absl::Now() - start);
    report.rss_at_kills.push_back({t, rss});
    workers.KillOne(kill_index++);
    std::fprintf(stderr,
                 "ordo-soak: t=%.0f s: %lld calls, %lld wrong, %lld unexpected, front RSS "
                 "%.1f MB; killed a worker\n",
                 t, static_cast<long long>(recorder.calls()),
                 static_cast<long long>(recorder.wrong()),
                 static_cast<long long>(recorder.unexpected()), Mb(rss));
    next_kill += absl::Seconds(report.kill_every);
  }
}

// After the load: lets a just-killed worker come back, takes the final RSS
// and stops the front, which must exit 0 on SIGTERM.
void Finish(Processes& processes, WorkerFleet& workers, SoakReport& report) {
  const size_t expected = static_cast<size_t>(absl::GetFlag(FLAGS_workers));
  const absl::Time settle = absl::Now() + absl::Seconds(10);
  while (report.front_exit.empty() && workers.live() < expected && absl::Now() < settle) {
    absl::SleepFor(absl::Milliseconds(100));  // poll interval
    workers.Poll();
  }
  report.workers_at_end = workers.live();
  report.kills = workers.kills();
  report.restarts = workers.restarts();
  report.unexpected_worker_exits = workers.unexpected_exits();
  if (report.front_exit.empty()) {
    report.rss_end = ResidentBytes(processes.server->pid());
    const int status = processes.server->Stop(SIGTERM);
    if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0)) {
      report.front_exit = absl::StrCat("on SIGTERM: ", DescribeWaitStatus(status));
    }
  }
  if (report.rss_warm < 0) report.rss_warm = report.rss_end;
  if (report.redis_exit.empty() && processes.redis->Poll()) {
    report.redis_exit = "exited during the run";
  }
}

int Run() {
  SoakReport report;
  const double seconds = absl::GetFlag(FLAGS_seconds);
  report.clients = std::max(1, absl::GetFlag(FLAGS_clients));
  report.kill_every = absl::GetFlag(FLAGS_kill_interval) > 0 ? absl::GetFlag(FLAGS_kill_interval)
                                                             : std::clamp(seconds / 6, 5.0, 60.0);
  if (seconds <= 0 || absl::GetFlag(FLAGS_workers) < 1) {
    std::fprintf(stderr, "ordo-soak: need --seconds > 0 and --workers >= 1\n");
    return 2;
  }
  absl::StatusOr<ProbeSet> probes = BuildProbeSet(absl::GetFlag(FLAGS_models_dir),
                                                  absl::Seconds(absl::GetFlag(FLAGS_time_limit)));
  absl::StatusOr<Processes> processes =
      probes.ok() ? StartProcesses(report.clients) : probes.status();
  if (!processes.ok()) {
    std::fprintf(stderr, "ordo-soak: %s\n", processes.status().ToString().c_str());
    return 2;
  }
  const std::string address = processes->server->address();
  std::printf(
      "ordo-soak: %.0f s, %d clients, %d %s workers (one SIGKILLed every %.0f s), "
      "server %s, redis 127.0.0.1:%d\n",
      seconds, report.clients, absl::GetFlag(FLAGS_workers),
      processes->remote_workers ? "remote" : "local", report.kill_every, address.c_str(),
      processes->redis_port);
  std::fflush(stdout);
  std::unique_ptr<SupervisedWorkers> supervised;
  if (processes->remote_workers == nullptr) {
    supervised = std::make_unique<SupervisedWorkers>(processes->server->pid());
  }
  WorkerFleet& workers = supervised != nullptr
                             ? static_cast<WorkerFleet&>(*supervised)
                             : static_cast<WorkerFleet&>(*processes->remote_workers);
  workers.Poll();  // the supervisor starts the workers before the front listens
  report.rss_start = ResidentBytes(processes->server->pid());
  if (absl::Status warm = WarmUp(address, *probes); !warm.ok()) {
    std::fprintf(stderr, "ordo-soak: %s\n", warm.ToString().c_str());
    return 1;
  }

  Recorder recorder;
  const absl::Time start = absl::Now();
  const absl::Time stop = start + absl::Seconds(seconds);
  std::vector<std::thread> threads;
  for (int i = 0; i < report.clients; ++i) {
    threads.emplace_back(RunClient, address, i, std::cref(*probes), stop, std::ref(recorder));
  }
  WatchAndKill(*processes, workers, recorder, start, stop, report);
  for (std::thread& thread : threads) thread.join();
  report.seconds = absl::ToDoubleSeconds(absl::Now() - start);
  Finish(*processes, workers, report);
  Tally(recorder.Take(), report);
  Print(report);
  if (const std::string path = absl::GetFlag(FLAGS_json); !path.empty()) {
    if (absl::Status written = WriteJson(report, path); !written.ok()) {
      std::fprintf(stderr, "ordo-soak: %s\n", written.ToString().c_str());
      return 1;
    }
  }
  return report.pass() ? 0 : 1;
}

}  // namespace
}  // namespace ordo::bench

int main(int argc, char** argv) {
  absl::SetProgramUsageMessage(
      "ordo-soak [--seconds=600] [--clients=4] [--workers=2] [--json=FILE]: soak ordo-server");
  if (const absl::Status parsed = ordo::rpc::ParseDashedCommandLine(argc, argv); !parsed.ok()) {
    std::fprintf(stderr, "%s: %s\n", "ordo-soak", std::string(parsed.message()).c_str());
    return 2;
  }
  return ordo::bench::Run();
}
