#include "server/probed_worker_directory.h"

#include <algorithm>
#include <utility>

#include "absl/container/flat_hash_set.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/time/clock.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"
#include "rpc/log.h"

namespace ordo::server {

ProbedWorkerDirectory::ProbedWorkerDirectory(std::vector<WorkerTarget> targets, Options options)
    : options_(std::move(options)),
      targets_(std::move(targets)),
      resolved_(targets_.size()),
      resolve_failing_(targets_.size(), false) {
  // Static addresses are listed (unhealthy) from the start; names once resolved.
  absl::MutexLock lock(&mu_);
  for (const WorkerTarget& target : targets_) {
    if (target.name.empty()) workers_.push_back({target.target, false, 0, ""});
  }
  prober_ = std::thread([this] { ProbeLoop(); });
}

ProbedWorkerDirectory::~ProbedWorkerDirectory() {
  {
    absl::MutexLock lock(&mu_);
    stopping_ = true;
  }
  prober_.join();
}

std::vector<WorkerEndpoint> ProbedWorkerDirectory::Workers() const {
  absl::MutexLock lock(&mu_);
  return workers_;
}

void ProbedWorkerDirectory::ReportFailure(const std::string& address) {
  absl::MutexLock lock(&mu_);
  for (WorkerEndpoint& worker : workers_) {
    if (worker.address == address) worker.healthy = false;
  }
}

void ProbedWorkerDirectory::ReportWrongAnswer(const std::string& address) {
  absl::MutexLock lock(&mu_);
  for (WorkerEndpoint& worker : workers_) {
    if (worker.address == address) worker.healthy = false;
  }
  quarantined_until_[address] = absl::Now() + options_.quarantine;
}

void ProbedWorkerDirectory::Resolve() {
  // (address, authority) of every target, in target order.
  std::vector<std::pair<std::string, std::string>> addresses;
  auto add = [&](const WorkerTarget& target, const std::vector<std::string>& found) {
    const std::string authority =
        target.name.empty() ? "" : absl::StrCat(target.name, ":", target.port);
    for (const std::string& address : found) addresses.emplace_back(address, authority);
  };
  for (size_t i = 0; i < targets_.size(); ++i) {
    absl::StatusOr<std::vector<std::string>> found = options_.resolve(targets_[i]);
    if (!found.ok()) {
      if (!resolve_failing_[i]) {  // once per outage, not every interval
        rpc::Log(rpc::LogLevel::kWarning, "",
                 absl::StrCat(found.status().message(), "; keeping its last ",
                              resolved_[i].size(), " address(es)"));
      }
      resolve_failing_[i] = true;
      add(targets_[i], resolved_[i]);
      continue;
    }
    resolve_failing_[i] = false;
    if (*found != resolved_[i]) {
      if (!targets_[i].name.empty()) {
        rpc::Log(rpc::LogLevel::kInfo, "",
                 absl::StrCat(targets_[i].target, " now stands for ",
                              found->empty() ? "no worker" : absl::StrJoin(*found, ", ")));
      }
      resolved_[i] = *std::move(found);
    }
    add(targets_[i], resolved_[i]);
  }
  // Keep the stubs (and connections) of addresses still there.
  std::vector<Probed> next;
  absl::flat_hash_set<std::string> seen;
  for (const auto& [address, authority] : addresses) {
    if (!seen.insert(address).second) continue;
    // Clang 14 cannot capture a structured binding in a lambda.
    const std::string& wanted = address;
    auto it = std::find_if(probed_.begin(), probed_.end(),
                           [&](const Probed& p) { return p.address == wanted; });
    if (it != probed_.end()) {
      next.push_back(std::move(*it));
      continue;
    }
    grpc::ChannelArguments args;
    // A restarted worker should be seen by the next probe, not after a
    // long reconnect back-off.
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
    ApplyWorkerAuthority(authority, args);
    next.push_back({address, authority,
                    grpc::health::v1::Health::NewStub(grpc::CreateCustomChannel(
                        address, options_.security.credentials, args))});
  }
  probed_ = std::move(next);
}

bool ProbedWorkerDirectory::Probe(grpc::health::v1::Health::Stub& stub) const {
  grpc::ClientContext context;
  context.set_deadline(absl::ToChronoTime(absl::Now() + options_.timeout));
  options_.security.Apply(context);
  grpc::health::v1::HealthCheckResponse response;
  return stub.Check(&context, {}, &response).ok() &&
         response.status() == grpc::health::v1::HealthCheckResponse::SERVING;
}

void ProbedWorkerDirectory::ProbeLoop() {
  while (true) {
    // Resolution and probes run unlocked: a slow resolver or a frozen
    // worker costs this thread time, never the lock.
    Resolve();
    std::vector<bool> serving;
    for (const Probed& probed : probed_) serving.push_back(Probe(*probed.stub));
    absl::MutexLock lock(&mu_);
    const absl::Time now = absl::Now();
    for (auto it = quarantined_until_.begin(); it != quarantined_until_.end();) {
      if (it->second <= now) {
        quarantined_until_.erase(it++);
      } else {
        ++it;
      }
    }
    workers_.clear();
    for (size_t i = 0; i < probed_.size(); ++i) {
      workers_.push_back(
          {probed_[i].address, serving[i] && !quarantined_until_.contains(probed_[i].address), 0,
           probed_[i].authority});
    }
    if (mu_.AwaitWithTimeout(absl::Condition(&stopping_), options_.interval)) return;
  }
}

}  // namespace ordo::server
