#include "rpc/security.h"

#include <openssl/bio.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#include <openssl/sha.h>

#include <fstream>
#include <sstream>
#include <utility>

#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/strip.h"
#include "grpc/grpc.h"
#include "grpc/grpc_security.h"
#include "grpc/slice.h"

namespace ordo::rpc {
namespace {

constexpr absl::string_view kBearerPrefix = "Bearer ";

// The whole file; INVALID_ARGUMENT naming the flag and path (never the
// contents) when it cannot be read or is empty.
absl::StatusOr<std::string> ReadNonEmptyFile(const std::string& path, absl::string_view flag) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::InvalidArgumentError(absl::StrCat("--", flag, ": cannot read \"", path, "\""));
  }
  std::stringstream bytes;
  bytes << in.rdbuf();
  if (in.bad()) {
    return absl::InvalidArgumentError(absl::StrCat("--", flag, ": cannot read \"", path, "\""));
  }
  if (bytes.str().empty()) {
    return absl::InvalidArgumentError(absl::StrCat("--", flag, ": \"", path, "\" is empty"));
  }
  return bytes.str();
}

// OK when `pem` holds at least one certificate; else INVALID_ARGUMENT
// naming the flag, so a wrong file fails at startup, not at the first
// handshake (where it would look like "cannot listen" or a dead worker).
absl::Status CheckCertificates(const std::string& pem, absl::string_view flag) {
  BIO* bio = BIO_new_mem_buf(pem.data(), static_cast<int>(pem.size()));
  X509* cert = bio != nullptr ? PEM_read_bio_X509(bio, nullptr, nullptr, nullptr) : nullptr;
  const bool ok = cert != nullptr;
  X509_free(cert);
  BIO_free(bio);
  if (ok) return absl::OkStatus();
  return absl::InvalidArgumentError(absl::StrCat("--", flag, ": no PEM certificate in the file"));
}

// OK when `key_pem` is a PEM private key matching the first certificate of
// `cert_pem`; INVALID_ARGUMENT naming the flags otherwise.
absl::Status CheckKeyPair(const std::string& cert_pem, const std::string& key_pem,
                          absl::string_view cert_flag, absl::string_view key_flag) {
  if (absl::Status status = CheckCertificates(cert_pem, cert_flag); !status.ok()) return status;
  BIO* cert_bio = BIO_new_mem_buf(cert_pem.data(), static_cast<int>(cert_pem.size()));
  BIO* key_bio = BIO_new_mem_buf(key_pem.data(), static_cast<int>(key_pem.size()));
  X509* cert = cert_bio != nullptr ? PEM_read_bio_X509(cert_bio, nullptr, nullptr, nullptr)
                                   : nullptr;
  EVP_PKEY* key = key_bio != nullptr ? PEM_read_bio_PrivateKey(key_bio, nullptr, nullptr, nullptr)
                                     : nullptr;
  const bool has_key = key != nullptr;
  const bool matches = has_key && cert != nullptr && X509_check_private_key(cert, key) == 1;
  EVP_PKEY_free(key);
  X509_free(cert);
  BIO_free(key_bio);
  BIO_free(cert_bio);
  if (!has_key) {
    return absl::InvalidArgumentError(absl::StrCat("--", key_flag, ": no PEM private key in the file"));
  }
  if (!matches) {
    return absl::InvalidArgumentError(
        absl::StrCat("--", key_flag, " does not match the certificate of --", cert_flag));
  }
  return absl::OkStatus();
}

// Whether a call to `path` (":path" pseudo-header, "/package.Service/Method")
// is exempt from authentication.
bool OpenPath(absl::string_view path, bool allow_health, bool allow_reflection) {
  if (allow_health && absl::StartsWith(path, "/grpc.health.v1.Health/")) return true;
  return allow_reflection &&
         (absl::StartsWith(path, "/grpc.reflection.v1alpha.ServerReflection/") ||
          absl::StartsWith(path, "/grpc.reflection.v1.ServerReflection/"));
}

// gRPC's C++ InsecureServerCredentials refuse an AuthMetadataProcessor, but
// the core's insecure credentials run one like the TLS ones do. So plaintext
// ports with token authentication use the core API directly; this adapts
// the C callback to TokenAuthenticator::Process.
void ProcessWithAuthenticator(void* state, grpc_auth_context* /*context*/, const grpc_metadata* md,
                              size_t num_md, grpc_process_auth_metadata_done_cb cb,
                              void* user_data) {
  auto* authenticator = static_cast<std::shared_ptr<TokenAuthenticator>*>(state);
  grpc::AuthMetadataProcessor::InputMetadata input;
  for (size_t i = 0; i < num_md; ++i) {
    input.insert(std::make_pair(
        grpc::string_ref(reinterpret_cast<const char*>(GRPC_SLICE_START_PTR(md[i].key)),
                         GRPC_SLICE_LENGTH(md[i].key)),
        grpc::string_ref(reinterpret_cast<const char*>(GRPC_SLICE_START_PTR(md[i].value)),
                         GRPC_SLICE_LENGTH(md[i].value))));
  }
  grpc::AuthMetadataProcessor::OutputMetadata consumed;
  grpc::AuthMetadataProcessor::OutputMetadata response;
  const grpc::Status status = (*authenticator)->Process(input, nullptr, &consumed, &response);
  // The strings in `consumed` outlive the callback, which copies what it keeps.
  std::vector<grpc_metadata> consumed_md;
  for (const auto& [key, value] : consumed) {
    grpc_metadata entry{};
    entry.key = grpc_slice_from_static_buffer(key.data(), key.size());
    entry.value = grpc_slice_from_static_buffer(value.data(), value.size());
    consumed_md.push_back(entry);
  }
  cb(user_data, consumed_md.data(), consumed_md.size(), nullptr, 0,
     static_cast<grpc_status_code>(status.error_code()), status.error_message().c_str());
}

void DestroyAuthenticator(void* state) {
  delete static_cast<std::shared_ptr<TokenAuthenticator>*>(state);
}

// Plaintext with token authentication (see ProcessWithAuthenticator).
class InsecureTokenServerCredentials final : public grpc::ServerCredentials {
 public:
  explicit InsecureTokenServerCredentials(std::shared_ptr<TokenAuthenticator> authenticator)
      : authenticator_(std::move(authenticator)) {}

  void SetAuthMetadataProcessor(
      const std::shared_ptr<grpc::AuthMetadataProcessor>& /*processor*/) override {}

 private:
  int AddPortToServer(const std::string& addr, grpc_server* server) override {
    grpc_server_credentials* credentials = grpc_insecure_server_credentials_create();
    grpc_server_credentials_set_auth_metadata_processor(
        credentials, {&ProcessWithAuthenticator, &DestroyAuthenticator,
                      new std::shared_ptr<TokenAuthenticator>(authenticator_)});
    const int port = grpc_server_add_http2_port(server, addr.c_str(), credentials);
    grpc_server_credentials_release(credentials);
    return port;
  }

  std::shared_ptr<TokenAuthenticator> authenticator_;
};

}  // namespace

absl::StatusOr<std::vector<std::string>> ReadTokenFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return absl::InvalidArgumentError(
        absl::StrCat("auth token file \"", path, "\" cannot be read"));
  }
  std::vector<std::string> tokens;
  for (std::string line; std::getline(in, line);) {
    absl::string_view token = absl::StripAsciiWhitespace(line);
    if (token.empty() || token[0] == '#') continue;
    tokens.emplace_back(token);
  }
  if (in.bad()) {
    return absl::InvalidArgumentError(
        absl::StrCat("auth token file \"", path, "\" cannot be read"));
  }
  if (tokens.empty()) {
    return absl::InvalidArgumentError(
        absl::StrCat("auth token file \"", path, "\" holds no token"));
  }
  return tokens;
}

TokenAuthenticator::TokenAuthenticator(const std::vector<std::string>& tokens, bool allow_health,
                                       bool allow_reflection)
    : allow_health_(allow_health), allow_reflection_(allow_reflection) {
  for (const std::string& token : tokens) {
    Digest digest;
    SHA256(reinterpret_cast<const unsigned char*>(token.data()), token.size(), digest.data());
    digests_.push_back(digest);
  }
}

bool TokenAuthenticator::Accepts(absl::string_view token) const {
  Digest digest;
  SHA256(reinterpret_cast<const unsigned char*>(token.data()), token.size(), digest.data());
  // Every digest is compared, whatever matched before: the time does not
  // depend on which token (if any) was presented.
  int matches = 0;
  for (const Digest& valid : digests_) {
    matches |= CRYPTO_memcmp(valid.data(), digest.data(), digest.size()) == 0;
  }
  return matches != 0;
}

grpc::Status TokenAuthenticator::Process(const InputMetadata& auth_metadata,
                                         grpc::AuthContext* /*context*/,
                                         OutputMetadata* consumed_auth_metadata,
                                         OutputMetadata* /*response_metadata*/) {
  if (auto path = auth_metadata.find(":path"); path != auth_metadata.end()) {
    const absl::string_view method(path->second.data(), path->second.size());
    if (OpenPath(method, allow_health_, allow_reflection_)) return grpc::Status::OK;
  }
  const auto header = auth_metadata.find("authorization");
  if (header == auth_metadata.end()) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "missing \"authorization: Bearer <token>\" metadata");
  }
  absl::string_view value(header->second.data(), header->second.size());
  // RFC 7235: the scheme is case-insensitive ("bearer", "BEARER").
  if (!absl::StartsWithIgnoreCase(value, kBearerPrefix)) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED,
                        "authorization metadata is not \"Bearer <token>\"");
  }
  value.remove_prefix(kBearerPrefix.size());
  if (!Accepts(absl::StripAsciiWhitespace(value))) {
    return grpc::Status(grpc::StatusCode::UNAUTHENTICATED, "invalid bearer token");
  }
  // Handlers (and whatever they log) never see the token.
  consumed_auth_metadata->emplace("authorization",
                                  std::string(header->second.data(), header->second.size()));
  return grpc::Status::OK;
}

absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const ServerSecurityOptions& options) {
  std::shared_ptr<TokenAuthenticator> authenticator;
  if (!options.auth_token_file.empty()) {
    absl::StatusOr<std::vector<std::string>> tokens = ReadTokenFile(options.auth_token_file);
    if (!tokens.ok()) return tokens.status();
    authenticator = std::make_shared<TokenAuthenticator>(*tokens, options.auth_allow_health,
                                                         options.auth_allow_reflection);
  }
  const bool tls = !options.tls_cert_file.empty() || !options.tls_key_file.empty();
  if (!tls) {
    if (!options.tls_client_ca_file.empty()) {
      return absl::InvalidArgumentError("--tls-client-ca needs --tls-cert and --tls-key");
    }
    if (authenticator == nullptr) return grpc::InsecureServerCredentials();
    return std::shared_ptr<grpc::ServerCredentials>(
        std::make_shared<InsecureTokenServerCredentials>(std::move(authenticator)));
  }
  if (options.tls_cert_file.empty() || options.tls_key_file.empty()) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key go together");
  }
  absl::StatusOr<std::string> cert = ReadNonEmptyFile(options.tls_cert_file, "tls-cert");
  if (!cert.ok()) return cert.status();
  absl::StatusOr<std::string> key = ReadNonEmptyFile(options.tls_key_file, "tls-key");
  if (!key.ok()) return key.status();
  if (absl::Status pair = CheckKeyPair(*cert, *key, "tls-cert", "tls-key"); !pair.ok()) {
    return pair;
  }
  grpc::SslServerCredentialsOptions ssl;
  ssl.pem_key_cert_pairs.push_back({*std::move(key), *std::move(cert)});
  if (!options.tls_client_ca_file.empty()) {
    absl::StatusOr<std::string> ca = ReadNonEmptyFile(options.tls_client_ca_file, "tls-client-ca");
    if (!ca.ok()) return ca.status();
    if (absl::Status certs = CheckCertificates(*ca, "tls-client-ca"); !certs.ok()) return certs;
    ssl.pem_root_certs = *std::move(ca);
    ssl.client_certificate_request = GRPC_SSL_REQUEST_AND_REQUIRE_CLIENT_CERTIFICATE_AND_VERIFY;
  }
  std::shared_ptr<grpc::ServerCredentials> credentials = grpc::SslServerCredentials(ssl);
  if (authenticator != nullptr) credentials->SetAuthMetadataProcessor(authenticator);
  return credentials;
}

std::string DescribeServerSecurity(const ServerSecurityOptions& options) {
  std::vector<std::string> parts;
  if (!options.tls_client_ca_file.empty()) {
    parts.push_back("mutual TLS");
  } else if (!options.tls_cert_file.empty()) {
    parts.push_back("TLS");
  } else {
    parts.push_back("plaintext");
  }
  if (!options.auth_token_file.empty()) {
    std::string auth = "bearer-token auth";
    if (options.auth_allow_health) absl::StrAppend(&auth, ", health open");
    if (options.auth_allow_reflection) absl::StrAppend(&auth, ", reflection open");
    parts.push_back(auth);
  }
  return absl::StrJoin(parts, ", ");
}

absl::StatusOr<ClientSecurity> LoadClientSecurity(const ClientSecurityOptions& options) {
  ClientSecurity security;
  if (!options.auth_token_file.empty()) {
    absl::StatusOr<std::vector<std::string>> tokens = ReadTokenFile(options.auth_token_file);
    if (!tokens.ok()) return tokens.status();
    security.authorization = absl::StrCat(kBearerPrefix, tokens->front());
  }
  if (!options.tls()) {
    security.credentials = grpc::InsecureChannelCredentials();
    return security;
  }
  if (options.tls_cert_file.empty() != options.tls_key_file.empty()) {
    return absl::InvalidArgumentError("--tls-cert and --tls-key go together");
  }
  grpc::SslCredentialsOptions ssl;
  if (!options.tls_ca_file.empty()) {
    absl::StatusOr<std::string> ca = ReadNonEmptyFile(options.tls_ca_file, "tls-ca");
    if (!ca.ok()) return ca.status();
    if (absl::Status certs = CheckCertificates(*ca, "tls-ca"); !certs.ok()) return certs;
    ssl.pem_root_certs = *std::move(ca);
  }
  if (!options.tls_cert_file.empty()) {
    absl::StatusOr<std::string> cert = ReadNonEmptyFile(options.tls_cert_file, "tls-cert");
    if (!cert.ok()) return cert.status();
    absl::StatusOr<std::string> key = ReadNonEmptyFile(options.tls_key_file, "tls-key");
    if (!key.ok()) return key.status();
    if (absl::Status pair = CheckKeyPair(*cert, *key, "tls-cert", "tls-key"); !pair.ok()) {
      return pair;
    }
    ssl.pem_cert_chain = *std::move(cert);
    ssl.pem_private_key = *std::move(key);
  }
  security.credentials = grpc::SslCredentials(ssl);
  return security;
}

ClientSecurity InsecureClientSecurity() {
  return ClientSecurity{grpc::InsecureChannelCredentials(), ""};
}

}  // namespace ordo::rpc
