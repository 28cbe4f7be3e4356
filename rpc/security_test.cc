#include "rpc/security.h"

#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <utility>

#include "gmock/gmock.h"
#include "gtest/gtest.h"

namespace ordo::rpc {
namespace {

using ::testing::ElementsAre;
using ::testing::HasSubstr;
using ::testing::Not;

std::string WriteTemp(const std::string& name, const std::string& contents) {
  const std::string path =
      (std::filesystem::temp_directory_path() / (name + "." + std::to_string(getpid()))).string();
  std::ofstream(path) << contents;
  return path;
}

TEST(ReadTokenFileTest, TrimsAndSkipsBlankAndCommentLines) {
  const std::string path = WriteTemp("tokens", "# rotation\n  alpha \n\nbeta\r\n");
  absl::StatusOr<std::vector<std::string>> tokens = ReadTokenFile(path);
  ASSERT_TRUE(tokens.ok()) << tokens.status();
  EXPECT_THAT(*tokens, ElementsAre("alpha", "beta"));
  std::filesystem::remove(path);
}

TEST(ReadTokenFileTest, EmptyOrMissingFileIsAnErrorNamingThePath) {
  const std::string path = WriteTemp("empty-tokens", "# nothing\n\n");
  absl::StatusOr<std::vector<std::string>> empty = ReadTokenFile(path);
  EXPECT_EQ(empty.status().code(), absl::StatusCode::kInvalidArgument);
  EXPECT_THAT(std::string(empty.status().message()), HasSubstr(path));
  std::filesystem::remove(path);
  EXPECT_EQ(ReadTokenFile("/nonexistent/tokens").status().code(),
            absl::StatusCode::kInvalidArgument);
}

TEST(TokenAuthenticatorTest, AcceptsEveryListedTokenAndNothingElse) {
  const TokenAuthenticator auth({"alpha", "beta"}, false, false);
  EXPECT_TRUE(auth.Accepts("alpha"));
  EXPECT_TRUE(auth.Accepts("beta"));
  EXPECT_FALSE(auth.Accepts("alph"));
  EXPECT_FALSE(auth.Accepts("alphaa"));
  EXPECT_FALSE(auth.Accepts(""));
}

grpc::Status Process(TokenAuthenticator& auth, const std::string& path,
                     const std::string* authorization,
                     grpc::AuthMetadataProcessor::OutputMetadata* consumed) {
  grpc::AuthMetadataProcessor::InputMetadata input;
  input.emplace(":path", path);
  if (authorization != nullptr) input.emplace("authorization", *authorization);
  grpc::AuthMetadataProcessor::OutputMetadata response;
  return auth.Process(input, nullptr, consumed, &response);
}

TEST(TokenAuthenticatorTest, ChecksBearerMetadataAndConsumesIt) {
  TokenAuthenticator auth({"s3cret"}, false, false);
  grpc::AuthMetadataProcessor::OutputMetadata consumed;
  const std::string right = "Bearer s3cret";
  EXPECT_TRUE(Process(auth, "/ordo.v1.Compiler/GetInfo", &right, &consumed).ok());
  EXPECT_EQ(consumed.count("authorization"), 1u);

  // RFC 7235: the scheme is case-insensitive.
  for (const std::string scheme : {"bearer s3cret", "BEARER s3cret"}) {
    EXPECT_TRUE(Process(auth, "/ordo.v1.Compiler/GetInfo", &scheme, &consumed).ok()) << scheme;
  }

  const std::string wrong = "Bearer s3creT";
  const grpc::Status denied = Process(auth, "/ordo.v1.Compiler/GetInfo", &wrong, &consumed);
  EXPECT_EQ(denied.error_code(), grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_THAT(denied.error_message(), Not(HasSubstr("s3cre")));
  const std::string basic = "Basic s3cret";
  EXPECT_EQ(Process(auth, "/ordo.v1.Compiler/GetInfo", &basic, &consumed).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
  EXPECT_EQ(Process(auth, "/ordo.v1.Compiler/GetInfo", nullptr, &consumed).error_code(),
            grpc::StatusCode::UNAUTHENTICATED);
}

TEST(TokenAuthenticatorTest, HealthAndReflectionOpenOnlyWhenAllowed) {
  grpc::AuthMetadataProcessor::OutputMetadata consumed;
  TokenAuthenticator closed({"t"}, false, false);
  EXPECT_FALSE(Process(closed, "/grpc.health.v1.Health/Check", nullptr, &consumed).ok());
  TokenAuthenticator open({"t"}, true, true);
  EXPECT_TRUE(Process(open, "/grpc.health.v1.Health/Check", nullptr, &consumed).ok());
  EXPECT_TRUE(Process(open, "/grpc.reflection.v1alpha.ServerReflection/ServerReflectionInfo",
                      nullptr, &consumed)
                  .ok());
  EXPECT_FALSE(Process(open, "/ordo.v1.Compiler/Compile", nullptr, &consumed).ok());
}

TEST(MakeServerCredentialsTest, RejectsIncompleteTlsFlags) {
  ServerSecurityOptions options;
  options.tls_cert_file = "/nonexistent/cert.pem";
  EXPECT_EQ(MakeServerCredentials(options).status().code(), absl::StatusCode::kInvalidArgument);
  options.tls_key_file = "/nonexistent/key.pem";
  absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> missing = MakeServerCredentials(options);
  EXPECT_THAT(std::string(missing.status().message()), HasSubstr("--tls-cert"));
  ServerSecurityOptions ca_only;
  ca_only.tls_client_ca_file = "/nonexistent/ca.pem";
  EXPECT_EQ(MakeServerCredentials(ca_only).status().code(), absl::StatusCode::kInvalidArgument);
}

// A self-signed certificate and its key, made by the openssl CLI (Debian's
// openssl package, installed by scripts/install-deps).
std::pair<std::string, std::string> MakeSelfSigned(const std::string& name) {
  const std::string dir = std::filesystem::temp_directory_path().string();
  const std::string cert = dir + "/" + name + "." + std::to_string(getpid()) + ".pem";
  const std::string key = dir + "/" + name + "." + std::to_string(getpid()) + ".key";
  const std::string command =
      "openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:P-256 -nodes -days 1 -subj /CN=" +
      name + " -keyout " + key + " -out " + cert + " >/dev/null 2>&1";
  EXPECT_EQ(std::system(command.c_str()), 0) << command;
  return {cert, key};
}

TEST(MakeServerCredentialsTest, BadPemFilesFailAtStartupNamingTheFlag) {
  const auto [cert_a, key_a] = MakeSelfSigned("ordo-a");
  const auto [cert_b, key_b] = MakeSelfSigned("ordo-b");
  ServerSecurityOptions options;
  options.tls_cert_file = cert_a;
  options.tls_key_file = key_a;
  EXPECT_TRUE(MakeServerCredentials(options).ok());

  options.tls_key_file = key_b;
  EXPECT_THAT(std::string(MakeServerCredentials(options).status().message()),
              HasSubstr("--tls-key does not match the certificate of --tls-cert"));

  options.tls_cert_file = WriteTemp("not-a-cert", "hello\n");
  EXPECT_THAT(std::string(MakeServerCredentials(options).status().message()),
              HasSubstr("--tls-cert: no PEM certificate"));

  options.tls_cert_file = cert_a;
  options.tls_key_file = cert_a;  // a certificate where the key should be
  EXPECT_THAT(std::string(MakeServerCredentials(options).status().message()),
              HasSubstr("--tls-key: no PEM private key"));

  ClientSecurityOptions client;
  client.tls_ca_file = WriteTemp("not-a-ca", "garbage");
  EXPECT_THAT(std::string(LoadClientSecurity(client).status().message()),
              HasSubstr("--tls-ca: no PEM certificate"));
  for (const std::string& path : {cert_a, key_a, cert_b, key_b}) std::filesystem::remove(path);
}

}  // namespace
}  // namespace ordo::rpc
