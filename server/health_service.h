#ifndef ORDO_SERVER_HEALTH_SERVICE_H_
#define ORDO_SERVER_HEALTH_SERVICE_H_

#include <string>
#include <vector>

#include "absl/base/thread_annotations.h"
#include "absl/container/flat_hash_map.h"
#include "absl/synchronization/mutex.h"
#include "grpc/health/v1/health.grpc.pb.h"

namespace ordo::server {

// grpc.health.v1.Health with all three methods: Check, Watch (the status
// now, then every change, streamed) and List (gRFC A90). gRPC 1.51's
// default service has no List, so the front serves this one instead.
//
// A service name ("" = the whole server) is known once SetStatus named it;
// Check of an unknown name is NOT_FOUND, Watch of one streams
// SERVICE_UNKNOWN until it becomes known. Watchers are sent only changes;
// when several happen during one write, the watcher gets the latest.
// Shutdown() sets everything NOT_SERVING, sends that to every watcher and
// then ends their streams (UNAVAILABLE), so open Watch calls do not hold
// the server's shutdown until its grace deadline; later SetStatus calls
// are ignored. Must outlive the grpc::Server it is registered with.
// Thread-safe.
class HealthService final : public grpc::health::v1::Health::CallbackService {
 public:
  using Status = grpc::health::v1::HealthCheckResponse::ServingStatus;

  HealthService() = default;
  HealthService(const HealthService&) = delete;
  HealthService& operator=(const HealthService&) = delete;

  void SetStatus(const std::string& service, bool serving);
  void Shutdown();

  grpc::ServerUnaryReactor* Check(grpc::CallbackServerContext* context,
                                  const grpc::health::v1::HealthCheckRequest* request,
                                  grpc::health::v1::HealthCheckResponse* response) override;
  grpc::ServerUnaryReactor* List(grpc::CallbackServerContext* context,
                                 const grpc::health::v1::HealthListRequest* request,
                                 grpc::health::v1::HealthListResponse* response) override;
  grpc::ServerWriteReactor<grpc::health::v1::HealthCheckResponse>* Watch(
      grpc::CallbackServerContext* context,
      const grpc::health::v1::HealthCheckRequest* request) override;

 private:
  class Watcher;
  Status StatusOf(const std::string& service) const ABSL_EXCLUSIVE_LOCKS_REQUIRED(mu_);
  void Forget(Watcher* watcher);

  mutable absl::Mutex mu_;
  absl::flat_hash_map<std::string, Status> statuses_ ABSL_GUARDED_BY(mu_);
  std::vector<Watcher*> watchers_ ABSL_GUARDED_BY(mu_);
  bool shut_down_ ABSL_GUARDED_BY(mu_) = false;
};

}  // namespace ordo::server

#endif  // ORDO_SERVER_HEALTH_SERVICE_H_
