// TLS and bearer-token authentication of ordo-server and ordo-worker as real
// processes: a CA, server and client certificates made at test time with
// the openssl command line (Debian package openssl).

#include <cstdlib>
#include <fstream>
#include <utility>

#include "core/testing/test_paths.h"
#include "google/protobuf/util/json_util.h"
#include "grpcpp/security/credentials.h"
#include "ordo/v1/worker_service.grpc.pb.h"
#include "service_harness.h"
#include "tests/cli/run_ordo.h"

namespace ordo::testing_service {
namespace {

using ::testing::HasSubstr;
using ::testing::Not;

constexpr char kToken[] = "tok-3f9a1c7e5b2d4068";
constexpr char kSecondToken[] = "tok-rotated-88e1d0a4c6";
// The tests that check what reaches a worker send it every part (small
// parts are otherwise proved in the front's own thread).
constexpr char kEveryPartToWorkers[] = "--in-server-part-budget=0";

// Certificates and token files in a fresh temporary directory.
class SecurityFiles {
 public:
  SecurityFiles() {
    char pattern[] = "/tmp/ordo-security-XXXXXX";
    dir_ = mkdtemp(pattern);
    // EC keys: fast to make. The server's SAN covers both names a test
    // may dial; the CA carries CA:TRUE so it may sign.
    const std::string script = absl::StrCat(
        "set -e; cd ", dir_, "\n",
        "key() { openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out $1; }\n",
        "key ca.key; key server.key; key client.key; key named.key\n",
        "openssl req -x509 -new -key ca.key -out ca.pem -days 2 -subj /CN=ordo-test-ca "
        "-addext basicConstraints=critical,CA:TRUE -addext keyUsage=keyCertSign,cRLSign\n",
        "leaf() { openssl req -new -key $1.key -out $1.csr -subj /CN=$2\n",
        "  printf 'subjectAltName=%s\\nextendedKeyUsage=%s\\n' \"$3\" \"$4\" > $1.ext\n",
        "  openssl x509 -req -in $1.csr -CA ca.pem -CAkey ca.key -CAcreateserial -days 2 "
        "-out $1.pem -extfile $1.ext; }\n",
        "leaf server localhost DNS:localhost,IP:127.0.0.1 serverAuth\n",
        // A worker certificate naming only a host name, not its address.
        "leaf named localhost DNS:localhost serverAuth\n",
        "leaf client ordo-client DNS:ordo-client clientAuth\n", "printf '# test tokens\\n", kToken,
        "\\n", kSecondToken, "\\n' > tokens\n", "printf 'wrong-token\\n' > bad-tokens\n",
        "printf '", kSecondToken, "\\n' > second-token\n", ": > empty-tokens\n");
    const std::string script_path = dir_ + "/make.sh";
    std::ofstream(script_path) << script;
    ok_ = std::system(absl::StrCat("sh ", script_path, " >", dir_, "/make.log 2>&1").c_str()) == 0;
  }
  ~SecurityFiles() { std::system(absl::StrCat("rm -rf ", dir_).c_str()); }

  bool ok() const { return ok_; }
  std::string operator()(const std::string& name) const { return dir_ + "/" + name; }

 private:
  std::string dir_;
  bool ok_ = false;
};

SecurityFiles& Files() {
  static SecurityFiles* files = new SecurityFiles();
  return *files;
}

// A service binary whose stderr goes to a file (to check what it logs).
class Service {
 public:
  Service(const std::string& binary, const std::vector<std::string>& flags) {
    log_ = Files()(absl::StrCat("log-", ++count_));
    std::string command = absl::StrCat("exec ", binary);
    for (const std::string& flag : flags) absl::StrAppend(&command, " ", flag);
    absl::StrAppend(&command, " 2>", log_);
    process_ = std::make_unique<Process>(std::vector<std::string>{"/bin/sh", "-c", command});
    absl::string_view rest;
    line_ = process_->ReadLine(absl::Seconds(20));
    rest = line_;
    if (absl::ConsumePrefix(&rest, "listening on ")) {
      port_ = std::stoi(std::string(rest.substr(rest.rfind(':') + 1)));
    }
  }
  int port() const { return port_; }
  std::string address() const { return absl::StrCat("127.0.0.1:", port_); }
  std::string Log() const { return ReadFile(log_); }
  // Waits for the exit of a process that failed to start.
  int ExitCode() { return WEXITSTATUS(process_->Stop(0)); }

 private:
  static inline int count_ = 0;
  std::unique_ptr<Process> process_;
  std::string log_;
  std::string line_;
  int port_ = 0;
};

std::vector<std::string> ServerFlags(std::vector<std::string> extra) {
  std::vector<std::string> flags = {"--listen=127.0.0.1:0", "--metrics-port=0",
                                    std::string("--worker-binary=") + ordo::testing::WorkerBinary(),
                                    "--log-level=debug"};
  flags.insert(flags.end(), extra.begin(), extra.end());
  return flags;
}

std::shared_ptr<grpc::ChannelCredentials> TlsCredentials(bool client_cert) {
  grpc::SslCredentialsOptions ssl;
  ssl.pem_root_certs = ReadFile(Files()("ca.pem"));
  if (client_cert) {
    ssl.pem_cert_chain = ReadFile(Files()("client.pem"));
    ssl.pem_private_key = ReadFile(Files()("client.key"));
  }
  return grpc::SslCredentials(ssl);
}

v1::CompileRequest WideRequest() {
  v1::CompileRequest request;
  *request.mutable_graph() = WideGraph(6);
  request.mutable_options()->set_scheduler("dp");
  request.mutable_options()->mutable_time_limit()->set_seconds(2);
  return request;
}

grpc::Status Compile(const std::shared_ptr<grpc::Channel>& channel, const std::string& token,
                     v1::CompileResponse* response = nullptr) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(20)));
  if (!token.empty()) context.AddMetadata("authorization", absl::StrCat("Bearer ", token));
  v1::CompileResponse ignored;
  return v1::Compiler::NewStub(channel)->Compile(&context, WideRequest(),
                                                 response ? response : &ignored);
}

grpc::Status Health(const std::shared_ptr<grpc::Channel>& channel) {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
  grpc::health::v1::HealthCheckResponse response;
  return grpc::health::v1::Health::NewStub(channel)->Check(&context, {}, &response);
}

class ServiceSecurityTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (system("command -v openssl >/dev/null 2>&1") != 0) {
      GTEST_SKIP() << "openssl not installed (scripts/install-deps)";
    }
    ASSERT_TRUE(Files().ok()) << ReadFile(Files()("make.log"));
  }
};

TEST_F(ServiceSecurityTest, TlsClientCompilesPlaintextClientIsRefused) {
  Service server(ordo::testing::ServerBinary(),
                 ServerFlags({"--local-workers=0", "--tls-cert=" + Files()("server.pem"),
                              "--tls-key=" + Files()("server.key")}));
  ASSERT_GT(server.port(), 0) << server.Log();
  v1::CompileResponse response;
  const grpc::Status tls =
      Compile(grpc::CreateChannel(server.address(), TlsCredentials(false)), "", &response);
  ASSERT_TRUE(tls.ok()) << tls.error_message();
  ExpectValidSchedule(response);
  // The certificate names localhost too.
  EXPECT_TRUE(
      Health(grpc::CreateChannel(absl::StrCat("localhost:", server.port()), TlsCredentials(false)))
          .ok());

  const grpc::Status plaintext =
      Compile(grpc::CreateChannel(server.address(), grpc::InsecureChannelCredentials()), "");
  EXPECT_EQ(plaintext.error_code(), grpc::StatusCode::UNAVAILABLE);
}

TEST_F(ServiceSecurityTest, MutualTlsRefusesClientsWithoutCertificate) {
  Service server(
      ordo::testing::ServerBinary(),
      ServerFlags({"--local-workers=0", "--tls-cert=" + Files()("server.pem"),
                   "--tls-key=" + Files()("server.key"), "--tls-client-ca=" + Files()("ca.pem")}));
  ASSERT_GT(server.port(), 0) << server.Log();
  const grpc::Status without =
      Compile(grpc::CreateChannel(server.address(), TlsCredentials(false)), "");
  EXPECT_EQ(without.error_code(), grpc::StatusCode::UNAVAILABLE) << without.error_message();
  const grpc::Status with =
      Compile(grpc::CreateChannel(server.address(), TlsCredentials(true)), "");
  EXPECT_TRUE(with.ok()) << with.error_message();
}

TEST_F(ServiceSecurityTest, FrontReachesTlsWorkerWithToken) {
  const int worker_metrics = FreeLoopbackPort();
  Service worker(ordo::testing::WorkerBinary(),
                 {"--listen=127.0.0.1:0", absl::StrCat("--metrics-port=", worker_metrics),
                  "--tls-cert=" + Files()("server.pem"), "--tls-key=" + Files()("server.key"),
                  "--tls-client-ca=" + Files()("ca.pem"), "--auth-token-file=" + Files()("tokens"),
                  "--log-level=debug"});
  ASSERT_GT(worker.port(), 0) << worker.Log();
  // The worker's certificate names 127.0.0.1; the front presents a client
  // certificate (mutual TLS) and the second token of the worker's file.
  Service front(ordo::testing::ServerBinary(),
                ServerFlags({"--workers=" + worker.address(), kEveryPartToWorkers,
                             "--worker-tls-ca=" + Files()("ca.pem"),
                             "--worker-tls-cert=" + Files()("client.pem"),
                             "--worker-tls-key=" + Files()("client.key"),
                             "--worker-auth-token-file=" + Files()("second-token")}));
  ASSERT_GT(front.port(), 0) << front.Log();
  const auto channel = grpc::CreateChannel(front.address(), grpc::InsecureChannelCredentials());
  // The front's probes (health over TLS with the token) find the worker.
  ASSERT_TRUE(PollUntil(
      [&] {
        grpc::ClientContext context;
        v1::GetInfoResponse info;
        if (!v1::Compiler::NewStub(channel)->GetInfo(&context, {}, &info).ok()) return false;
        return info.workers_size() == 1 && info.workers(0).healthy();
      },
      absl::Seconds(10)));
  v1::CompileResponse response;
  const grpc::Status status = Compile(channel, "", &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  ExpectValidSchedule(response);
  EXPECT_GE(MetricValue(HttpGet(worker_metrics, "/metrics"), "ordo_requests_total",
                        "code=\"OK\",method=\"ScheduleSubgraph\""),
            1);
  EXPECT_THAT(worker.Log(), Not(HasSubstr(kSecondToken)));
  EXPECT_THAT(front.Log(), Not(HasSubstr(kSecondToken)));
}

// Workers found by name (dns:///NAME:PORT) are dialled by address, and
// still verified against NAME: a certificate that names only "localhost"
// (not 127.0.0.1) is accepted, as when gRPC resolved the name itself.
TEST_F(ServiceSecurityTest, FrontVerifiesATlsWorkerFoundByNameAgainstTheName) {
  Service worker(ordo::testing::WorkerBinary(),
                 {"--listen=127.0.0.1:0", "--tls-cert=" + Files()("named.pem"),
                  "--tls-key=" + Files()("named.key"), "--log-level=warning"});
  ASSERT_GT(worker.port(), 0) << worker.Log();
  Service front(ordo::testing::ServerBinary(),
                ServerFlags({absl::StrCat("--workers=dns:///localhost:", worker.port()),
                             "--worker-tls-ca=" + Files()("ca.pem")}));
  ASSERT_GT(front.port(), 0) << front.Log();
  const auto channel = grpc::CreateChannel(front.address(), grpc::InsecureChannelCredentials());
  // localhost may also resolve to ::1, where nothing listens: one healthy.
  ASSERT_TRUE(PollUntil(
      [&] {
        grpc::ClientContext context;
        v1::GetInfoResponse info;
        if (!v1::Compiler::NewStub(channel)->GetInfo(&context, {}, &info).ok()) return false;
        for (const auto& w : info.workers()) {
          if (w.healthy() && w.address() == absl::StrCat("127.0.0.1:", worker.port())) return true;
        }
        return false;
      },
      absl::Seconds(10)))
      << front.Log();
  v1::CompileResponse response;
  const grpc::Status status = Compile(channel, "", &response);
  ASSERT_TRUE(status.ok()) << status.error_message();
  EXPECT_EQ(response.stats().fallback_parts(), 0);
}

TEST_F(ServiceSecurityTest, BearerTokensGuardEveryCallAndAreNeverLogged) {
  // Local workers: the front hands them its token file and sends a token.
  Service server(ordo::testing::ServerBinary(),
                 ServerFlags({"--local-workers=1", kEveryPartToWorkers,
                              "--auth-token-file=" + Files()("tokens")}));
  ASSERT_GT(server.port(), 0) << server.Log();
  const auto channel = grpc::CreateChannel(server.address(), grpc::InsecureChannelCredentials());

  const grpc::Status none = Compile(channel, "");
  EXPECT_EQ(none.error_code(), grpc::StatusCode::UNAUTHENTICATED) << none.error_message();
  const grpc::Status wrong = Compile(channel, "wrong-token");
  EXPECT_EQ(wrong.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(wrong.error_message(), Not(HasSubstr("wrong-token")));
  const grpc::Status prefix = Compile(channel, std::string(kToken).substr(0, 8));
  EXPECT_EQ(prefix.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Health(channel).error_code(), grpc::StatusCode::UNAUTHENTICATED);

  v1::CompileResponse response;
  const grpc::Status right = Compile(channel, kToken, &response);
  ASSERT_TRUE(right.ok()) << right.error_message();
  ExpectValidSchedule(response);
  EXPECT_TRUE(Compile(channel, kSecondToken).ok());
  // The part ran on the local worker, which requires the token too.
  grpc::ClientContext context;
  context.AddMetadata("authorization", absl::StrCat("Bearer ", kToken));
  v1::GetInfoResponse info;
  ASSERT_TRUE(v1::Compiler::NewStub(channel)->GetInfo(&context, {}, &info).ok());
  ASSERT_EQ(info.workers_size(), 1);
  EXPECT_TRUE(info.workers(0).healthy());

  const std::string log = server.Log();
  EXPECT_THAT(log, Not(HasSubstr(kToken)));
  EXPECT_THAT(log, Not(HasSubstr(kSecondToken)));
  EXPECT_THAT(log, HasSubstr("ScheduleSubgraph OK"));
  EXPECT_THAT(log, HasSubstr(" 0 fallback"));
  // Other local users cannot use the worker's loopback port without it.
  grpc::ClientContext direct;
  v1::SubgraphResult result;
  const grpc::Status unauthenticated =
      v1::Worker::NewStub(
          grpc::CreateChannel(info.workers(0).address(), grpc::InsecureChannelCredentials()))
          ->ScheduleSubgraph(&direct, {}, &result);
  EXPECT_EQ(unauthenticated.error_code(), grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(ServiceSecurityTest, HealthAndReflectionOpenOnlyByFlag) {
  Service server(ordo::testing::ServerBinary(),
                 ServerFlags({"--local-workers=0", "--auth-token-file=" + Files()("tokens"),
                              "--auth-allow-health"}));
  ASSERT_GT(server.port(), 0) << server.Log();
  const auto channel = grpc::CreateChannel(server.address(), grpc::InsecureChannelCredentials());
  EXPECT_TRUE(Health(channel).ok());
  EXPECT_EQ(Compile(channel, "").error_code(), grpc::StatusCode::UNAUTHENTICATED);
  // Reflection stays closed without --auth-allow-reflection.
  auto reflection = grpc::reflection::v1alpha::ServerReflection::NewStub(channel);
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + absl::Seconds(5)));
  auto stream = reflection->ServerReflectionInfo(&context);
  grpc::reflection::v1alpha::ServerReflectionRequest list;
  list.set_list_services("");
  stream->Write(list);
  stream->WritesDone();
  grpc::reflection::v1alpha::ServerReflectionResponse answer;
  while (stream->Read(&answer)) {
  }
  EXPECT_EQ(stream->Finish().error_code(), grpc::StatusCode::UNAUTHENTICATED);
}

TEST_F(ServiceSecurityTest, UnusableTokenFileStopsStartupWithExitTwo) {
  for (const std::string& file : {Files()("empty-tokens"), Files()("no-such-file")}) {
    for (const std::string& binary :
         {ordo::testing::ServerBinary(), ordo::testing::WorkerBinary()}) {
      Service service(binary, {"--listen=127.0.0.1:0", "--auth-token-file=" + file});
      EXPECT_EQ(service.port(), 0);
      EXPECT_EQ(service.ExitCode(), 2) << binary;
      EXPECT_THAT(service.Log(), HasSubstr(file)) << binary;
    }
  }
}

// Output and exit code of the ordo CLI.
std::pair<std::string, int> RunCli(const std::string& args) {
  ::ordo::testing::ProcessResult run = ::ordo::testing::RunOrdo(args);
  return {std::move(run.out), run.exit_code};
}

TEST_F(ServiceSecurityTest, CliTakesTlsCaAndTokenFile) {
  Service server(ordo::testing::ServerBinary(),
                 ServerFlags({"--local-workers=0", "--tls-cert=" + Files()("server.pem"),
                              "--tls-key=" + Files()("server.key"),
                              "--auth-token-file=" + Files()("tokens")}));
  ASSERT_GT(server.port(), 0) << server.Log();
  std::string json;
  ASSERT_TRUE(google::protobuf::util::MessageToJsonString(WideGraph(4), &json).ok());
  const std::string model = Files()("wide.json");
  std::ofstream(model) << json;
  const std::string secure = absl::StrCat(" --server ", server.address(), " --tls-ca ",
                                          Files()("ca.pem"), " --auth-token-file ");

  auto [out, code] = RunCli(absl::StrCat("compile ", model, secure, Files()("tokens")));
  EXPECT_EQ(code, 0) << out;
  std::tie(out, code) = RunCli(absl::StrCat("health", secure, Files()("tokens")));
  EXPECT_EQ(code, 0) << out;
  EXPECT_THAT(out, HasSubstr("SERVING"));
  std::tie(out, code) = RunCli(absl::StrCat("compile ", model, secure, Files()("bad-tokens")));
  EXPECT_NE(code, 0);
  EXPECT_THAT(out, Not(HasSubstr("wrong-token\n")));
  std::tie(out, code) =
      RunCli(absl::StrCat("compile ", model, secure, Files()("no-such-token-file")));
  EXPECT_EQ(code, 2) << out;
}

}  // namespace
}  // namespace ordo::testing_service
