// Test harness of the service integration tests: real ordo-server,
// ordo-worker and redis-server processes on free loopback ports, clients,
// /metrics scraping. Every wait polls with a deadline.
#ifndef ORDO_TESTS_SERVICE_SERVICE_HARNESS_H_
#define ORDO_TESTS_SERVICE_SERVICE_HARNESS_H_

#include <arpa/inet.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <future>
#include <sstream>
#include <string>
#include <vector>

#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_split.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "core/testing/test_paths.h"
#include "gmock/gmock.h"
#include "grpc/health/v1/health.grpc.pb.h"
#include "grpc_reflection_v1alpha.grpc.pb.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "gtest/gtest.h"
#include "onnx/onnx_pb.h"
#include "ordo/v1/compiler_service.grpc.pb.h"
#include "sys/child_process.h"

namespace ordo::testing_service {

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream bytes;
  bytes << in.rdbuf();
  return bytes.str();
}

using ::ordo::FreeLoopbackPort;
using ::ordo::LoopbackPortOpen;

// A child process (sys/child_process.h) with the tests' defaults: a failed
// start fails the test; destroyed with SIGKILL; stdout readable line by line.
class Process {
 public:
  explicit Process(std::vector<std::string> argv) {
    absl::StatusOr<std::unique_ptr<ChildProcess>> child = ChildProcess::Start(std::move(argv));
    EXPECT_TRUE(child.ok()) << child.status();
    if (child.ok()) child_ = *std::move(child);
  }
  ~Process() { Stop(SIGKILL); }
  // The next stdout line, "" on timeout or EOF.
  std::string ReadLine(absl::Duration timeout) {
    return child_ ? child_->ReadLine(timeout).value_or("") : "";
  }
  // Sends `signal` and reaps the process (SIGKILL after a minute); returns
  // its wait status.
  int Stop(int signal) { return child_ ? child_->Stop(signal, absl::Minutes(1)) : 0; }
  pid_t pid() const { return child_ ? child_->pid() : -1; }

 private:
  std::unique_ptr<ChildProcess> child_;
};

// GET http://127.0.0.1:port/path; the body, "" on failure.
inline std::string HttpGet(int port, const std::string& path) {
  const int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in addr{};
  addr.sin_family = AF_INET;
  addr.sin_port = htons(port);
  addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof(addr)) != 0) {
    close(fd);
    return "";
  }
  const std::string request =
      absl::StrCat("GET ", path, " HTTP/1.0\r\nHost: localhost\r\nConnection: close\r\n\r\n");
  if (write(fd, request.data(), request.size()) != static_cast<ssize_t>(request.size())) {
    close(fd);
    return "";
  }
  std::string response;
  char buffer[4096];
  for (ssize_t n; (n = read(fd, buffer, sizeof(buffer))) > 0;) response.append(buffer, n);
  close(fd);
  const size_t body = response.find("\r\n\r\n");
  return body == std::string::npos ? "" : response.substr(body + 4);
}

// Sum of a metric's samples whose line contains `labels`.
inline double MetricValue(const std::string& text, absl::string_view name, absl::string_view labels) {
  double sum = 0;
  for (absl::string_view line : absl::StrSplit(text, '\n')) {
    if (!absl::StartsWith(line, name) || !absl::StrContains(line, labels)) continue;
    const size_t space = line.rfind(' ');
    double value = 0;
    if (space != absl::string_view::npos && absl::SimpleAtod(line.substr(space + 1), &value)) {
      sum += value;
    }
  }
  return sum;
}

// Polls `condition` until it holds or `timeout` passes.
inline bool PollUntil(const std::function<bool()>& condition, absl::Duration timeout) {
  const absl::Time deadline = absl::Now() + timeout;
  while (absl::Now() < deadline) {
    if (condition()) return true;
    absl::SleepFor(absl::Milliseconds(20));  // poll interval, not synchronisation
  }
  return condition();
}

// An ordo-server child with clients.
class Server {
 public:
  explicit Server(std::vector<std::string> flags) {
    metrics_port_ = FreeLoopbackPort();
    std::vector<std::string> argv = {
        ordo::testing::ServerBinary(), "--listen=127.0.0.1:0",
        absl::StrCat("--metrics-port=", metrics_port_),
        std::string("--worker-binary=") + ordo::testing::WorkerBinary(), "--log-level=warning"};
    argv.insert(argv.end(), flags.begin(), flags.end());
    process_ = std::make_unique<Process>(argv);
    std::string line = process_->ReadLine(absl::Seconds(20));
    absl::string_view rest = line;
    if (!absl::ConsumePrefix(&rest, "listening on ")) {
      ADD_FAILURE() << "server did not start: \"" << line << "\"";
      return;
    }
    address_ = std::string(rest);
    channel_ = grpc::CreateChannel(address_, grpc::InsecureChannelCredentials());
    compiler_ = v1::Compiler::NewStub(channel_);
    health_ = grpc::health::v1::Health::NewStub(channel_);
    EXPECT_TRUE(PollUntil([&] { return Health("") == 1; }, absl::Seconds(10)));
  }
  bool started() const { return compiler_ != nullptr; }
  const std::string& address() const { return address_; }
  std::shared_ptr<grpc::Channel> channel() { return channel_; }
  v1::Compiler::Stub& compiler() { return *compiler_; }
  pid_t pid() const { return process_->pid(); }
  int Stop(int signal) { return process_->Stop(signal); }
  void CloseClients() {
    compiler_.reset();
    health_.reset();
    channel_.reset();
  }

  int Health(const std::string& service) {
    grpc::ClientContext context;
    context.set_deadline(std::chrono::system_clock::now() + std::chrono::seconds(2));
    grpc::health::v1::HealthCheckRequest request;
    request.set_service(service);
    grpc::health::v1::HealthCheckResponse response;
    if (!health_->Check(&context, request, &response).ok()) return -1;
    return response.status();
  }
  std::string Metrics() { return HttpGet(metrics_port_, "/metrics"); }

  grpc::Status Compile(const v1::CompileRequest& request, v1::CompileResponse& response,
                       absl::Duration deadline = absl::Seconds(30)) {
    grpc::ClientContext context;
    context.set_deadline(absl::ToChronoTime(absl::Now() + deadline));
    return compiler_->Compile(&context, request, &response);
  }
  v1::GetInfoResponse Info() {
    grpc::ClientContext context;
    v1::GetInfoResponse response;
    EXPECT_TRUE(compiler_->GetInfo(&context, {}, &response).ok());
    return response;
  }

 private:
  std::unique_ptr<Process> process_;
  std::string address_;
  int metrics_port_ = 0;
  std::shared_ptr<grpc::Channel> channel_;
  std::unique_ptr<v1::Compiler::Stub> compiler_;
  std::unique_ptr<grpc::health::v1::Health::Stub> health_;
};

inline v1::CompileRequest OnnxRequest(const std::string& path, absl::Duration time_limit) {
  v1::CompileRequest request;
  request.set_onnx_model(ReadFile(path));
  request.mutable_options()->mutable_time_limit()->set_seconds(
      absl::ToInt64Seconds(time_limit));
  request.mutable_options()->mutable_time_limit()->set_nanos(
      static_cast<int32_t>(absl::ToInt64Nanoseconds(time_limit % absl::Seconds(1))));
  return request;
}

// `branches` parallel chains of two ops between a source and a sink: no cut
// inside, so one part whose exact search outlasts any short time limit.
inline v1::Graph WideGraph(int branches) {
  v1::Graph graph;
  graph.set_name("wide");
  auto tensor = [&](const std::string& name, int64_t bytes) {
    v1::Tensor* t = graph.add_tensors();
    t->set_name(name);
    t->set_size_bytes(bytes);
  };
  auto op = [&](const std::string& name, std::vector<std::string> in, std::string out) {
    v1::Op* o = graph.add_ops();
    o->set_name(name);
    o->set_type("Conv");
    for (auto& i : in) o->add_inputs(i);
    o->add_outputs(out);
  };
  tensor("x", 16);
  tensor("s", 16);
  graph.add_inputs("x");
  op("source", {"x"}, "s");
  std::vector<std::string> ends;
  for (int b = 0; b < branches; ++b) {
    tensor(absl::StrCat("a", b), 10 + 7 * b % 23);
    tensor(absl::StrCat("b", b), 5 + 11 * b % 17);
    op(absl::StrCat("a", b), {"s"}, absl::StrCat("a", b));
    op(absl::StrCat("b", b), {absl::StrCat("a", b)}, absl::StrCat("b", b));
    ends.push_back(absl::StrCat("b", b));
  }
  tensor("y", 8);
  op("sink", ends, "y");
  graph.add_outputs("y");
  return graph;
}

inline void ExpectValidSchedule(const v1::CompileResponse& response) {
  EXPECT_EQ(response.schedule_size(), response.ops());
  EXPECT_GT(response.peak_bytes(), 0);
  EXPECT_GE(response.peak_bytes(), response.lower_bound_bytes());
  EXPECT_NE(response.status(), v1::SCHEDULE_STATUS_UNSPECIFIED);
  EXPECT_EQ(response.profile().step_bytes_size(), response.ops());
}
}  // namespace ordo::testing_service

#endif  // ORDO_TESTS_SERVICE_SERVICE_HARNESS_H_
