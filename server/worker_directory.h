#ifndef ORDO_SERVER_WORKER_DIRECTORY_H_
#define ORDO_SERVER_WORKER_DIRECTORY_H_

#include <cstdint>
#include <string>
#include <vector>

namespace ordo::server {

// One worker the front can send part tasks to.
struct WorkerEndpoint {
  // A gRPC target: "host:port" or a resolver URI such as "dns:///name:port"
  // (one endpoint standing for many workers behind round_robin).
  std::string address;
  bool healthy = false;
  int32_t restarts = 0;
};

// Where the workers are: supervised child processes (WorkerSupervisor) or a
// fixed list from flags (StaticWorkerDirectory). Thread-safe.
class WorkerDirectory {
 public:
  virtual ~WorkerDirectory() = default;
  virtual std::vector<WorkerEndpoint> Workers() const = 0;
};

// Workers given on the command line; always reported healthy (a dead one
// shows up as failed tasks, which are retried elsewhere or run in-process).
class StaticWorkerDirectory final : public WorkerDirectory {
 public:
  explicit StaticWorkerDirectory(std::vector<std::string> addresses) {
    for (std::string& address : addresses) workers_.push_back({std::move(address), true, 0});
  }
  std::vector<WorkerEndpoint> Workers() const override { return workers_; }

 private:
  std::vector<WorkerEndpoint> workers_;
};

}  // namespace ordo::server

#endif  // ORDO_SERVER_WORKER_DIRECTORY_H_
