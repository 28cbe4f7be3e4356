#include "server/worker_targets.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <sys/socket.h>

#include <algorithm>

#include "absl/strings/match.h"
#include "absl/strings/strip.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"

namespace ordo::server {

absl::StatusOr<WorkerTarget> ParseWorkerTarget(absl::string_view target) {
  WorkerTarget parsed{std::string(target), "", ""};
  absl::string_view rest = target;
  if (!absl::ConsumePrefix(&rest, "dns:")) return parsed;
  if (!absl::ConsumePrefix(&rest, "///")) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--workers entry \"", target,
        "\": only dns:///NAME:PORT is supported (the system resolver), not a DNS server "
        "of its own"));
  }
  const size_t colon = rest.rfind(':');
  int port = 0;
  if (colon == absl::string_view::npos || colon == 0 ||
      !absl::SimpleAtoi(rest.substr(colon + 1), &port) || port <= 0 || port > 65535) {
    return absl::InvalidArgumentError(absl::StrCat(
        "--workers entry \"", target, "\": expected dns:///NAME:PORT, e.g. dns:///ordo-worker:50052"));
  }
  parsed.name = std::string(rest.substr(0, colon));
  parsed.port = std::string(rest.substr(colon + 1));
  return parsed;
}

void ApplyWorkerAuthority(const std::string& authority, grpc::ChannelArguments& args) {
  if (authority.empty()) return;
  args.SetString(GRPC_ARG_DEFAULT_AUTHORITY, authority);
  args.SetSslTargetNameOverride(authority.substr(0, authority.rfind(':')));
}

absl::StatusOr<std::vector<std::string>> ResolveWorkerTarget(const WorkerTarget& target) {
  if (target.name.empty()) return std::vector<std::string>{target.target};
  addrinfo hints{};
  hints.ai_family = AF_UNSPEC;
  hints.ai_socktype = SOCK_STREAM;
  addrinfo* found = nullptr;
  const int error = getaddrinfo(target.name.c_str(), target.port.c_str(), &hints, &found);
  if (error != 0) {
    return absl::UnavailableError(
        absl::StrCat("cannot resolve ", target.target, ": ", gai_strerror(error)));
  }
  std::vector<std::string> addresses;
  for (const addrinfo* a = found; a != nullptr; a = a->ai_next) {
    char text[INET6_ADDRSTRLEN] = {};
    if (a->ai_family == AF_INET) {
      inet_ntop(AF_INET, &reinterpret_cast<const sockaddr_in*>(a->ai_addr)->sin_addr, text,
                sizeof(text));
      addresses.push_back(absl::StrCat(text, ":", target.port));
    } else if (a->ai_family == AF_INET6) {
      inet_ntop(AF_INET6, &reinterpret_cast<const sockaddr_in6*>(a->ai_addr)->sin6_addr, text,
                sizeof(text));
      addresses.push_back(absl::StrCat("[", text, "]:", target.port));
    }
  }
  freeaddrinfo(found);
  std::sort(addresses.begin(), addresses.end());
  addresses.erase(std::unique(addresses.begin(), addresses.end()), addresses.end());
  return addresses;
}

}  // namespace ordo::server
