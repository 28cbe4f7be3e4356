#ifndef ORDO_RPC_SECURITY_FLAGS_H_
#define ORDO_RPC_SECURITY_FLAGS_H_

#include "absl/status/status.h"
#include "rpc/security.h"

namespace ordo::rpc {

// The security flags every service binary (ordo-server, ordo-worker)
// defines for its own port, parsed by InitServiceMain:
//   --tls-cert FILE --tls-key FILE   serve TLS with this PEM chain and key
//   --tls-client-ca FILE             require client certificates signed by it
//   --auth-token-file FILE           require `authorization: Bearer <token>`
//   --auth-allow-health              ... except for grpc.health.v1.Health
//   --auth-allow-reflection          ... except for server reflection
ServerSecurityOptions ServerSecurityFromFlags();

// Loads `options` once (files read, tokens parsed) so a bad flag stops the
// binary at startup with a clear message instead of at its first call.
// INVALID_ARGUMENT naming the flag and file; never a token.
absl::Status CheckServerSecurity(const ServerSecurityOptions& options);

}  // namespace ordo::rpc

#endif  // ORDO_RPC_SECURITY_FLAGS_H_
