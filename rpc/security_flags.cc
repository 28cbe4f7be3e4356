#include "rpc/security_flags.h"

#include <string>

#include "absl/flags/flag.h"

ABSL_FLAG(std::string, tls_cert, "", "PEM certificate chain: serve TLS (with --tls-key)");
ABSL_FLAG(std::string, tls_key, "", "PEM private key of --tls-cert");
ABSL_FLAG(std::string, tls_client_ca, "",
          "PEM CA bundle: require client certificates signed by it (mutual TLS)");
ABSL_FLAG(std::string, auth_token_file, "",
          "file of valid bearer tokens, one per line: every call needs "
          "`authorization: Bearer <token>`");
ABSL_FLAG(bool, auth_allow_health, false,
          "with --auth-token-file: grpc.health.v1.Health needs no token (probes)");
ABSL_FLAG(bool, auth_allow_reflection, false,
          "with --auth-token-file: server reflection needs no token (grpcurl)");

namespace ordo::rpc {

ServerSecurityOptions ServerSecurityFromFlags() {
  ServerSecurityOptions options;
  options.tls_cert_file = absl::GetFlag(FLAGS_tls_cert);
  options.tls_key_file = absl::GetFlag(FLAGS_tls_key);
  options.tls_client_ca_file = absl::GetFlag(FLAGS_tls_client_ca);
  options.auth_token_file = absl::GetFlag(FLAGS_auth_token_file);
  options.auth_allow_health = absl::GetFlag(FLAGS_auth_allow_health);
  options.auth_allow_reflection = absl::GetFlag(FLAGS_auth_allow_reflection);
  return options;
}

absl::Status CheckServerSecurity(const ServerSecurityOptions& options) {
  if ((options.auth_allow_health || options.auth_allow_reflection) &&
      options.auth_token_file.empty()) {
    return absl::InvalidArgumentError(
        "--auth-allow-health/--auth-allow-reflection need --auth-token-file");
  }
  return MakeServerCredentials(options).status();
}

}  // namespace ordo::rpc
