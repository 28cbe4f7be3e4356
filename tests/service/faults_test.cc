// Faults around a real ordo-server: a real Redis whose entries are poisoned
// (garbage, truncated, another part's entry, a wrong claimed peak) and that
// is made slow (CLIENT PAUSE, DEBUG SLEEP); the front killed (SIGKILL) and
// restarted under a client loop; per-request resource limits (the search's
// state memory). Answers must stay correct, latencies bounded by the cache
// timeout, and the failures counted in /metrics. Every wait polls with a
// deadline; timing bounds are generous (no performance assertions).

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <filesystem>
#include <map>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "absl/container/flat_hash_map.h"
#include "absl/strings/ascii.h"
#include "absl/strings/strip.h"
#include "client/lib/ordo_client.h"
#include "core/compile/import_model.h"
#include "core/graph/graph_proto.h"
#include "core/memory/memory_model.h"
#include "core/memory/simulator.h"
#include "core/testing/test_paths.h"
#include "hiredis/hiredis.h"
#include "ordo/v1/schedule.pb.h"
#include "tests/service/service_harness.h"

namespace ordo {
namespace {

using ::testing::HasSubstr;
using namespace ::ordo::testing_service;  // NOLINT: the harness is the test's vocabulary

std::string Example(const std::string& name) {
  return absl::StrCat(ordo::testing::ExampleModelsDir(), "/", name);
}

// RSS of `pid` plus its live children.
int64_t TreeRssBytes(pid_t pid) {
  int64_t total = ResidentBytes(pid);
  for (pid_t child : ChildPids(pid)) total += ResidentBytes(child);
  return total;
}

// --- Redis -------------------------------------------------------------------

// A redis-server child on a free loopback port, and a hiredis connection
// to it for the test's own commands.
class Redis {
 public:
  Redis() : port_(FreeLoopbackPort()) {
    process_ = std::make_unique<Process>(std::vector<std::string>{
        "/usr/bin/redis-server", "--port", std::to_string(port_), "--save", "", "--appendonly",
        "no", "--bind", "127.0.0.1", "--loglevel", "warning", "--enable-debug-command", "local"});
    started_ = PollUntil([&] { return LoopbackPortOpen(port_); }, absl::Seconds(10));
    context_ = Connect();
  }
  ~Redis() {
    if (context_ != nullptr) redisFree(context_);
  }
  bool started() const { return started_ && context_ != nullptr; }
  int port() const { return port_; }
  std::string url() const { return absl::StrCat("redis://127.0.0.1:", port_); }

  // A new connection (for commands that block it, e.g. DEBUG SLEEP).
  redisContext* Connect() const {
    timeval timeout{30, 0};
    redisContext* context = redisConnectWithTimeout("127.0.0.1", port_, timeout);
    if (context == nullptr || context->err != 0) return nullptr;
    redisSetTimeout(context, timeout);
    return context;
  }

  // Keys matching `pattern` (SCAN, so any number).
  std::vector<std::string> Keys(const std::string& pattern) {
    std::vector<std::string> keys;
    std::string cursor = "0";
    do {
      auto* reply = static_cast<redisReply*>(redisCommand(
          context_, "SCAN %s MATCH %b COUNT 1000", cursor.c_str(), pattern.data(), pattern.size()));
      if (reply == nullptr || reply->type != REDIS_REPLY_ARRAY || reply->elements != 2) {
        ADD_FAILURE() << "SCAN failed";
        if (reply != nullptr) freeReplyObject(reply);
        return keys;
      }
      cursor.assign(reply->element[0]->str, reply->element[0]->len);
      for (size_t i = 0; i < reply->element[1]->elements; ++i) {
        const redisReply* key = reply->element[1]->element[i];
        keys.emplace_back(key->str, key->len);
      }
      freeReplyObject(reply);
    } while (cursor != "0");
    return keys;
  }
  std::string Get(const std::string& key) {
    auto* reply =
        static_cast<redisReply*>(redisCommand(context_, "GET %b", key.data(), key.size()));
    std::string value;
    if (reply != nullptr && reply->type == REDIS_REPLY_STRING) value.assign(reply->str, reply->len);
    if (reply != nullptr) freeReplyObject(reply);
    return value;
  }
  void Set(const std::string& key, const std::string& value) {
    auto* reply = static_cast<redisReply*>(
        redisCommand(context_, "SET %b %b", key.data(), key.size(), value.data(), value.size()));
    EXPECT_TRUE(reply != nullptr && reply->type == REDIS_REPLY_STATUS) << "SET " << key;
    if (reply != nullptr) freeReplyObject(reply);
  }
  // A command whose reply is a status or integer; true when it succeeded.
  bool Command(const std::string& command) {
    auto* reply = static_cast<redisReply*>(redisCommand(context_, command.c_str()));
    const bool ok = reply != nullptr && reply->type != REDIS_REPLY_ERROR;
    if (reply != nullptr) {
      if (!ok) ADD_FAILURE() << command << ": " << std::string(reply->str, reply->len);
      freeReplyObject(reply);
    }
    return ok;
  }

 private:
  const int port_;
  std::unique_ptr<Process> process_;
  bool started_ = false;
  redisContext* context_ = nullptr;
};

constexpr char kKeyPrefix[] = "ordo:part:";

// The peak of `response.schedule` on the request's ONNX model, simulated
// here: the client's own check that the answer is a valid order with the
// claimed peak.
int64_t ResimulatedPeak(const v1::CompileRequest& request, const v1::CompileResponse& response) {
  absl::StatusOr<Graph> graph = request.has_graph()
                                    ? GraphFromProto(request.graph())
                                    : ImportModel(request.onnx_model(), ModelFormat::kOnnx);
  EXPECT_TRUE(graph.ok()) << graph.status();
  if (!graph.ok()) return -1;
  absl::StatusOr<MemoryModel> model = BuildMemoryModel(*graph, MemoryOptions{});
  EXPECT_TRUE(model.ok()) << model.status();
  if (!model.ok()) return -1;
  absl::flat_hash_map<std::string, OpId> ids;
  for (OpId op = 0; op < graph->num_ops(); ++op) ids[graph->op(op).name] = op;
  std::vector<OpId> order;
  for (const std::string& name : response.schedule()) {
    auto it = ids.find(name);
    EXPECT_NE(it, ids.end()) << name;
    if (it == ids.end()) return -1;
    order.push_back(it->second);
  }
  absl::StatusOr<int64_t> peak = SimulatePeak(*model, order);
  EXPECT_TRUE(peak.ok()) << peak.status();
  return peak.ok() ? *peak : -1;
}

// `cells` cells in a chain, each a source, `branches` parallel two-op
// branches and a sink: hourglass cuts between cells make one part per cell
// (14+ ops each, too many to merge), and per-cell sizes that are no
// multiple of each other give every part its own cache key.
v1::Graph MultiCellGraph(int cells, int branches) {
  v1::Graph graph;
  graph.set_name("cells");
  auto tensor = [&](const std::string& name, int64_t bytes) {
    v1::Tensor* t = graph.add_tensors();
    t->set_name(name);
    t->set_size_bytes(bytes);
  };
  auto op = [&](const std::string& name, std::vector<std::string> in, const std::string& out) {
    v1::Op* o = graph.add_ops();
    o->set_name(name);
    o->set_type("Conv");
    for (const std::string& i : in) o->add_inputs(i);
    o->add_outputs(out);
  };
  tensor("x", 16);
  graph.add_inputs("x");
  std::string previous = "x";
  for (int c = 0; c < cells; ++c) {
    const std::string s = absl::StrCat("c", c, "s");
    tensor(s, 16 + c);
    op(s, {previous}, s);
    std::vector<std::string> ends;
    for (int b = 0; b < branches; ++b) {
      const std::string a = absl::StrCat("c", c, "a", b), e = absl::StrCat("c", c, "b", b);
      tensor(a, 10 + (7 * b + 5 * c) % 23);
      tensor(e, 5 + (11 * b + 3 * c) % 17);
      op(a, {s}, a);
      op(e, {a}, e);
      ends.push_back(e);
    }
    previous = absl::StrCat("c", c, "y");
    tensor(previous, 8 + c);
    op(previous, ends, previous);
  }
  graph.add_outputs(previous);
  return graph;
}

double Rejected(Server& server) {
  return MetricValue(server.Metrics(), "ordo_cache_lookups_total", "result=\"rejected\"");
}
double Errors(Server& server) {
  return MetricValue(server.Metrics(), "ordo_cache_lookups_total", "result=\"error\"");
}

// --- 2. Cache poisoning ---------------------------------------------------------

TEST(FaultsTest, PoisonedRedisEntriesAreRejectedAndAnswersStayCorrect) {
  if (system("command -v redis-server >/dev/null 2>&1") != 0) GTEST_SKIP() << "no redis-server";
  Redis redis;
  ASSERT_TRUE(redis.started());
  // --cache-mb=0: no whole-response cache, so every compile reads Redis.
  Server server({"--local-workers=0", "--cache-mb=0", absl::StrCat("--redis=", redis.url())});
  ASSERT_TRUE(server.started());
  Server reference({"--local-workers=0", "--cache-mb=0"});  // no shared cache at all
  ASSERT_TRUE(reference.started());

  v1::CompileRequest request;
  *request.mutable_graph() = MultiCellGraph(4, 6);
  request.mutable_options()->mutable_time_limit()->set_seconds(5);
  v1::CompileResponse expected;
  ASSERT_TRUE(reference.Compile(request, expected).ok());
  v1::CompileResponse first;
  ASSERT_TRUE(server.Compile(request, first).ok());
  EXPECT_EQ(first.peak_bytes(), expected.peak_bytes());
  const int32_t parts = first.stats().parts();
  ASSERT_EQ(parts, 4);
  EXPECT_EQ(expected.status(), v1::SCHEDULE_STATUS_OPTIMAL);  // so peaks are comparable

  std::vector<std::string> keys = redis.Keys(absl::StrCat(kKeyPrefix, "*"));
  ASSERT_FALSE(keys.empty());
  std::map<std::string, v1::CachedPartSchedule> good;
  for (const std::string& key : keys) {
    ASSERT_TRUE(good[key].ParseFromString(redis.Get(key))) << key;
  }
  std::printf("%d parts, %zu Redis entries, peak %lld (%s)\n", parts, keys.size(),
              static_cast<long long>(expected.peak_bytes()),
              v1::ScheduleStatus_Name(expected.status()).c_str());

  // Each poisoning rewrites every entry; `value_of` gives the bad bytes.
  std::mt19937_64 random(42);
  const std::vector<std::pair<std::string, std::function<std::string(size_t)>>> poisons = {
      {"garbage bytes",
       [&](size_t) {
         std::string bytes(64 + random() % 256, '\0');
         for (char& c : bytes) c = static_cast<char>(random());
         return bytes;
       }},
      {"truncated entry",
       [&](size_t i) {
         const std::string value = good[keys[i]].SerializeAsString();
         return value.substr(0, value.size() / 2);
       }},
      {"another part's entry",
       [&](size_t i) {
         // Well formed and stored under this key, but solving another part
         // (or, with one key, a part one op shorter).
         v1::CachedPartSchedule other = good[keys[(i + 1) % keys.size()]];
         if (keys.size() == 1) other.mutable_order()->RemoveLast();
         other.set_key(keys[i].substr(sizeof(kKeyPrefix) - 1));
         return other.SerializeAsString();
       }},
      {"valid order, peak claimed too low",
       [&](size_t i) {
         v1::CachedPartSchedule entry = good[keys[i]];
         entry.set_peak_units(entry.peak_units() - 1);
         entry.set_status(v1::SCHEDULE_STATUS_OPTIMAL);
         return entry.SerializeAsString();
       }},
      {"valid order, peak claimed too high",
       [&](size_t i) {
         v1::CachedPartSchedule entry = good[keys[i]];
         entry.set_peak_units(entry.peak_units() + 1);
         return entry.SerializeAsString();
       }},
      {"not a permutation, true peak",
       [&](size_t i) {
         // Right length and claimed peak, but an op twice (or out of range).
         v1::CachedPartSchedule entry = good[keys[i]];
         const int n = entry.order_size();
         entry.set_order(n - 1, n >= 2 ? entry.order(0) : n);
         return entry.SerializeAsString();
       }},
  };
  for (const auto& [what, value_of] : poisons) {
    SCOPED_TRACE(what);
    for (size_t i = 0; i < keys.size(); ++i) redis.Set(keys[i], value_of(i));
    const double rejected_before = Rejected(server);
    v1::CompileResponse response;
    const grpc::Status status = server.Compile(request, response);
    ASSERT_TRUE(status.ok()) << status.error_message();
    ExpectValidSchedule(response);
    EXPECT_EQ(response.peak_bytes(), expected.peak_bytes());
    EXPECT_EQ(ResimulatedPeak(request, response), response.peak_bytes());
    EXPECT_EQ(response.stats().cache_hits(), 0);
    const double rejected = Rejected(server) - rejected_before;
    std::printf("[ poison ] %s: %g of %d part lookups rejected\n", what.c_str(), rejected, parts);
    // Every part's entry is bad, except that another part's entry may
    // happen to be a valid order of this one with the same peak (then it
    // is a correct entry, and using it is right).
    if (what == "another part's entry") {
      EXPECT_GE(rejected, 1);
    } else {
      EXPECT_EQ(rejected, parts);
    }
    // Rejected entries were replaced by the recomputed ones: a hit again.
    v1::CompileResponse healed;
    ASSERT_TRUE(server.Compile(request, healed).ok());
    EXPECT_EQ(healed.stats().cache_hits(), parts);
    EXPECT_EQ(healed.peak_bytes(), expected.peak_bytes());
  }
  EXPECT_EQ(server.Health(""), 1);
}

// Keys are "ordo:part:" + 32 hex digits whatever the request holds: names
// with glob characters, escapes, separators and Redis syntax never reach
// Redis (core/parts/part_key_test.cc checks the hash itself).
TEST(FaultsTest, RedisKeysAreHashesOnly) {
  if (system("command -v redis-server >/dev/null 2>&1") != 0) GTEST_SKIP() << "no redis-server";
  Redis redis;
  ASSERT_TRUE(redis.started());
  Server server({"--local-workers=0", "--cache-mb=0", absl::StrCat("--redis=", redis.url())});
  ASSERT_TRUE(server.started());
  v1::CompileRequest request;
  *request.mutable_graph() = WideGraph(4);
  // Valid UTF-8 (proto3 strings) but hostile to anything that builds
  // commands or keys from text.
  const std::vector<std::string> odd = {"*\r\nFLUSHALL\r\n", "ordo:part:*", "\x1b[2J{}?[a-z]",
                                        "\xe2\x80\xae\xf0\x9f\x92\xa3", " $-1\r\n"};
  v1::Graph& graph = *request.mutable_graph();
  auto rename = [&](std::string& name, size_t i) { name = absl::StrCat(odd[i % odd.size()], i); };
  absl::flat_hash_map<std::string, std::string> renamed;
  for (int t = 0; t < graph.tensors_size(); ++t) {
    const std::string old = graph.tensors(t).name();
    rename(*graph.mutable_tensors(t)->mutable_name(), t);
    renamed[old] = graph.tensors(t).name();
  }
  for (int o = 0; o < graph.ops_size(); ++o) {
    v1::Op& op = *graph.mutable_ops(o);
    rename(*op.mutable_name(), o + 100);
    for (std::string& in : *op.mutable_inputs()) in = renamed[in];
    for (std::string& out : *op.mutable_outputs()) out = renamed[out];
  }
  for (std::string& in : *graph.mutable_inputs()) in = renamed[in];
  for (std::string& out : *graph.mutable_outputs()) out = renamed[out];
  graph.set_name("*\r\nDEL ordo:part:*\r\n");
  request.mutable_options()->set_scheduler("dp");
  request.mutable_options()->mutable_time_limit()->set_seconds(1);

  v1::CompileResponse response;
  const grpc::Status status = server.Compile(request, response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ExpectValidSchedule(response);
  const std::vector<std::string> keys = redis.Keys("*");
  ASSERT_FALSE(keys.empty());
  for (const std::string& key : keys) {
    absl::string_view hash = key;
    ASSERT_TRUE(absl::ConsumePrefix(&hash, kKeyPrefix)) << key;
    ASSERT_EQ(hash.size(), 32u) << key;
    for (char c : hash) EXPECT_TRUE(absl::ascii_isdigit(c) || (c >= 'a' && c <= 'f')) << key;
  }
}

// --- 3. Slow Redis ------------------------------------------------------------

// Runs compiles of `request` from `threads` threads until `stop`; returns
// the slowest latency and whether every answer was OK with `peak`.
struct LoopResult {
  absl::Duration slowest = absl::ZeroDuration();
  int calls = 0;
  int failures = 0;
  int wrong = 0;
  int with_cache_errors = 0;
};

LoopResult CompileWhile(Server& server, const v1::CompileRequest& request, int64_t peak,
                        int threads, const std::function<bool()>& running) {
  absl::Mutex mu;
  LoopResult out;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&, t] {
      v1::CompileRequest mine = request;
      // Distinct requests (alignment does not change schedules or keys).
      mine.mutable_device()->set_alignment_bytes(64 << t);
      while (running()) {
        v1::CompileResponse response;
        const absl::Time start = absl::Now();
        const grpc::Status status = server.Compile(mine, response, absl::Seconds(60));
        const absl::Duration latency = absl::Now() - start;
        absl::MutexLock lock(&mu);
        ++out.calls;
        out.slowest = std::max(out.slowest, latency);
        if (!status.ok()) {
          ++out.failures;
          ADD_FAILURE() << status.error_message();
        } else if (response.peak_bytes() != peak) {
          ++out.wrong;
        }
        out.with_cache_errors += response.stats().cache_errors() > 0;
      }
    });
  }
  for (std::thread& thread : pool) thread.join();
  return out;
}

TEST(FaultsTest, SlowRedisCostsAtMostTheCacheTimeout) {
  if (system("command -v redis-server >/dev/null 2>&1") != 0) GTEST_SKIP() << "no redis-server";
  Redis redis;
  ASSERT_TRUE(redis.started());
  const absl::Duration redis_timeout = absl::Milliseconds(200);
  Server server({"--local-workers=0", "--cache-mb=0", absl::StrCat("--redis=", redis.url()),
                 absl::StrCat("--redis-timeout=", absl::FormatDuration(redis_timeout))});
  ASSERT_TRUE(server.started());
  const v1::CompileRequest request = OnnxRequest(Example("small_resnet.onnx"), absl::Seconds(1));

  // Cold: every part computed, as every part will be while Redis stalls.
  v1::CompileResponse cold;
  absl::Time start = absl::Now();
  ASSERT_TRUE(server.Compile(request, cold).ok());
  const absl::Duration cold_time = absl::Now() - start;
  v1::CompileResponse warm;
  ASSERT_TRUE(server.Compile(request, warm).ok());
  EXPECT_EQ(warm.stats().cache_hits(), warm.stats().parts());

  // A lookup during a stall waits at most the timeout, then the connection
  // is dropped and lookups fail fast until the next reconnect (1 s): a
  // compile pays a timeout per second at most. Generous margin on top.
  const absl::Duration bound = cold_time * 2 + redis_timeout * 4 + absl::Seconds(2);
  for (const char* how : {"CLIENT PAUSE", "DEBUG SLEEP"}) {
    SCOPED_TRACE(how);
    const double errors_before = Errors(server);
    const absl::Duration stall = absl::Seconds(3);
    std::thread staller;
    if (absl::string_view(how) == "CLIENT PAUSE") {
      ASSERT_TRUE(redis.Command(absl::StrCat("CLIENT PAUSE ", absl::ToInt64Milliseconds(stall))));
    } else {
      staller = std::thread([&] {
        redisContext* context = redis.Connect();
        ASSERT_NE(context, nullptr);
        auto* reply = static_cast<redisReply*>(
            redisCommand(context, "DEBUG SLEEP %d", static_cast<int>(absl::ToInt64Seconds(stall))));
        EXPECT_TRUE(reply != nullptr && reply->type == REDIS_REPLY_STATUS);
        if (reply != nullptr) freeReplyObject(reply);
        redisFree(context);
      });
      absl::SleepFor(absl::Milliseconds(100));  // let the sleep start
    }
    const absl::Time stall_end = absl::Now() + stall - absl::Milliseconds(300);
    const LoopResult loop = CompileWhile(server, request, cold.peak_bytes(), 2,
                                         [&] { return absl::Now() < stall_end; });
    if (staller.joinable()) staller.join();
    std::printf(
        "[ slow redis ] %s: %d calls, slowest %s (cold compile %s, bound %s), %d saw "
        "cache errors\n",
        how, loop.calls, absl::FormatDuration(loop.slowest).c_str(),
        absl::FormatDuration(cold_time).c_str(), absl::FormatDuration(bound).c_str(),
        loop.with_cache_errors);
    EXPECT_GT(loop.calls, 0);
    EXPECT_EQ(loop.failures, 0);
    EXPECT_EQ(loop.wrong, 0);
    EXPECT_LT(loop.slowest, bound);
    EXPECT_GT(loop.with_cache_errors, 0);
    EXPECT_GT(Errors(server), errors_before);
    // Redis back: the cache serves again after the reconnect interval.
    EXPECT_TRUE(PollUntil(
        [&] {
          v1::CompileResponse again;
          return server.Compile(request, again).ok() &&
                 again.stats().cache_hits() == again.stats().parts();
        },
        absl::Seconds(10)));
  }
}

// --- 4. Front restarted under load ----------------------------------------------

TEST(FaultsTest, FrontRestartedUnderLoadClientsRetryAndNeverGetWrongAnswers) {
  const int port = FreeLoopbackPort();
  const std::vector<std::string> flags = {"--local-workers=0",
                                          absl::StrCat("--listen=127.0.0.1:", port)};
  auto server = std::make_unique<Server>(flags);
  ASSERT_TRUE(server->started());
  ASSERT_THAT(server->address(), HasSubstr(absl::StrCat(":", port)));

  client::OrdoClient::Options options;
  options.timeout = absl::Seconds(10);
  const client::OrdoClient client(absl::StrCat("127.0.0.1:", port), options);
  const v1::CompileRequest request = OnnxRequest(Example("tiny_cell.onnx"), absl::Seconds(1));
  absl::StatusOr<v1::CompileResponse> expected = client.Compile(request);
  ASSERT_TRUE(expected.ok()) << expected.status();

  struct Event {
    absl::Time time;
    absl::StatusCode code;
    bool wrong;
  };
  absl::Mutex mu;
  std::vector<Event> events;
  std::atomic<bool> stop{false};
  std::vector<std::thread> loop;
  for (int t = 0; t < 2; ++t) {
    loop.emplace_back([&] {
      while (!stop.load()) {
        absl::StatusOr<v1::CompileResponse> response = client.Compile(request);
        const bool wrong = response.ok() && (response->peak_bytes() != expected->peak_bytes() ||
                                             response->schedule_size() != expected->ops());
        {
          absl::MutexLock lock(&mu);
          events.push_back({absl::Now(), response.status().code(), wrong});
        }
        // An application-level pause after a failure the policy gave up on.
        if (!response.ok()) absl::SleepFor(absl::Milliseconds(100));
      }
    });
  }
  auto successes_since = [&](absl::Time since) {
    absl::MutexLock lock(&mu);
    int n = 0;
    for (const Event& e : events) n += e.time >= since && e.code == absl::StatusCode::kOk;
    return n;
  };
  ASSERT_TRUE(
      PollUntil([&] { return successes_since(absl::InfinitePast()) >= 10; }, absl::Seconds(10)));
  const absl::Time killed = absl::Now();
  server->Stop(SIGKILL);
  absl::SleepFor(absl::Milliseconds(500));  // down long enough for retries to run out
  const absl::Time restarting = absl::Now();
  server = std::make_unique<Server>(flags);
  ASSERT_TRUE(server->started());
  const absl::Time restarted = absl::Now();
  EXPECT_TRUE(PollUntil([&] { return successes_since(restarted) >= 10; }, absl::Seconds(15)));
  stop = true;
  for (std::thread& thread : loop) thread.join();

  int ok = 0, unavailable = 0, other = 0, wrong = 0;
  absl::Time last_failure = killed, first_success_after = absl::InfiniteFuture();
  for (const Event& e : events) {
    wrong += e.wrong;
    if (e.code == absl::StatusCode::kOk) {
      ++ok;
      if (e.time > restarting) first_success_after = std::min(first_success_after, e.time);
    } else if (e.code == absl::StatusCode::kUnavailable) {
      ++unavailable;
      last_failure = std::max(last_failure, e.time);
    } else {
      ++other;
      ADD_FAILURE() << "unexpected code " << absl::StatusCodeToString(e.code);
    }
  }
  std::printf(
      "[ front restart ] %d ok, %d UNAVAILABLE, %d other, %d wrong; down %s, first "
      "success after the restart %s after the kill, last failure %s after it\n",
      ok, unavailable, other, wrong, absl::FormatDuration(restarted - killed).c_str(),
      absl::FormatDuration(first_success_after - killed).c_str(),
      absl::FormatDuration(last_failure - killed).c_str());
  EXPECT_EQ(wrong, 0);
  EXPECT_EQ(other, 0);
  // UNAVAILABLE only around the restart: none after the new front answered.
  EXPECT_LT(last_failure, first_success_after + absl::Seconds(1));
  EXPECT_LT(first_success_after - restarted, absl::Seconds(10));
}

// --- 5. Per-request resource limits -----------------------------------------------

TEST(FaultsTest, ServerLimitsAreReportedWithTheirFlags) {
  Server server({"--local-workers=0", "--max-state-mb=64", "--max-ops=5000", "--max-deadline=30s"});
  ASSERT_TRUE(server.started());
  const v1::GetInfoResponse info = server.Info();
  EXPECT_EQ(info.limits().max_state_bytes(), int64_t{64} << 20);
  EXPECT_EQ(info.limits().max_ops(), 5000);
  EXPECT_EQ(info.limits().max_deadline().seconds(), 30);
}

// A hard part (one 16-wide cell: no cut inside) under a tiny state budget:
// the DP stops at the budget and the best schedule so far comes back,
// instead of the search taking memory. Server flag and per-request value
// both work; a request cannot raise the server's cap.
TEST(FaultsTest, TinyStateBudgetStillAnswersWithBoundedMemory) {
  for (const bool remote : {false, true}) {
    SCOPED_TRACE(remote ? "on a worker" : "in-process");
    Server server(
        {remote ? "--local-workers=1" : "--local-workers=0", "--max-state-mb=1", "--cache-mb=0"});
    ASSERT_TRUE(server.started());
    v1::CompileRequest request;
    *request.mutable_graph() = WideGraph(16);
    request.mutable_options()->set_scheduler("dp");
    request.mutable_options()->mutable_time_limit()->set_seconds(5);
    // Asks for far more than the server allows: clamped to 1 MiB.
    request.mutable_options()->set_max_state_bytes(int64_t{1} << 40);
    const int64_t rss_before = TreeRssBytes(server.pid());
    v1::CompileResponse response;
    const absl::Time start = absl::Now();
    const grpc::Status status = server.Compile(request, response);
    const absl::Duration took = absl::Now() - start;
    ASSERT_TRUE(status.ok()) << status.error_message();
    ExpectValidSchedule(response);
    EXPECT_NE(response.status(), v1::SCHEDULE_STATUS_OPTIMAL);
    const int64_t rss_after = TreeRssBytes(server.pid());  // server + worker
    std::printf("[ state budget ] %s: %s, status %s, states stored %lld, RSS %.1f -> %.1f MiB\n",
                remote ? "worker" : "in-process", absl::FormatDuration(took).c_str(),
                v1::ScheduleStatus_Name(response.status()).c_str(),
                static_cast<long long>(response.stats().states_stored()), rss_before / 1048576.0,
                rss_after / 1048576.0);
    EXPECT_LT(took, absl::Seconds(8));
    EXPECT_LT(rss_after, rss_before + (int64_t{64} << 20));
  }
}

// A worker's own --max-state-mb caps every task it runs, whatever the
// front allows: the same hard part stops at the worker's 1 MiB.
TEST(FaultsTest, WorkerStateCapIsItsOwnFlag) {
  Process worker({ordo::testing::WorkerBinary(), "--listen=127.0.0.1:0", "--log-level=warning",
                  "--max-state-mb=1"});
  std::string line = worker.ReadLine(absl::Seconds(20));
  absl::string_view address = line;
  ASSERT_TRUE(absl::ConsumePrefix(&address, "listening on ")) << line;
  Server front({absl::StrCat("--workers=", address), "--cache-mb=0"});  // front cap: 1 GiB
  ASSERT_TRUE(front.started());
  ASSERT_TRUE(PollUntil([&] { return front.Info().workers_size() == 1 &&
                                     front.Info().workers(0).healthy(); },
                        absl::Seconds(10)));
  v1::CompileRequest request;
  *request.mutable_graph() = WideGraph(16);
  request.mutable_options()->set_scheduler("dp");
  request.mutable_options()->mutable_time_limit()->set_seconds(5);
  v1::CompileResponse response;
  const grpc::Status status = front.Compile(request, response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ExpectValidSchedule(response);
  EXPECT_NE(response.status(), v1::SCHEDULE_STATUS_OPTIMAL);
  EXPECT_LT(response.stats().states_stored(), 100000);
}

TEST(FaultsTest, WorkerRefusesANonPositiveStateCap) {
  Process worker({ordo::testing::WorkerBinary(), "--listen=127.0.0.1:0", "--max-state-mb=0"});
  EXPECT_EQ(worker.ReadLine(absl::Seconds(20)), "");  // exits before listening
  const int status = worker.Stop(SIGKILL);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 2);
}

// Both services refuse a bad flag with exit code 2 before listening: an
// unknown or malformed one (absl's parser would exit 1) and a value out of
// range (once taken silently: --listen's port 99999 served on 34463).
TEST(FaultsTest, ServicesRefuseBadFlagsWithExitCodeTwo) {
  const std::vector<std::vector<std::string>> cases = {
      {ordo::testing::ServerBinary(), "--listen=127.0.0.1:99999"},
      {ordo::testing::ServerBinary(), "--listen=127.0.0.1:0", "--cache-mb=-1"},
      {ordo::testing::ServerBinary(), "--listen=127.0.0.1:0", "--max-message-mb=4096"},
      {ordo::testing::ServerBinary(), "--listen=127.0.0.1:0", "--default-deadline=-5s"},
      {ordo::testing::ServerBinary(), "--listen=127.0.0.1:0", "--bogus"},
      {ordo::testing::ServerBinary(), "--listen=127.0.0.1:0", "--max-ops=lots"},
      {ordo::testing::WorkerBinary(), "--listen=127.0.0.1:0", "--threads=0"},
      {ordo::testing::WorkerBinary(), "--listen=127.0.0.1:65536"},
  };
  for (const std::vector<std::string>& argv : cases) {
    Process process(argv);
    EXPECT_EQ(process.ReadLine(absl::Seconds(20)), "") << argv.back();  // exits before listening
    const int status = process.Stop(SIGKILL);
    ASSERT_TRUE(WIFEXITED(status)) << argv.back();
    EXPECT_EQ(WEXITSTATUS(status), 2) << argv.back();
  }
}

// Local workers get the front's cap: a front allowed 2 GiB must not have
// its tasks capped at the worker's 1 GiB default.
TEST(FaultsTest, LocalWorkersGetTheFrontsStateCap) {
  Server server({"--local-workers=1", "--max-state-mb=2048"});
  ASSERT_TRUE(server.started());
  std::vector<pid_t> workers = ChildPids(server.pid());
  ASSERT_EQ(workers.size(), 1u);
  std::string cmdline = ReadFile(absl::StrCat("/proc/", workers[0], "/cmdline"));
  std::replace(cmdline.begin(), cmdline.end(), '\0', ' ');
  EXPECT_THAT(cmdline, ::testing::HasSubstr("--max-state-mb=2048"));
}

TEST(FaultsTest, PerRequestStateBudgetCanOnlyLower) {
  Server server({"--local-workers=0", "--cache-mb=0"});  // default cap: 1 GiB
  ASSERT_TRUE(server.started());
  v1::CompileRequest request;
  *request.mutable_graph() = WideGraph(16);
  request.mutable_options()->set_scheduler("dp");
  request.mutable_options()->mutable_time_limit()->set_seconds(5);
  request.mutable_options()->set_max_state_bytes(1 << 20);
  const int64_t rss_before = ResidentBytes(server.pid());
  v1::CompileResponse response;
  const grpc::Status status = server.Compile(request, response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ExpectValidSchedule(response);
  EXPECT_NE(response.status(), v1::SCHEDULE_STATUS_OPTIMAL);
  EXPECT_LT(ResidentBytes(server.pid()), rss_before + (int64_t{64} << 20));

  // The same request without a budget of its own searches further (the
  // server's 1 GiB cap), until its time limit: the request's value was used.
  request.mutable_options()->clear_max_state_bytes();
  request.mutable_options()->mutable_time_limit()->set_seconds(1);
  v1::CompileResponse unbudgeted;
  ASSERT_TRUE(server.Compile(request, unbudgeted).ok());
  std::printf("[ state budget ] 1 MiB: %lld states stored; server cap, 1 s: %lld\n",
              static_cast<long long>(response.stats().states_stored()),
              static_cast<long long>(unbudgeted.stats().states_stored()));
  EXPECT_GT(unbudgeted.stats().states_stored(), 4 * response.stats().states_stored());
}

}  // namespace
}  // namespace ordo
