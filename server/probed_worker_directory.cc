#include "server/probed_worker_directory.h"

#include <utility>

#include "absl/time/clock.h"
#include "grpcpp/client_context.h"
#include "grpcpp/create_channel.h"
#include "grpcpp/security/credentials.h"
#include "grpcpp/support/channel_arguments.h"

namespace ordo::server {

ProbedWorkerDirectory::ProbedWorkerDirectory(std::vector<std::string> addresses, Options options)
    : options_(options) {
  for (std::string& address : addresses) {
    grpc::ChannelArguments args;
    args.SetLoadBalancingPolicyName("round_robin");
    // A restarted worker should be seen by the next probe, not after a
    // long reconnect back-off.
    args.SetInt(GRPC_ARG_INITIAL_RECONNECT_BACKOFF_MS, 100);
    args.SetInt(GRPC_ARG_MAX_RECONNECT_BACKOFF_MS, 1000);
    stubs_.push_back(grpc::health::v1::Health::NewStub(
        grpc::CreateCustomChannel(address, options_.security.credentials, args)));
    workers_.push_back({std::move(address), false, 0});
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
    // Probes run unlocked: a frozen worker costs `timeout`, not the lock.
    std::vector<bool> serving;
    for (const auto& stub : stubs_) serving.push_back(Probe(*stub));
    absl::MutexLock lock(&mu_);
    for (size_t i = 0; i < workers_.size(); ++i) workers_[i].healthy = serving[i];
    if (mu_.AwaitWithTimeout(absl::Condition(&stopping_), options_.interval)) return;
  }
}

}  // namespace ordo::server
