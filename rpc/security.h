#ifndef ORDO_RPC_SECURITY_H_
#define ORDO_RPC_SECURITY_H_

#include <array>
#include <memory>
#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "grpcpp/client_context.h"
#include "grpcpp/security/auth_metadata_processor.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/security/server_credentials.h"

namespace ordo::rpc {

// Optional TLS and bearer-token authentication of a service port
// (ordo-server's public port, ordo-worker's port). Everything empty/false
// = plaintext, no authentication (the default).
struct ServerSecurityOptions {
  // PEM certificate chain and private key: TLS when both are set.
  std::string tls_cert_file;
  std::string tls_key_file;
  // PEM CA bundle: when set (with TLS), clients must present a certificate
  // signed by it (mutual TLS).
  std::string tls_client_ca_file;
  // Valid bearer tokens, one per line ('#' comments and blank lines
  // ignored; several lines = rotation). When set, every call must carry
  // `authorization: Bearer <token>` metadata.
  std::string auth_token_file;
  // With auth_token_file: leave grpc.health.v1.Health (for load balancer
  // and kubelet probes) and server reflection (grpcurl) open.
  bool auth_allow_health = false;
  bool auth_allow_reflection = false;
};

// The credentials for ServerBuilder::AddListeningPort that implement
// `options`: TLS (grpc::SslServerCredentials) and/or a TokenAuthenticator
// run on every call before any handler. INVALID_ARGUMENT naming the file
// and flag when a file is unreadable or empty, when only one of cert/key is
// given, or when a client CA is given without TLS.
absl::StatusOr<std::shared_ptr<grpc::ServerCredentials>> MakeServerCredentials(
    const ServerSecurityOptions& options);

// One line of a description for startup logs ("TLS, mutual TLS, bearer
// tokens (2)"): never a token or key.
std::string DescribeServerSecurity(const ServerSecurityOptions& options);

// Reads a token file: one token per line, surrounding whitespace trimmed,
// blank lines and '#' comments skipped. INVALID_ARGUMENT naming `path`
// (never its contents) when unreadable or without a token.
absl::StatusOr<std::vector<std::string>> ReadTokenFile(const std::string& path);

// Checks `authorization: Bearer <token>` metadata of every call against a
// set of tokens. Stores only SHA-256 digests of the tokens and compares the
// digest of the presented token with every one of them with CRYPTO_memcmp,
// so neither the token's length nor which token matched (nor how many
// leading bytes did) shows in the time taken. Calls to the health and
// reflection services are let through when allowed. A failed check is
// UNAUTHENTICATED with a fixed message (never the token); a passed one
// removes the authorization metadata so handlers (and their logs) never
// see it. Immutable after construction; thread-safe.
class TokenAuthenticator final : public grpc::AuthMetadataProcessor {
 public:
  TokenAuthenticator(const std::vector<std::string>& tokens, bool allow_health,
                     bool allow_reflection);

  // Cheap and non-blocking: runs inline on the transport thread.
  bool IsBlocking() const override { return false; }
  grpc::Status Process(const InputMetadata& auth_metadata, grpc::AuthContext* context,
                       OutputMetadata* consumed_auth_metadata,
                       OutputMetadata* response_metadata) override;

  // Whether `token` is one of the tokens (constant time, see above).
  bool Accepts(absl::string_view token) const;

 private:
  using Digest = std::array<unsigned char, 32>;
  std::vector<Digest> digests_;
  bool allow_health_;
  bool allow_reflection_;
};

// How a client reaches a service: TLS when any tls_* file is set (server
// verified against tls_ca_file, or the system roots when it is empty;
// tls_cert_file + tls_key_file = client certificate for mutual TLS), and a
// bearer token (the first token of auth_token_file) sent with every call.
struct ClientSecurityOptions {
  std::string tls_ca_file;
  std::string tls_cert_file;
  std::string tls_key_file;
  std::string auth_token_file;
  bool tls() const {
    return !tls_ca_file.empty() || !tls_cert_file.empty() || !tls_key_file.empty();
  }
};

// Loaded ClientSecurityOptions: channel credentials and the metadata to add
// to every call. Copyable; immutable.
struct ClientSecurity {
  std::shared_ptr<grpc::ChannelCredentials> credentials;
  // "Bearer <token>", or empty for no authentication.
  std::string authorization;

  // Adds the authorization metadata (if any) to a call.
  void Apply(grpc::ClientContext& context) const {
    if (!authorization.empty()) context.AddMetadata("authorization", authorization);
  }
};

// INVALID_ARGUMENT naming the file when one is unreadable or empty, or only
// one of cert/key is given.
absl::StatusOr<ClientSecurity> LoadClientSecurity(const ClientSecurityOptions& options);

// Plaintext, no token.
ClientSecurity InsecureClientSecurity();

}  // namespace ordo::rpc

#endif  // ORDO_RPC_SECURITY_H_
