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
  // For an address found under a name (dns:///NAME:PORT): "NAME:PORT",
  // the authority its channels present and verify TLS certificates
  // against (ApplyWorkerAuthority); empty for an address given as is.
  std::string authority;
};

// Where the workers are: supervised child processes (WorkerSupervisor) or
// remote ones from flags, health-checked (ProbedWorkerDirectory).
// Thread-safe.
class WorkerDirectory {
 public:
  virtual ~WorkerDirectory() = default;
  virtual std::vector<WorkerEndpoint> Workers() const = 0;
  // A task sent to `address` failed (unreachable, crashed, timed out): the
  // directory may stop offering it until it is known to be back.
  virtual void ReportFailure(const std::string& address) { (void)address; }
  // A task sent to `address` came back with an answer that fails the
  // front's check (a corrupted or foreign schedule): a process that may
  // pass every health probe and still lie. The directory should keep it
  // from new tasks for a while, whatever its probes say.
  virtual void ReportWrongAnswer(const std::string& address) { ReportFailure(address); }
};

}  // namespace ordo::server

#endif  // ORDO_SERVER_WORKER_DIRECTORY_H_
