#ifndef ORDO_SERVER_WORKER_TARGETS_H_
#define ORDO_SERVER_WORKER_TARGETS_H_

#include <string>
#include <vector>

#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"
#include "grpcpp/support/channel_arguments.h"

namespace ordo::server {

// One entry of --workers: a worker's own address ("host:port", or any gRPC
// target but dns:), used as is; or `dns:///NAME:PORT`, a name the front
// resolves itself, again and again, to find the workers behind it (a
// Kubernetes headless Service, a name in /etc/hosts). Resolving here rather
// than in a gRPC channel gives every worker its own probes, quarantine and
// round-robin slot, and bounds how late an added or removed worker is seen
// by the probe interval (gRPC re-resolves at most every 30 s).
struct WorkerTarget {
  // As given.
  std::string target;
  // For dns:///NAME:PORT; both empty for a static address.
  std::string name;
  std::string port;
};

// INVALID_ARGUMENT naming the entry for a dns: target with an authority
// (dns://SERVER/...: the system resolver is used) or without a port.
absl::StatusOr<WorkerTarget> ParseWorkerTarget(absl::string_view target);

// Channels to an address found under a name speak to it as that name:
// :authority is `authority` ("NAME:PORT") and a TLS certificate must name
// NAME, as when the channel itself resolved the name. No-op when empty.
void ApplyWorkerAuthority(const std::string& authority, grpc::ChannelArguments& args);

// The worker addresses behind `target` now: itself when static; else every
// address the system resolver (getaddrinfo: /etc/hosts, then DNS) gives the
// name, as "IPv4:PORT" or "[IPv6]:PORT", sorted and without duplicates.
// UNAVAILABLE naming the target when the name does not resolve. Blocks for
// as long as the resolver does.
absl::StatusOr<std::vector<std::string>> ResolveWorkerTarget(const WorkerTarget& target);

}  // namespace ordo::server

#endif  // ORDO_SERVER_WORKER_TARGETS_H_
